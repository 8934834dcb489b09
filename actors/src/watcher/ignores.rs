//! Which paths under the roots are ignored: `.git/` always, and whatever
//! a `.gitignore` in the path's directory or above it (up to its root)
//! ignores, the nearest file deciding, as git does.

use ignore::gitignore::Gitignore;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Default)]
pub struct Ignores {
    roots: Vec<PathBuf>,
    /// The matcher of each directory that has a `.gitignore`.
    by_directory: HashMap<PathBuf, Gitignore>,
}

impl Ignores {
    pub fn new(roots: Vec<PathBuf>) -> Self {
        Self {
            roots,
            by_directory: HashMap::new(),
        }
    }

    /// The roots changed: paths outside them are ignored from now on.
    pub fn set_roots(&mut self, roots: Vec<PathBuf>) {
        self.by_directory
            .retain(|directory, _| roots.iter().any(|root| directory.starts_with(root)));
        self.roots = roots;
    }

    /// Reads (or forgets) the `.gitignore` of `directory`.
    pub fn load(&mut self, directory: &Path) {
        let file = directory.join(".gitignore");
        if !file.is_file() {
            self.by_directory.remove(directory);
            return;
        }
        let (matcher, error) = Gitignore::new(&file);
        if let Some(error) = error {
            tracing::debug!(file = %file.display(), "partly unreadable .gitignore: {error}");
        }
        self.by_directory.insert(directory.to_path_buf(), matcher);
    }

    pub fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        if path.components().any(|part| part.as_os_str() == ".git") {
            return true;
        }
        let Some(root) = self.roots.iter().find(|root| path.starts_with(root)) else {
            return true;
        };
        for directory in path.ancestors().skip(1) {
            if let Some(matcher) = self.by_directory.get(directory) {
                let decision = matcher.matched(path, is_dir);
                if decision.is_ignore() {
                    return true;
                }
                if decision.is_whitelist() {
                    return false;
                }
            }
            if directory == root {
                break;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_gitignore_decides_and_git_is_always_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\nbuild/\n").unwrap();
        std::fs::write(root.join("sub/.gitignore"), "!keep.log\n").unwrap();
        let mut ignores = Ignores::new(vec![root.clone()]);
        ignores.load(&root);
        ignores.load(&root.join("sub"));
        assert!(ignores.is_ignored(&root.join("x.log"), false));
        assert!(ignores.is_ignored(&root.join("build"), true));
        assert!(!ignores.is_ignored(&root.join("sub/keep.log"), false));
        assert!(ignores.is_ignored(&root.join("sub/other.log"), false));
        assert!(!ignores.is_ignored(&root.join("main.py"), false));
        assert!(ignores.is_ignored(&root.join(".git/index"), false));
        assert!(ignores.is_ignored(Path::new("/elsewhere/a.py"), false));
    }
}
