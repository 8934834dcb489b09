//! Changes to the workspace: new workspace folders, and changes on disk.
//!
//! New folders are announced with one `workspace/didChangeWorkspaceFolders`
//! to a server that takes folder changes, which then loads them as it
//! loaded its first; a server that does not is restarted with the new set.
//! Changes that come while `initialize` is in flight are announced, as
//! one, once it is answered. Documents under a removed root are closed.
//!
//! Changes on disk, as the Watcher reports them. The server is told of
//! the files it registered for (`workspace/didChangeWatchedFiles`); open
//! documents that changed are sent again with their new text; every other
//! open document is marked stale, to be sent again before the server is
//! next asked about it (servers such as clangd re-read a header only then);
//! and the server is waited on until it has taken the change in: by the
//! version it publishes for a document sent again, or, for servers that do
//! not echo versions, until it goes quiet.

use super::documents::Use;
use super::readiness::Taking;
use super::{Phase, State};
use crate::language;
use crate::lsp::protocol::{Capabilities, Feature, WorkspaceFolder};
use crate::messages::language_server::{FolderChange, LanguageServerMsg};
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::file_changes::{ChangeKind, FileChange};
use crate::vocabulary::server_states::Strategy;
use ractor::ActorRef;
use serde_json::{Value, json};
use std::time::Instant;

/// Changes kept for a server that has not registered for any yet.
const EARLY_CHANGES_KEPT: usize = 10_000;

impl State {
    pub(super) fn folders_changed(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        change: FolderChange,
    ) {
        let before = std::mem::replace(&mut self.folders, change.folders.clone());
        for uri in self
            .documents
            .close_unless(|path| change.roots.root_of(path).is_some())
        {
            self.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri}}),
            );
        }
        if let Phase::Initializing(_) = self.phase {
            self.folders_at_start.get_or_insert(before);
            return;
        }
        self.announce_folders(myself, &before);
    }

    /// Tells the server its folders are now `self.folders` rather than
    /// `before`, or restarts it with them when it cannot be told.
    pub(super) fn announce_folders(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        before: &[WorkspaceFolder],
    ) {
        let takes_changes = match &self.phase {
            Phase::Ready(capabilities) => self.takes_folder_changes(capabilities),
            Phase::Initializing(_) => false,
        };
        let as_json = |folder: &WorkspaceFolder| json!({"uri": folder.uri, "name": folder.name});
        let added: Vec<Value> = self
            .folders
            .iter()
            .filter(|folder| !before.iter().any(|old| old.uri == folder.uri))
            .map(as_json)
            .collect();
        let removed: Vec<Value> = before
            .iter()
            .filter(|old| !self.folders.iter().any(|folder| folder.uri == old.uri))
            .map(as_json)
            .collect();
        if added.is_empty() && removed.is_empty() {
            return;
        }
        if !takes_changes {
            return self.retire(
                myself,
                "restarted with the new workspace folders".into(),
                true,
            );
        }
        let loads = !added.is_empty();
        self.notify(
            "workspace/didChangeWorkspaceFolders",
            json!({"event": {"added": added, "removed": removed}}),
        );
        if loads {
            self.readiness.load_again(Instant::now());
        }
        self.find_gaps(myself);
    }

    /// Whether the server can be told of new workspace folders rather
    /// than restarted with them: it announces it, and its language entry
    /// does not know better.
    pub(super) fn takes_folder_changes(&self, capabilities: &Capabilities) -> bool {
        capabilities.supports(Feature::FolderChanges) && !self.spec.misses_added_folders
    }

    pub(super) fn files_changed(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        changes: &[FileChange],
    ) {
        if !self.registrations.any() {
            let room = EARLY_CHANGES_KEPT.saturating_sub(self.early_changes.len());
            self.early_changes
                .extend(changes.iter().take(room).cloned());
        }
        let Phase::Ready(capabilities) = &self.phase else {
            // A server still starting reads the files as they are now,
            // and is told of them again once it registers to be.
            return;
        };
        let capabilities = capabilities.clone();
        let relevant: Vec<&FileChange> = changes
            .iter()
            .filter(|change| self.serves(change) || self.registrations.matches(change))
            .collect();
        if relevant.is_empty() {
            return;
        }
        let changes: Vec<FileChange> = changes
            .iter()
            .map(|change| FileChange {
                kind: self.kind_as_told(change),
                ..change.clone()
            })
            .collect();
        let changes = changes.as_slice();
        let only_changed = relevant
            .iter()
            .all(|change| self.kind_as_told(change) == ChangeKind::Changed);
        // An agent's edit is one file; more at once is a checkout, a
        // stash or a generator, whose rounds are no edit's.
        let files: std::collections::HashSet<&str> =
            relevant.iter().map(|change| change.uri.as_str()).collect();
        if files.len() > 1 {
            self.diagnostics.workspace_changed(Instant::now());
        }
        if let Some(params) = self.registrations.notification(changes) {
            self.notify("workspace/didChangeWatchedFiles", params);
        }
        // Open documents are read here, in the handler: they are few and
        // small, and reading them now puts their new text ahead of every
        // request already queued behind this message.
        let mut resent = Vec::new();
        let mut unopened = None;
        for change in &relevant {
            self.coverage.forget(&change.uri);
            if !self.documents.is_open(&change.uri) {
                if self.spec.reads_disk_only_at_start && change.kind != ChangeKind::Deleted {
                    self.show_once(change);
                }
                if self.serves(change) {
                    unopened = unopened.or(Some(change.uri.as_str()));
                }
                continue;
            }
            resent.push(change.uri.as_str());
            match DocumentSnapshot::read(&change.path, language::language_id(&change.path)) {
                Ok(document) if change.kind != ChangeKind::Deleted => {
                    self.sync_document_for(document, &capabilities, Use::Refresh);
                }
                _ => self.close_document(&change.uri),
            }
        }
        // The last check on save read the files as they were: a save
        // starts the next. rust-analyzer takes one for any file of its
        // workspace, open or not, and checks the whole workspace for it,
        // so one for the files not open is enough.
        if let Some(uri) = unopened.filter(|_| self.spec.checks_on_save()) {
            self.did_save(uri, None, &capabilities);
        }
        // Another language's code alone changed: the server was told, as
        // it asked, but its view of its documents is what it was.
        if relevant
            .iter()
            .any(|change| self.spec.may_take_in(&change.path))
        {
            // A server that reads a changed file before its next answer
            // also checks the documents that import it again by itself
            // (pyright: a dependent's diagnostics pulled at once after its
            // import's type changed were right 20 times of 20, and
            // through a second module too): sending them again would only
            // make it parse and check each from scratch before answering.
            // A linter of one file at a time has nothing to check again.
            let needs_nothing_more = only_changed
                && (self.spec.while_loading.takes_changed_files_in_first()
                    || self.spec.lints_each_file_alone);
            if !needs_nothing_more {
                self.documents.mark_stale(&resent);
            }
            self.start_disk_change(myself, &resent);
            // A server that echoes versions is waited on exactly, document
            // by document, when each is sent again; one of the two above
            // is not waited on for files that only changed; others until
            // they go quiet.
            if self.strategy() != Strategy::Version && !needs_nothing_more {
                self.readiness
                    .workspace_changed(Instant::now(), Taking::DiskChanges);
            }
        }
        tracing::debug!(server = %self.spec.name, changes = relevant.len(), "workspace changed on disk");
        self.release_ready(myself);
    }

    /// The server registered for changes: tells it those that came
    /// before, which a scan at its start may have missed.
    pub(super) fn tell_early_changes(&mut self) {
        let early = std::mem::take(&mut self.early_changes);
        if let Some(params) = self.registrations.notification(&early) {
            self.notify("workspace/didChangeWatchedFiles", params);
        }
    }

    /// Opens a file changed on disk and closes it again: a server that
    /// reads the disk only at its start reads it then, and keeps what it
    /// read. It is not one of the documents Windlass keeps open.
    fn show_once(&self, change: &FileChange) {
        let Some(language) = language::language_id(&change.path) else {
            return;
        };
        if !self.spec.serves(language) {
            return;
        }
        let Ok(document) = DocumentSnapshot::read(&change.path, Some(language)) else {
            return;
        };
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": change.uri, "languageId": language, "version": 0, "text": &*document.text}}),
        );
        self.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": change.uri}}),
        );
    }

    /// A file an editor replaced by renaming a new one over it is, to a
    /// server that has it open, the same file with new content.
    fn kind_as_told(&self, change: &FileChange) -> ChangeKind {
        match change.kind {
            ChangeKind::Created | ChangeKind::MovedIn if self.documents.is_open(&change.uri) => {
                ChangeKind::Changed
            }
            kind => kind,
        }
    }

    /// Whether the changed file is in one of the server's languages.
    fn serves(&self, change: &FileChange) -> bool {
        language::candidate_languages(&change.path)
            .iter()
            .any(|language| self.spec.serves(language))
    }

    fn close_document(&mut self, uri: &str) {
        self.documents.forget(uri);
        self.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
    }
}
