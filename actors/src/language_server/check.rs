//! Checks of edits before they are written (`check_edit`): the fresh
//! diagnostics of each edited document as on disk, then as the edit would
//! make them (all sent as unsaved versions before any is waited for, so
//! that documents which change together, as a rename's do, are checked
//! together), then the disk texts sent back.
//!
//! Open documents the check does not edit are its bystanders. A server
//! that checks importers again publishes theirs while the edit is in: those
//! whose diagnostics changed are the edit's dependents, answered beside
//! the edited documents. Their cache then holds answers to a text that was
//! never written, so once there are dependents the caller is answered and
//! the check goes on: it waits, after the disk texts are back, for the
//! server's fresh diagnostics of them, and gives any dependent not
//! published again since its diagnostics from before. A server that is
//! asked for diagnostics publishes none, so each step asks it for every
//! bystander's too, and nothing is cached. A linter of one file at a time
//! (ruff) has no dependents: its bystanders are not looked at.
//!
//! While a check runs, every other caller's work about one of its
//! documents (requests, diagnostics waits, other checks), and every
//! diagnostics wait once the edit is in, is held and taken up when the
//! check ends, so no session is answered from a text that was never
//! written. Each step is an ordinary diagnostics call of the actor's own
//! (a wait for a publication, or a question to a server that is asked),
//! whose answer comes back as `CheckStep`.

use super::State;
use super::edit_check::{Bystander, Check, Stage, Touched};
use super::related;
use crate::error::{Error, Result};
use crate::messages::language_server::{
    CheckAnswer, CheckCall, CheckReply, DependentReply, DiagnosticsCall, DiagnosticsReply,
    EditedDocument, LanguageServerMsg, Work,
};
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::ids::SessionId;
use ractor::ActorRef;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::oneshot;

impl State {
    /// Starts a check, or holds it behind the one running.
    pub(super) fn check_edit(&mut self, myself: &ActorRef<LanguageServerMsg>, call: CheckCall) {
        let Some(Work::Check(call)) = self.hold_for_check(Work::Check(call)) else {
            return;
        };
        let id = self.next_check_id;
        self.next_check_id += 1;
        let disk: Vec<DocumentSnapshot> = call
            .edits
            .iter()
            .map(|edit| edit.document.clone())
            .collect();
        let edited = |uri: &str| disk.iter().any(|document| document.uri == uri);
        // A linter of one file at a time has no dependents to find.
        let alone = self.spec.lints_each_file_alone;
        let users: Vec<DocumentSnapshot> = call
            .users
            .iter()
            .filter(|user| !alone && !edited(&user.uri))
            .cloned()
            .collect();
        let opened = users
            .iter()
            .filter(|user| !self.documents.is_open(&user.uri))
            .map(|user| user.uri.clone())
            .collect();
        let (asked, sent_again) = match self.pulls() && !alone {
            true => {
                let mut asked: Vec<DocumentSnapshot> = self
                    .documents
                    .snapshots()
                    .into_iter()
                    .filter(|open| !edited(&open.uri))
                    .collect();
                for user in &users {
                    if asked.iter().all(|document| document.uri != user.uri) {
                        asked.push(user.clone());
                    }
                }
                (asked, Vec::new())
            }
            false => (Vec::new(), users.clone()),
        };
        let session = call.session;
        let check = Check {
            id,
            session,
            step: Vec::new(),
            edits: call.edits,
            asked,
            users: call.users,
            sent_again,
            opened,
            users_last_used: None,
            reply: Some(call.reply),
            stage: Stage::Disk,
            held: Vec::new(),
        };
        let documents = disk
            .into_iter()
            .chain(check.asked.iter().cloned())
            .chain(check.sent_again.iter().cloned())
            .collect();
        self.check = Some(Check {
            step: vec![None; check.step_len()],
            ..check
        });
        self.check_diagnostics(myself, id, session, documents, &[]);
    }

    /// Takes work the running check must hold into its hold; gives it
    /// back when there is no such check.
    pub(super) fn hold_for_check(&mut self, work: Work) -> Option<Work> {
        match self.check.as_mut().filter(|check| check.holds(&work)) {
            Some(check) => {
                check.held.push(work);
                None
            }
            None => Some(work),
        }
    }

    /// The diagnostics of one document at one step are in. Once every
    /// document's are, the check moves on: from the disk texts to the
    /// edits', from the edits' to the disk texts again, and from those to
    /// its end.
    pub(super) fn check_step(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        id: u64,
        uri: &str,
        result: Result<DiagnosticsReply>,
    ) {
        let Some(check) = self.check.as_mut().filter(|check| check.id == id) else {
            return;
        };
        let reply = match result {
            Ok(reply) => reply,
            Err(error) => return self.finish_check(myself, id, Some(Err(error))),
        };
        let Some(index) = check.step_index(uri) else {
            return;
        };
        check.step[index] = Some(reply);
        if check.step.iter().any(Option::is_none) {
            return;
        }
        let mut replies: Vec<DiagnosticsReply> =
            check.step.iter_mut().filter_map(Option::take).collect();
        // The documents sent again are read from the cache, as any
        // publication is.
        let mut asked = replies.split_off(check.edits.len());
        asked.truncate(check.asked.len());
        match std::mem::replace(&mut check.stage, Stage::Disk) {
            Stage::Disk => self.send_edits(myself, id, replies, asked),
            Stage::Edited { before, bystanders } => {
                self.edits_checked(myself, id, before, replies, bystanders, &asked)
            }
            Stage::Restored { touched } => {
                self.put_back_dependents(&touched);
                self.finish_check(myself, id, None);
            }
        }
    }

    /// The disk texts' diagnostics are in: notes where every other open
    /// document stands, and sends the edits' texts (beside the asked
    /// documents as they are now).
    fn send_edits(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        id: u64,
        before: Vec<DiagnosticsReply>,
        asked: Vec<DiagnosticsReply>,
    ) {
        let bystanders = self.bystanders(id, asked);
        let Some(check) = self.check.as_mut().filter(|check| check.id == id) else {
            return;
        };
        // A document closed meanwhile is no longer asked; one changed
        // meanwhile is asked as it is, and its own change is no dependent.
        let open_now = |documents: &[DocumentSnapshot]| -> Vec<DocumentSnapshot> {
            documents
                .iter()
                .filter_map(|document| self.documents.snapshot(&document.uri))
                .collect()
        };
        check.asked = open_now(&check.asked);
        check.sent_again = open_now(&check.sent_again);
        check.step = vec![None; check.step_len()];
        check.stage = Stage::Edited { before, bystanders };
        let session = check.session;
        let again: Vec<String> = check
            .sent_again
            .iter()
            .map(|document| document.uri.clone())
            .collect();
        let documents = check
            .edits
            .iter()
            .map(|edit| edit.document.unsaved(edit.text.clone()))
            .chain(check.asked.iter().cloned())
            .chain(check.sent_again.iter().cloned())
            .collect();
        self.check_diagnostics(myself, id, session, documents, &again);
        if let Some(check) = self.check.as_mut().filter(|check| check.id == id) {
            check.users_last_used = Some(Instant::now());
        }
    }

    /// The open documents outside check `id`, with their diagnostics now:
    /// as `asked` answered for them, or as cached.
    fn bystanders(&self, id: u64, asked: Vec<DiagnosticsReply>) -> Vec<Bystander> {
        let Some(check) = self.check.as_ref().filter(|check| check.id == id) else {
            return Vec::new();
        };
        if self.spec.lints_each_file_alone {
            return Vec::new();
        }
        if !check.asked.is_empty() {
            return check
                .asked
                .iter()
                .zip(asked)
                .map(|(document, reply)| Bystander {
                    document: document.clone(),
                    generation: None,
                    items: reply.items.unwrap_or_else(|| Arc::from([])),
                })
                .collect();
        }
        self.documents
            .snapshots()
            .into_iter()
            .filter(|document| !check.covers(&document.uri))
            .filter_map(|document| {
                // Diagnostics not yet of the document's text (a file an
                // earlier check has just given back its disk text) would
                // make the server's next publication of it look like
                // this edit's doing.
                let entry = self
                    .diagnostics
                    .entry(&document.uri)
                    .filter(|entry| entry.is_fresh())?;
                Some(Bystander {
                    generation: Some(entry.generation),
                    items: entry.items.clone(),
                    document,
                })
            })
            .collect()
    }

    /// The edits' diagnostics are in: the answer, with the dependents whose
    /// diagnostics changed meanwhile (published again, or as asked). Without
    /// dependents the server published, the check ends; with some, the
    /// caller is answered at once and the check goes on, holding other
    /// work, until the disk texts are checked again.
    fn edits_checked(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        id: u64,
        before: Vec<DiagnosticsReply>,
        after: Vec<DiagnosticsReply>,
        bystanders: Vec<Bystander>,
        asked: &[DiagnosticsReply],
    ) {
        let edited = before
            .into_iter()
            .zip(after)
            .map(|(before, after)| CheckReply { before, after })
            .collect();
        let mut dependents = Vec::new();
        let mut touched = Vec::new();
        for bystander in bystanders {
            let Some((items, generation)) = self.bystander_now(id, &bystander, asked) else {
                continue;
            };
            if items == bystander.items {
                continue;
            }
            if let Some(generation) = generation {
                touched.push(Touched {
                    uri: bystander.document.uri.clone(),
                    generation,
                    before: bystander.items.clone(),
                });
            }
            dependents.push(DependentReply {
                check: CheckReply {
                    before: self.cached_reply(bystander.items),
                    after: self.cached_reply(items),
                },
                document: bystander.document,
            });
        }
        let answer = CheckAnswer { edited, dependents };
        if touched.is_empty() {
            return self.finish_check(myself, id, Some(Ok(answer)));
        }
        let Some(check) = self.check.as_mut().filter(|check| check.id == id) else {
            return;
        };
        if let Some(reply) = check.reply.take() {
            let _gone = reply.send(Ok(answer));
        }
        check.stage = Stage::Restored { touched };
        check.asked.clear();
        check.sent_again.clear();
        check.step = vec![None; check.edits.len()];
        let session = check.session;
        let disk: Vec<DocumentSnapshot> = self
            .check
            .iter()
            .flat_map(|check| &check.edits)
            .map(|edit| self.given_back(edit))
            .collect();
        self.check_diagnostics(myself, id, session, disk, &[]);
    }

    /// An edited document as the check leaves it: the disk text the check
    /// began with while the server still holds the edit's; otherwise as
    /// the server holds it now, since the file changed on disk meanwhile
    /// (an agent wrote the edit it had checked) and that is the newer
    /// text, already sent.
    fn given_back(&self, edit: &EditedDocument) -> DocumentSnapshot {
        match self.documents.snapshot(&edit.document.uri) {
            Some(now) if now.on_disk || *now.text != *edit.text => now,
            _ => edit.document.clone(),
        }
    }

    /// A bystander's diagnostics with the edit in, if they may have
    /// changed: as published since (with their generation), or as asked
    /// of the same text it had before.
    fn bystander_now(
        &self,
        id: u64,
        bystander: &Bystander,
        asked: &[DiagnosticsReply],
    ) -> Option<(Arc<[Value]>, Option<u64>)> {
        let uri = &bystander.document.uri;
        let Some(before) = bystander.generation else {
            let check = self.check.as_ref().filter(|check| check.id == id)?;
            let index = check.asked.iter().position(|document| {
                document.uri == *uri && document.hash == bystander.document.hash
            })?;
            return asked.get(index)?.items.clone().map(|items| (items, None));
        };
        let entry = self.diagnostics.entry(uri)?;
        (entry.generation != before).then(|| (entry.items.clone(), Some(entry.generation)))
    }

    fn cached_reply(&self, items: Arc<[Value]>) -> DiagnosticsReply {
        DiagnosticsReply {
            items: Some(related::with_original_severities(items, &self.diagnostics)),
            encoding: self.encoding(),
            file_problem: None,
            warnings: self.coverage.answer_warnings(&self.spec.label()),
        }
    }

    /// Gives each dependent the server has not published again since the
    /// edit's text the diagnostics it had before it.
    fn put_back_dependents(&mut self, touched: &[Touched]) {
        for dependent in touched {
            let unchanged = self
                .diagnostics
                .entry(&dependent.uri)
                .is_some_and(|entry| entry.generation == dependent.generation);
            if unchanged {
                self.diagnostics
                    .put_back(&dependent.uri, dependent.before.clone());
            }
        }
    }

    /// Sends the disk texts back (a check ending early may not have),
    /// answers the caller if it is still waiting, and takes up the work
    /// held meanwhile.
    fn finish_check(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        id: u64,
        answer: Option<Result<CheckAnswer>>,
    ) {
        let Some(check) = self.check.take_if(|check| check.id == id) else {
            return;
        };
        if let super::Phase::Ready(capabilities) = &self.phase {
            let capabilities = capabilities.clone();
            for edit in &check.edits {
                self.sync_document(self.given_back(edit), &capabilities);
            }
        }
        self.close_users(&check.opened, check.users_last_used);
        if let (Some(reply), Some(answer)) = (check.reply, answer) {
            let _gone = reply.send(answer);
        }
        for work in check.held {
            let _stopped = myself.send_message(work.into_message());
        }
    }

    /// Closes the users opened for a check, unless something else used
    /// them after the check last did: a server that checks every open
    /// document after each change (tsserver) is not left with them all.
    fn close_users(&mut self, opened: &[String], last_used: Option<Instant>) {
        let Some(last_used) = last_used else {
            return;
        };
        for uri in opened {
            if self
                .documents
                .last_used(uri)
                .is_some_and(|used| used <= last_used)
            {
                self.documents.forget(uri);
                self.notify(
                    "textDocument/didClose",
                    json!({"textDocument": {"uri": uri}}),
                );
            }
        }
    }

    /// Asks for the fresh diagnostics of each of `documents` as one step
    /// of check `id`, on the path every diagnostics call takes; those in
    /// `again` are sent again first, after the documents before them.
    /// Every document is sent before any answer is read: the actor
    /// handles the publications only after this returns.
    fn check_diagnostics(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        id: u64,
        session: SessionId,
        documents: Vec<DocumentSnapshot>,
        again: &[String],
    ) {
        for document in documents {
            let uri = document.uri.clone();
            if again.contains(&uri) {
                self.send_again(&uri);
            }
            let (sender, receiver) = oneshot::channel::<Result<DiagnosticsReply>>();
            let inbox = myself.clone();
            tokio::spawn(async move {
                let result = receiver.await.unwrap_or(Err(Error::ShuttingDown));
                let _stopped = inbox.send_message(LanguageServerMsg::CheckStep {
                    check: id,
                    uri,
                    result,
                });
            });
            self.diagnostics(
                myself,
                DiagnosticsCall {
                    session,
                    document,
                    reply: sender.into(),
                },
            );
        }
    }

    /// The check's caller and held work, for a process that is going: the
    /// check to be run again by the next one unless its caller has its
    /// answer, and its documents as they are on disk.
    pub(super) fn checks_to_hand_over(&mut self) -> Vec<Work> {
        let mut work = Vec::new();
        if let Some(check) = self.check.take() {
            if let Some(reply) = check.reply {
                work.push(Work::Check(CheckCall {
                    session: check.session,
                    edits: check.edits,
                    users: check.users,
                    reply,
                }));
            }
            work.extend(check.held);
        }
        work
    }

    /// Answers the check's caller and held work with `error`.
    pub(super) fn fail_checks(&mut self, error: &Error) {
        if let Some(check) = self.check.take() {
            if let Some(reply) = check.reply {
                let _gone = reply.send(Err(error.clone()));
            }
            for work in check.held {
                work.fail(error.clone());
            }
        }
    }
}
