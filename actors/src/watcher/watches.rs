//! The directories watched: one non-recursive watch per directory git
//! does not ignore, added as roots and directories appear and removed
//! with the roots they belong to, or when they go away. The events
//! come from the platform's `Source`.

use super::events::{Events, WatchError};
use super::ignores::Ignores;
#[cfg(all(target_os = "linux", not(feature = "portable")))]
use super::inotify::Source;
#[cfg(any(not(target_os = "linux"), feature = "portable"))]
use super::portable::Source;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Directories watched at most, across all roots.
const MAX_DIRECTORIES: usize = 100_000;

pub struct Watches {
    source: Source,
    directories: BTreeSet<PathBuf>,
    /// Why some directories are not watched, if any are not.
    pub problem: Option<String>,
}

impl Watches {
    pub fn new(source: Source) -> Self {
        Self {
            source,
            directories: BTreeSet::new(),
            problem: None,
        }
    }

    /// Marks this moment for a flush: its number, or `None` when the
    /// source cannot tell when it has read up to a moment.
    pub fn mark(&mut self) -> Option<u64> {
        self.source.mark()
    }

    /// The events queued since the last read; watched directories that
    /// went away are forgotten, with every watch under them.
    pub fn read(&mut self) -> Events {
        let events = self.source.read();
        for directory in &events.gone {
            self.unwatch_tree(directory);
        }
        events
    }

    pub fn count(&self) -> usize {
        self.directories.len()
    }

    /// Watches one directory outside the roots (a configuration layer's).
    pub fn watch_one(&mut self, directory: &Path) {
        if !self.directories.contains(directory) && self.source.add(directory).is_ok() {
            self.directories.insert(directory.to_path_buf());
        }
    }

    /// Watches `directory` and every directory under it that git does not
    /// ignore, loading their `.gitignore`s; `file` is told of each file
    /// found on the way.
    pub fn watch_tree(
        &mut self,
        directory: &Path,
        ignores: &mut Ignores,
        mut file: impl FnMut(&Path),
    ) {
        for entry in walk(directory) {
            let path = entry.path();
            if entry.file_type().is_some_and(|kind| kind.is_file()) {
                file(path);
                continue;
            }
            if !entry.file_type().is_some_and(|kind| kind.is_dir()) {
                continue;
            }
            ignores.load(path);
            if self.directories.contains(path) || self.problem.is_some() {
                continue;
            }
            if self.directories.len() >= MAX_DIRECTORIES {
                self.problem = Some(format!(
                    "only the first {MAX_DIRECTORIES} directories are watched"
                ));
                continue;
            }
            match self.source.add(path) {
                Ok(()) => {
                    self.directories.insert(path.to_path_buf());
                }
                Err(WatchError::Vanished) => {}
                Err(error) => self.problem = Some(watch_problem(&error, self.directories.len())),
            }
        }
    }

    /// Stops watching every directory under `root`.
    pub fn unwatch_tree(&mut self, root: &Path) {
        let under: Vec<PathBuf> = self
            .directories
            .iter()
            .filter(|directory| directory.starts_with(root))
            .cloned()
            .collect();
        for directory in under {
            self.source.remove(&directory);
            self.directories.remove(&directory);
        }
    }
}

/// Directories and files under `directory` that git does not ignore;
/// links are not followed, so nothing outside the roots is reached.
fn walk(directory: &Path) -> impl Iterator<Item = ignore::DirEntry> {
    ignore::WalkBuilder::new(directory)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build()
        .filter_map(std::result::Result::ok)
}

fn watch_problem(error: &WatchError, watched: usize) -> String {
    match error {
        WatchError::Limit => format!(
            "the limit on watched directories (fs.inotify.max_user_watches) was reached after \
             {watched}; changes elsewhere are not seen until files are asked about"
        ),
        WatchError::Vanished => {
            format!("file watching stopped after {watched} directories: a directory went away")
        }
        WatchError::Failed(error) => {
            format!("file watching stopped after {watched} directories: {error}")
        }
    }
}
