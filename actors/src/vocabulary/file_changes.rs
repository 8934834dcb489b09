//! Files changed on disk, as the Watcher saw them and servers are told
//! of them (`workspace/didChangeWatchedFiles`).

use crate::lsp::uri::path_to_uri;
use std::path::PathBuf;

/// What happened to a file, as `workspace/didChangeWatchedFiles` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Changed,
    Deleted,
    /// Renamed onto its path: a file moved in, or an editor's save that
    /// renames a new file over the old one. Whether a file was there
    /// before is not known, so servers are told it was created and
    /// changed, which holds either way: the Svelte server takes a file
    /// said to be created for new, and kept the old text of one saved so.
    MovedIn,
}

/// One file that changed on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: PathBuf,
    pub uri: String,
    pub kind: ChangeKind,
}

impl FileChange {
    pub fn new(path: PathBuf, kind: ChangeKind) -> Self {
        Self {
            uri: path_to_uri(&path),
            path,
            kind,
        }
    }
}
