//! The `list_directory` tool: one directory's entries, gitignore-aware,
//! links shown as links and never followed out of the roots.

use super::context::Context;
use super::render;
use crate::error::{Error, Result};
use crate::vocabulary::root_set::RootSet;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirectoryArgs {
    pub path: Option<String>,
}

pub async fn list_directory(context: &Context, args: &ListDirectoryArgs) -> Result<String> {
    let given = args.path.as_deref().unwrap_or(".");
    let (roots, directory) = context.resolve(given).await?;
    if !directory.is_dir() {
        return Err(Error::InvalidArgument(format!(
            "{given} is not a directory"
        )));
    }
    let lines = tokio::task::spawn_blocking(move || entries(&roots, &directory))
        .await
        .map_err(|_| Error::ShuttingDown)?;
    if lines.is_empty() {
        return Ok(format!("{given} is empty"));
    }
    Ok(render::bounded(&lines, context.settings.max_output_bytes))
}

/// `name/` for directories, `name  SIZE` for files, `name -> link` for
/// links (their target only when it stays inside the roots).
fn entries(roots: &RootSet, directory: &Path) -> Vec<String> {
    let walker = ignore::WalkBuilder::new(directory)
        .max_depth(Some(1))
        .hidden(false)
        .follow_links(false)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    walker
        .filter_map(std::result::Result::ok)
        .filter(|entry| entry.depth() == 1 && entry.file_name() != ".git")
        .map(|entry| describe(roots, entry.path()))
        .collect()
}

fn describe(roots: &RootSet, path: &Path) -> String {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Ok(metadata) = path.symlink_metadata() else {
        return format!("{name}  (unreadable)");
    };
    if metadata.file_type().is_symlink() {
        return match path.canonicalize() {
            Ok(target) if roots.root_of(&target).is_some() => {
                format!("{name} -> {}", roots.display(&target))
            }
            Ok(_) => format!("{name} -> (outside the roots)"),
            Err(_) => format!("{name} -> (broken link)"),
        };
    }
    if metadata.is_dir() {
        return format!("{name}/");
    }
    format!("{name}  {}", human_size(metadata.len()))
}

fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut size = bytes as f64;
    let mut unit = 0;
    while size >= 1024.0 && unit < UNITS.len() - 1 {
        size /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{size:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1536), "1.5 KB");
        assert_eq!(human_size(5 * 1024 * 1024), "5.0 MB");
    }

    #[test]
    fn lists_files_dirs_and_links_respecting_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("w");
        fs::create_dir_all(root.join("src")).unwrap();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::write(root.join(".gitignore"), "build/\n").unwrap();
        fs::create_dir_all(root.join("build")).unwrap();
        fs::write(root.join("a.txt"), "hello").unwrap();
        fs::write(dir.path().join("secret"), "s").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret"), root.join("out")).unwrap();
            std::os::unix::fs::symlink(root.join("a.txt"), root.join("in")).unwrap();
        }
        let roots = RootSet::new(std::slice::from_ref(&root)).unwrap();
        let lines = entries(&roots, &root.canonicalize().unwrap());
        let mut expected = vec![".gitignore  7 B", "a.txt  5 B", "src/"];
        if cfg!(unix) {
            expected = vec![
                ".gitignore  7 B",
                "a.txt  5 B",
                "in -> a.txt",
                "out -> (outside the roots)",
                "src/",
            ];
        }
        assert_eq!(lines, expected);
    }
}
