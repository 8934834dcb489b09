//! A check of an edit in progress (`check.rs` runs it): its documents,
//! where it is, what it has learned so far, and the work it holds. One
//! runs at a time.

use crate::error::Result;
use crate::messages::language_server::{CheckAnswer, DiagnosticsReply, EditedDocument, Work};
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::ids::SessionId;
use ractor::RpcReplyPort;
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

/// The check in progress; one runs at a time.
pub(super) struct Check {
    pub(super) id: u64,
    pub(super) session: SessionId,
    pub(super) edits: Vec<EditedDocument>,
    /// The caller, until it is answered.
    pub(super) reply: Option<RpcReplyPort<Result<CheckAnswer>>>,
    pub(super) stage: Stage,
    /// The open documents outside the check asked for their diagnostics
    /// at each step beside the edited ones, when the server is asked
    /// rather than waited for: it publishes nothing, so its dependents
    /// are found by asking. Empty for a server that publishes.
    pub(super) asked: Vec<DocumentSnapshot>,
    /// The call's users (files that use a name the edit changes), kept
    /// for a check handed to the next process.
    pub(super) users: Vec<DocumentSnapshot>,
    /// The users a server that publishes is sent again right after the
    /// edit, each waited for at every step beside the edited documents:
    /// a document not sent again may not be checked again, and its last
    /// publication would pass for the edit's. Empty for a server that is
    /// asked (its users are among `asked`).
    pub(super) sent_again: Vec<DocumentSnapshot>,
    /// The users that were not open before the check, and when the check
    /// last used them: closed once it ends, unless used since.
    pub(super) opened: Vec<String>,
    pub(super) users_last_used: Option<Instant>,
    /// The current step's diagnostics: the edited documents', then the
    /// asked ones', then those sent again.
    pub(super) step: Vec<Option<DiagnosticsReply>>,
    /// Other callers' work, in arrival order.
    pub(super) held: Vec<Work>,
}

/// Where a check is, with what it has learned so far.
pub(super) enum Stage {
    /// Waiting for the diagnostics of the disk texts.
    Disk,
    /// The edits' texts are in; waiting for their diagnostics.
    Edited {
        before: Vec<DiagnosticsReply>,
        bystanders: Vec<Bystander>,
    },
    /// The caller is answered and the disk texts are back; waiting for
    /// the server to have checked them again, because the edit touched
    /// dependents.
    Restored { touched: Vec<Touched> },
}

/// A dependent: the generation of its diagnostics while the edit was in,
/// and its diagnostics before.
pub(super) struct Touched {
    pub(super) uri: String,
    pub(super) generation: u64,
    pub(super) before: Arc<[Value]>,
}

/// An open document outside a check, as its diagnostics stood when the
/// edits' texts were sent.
pub(super) struct Bystander {
    pub(super) document: DocumentSnapshot,
    /// The generation of its cached diagnostics; `None` for diagnostics
    /// asked for, which no publication replaces.
    pub(super) generation: Option<u64>,
    pub(super) items: Arc<[Value]>,
}

impl Check {
    /// Its documents as they are on disk.
    pub(super) fn documents(&self) -> impl Iterator<Item = &DocumentSnapshot> {
        self.edits.iter().map(|edit| &edit.document)
    }

    /// Where the step's diagnostics of `uri` go: the edited documents
    /// first, then the asked ones, then those sent again.
    pub(super) fn step_index(&self, uri: &str) -> Option<usize> {
        self.documents()
            .chain(&self.asked)
            .chain(&self.sent_again)
            .position(|document| document.uri == uri)
    }

    /// How many documents each step waits for.
    pub(super) fn step_len(&self) -> usize {
        self.edits.len() + self.asked.len() + self.sent_again.len()
    }

    pub(super) fn covers(&self, uri: &str) -> bool {
        self.documents().any(|document| document.uri == uri)
    }

    /// Whether `work` must wait for this check: another check (one runs
    /// at a time, so that none starts from another's text), work about one
    /// of the check's documents, or a diagnostics wait once the edit is in,
    /// which may be answered from the edit until the check ends.
    pub(super) fn holds(&self, work: &Work) -> bool {
        let edit_in = !matches!(self.stage, Stage::Disk);
        match work {
            Work::Check(_) => true,
            Work::Diagnostics(_) if edit_in => true,
            _ => work
                .documents()
                .iter()
                .any(|document| self.covers(&document.uri)),
        }
    }
}
