//! What the platform's source of file events reports: the events it read
//! and why a directory could not be watched. Shared by the sources
//! (`inotify.rs`, `portable.rs`) and the watches over them (`watches.rs`).

use crate::vocabulary::file_changes::ChangeKind;
use std::path::PathBuf;

/// Why a directory could not be watched.
#[derive(Debug, PartialEq, Eq)]
pub enum WatchError {
    /// The system's limit on watches is reached.
    Limit,
    /// The directory went away before its watch was in place.
    Vanished,
    Failed(String),
}

/// What a source read since its last read.
#[derive(Debug, Default)]
pub struct Events {
    /// Entries made, changed or removed, in the order they happened.
    pub changes: Vec<(PathBuf, ChangeKind)>,
    /// Watched directories that went away, with their watches.
    pub gone: Vec<PathBuf>,
    /// The last flush mark whose moment this read has reached.
    pub reached: u64,
    /// The system dropped events: its queue overflowed.
    pub overflowed: bool,
}
