//! The documents a server has open, with the version and content hash the
//! server last saw, and what must be sent to bring it up to date.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A file's content as read from disk for one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentSnapshot {
    pub path: PathBuf,
    pub uri: String,
    pub language_id: String,
    pub text: Arc<str>,
    pub hash: u64,
}

impl DocumentSnapshot {
    pub fn new(path: PathBuf, language_id: &str, text: String) -> Self {
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        Self {
            uri: crate::lsp::uri::path_to_uri(&path),
            path,
            language_id: language_id.to_owned(),
            hash: hasher.finish(),
            text: text.into(),
        }
    }
}

/// What the server must be told so its copy matches a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncAction {
    Open {
        version: i32,
    },
    /// `previous` is the text the server has, for incremental sync.
    Change {
        version: i32,
        previous: Arc<str>,
    },
    Unchanged,
}

#[derive(Debug)]
struct OpenDocument {
    snapshot: DocumentSnapshot,
    version: i32,
    last_used: Instant,
}

/// Open documents keyed by URI.
#[derive(Debug, Default)]
pub struct Documents {
    open: HashMap<String, OpenDocument>,
}

impl Documents {
    /// Records `snapshot` as the server's copy and says what to send.
    pub fn sync(&mut self, snapshot: DocumentSnapshot) -> SyncAction {
        let now = Instant::now();
        match self.open.get_mut(&snapshot.uri) {
            Some(open) if open.snapshot.hash == snapshot.hash => {
                open.last_used = now;
                SyncAction::Unchanged
            }
            Some(open) => {
                open.version += 1;
                open.last_used = now;
                let previous = std::mem::replace(&mut open.snapshot, snapshot).text;
                SyncAction::Change {
                    version: open.version,
                    previous,
                }
            }
            None => {
                let version = 1;
                let uri = snapshot.uri.clone();
                self.open.insert(
                    uri,
                    OpenDocument {
                        snapshot,
                        version,
                        last_used: now,
                    },
                );
                SyncAction::Open { version }
            }
        }
    }

    /// The server's copy of a document, if open.
    pub fn text(&self, uri: &str) -> Option<&str> {
        self.open.get(uri).map(|open| &*open.snapshot.text)
    }

    /// Removes and returns the URIs unused for longer than `idle`.
    pub fn close_idle(&mut self, idle: Duration) -> Vec<String> {
        let now = Instant::now();
        let idle_uris: Vec<String> = self
            .open
            .iter()
            .filter(|(_, open)| now.duration_since(open.last_used) > idle)
            .map(|(uri, _)| uri.clone())
            .collect();
        for uri in &idle_uris {
            self.open.remove(uri);
        }
        idle_uris
    }

    pub fn forget(&mut self, uri: &str) {
        self.open.remove(uri);
    }

    pub fn len(&self) -> usize {
        self.open.len()
    }

    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// Every open document, for re-opening them on a restarted server.
    pub fn snapshots(&self) -> Vec<DocumentSnapshot> {
        self.open
            .values()
            .map(|open| open.snapshot.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(text: &str) -> DocumentSnapshot {
        DocumentSnapshot::new(PathBuf::from("/w/a.py"), "python", text.to_owned())
    }

    #[test]
    fn opens_then_changes_only_when_content_differs() {
        let mut documents = Documents::default();
        assert_eq!(
            documents.sync(snapshot("a")),
            SyncAction::Open { version: 1 }
        );
        assert_eq!(documents.sync(snapshot("a")), SyncAction::Unchanged);
        assert_eq!(
            documents.sync(snapshot("b")),
            SyncAction::Change {
                version: 2,
                previous: "a".into()
            }
        );
        assert_eq!(documents.text("file:///w/a.py"), Some("b"));
        assert_eq!(documents.len(), 1);
    }

    #[test]
    fn closes_idle_documents() {
        let mut documents = Documents::default();
        documents.sync(snapshot("a"));
        assert!(documents.close_idle(Duration::from_secs(60)).is_empty());
        assert_eq!(
            documents.close_idle(Duration::ZERO),
            vec!["file:///w/a.py".to_owned()]
        );
        assert!(documents.is_empty());
    }
}
