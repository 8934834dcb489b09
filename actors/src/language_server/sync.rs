//! Keeping the server's copy of each document equal to the file on disk:
//! `didOpen`, `didChange` (full or incremental), `didSave` where the server
//! asked for it, sending a document again when a file it depends on
//! changed or when the server forgot it, and the request parameters that
//! name a document and a position in the server's encoding.

use super::readiness::Taking;
use super::{Phase, State};
use crate::language_server::documents::{SyncAction, Use};
use crate::lsp::position::{PositionEncoding, line_at};
use crate::lsp::protocol::{Capabilities, SyncKind};
use crate::messages::language_server::{LanguageServerMsg, ServerRequest};
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::server_states::Strategy;
use ractor::ActorRef;
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long after answering its configuration a server is given to take
/// the answer in (bash-language-server builds its linter from it).
const CONFIGURATION_TAKEN_IN: Duration = Duration::from_millis(300);

impl State {
    /// The request's parameters with `textDocument` and `position` added,
    /// the position converted against the server's copy of the document.
    pub(super) fn request_params(
        &self,
        request: &ServerRequest,
        encoding: PositionEncoding,
    ) -> Value {
        let mut params = request.params.clone();
        let Some(document) = &request.document else {
            return params;
        };
        if !params.is_object() {
            params = json!({});
        }
        params["textDocument"] = json!({"uri": document.uri});
        if let Some(position) = request.position {
            let line = self
                .documents
                .text(&document.uri)
                .and_then(|text| line_at(text, position.line))
                .unwrap_or("");
            let character = encoding.encode_column(line, position.column);
            params["position"] = json!({"line": position.line, "character": character});
        }
        params
    }

    /// The server has its configuration now: one that forgets the
    /// documents opened before it had it gets them again once it has had
    /// time to take the answer in.
    pub(super) fn configuration_answered(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        if std::mem::replace(&mut self.configured, true) || !self.spec.forgets_early_documents {
            return;
        }
        myself.send_after(CONFIGURATION_TAKEN_IN, || LanguageServerMsg::SendOpenAgain);
    }

    /// Sends every open document again, as a change of its version alone;
    /// the server is waited on for each as for a document sent again
    /// after a change on disk.
    pub(super) fn send_open_again(&mut self) {
        let Phase::Ready(capabilities) = &self.phase else {
            return;
        };
        let capabilities = capabilities.clone();
        self.documents.mark_stale(&[]);
        for document in self.documents.snapshots() {
            self.sync_document_for(document, &capabilities, Use::Refresh);
        }
    }

    /// Brings the server's copy up to date. The diagnostics generation is
    /// recorded before the change is written, so no publication that
    /// answers it can be missed or mistaken for an older one. A document
    /// sent again because a file it depends on changed is then waited for:
    /// until the server publishes its version, or, for servers that do not
    /// say which version they publish, until the server is quiet. Returns
    /// whether the document was opened.
    pub(super) fn sync_document(
        &mut self,
        document: DocumentSnapshot,
        capabilities: &Capabilities,
    ) -> bool {
        self.sync_document_for(document, capabilities, Use::Question)
    }

    /// [`Self::sync_document`], for what `used` says: a document opened
    /// for background work is closed once that work is answered, and its
    /// opening is not what makes a server load, so that no agent is told
    /// the server is loading because the index pass opened a file.
    pub(super) fn sync_document_for(
        &mut self,
        document: DocumentSnapshot,
        capabilities: &Capabilities,
        used: Use,
    ) -> bool {
        let uri = document.uri.clone();
        let path = document.path.clone();
        let text = document.text.clone();
        let language = document.language_id.clone();
        let on_disk = document.on_disk;
        match self.documents.sync(document, used) {
            SyncAction::Unchanged => false,
            SyncAction::Open { version } => {
                self.diagnostics
                    .note_change(&uri, i64::from(version), false, Instant::now());
                if used != Use::InPassing {
                    self.readiness.reload(Instant::now());
                }
                self.did_open(&uri, &language, version, &text);
                if on_disk && self.changed_since_checked(&path) {
                    self.did_save(&uri, Some(&text), capabilities);
                }
                true
            }
            SyncAction::Change {
                version,
                previous,
                stale,
                written,
            } => {
                self.diagnostics
                    .note_change(&uri, i64::from(version), true, Instant::now());
                if stale {
                    self.await_taken_in(&uri, version);
                }
                let force = stale && self.spec.rebuilds_only_when_forced && previous == text;
                let change = Change {
                    uri: &uri,
                    language: &language,
                    version,
                    previous: &previous,
                    text: &text,
                };
                self.did_change(&change, force, capabilities);
                // Nothing was saved; and clangd, told of a save, parses its
                // open documents again unforced, which undoes the rebuild.
                if written && !force {
                    self.did_save(&uri, Some(&text), capabilities);
                }
                false
            }
            SyncAction::Saved => {
                self.did_save(&uri, Some(&text), capabilities);
                false
            }
        }
    }

    /// Whether the file changed on disk after the server's last check on
    /// save read it (written before the watcher said so), which a save
    /// then brings up to date.
    fn changed_since_checked(&self, path: &Path) -> bool {
        // Only a server that checks on save pays for reading the stamp.
        self.spec.checks_on_save()
            && std::fs::metadata(path)
                .and_then(|metadata| metadata.modified())
                .is_ok_and(|modified| self.save_check.misses(modified))
    }

    /// Tells the server a file was saved, with its text when it asked for
    /// it and it is known. A server that checks on save (rust-analyzer's
    /// `cargo check`) checks the files as they are on disk then, so its
    /// answers wait for that check.
    pub(super) fn did_save(&mut self, uri: &str, text: Option<&str>, capabilities: &Capabilities) {
        let Some(include_text) = capabilities.save else {
            return;
        };
        let mut params = json!({"textDocument": {"uri": uri}});
        if let Some(text) = text.filter(|_| include_text) {
            params["text"] = json!(text);
        }
        self.notify("textDocument/didSave", params);
        if self.save_check.saved(Instant::now()) {
            // Its answer is final only once the save's check ends.
            self.diagnostics.observations.progress_in_checks = true;
        }
    }

    /// Sends an open document again with the text it has, as a change of
    /// its version alone, so that the server checks it again against the
    /// other documents as they are now (a check's users, once the edit is
    /// in): its next publication answers this version.
    pub(super) fn send_again(&mut self, uri: &str) {
        let Phase::Ready(capabilities) = &self.phase else {
            return;
        };
        let capabilities = capabilities.clone();
        let Some((version, document)) = self.documents.send_again(uri) else {
            return;
        };
        self.diagnostics
            .note_change(uri, i64::from(version), false, Instant::now());
        let change = Change {
            uri,
            language: &document.language_id,
            version,
            previous: &document.text,
            text: &document.text,
        };
        self.did_change(&change, self.spec.rebuilds_only_when_forced, &capabilities);
    }

    fn await_taken_in(&mut self, uri: &str, version: i32) {
        let now = Instant::now();
        match self.strategy() {
            Strategy::Version => self.documents.await_version(uri, version, now),
            // Read before its next answer: nothing to wait for.
            _ if self.spec.while_loading.takes_changed_files_in_first() => {}
            Strategy::Progress | Strategy::Process | Strategy::Pull => {
                self.readiness.workspace_changed(now, Taking::DiskChanges)
            }
        }
    }

    fn did_open(&self, uri: &str, language: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": version, "text": text}}),
        );
    }

    /// Sends a change; `force` asks a server that rebuilds only changed
    /// inputs to check the document again though its text is the same.
    fn did_change(&self, change: &Change, force: bool, capabilities: &Capabilities) {
        let Change {
            uri,
            language,
            version,
            previous,
            text,
        } = *change;
        let change = match capabilities.sync {
            SyncKind::Full => json!({"text": text}),
            SyncKind::Incremental => {
                json!({"range": whole_range(previous, capabilities.encoding), "text": text})
            }
            SyncKind::None => {
                // A server that takes no changes learns new content only by
                // reopening the document.
                self.notify(
                    "textDocument/didClose",
                    json!({"textDocument": {"uri": uri}}),
                );
                return self.did_open(uri, language, version, text);
            }
        };
        let mut params =
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]});
        if force {
            params["forceRebuild"] = json!(true);
        }
        self.notify("textDocument/didChange", params);
    }
}

/// A document's new text, as a change sends it.
#[derive(Clone, Copy)]
struct Change<'a> {
    uri: &'a str,
    language: &'a str,
    version: i32,
    /// The text the server has, for incremental sync.
    previous: &'a str,
    text: &'a str,
}

/// The range covering all of `text`, for an incremental change that
/// replaces the whole document.
fn whole_range(text: &str, encoding: PositionEncoding) -> Value {
    let last_line = text.split('\n').count().saturating_sub(1);
    let last = line_at(text, last_line).unwrap_or("");
    let character = encoding.encode_column(last, last.chars().count());
    json!({"start": {"line": 0, "character": 0}, "end": {"line": last_line, "character": character}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_range_ends_after_the_last_character() {
        assert_eq!(
            whole_range("ab\nc😀", PositionEncoding::Utf16),
            json!({"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 3}})
        );
        assert_eq!(
            whole_range("ab\n", PositionEncoding::Utf8),
            json!({"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}})
        );
    }
}
