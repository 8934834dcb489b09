//! The documents a server has open, with the version and content hash the
//! server last saw, whether a change elsewhere in the workspace may have
//! made the server's view of them stale, and what must be sent to bring
//! the server up to date.

use crate::vocabulary::documents::DocumentSnapshot;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the server must be told so its copy matches a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncAction {
    Open {
        version: i32,
    },
    /// `previous` is the text the server has, for incremental sync;
    /// `stale` says the change was sent because the server's view of the
    /// document may be out of date after a change elsewhere; `written`
    /// that the file was written since the server last had its text (not
    /// so when a check gives back the disk text it had replaced).
    Change {
        version: i32,
        previous: Arc<str>,
        stale: bool,
        written: bool,
    },
    /// The server has the text already, as an unsaved version, and the
    /// file was written with it (an agent wrote the edit it had checked).
    Saved,
    Unchanged,
}

#[derive(Debug)]
struct OpenDocument {
    snapshot: DocumentSnapshot,
    /// The hash of the last text of the file on disk the server was sent.
    disk_hash: Option<u64>,
    version: i32,
    last_used: Instant,
    /// A file this one depends on may have changed since it was sent.
    stale: bool,
    /// A version sent after a change elsewhere that the server has not
    /// yet published diagnostics for.
    awaiting: Option<Awaiting>,
    /// Opened for background work, with how many of its requests use it
    /// still: closed once the last has its answer. `None` for a document
    /// an agent's question used, or not opened in passing.
    in_passing: Option<u32>,
}

/// What a document is synced for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// An agent's question, or anything else that keeps it open.
    Question,
    /// Background work (an outline in passing): a document it opens is
    /// closed once every such request is answered.
    InPassing,
    /// Sent again after a change: nobody's use.
    Refresh,
}

impl OpenDocument {
    /// Whether `snapshot`, about to be the server's copy, is a text the
    /// file was written with since the server last had the file's text;
    /// records it as the file's.
    fn written(&mut self, snapshot: &DocumentSnapshot) -> bool {
        if !snapshot.on_disk {
            return false;
        }
        self.disk_hash.replace(snapshot.hash) != Some(snapshot.hash)
    }

    fn used(&mut self, used: Use) {
        match used {
            Use::Question => self.in_passing = None,
            Use::InPassing => self.in_passing = self.in_passing.map(|users| users + 1),
            Use::Refresh => {}
        }
    }
}

/// A version the server must be seen to take in before it is asked about
/// the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Awaiting {
    pub version: i32,
    pub since: Instant,
}

/// Open documents keyed by URI.
#[derive(Debug, Default)]
pub struct Documents {
    open: HashMap<String, OpenDocument>,
}

impl Documents {
    /// Records `snapshot` as the server's copy and says what to send.
    pub fn sync(&mut self, snapshot: DocumentSnapshot, used: Use) -> SyncAction {
        let now = Instant::now();
        match self.open.get_mut(&snapshot.uri) {
            Some(open) if open.snapshot.hash == snapshot.hash && !open.stale => {
                open.last_used = now;
                open.used(used);
                open.snapshot.on_disk |= snapshot.on_disk;
                match open.written(&snapshot) {
                    true => SyncAction::Saved,
                    false => SyncAction::Unchanged,
                }
            }
            Some(open) => {
                open.version += 1;
                open.last_used = now;
                open.used(used);
                let stale = std::mem::take(&mut open.stale);
                let written = open.written(&snapshot);
                let previous = std::mem::replace(&mut open.snapshot, snapshot).text;
                SyncAction::Change {
                    version: open.version,
                    previous,
                    stale,
                    written,
                }
            }
            None => {
                let version = 1;
                let uri = snapshot.uri.clone();
                self.open.insert(
                    uri,
                    OpenDocument {
                        disk_hash: snapshot.on_disk.then_some(snapshot.hash),
                        snapshot,
                        version,
                        last_used: now,
                        stale: false,
                        awaiting: None,
                        in_passing: (used == Use::InPassing).then_some(1),
                    },
                );
                SyncAction::Open { version }
            }
        }
    }

    /// A new version of an open document with the text it has, to be sent
    /// again: the version, and the document.
    pub fn send_again(&mut self, uri: &str) -> Option<(i32, DocumentSnapshot)> {
        let open = self.open.get_mut(uri)?;
        open.version += 1;
        Some((open.version, open.snapshot.clone()))
    }

    /// When a document was last used, if open.
    pub fn last_used(&self, uri: &str) -> Option<Instant> {
        self.open.get(uri).map(|open| open.last_used)
    }

    /// The version of the server's copy of a document, if open.
    pub fn version(&self, uri: &str) -> Option<i32> {
        self.open.get(uri).map(|open| open.version)
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

    /// One background request that used a document opened in passing has
    /// its answer: forgets the document if it was the last and nothing
    /// else used it; returns whether it did, and so must be closed.
    pub fn close_background(&mut self, uri: &str) -> bool {
        let Some(open) = self.open.get_mut(uri) else {
            return false;
        };
        let Some(users) = open.in_passing.as_mut() else {
            return false;
        };
        *users = users.saturating_sub(1);
        let last = *users == 0;
        if last {
            self.open.remove(uri);
        }
        last
    }

    pub fn forget(&mut self, uri: &str) {
        self.open.remove(uri);
    }

    /// Forgets the documents whose path `keep` refuses, and returns their
    /// URIs, to be closed.
    pub fn close_unless(&mut self, keep: impl Fn(&Path) -> bool) -> Vec<String> {
        let gone: Vec<String> = self
            .open
            .iter()
            .filter(|(_, open)| !keep(&open.snapshot.path))
            .map(|(uri, _)| uri.clone())
            .collect();
        for uri in &gone {
            self.open.remove(uri);
        }
        gone
    }

    /// Whether `uri` is open and a file it may depend on changed since it
    /// was last sent.
    pub fn is_stale(&self, uri: &str) -> bool {
        self.open.get(uri).is_some_and(|open| open.stale)
    }

    /// The server checked `uri` again by itself after the change
    /// elsewhere: its view is no longer stale.
    pub fn checked_again(&mut self, uri: &str) {
        if let Some(open) = self.open.get_mut(uri) {
            open.stale = false;
        }
    }

    pub fn uris(&self) -> impl Iterator<Item = &str> {
        self.open.keys().map(String::as_str)
    }

    pub fn is_open(&self, uri: &str) -> bool {
        self.open.contains_key(uri)
    }

    /// Marks every open document except `changed` as possibly stale: a
    /// file it depends on may have changed.
    pub fn mark_stale(&mut self, changed: &[&str]) {
        for (uri, open) in &mut self.open {
            if !changed.contains(&uri.as_str()) {
                open.stale = true;
            }
        }
    }

    /// Waits for the server to publish `version` of `uri` before it is
    /// asked about it.
    pub fn await_version(&mut self, uri: &str, version: i32, now: Instant) {
        if let Some(open) = self.open.get_mut(uri) {
            open.awaiting = Some(Awaiting {
                version,
                since: now,
            });
        }
    }

    pub fn awaiting(&self, uri: &str) -> Option<Awaiting> {
        self.open.get(uri).and_then(|open| open.awaiting)
    }

    /// The server published diagnostics for `version` of `uri`: it has
    /// taken that version in.
    pub fn published(&mut self, uri: &str, version: i64) {
        if let Some(open) = self.open.get_mut(uri)
            && open
                .awaiting
                .is_some_and(|awaiting| i64::from(awaiting.version) <= version)
        {
            open.awaiting = None;
        }
    }

    /// Stops waiting on versions sent before `before`.
    pub fn give_up_awaiting(&mut self, before: Instant) {
        for open in self.open.values_mut() {
            if open
                .awaiting
                .is_some_and(|awaiting| awaiting.since < before)
            {
                open.awaiting = None;
            }
        }
    }

    pub fn len(&self) -> usize {
        self.open.len()
    }

    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// The open document `uri` as the server holds it.
    pub fn snapshot(&self, uri: &str) -> Option<DocumentSnapshot> {
        self.open.get(uri).map(|open| open.snapshot.clone())
    }

    /// Every open document.
    pub fn snapshots(&self) -> Vec<DocumentSnapshot> {
        self.open
            .values()
            .map(|open| open.snapshot.clone())
            .collect()
    }

    /// The documents a restarted server is to open: those an agent used.
    /// One open only for background work is not: the request it was open
    /// for is asked of the next process again, with its document, or not
    /// at all.
    pub fn to_reopen(&self) -> Vec<DocumentSnapshot> {
        self.open
            .values()
            .filter(|open| open.in_passing.is_none())
            .map(|open| open.snapshot.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn snapshot(text: &str) -> DocumentSnapshot {
        DocumentSnapshot::new(PathBuf::from("/w/a.py"), "python", text.to_owned())
    }

    #[test]
    fn opens_then_changes_only_when_content_differs() {
        let mut documents = Documents::default();
        assert_eq!(
            documents.sync(snapshot("a"), Use::Question),
            SyncAction::Open { version: 1 }
        );
        assert_eq!(
            documents.sync(snapshot("a"), Use::Question),
            SyncAction::Unchanged
        );
        assert_eq!(
            documents.sync(snapshot("b"), Use::Question),
            SyncAction::Change {
                version: 2,
                previous: "a".into(),
                stale: false,
                written: true,
            }
        );
        assert_eq!(documents.text("file:///w/a.py"), Some("b"));
        assert_eq!(documents.len(), 1);
    }

    #[test]
    fn a_checked_text_the_file_comes_to_hold_is_saved_and_a_text_given_back_is_not() {
        let mut documents = Documents::default();
        let disk = snapshot("a");
        let edited = snapshot("b");
        documents.sync(disk.clone(), Use::Question);
        documents.sync(disk.unsaved("b".into()), Use::Question);
        assert_eq!(
            documents.sync(disk.clone(), Use::Question),
            SyncAction::Change {
                version: 3,
                previous: "b".into(),
                stale: false,
                written: false,
            },
            "given back: the file was never written"
        );
        documents.sync(disk.unsaved("b".into()), Use::Question);
        assert_eq!(
            documents.sync(edited.clone(), Use::Refresh),
            SyncAction::Saved
        );
        assert_eq!(documents.sync(edited, Use::Refresh), SyncAction::Unchanged);
        assert_eq!(
            documents.sync(disk, Use::Refresh),
            SyncAction::Change {
                version: 5,
                previous: "b".into(),
                stale: false,
                written: true,
            },
            "undone on disk"
        );
    }

    #[test]
    fn a_stale_document_is_sent_again_once_and_awaited_until_published() {
        let mut documents = Documents::default();
        documents.sync(snapshot("a"), Use::Question);
        documents.mark_stale(&[]);
        assert_eq!(
            documents.sync(snapshot("a"), Use::Question),
            SyncAction::Change {
                version: 2,
                previous: "a".into(),
                stale: true,
                written: false,
            }
        );
        assert_eq!(
            documents.sync(snapshot("a"), Use::Question),
            SyncAction::Unchanged
        );
        let uri = "file:///w/a.py";
        let now = Instant::now();
        documents.await_version(uri, 2, now);
        documents.published(uri, 1);
        assert!(documents.awaiting(uri).is_some(), "an older version");
        documents.published(uri, 2);
        assert_eq!(documents.awaiting(uri), None);
        documents.mark_stale(&[uri]);
        assert_eq!(
            documents.sync(snapshot("a"), Use::Question),
            SyncAction::Unchanged,
            "it changed itself"
        );
    }

    #[test]
    fn a_background_document_is_closed_unless_used_since() {
        let uri = "file:///w/a.py";
        let mut documents = Documents::default();
        documents.sync(snapshot("a"), Use::InPassing);
        assert!(documents.close_background(uri));
        assert!(!documents.is_open(uri));
        documents.sync(snapshot("a"), Use::InPassing);
        documents.sync(snapshot("a"), Use::Question);
        assert!(!documents.close_background(uri));
        assert!(documents.is_open(uri));
    }

    /// Two outlines in passing of one document (a map's and the index
    /// pass's) leave it open until both are answered, then close it; a
    /// change on disk sent meanwhile is no one's use of it.
    #[test]
    fn a_document_used_by_two_background_requests_closes_after_both() {
        let uri = "file:///w/a.py";
        let mut documents = Documents::default();
        documents.sync(snapshot("a"), Use::InPassing);
        documents.sync(snapshot("a"), Use::InPassing);
        documents.sync(snapshot("b"), Use::Refresh);
        assert!(!documents.close_background(uri));
        assert!(documents.is_open(uri));
        assert!(documents.close_background(uri));
        assert!(!documents.is_open(uri));
    }

    #[test]
    fn a_document_open_only_in_passing_is_not_reopened() {
        let mut documents = Documents::default();
        documents.sync(snapshot("a"), Use::InPassing);
        assert!(documents.to_reopen().is_empty());
        documents.sync(snapshot("a"), Use::Question);
        assert_eq!(documents.to_reopen().len(), 1);
    }

    #[test]
    fn closes_idle_documents() {
        let mut documents = Documents::default();
        documents.sync(snapshot("a"), Use::Question);
        assert!(documents.close_idle(Duration::from_secs(60)).is_empty());
        assert_eq!(
            documents.close_idle(Duration::ZERO),
            vec!["file:///w/a.py".to_owned()]
        );
        assert!(documents.is_empty());
    }
}
