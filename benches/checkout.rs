//! A branch switch as the benchmarks make it, on disk under a running
//! daemon.

use std::path::{Path, PathBuf};

/// Deletes every Python file under `root` and writes it again with a
/// line more (or, on the way back, one less), as a checkout replaces the
/// files that differ between branches; with `whole_tree`, the folders
/// that hold them go first and come back, as a checkout of a branch
/// without them and back does. Returns how many files it rewrote.
pub fn switch_branch(root: &Path, whole_tree: bool) -> usize {
    let files: Vec<PathBuf> = walk(root)
        .into_iter()
        .filter(|path| path.extension().is_some_and(|ext| ext == "py"))
        .collect();
    let marker = "\n# on the other branch\n";
    let texts: Vec<String> = files
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            match text.strip_suffix(marker) {
                Some(back) => back.to_owned(),
                None => format!("{text}{marker}"),
            }
        })
        .collect();
    if whole_tree {
        let mut folders: Vec<PathBuf> = files
            .iter()
            .filter_map(|file| file.strip_prefix(root).ok()?.components().next())
            .map(|first| root.join(first))
            .filter(|folder| folder.is_dir())
            .collect();
        folders.dedup();
        for folder in folders {
            let _ = std::fs::remove_dir_all(folder);
        }
    }
    for (file, text) in files.iter().zip(&texts) {
        let _ = std::fs::remove_file(file);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    files.len()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}
