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
