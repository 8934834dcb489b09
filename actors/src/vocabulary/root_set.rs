//! The root set: canonical workspace roots with unique display names, the
//! path validator every tool goes through (paths are canonicalized and
//! must sit under a root, so `..` traversal and links pointing out are
//! refused), and how paths are shown to agents.

use crate::error::{Error, Result};
use crate::lsp::protocol::WorkspaceFolder;
use crate::lsp::uri::path_to_uri;
use std::path::{Component, Path, PathBuf};

/// A directory that may be a root, canonical: it exists, is a directory,
/// and is not the filesystem's root. An error names it as given.
pub fn canonical_root(directory: &Path) -> Result<PathBuf> {
    let shown = directory.display();
    let path = directory
        .canonicalize()
        .map_err(|error| Error::InvalidArgument(format!("root {shown}: {error}")))?;
    if !path.is_dir() {
        return Err(Error::InvalidArgument(format!(
            "root {shown} is not a directory"
        )));
    }
    if path.parent().is_none() {
        return Err(Error::InvalidArgument(format!(
            "root {shown} is the whole filesystem"
        )));
    }
    Ok(path)
}

/// One root: its canonical directory and the name that prefixes its paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub path: PathBuf,
    pub name: String,
}

/// The workspace roots, canonical and with unique display names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootSet {
    roots: Vec<Root>,
}

impl RootSet {
    /// Canonicalizes each directory; the names are their last components,
    /// numbered when two share one. An error names the root as given.
    pub fn new(directories: &[PathBuf]) -> Result<Self> {
        let mut canonical = Vec::new();
        for directory in directories {
            canonical.push(canonical_root(directory)?);
        }
        Ok(Self::from_canonical(canonical))
    }

    /// The set of directories already canonical and valid.
    pub fn from_canonical(directories: Vec<PathBuf>) -> Self {
        let mut roots: Vec<Root> = Vec::new();
        for path in directories {
            if roots.iter().any(|root| root.path == path) {
                continue;
            }
            let base = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_else(|| "root".into());
            let mut name = base.clone();
            let mut suffix = 2;
            while roots.iter().any(|root| root.name == name) {
                name = format!("{base}-{suffix}");
                suffix += 1;
            }
            roots.push(Root { path, name });
        }
        Self { roots }
    }

    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    pub fn first_directory(&self) -> PathBuf {
        self.roots
            .first()
            .map(|root| root.path.clone())
            .unwrap_or_else(|| PathBuf::from("."))
    }

    pub fn workspace_folders(&self) -> Vec<WorkspaceFolder> {
        self.roots
            .iter()
            .map(|root| WorkspaceFolder {
                uri: path_to_uri(&root.path),
                name: root.name.clone(),
            })
            .collect()
    }

    /// Resolves a path as an agent wrote it (absolute, relative to the first
    /// root, `ROOTNAME/relative`, or a `file://` URI) to an existing
    /// canonical path under a root. Errors repeat the path as given, never
    /// what it resolved to.
    pub fn resolve(&self, given: &str) -> Result<PathBuf> {
        if given.trim().is_empty() {
            return Err(Error::InvalidArgument("file must not be empty".into()));
        }
        if self.roots.is_empty() {
            return Err(Error::NoRoots);
        }
        let from_uri = given
            .starts_with("file://")
            .then(|| crate::lsp::uri::uri_to_path(given))
            .flatten();
        let candidate = match &from_uri {
            Some(path) => path.clone(),
            None => self.candidate(Path::new(given)),
        };
        let canonical = candidate
            .canonicalize()
            .map_err(|error| match error.kind() {
                std::io::ErrorKind::NotFound if self.lexically_inside(&candidate) => {
                    Error::InvalidArgument(format!("{given}: no such file or directory"))
                }
                std::io::ErrorKind::NotFound => Error::OutsideRoots(given.to_owned()),
                _ => Error::InvalidArgument(format!("{given}: {error}")),
            })?;
        if self.root_of(&canonical).is_none() {
            return Err(Error::OutsideRoots(given.to_owned()));
        }
        Ok(canonical)
    }

    fn candidate(&self, given: &Path) -> PathBuf {
        if given.is_absolute() {
            return given.to_path_buf();
        }
        if self.roots.len() > 1
            && let Some(Component::Normal(first)) = given.components().next()
            && let Some(root) = self
                .roots
                .iter()
                .find(|root| first.to_str() == Some(root.name.as_str()))
        {
            let rest: PathBuf = given.components().skip(1).collect();
            return root.path.join(rest);
        }
        self.first_directory().join(given)
    }

    /// Whether a path that does not exist would lie under a root, judged
    /// without the filesystem, so a missing file inside the workspace is
    /// "not found" while a missing file outside is still "outside".
    fn lexically_inside(&self, path: &Path) -> bool {
        let mut normal = PathBuf::new();
        for component in path.components() {
            match component {
                Component::ParentDir => {
                    normal.pop();
                }
                Component::CurDir => {}
                other => normal.push(other),
            }
        }
        self.root_of(&normal).is_some()
    }

    pub fn root_of(&self, path: &Path) -> Option<&Root> {
        self.roots.iter().find(|root| path.starts_with(&root.path))
    }

    /// How a path is shown to agents: relative to its root, prefixed with
    /// the root's name when there are several roots; a path outside every
    /// root is shown whole.
    /// `text` with each path under a root written as [`Self::display`]
    /// writes it: servers name other files by absolute path in their
    /// messages (clangd's notes: `/home/…/include/shapes.h:1:5: note:`).
    pub fn paths_shown_in(&self, text: &str) -> String {
        let several = self.roots.len() > 1;
        self.roots.iter().fold(text.to_owned(), |text, root| {
            let prefix = format!("{}/", root.path.display());
            match (text.contains(&prefix), several) {
                (false, _) => text,
                (true, false) => text.replace(&prefix, ""),
                (true, true) => text.replace(&prefix, &format!("{}/", root.name)),
            }
        })
    }

    pub fn display(&self, path: &Path) -> String {
        let Some(root) = self.root_of(path) else {
            return path.display().to_string();
        };
        let relative = path.strip_prefix(&root.path).unwrap_or(path);
        let relative = relative.display().to_string();
        match (self.roots.len() > 1, relative.is_empty()) {
            (true, true) => root.name.clone(),
            (true, false) => format!("{}/{relative}", root.name),
            (false, true) => ".".into(),
            (false, false) => relative,
        }
    }
}

/// The directories of `paths` not under another of them, each once: what
/// the Watcher must watch so that every path is covered exactly once.
pub fn outermost(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.sort();
    paths.dedup();
    let mut kept: Vec<PathBuf> = Vec::new();
    for path in paths {
        // Sorted, an ancestor comes before everything under it.
        if !kept.iter().any(|outer| path.starts_with(outer)) {
            kept.push(path);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn paths_in_a_message_are_shown_as_the_roots_show_them() {
        let (_dir, roots) = workspace();
        let root = roots.roots()[0].path.display().to_string();
        let message = format!("too few arguments {root}/src/a.h:1:5: note: declared here");
        assert_eq!(
            roots.paths_shown_in(&message),
            "too few arguments src/a.h:1:5: note: declared here"
        );
        assert_eq!(roots.paths_shown_in("/elsewhere/a.h:1"), "/elsewhere/a.h:1");
    }

    fn workspace() -> (tempfile::TempDir, RootSet) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/a.py"), "x = 1\n").unwrap();
        fs::write(dir.path().join("secret.txt"), "s").unwrap();
        let roots = RootSet::new(&[root]).unwrap();
        (dir, roots)
    }

    #[test]
    fn resolves_relative_and_absolute_paths_inside() {
        let (dir, roots) = workspace();
        let expected = dir.path().join("project/src/a.py").canonicalize().unwrap();
        assert_eq!(roots.resolve("src/a.py").unwrap(), expected);
        assert_eq!(roots.resolve(expected.to_str().unwrap()).unwrap(), expected);
        assert_eq!(roots.display(&expected), "src/a.py");
    }

    #[test]
    fn refuses_traversal_and_outside_paths_without_echoing_them() {
        let (dir, roots) = workspace();
        let outside = dir.path().join("secret.txt");
        for given in [
            "../secret.txt",
            "src/../../secret.txt",
            outside.to_str().unwrap(),
            "/etc/passwd",
        ] {
            let error = roots.resolve(given).unwrap_err();
            assert_eq!(error, Error::OutsideRoots(given.to_owned()));
        }
    }

    #[cfg(unix)]
    #[test]
    fn refuses_symlinks_that_point_out() {
        let (dir, roots) = workspace();
        std::os::unix::fs::symlink(
            dir.path().join("secret.txt"),
            dir.path().join("project/link"),
        )
        .unwrap();
        let error = roots.resolve("link").unwrap_err();
        assert_eq!(error, Error::OutsideRoots("link".into()));
        assert!(!error.to_string().contains("secret"));
    }

    #[test]
    fn reports_missing_files_inside_as_not_found() {
        let (_dir, roots) = workspace();
        let error = roots.resolve("src/missing.py").unwrap_err();
        assert_eq!(
            error,
            Error::InvalidArgument("src/missing.py: no such file or directory".into())
        );
    }

    #[test]
    fn prefixes_paths_with_root_names_when_several() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a/app", "b/app", "lib"] {
            fs::create_dir_all(dir.path().join(name)).unwrap();
        }
        fs::write(dir.path().join("b/app/x.rs"), "").unwrap();
        let roots = RootSet::new(&[
            dir.path().join("a/app"),
            dir.path().join("b/app"),
            dir.path().join("lib"),
        ])
        .unwrap();
        let names: Vec<&str> = roots
            .roots()
            .iter()
            .map(|root| root.name.as_str())
            .collect();
        assert_eq!(names, vec!["app", "app-2", "lib"]);
        let resolved = roots.resolve("app-2/x.rs").unwrap();
        assert_eq!(roots.display(&resolved), "app-2/x.rs");
    }

    #[test]
    fn outermost_keeps_one_directory_per_tree() {
        let paths = ["/w/b", "/w/a/x", "/w/a", "/w/ab", "/w/b"]
            .into_iter()
            .map(PathBuf::from)
            .collect();
        let kept: Vec<PathBuf> = ["/w/a", "/w/ab", "/w/b"]
            .into_iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(outermost(paths), kept);
    }
}
