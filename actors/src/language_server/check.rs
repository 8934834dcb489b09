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
//! published again since its diagnostics from before.
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
use crate::error::{Error, Result};
use crate::messages::language_server::{
    CheckAnswer, CheckCall, CheckReply, DependentReply, DiagnosticsCall, DiagnosticsReply,
    LanguageServerMsg, Work,
};
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::ids::SessionId;
use ractor::ActorRef;
use serde_json::Value;
use std::sync::Arc;
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
        let session = call.session;
        self.check = Some(Check {
            id,
            session,
            step: vec![None; call.edits.len()],
            edits: call.edits,
            reply: Some(call.reply),
            stage: Stage::Disk,
            held: Vec::new(),
        });
        self.check_diagnostics(myself, id, session, disk);
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
        let Some(index) = check.documents().position(|document| document.uri == uri) else {
            return;
        };
        check.step[index] = Some(reply);
        if check.step.iter().any(Option::is_none) {
            return;
        }
        let replies: Vec<DiagnosticsReply> =
            check.step.iter_mut().filter_map(Option::take).collect();
        match std::mem::replace(&mut check.stage, Stage::Disk) {
            Stage::Disk => self.send_edits(myself, id, replies),
            Stage::Edited { before, bystanders } => {
                self.edits_checked(myself, id, before, replies, bystanders)
            }
            Stage::Restored { touched } => {
                self.put_back_dependents(&touched);
                self.finish_check(myself, id, None);
            }
        }
    }

    /// The disk texts' diagnostics are in: notes where every other open
    /// document stands, and sends the edits' texts.
    fn send_edits(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        id: u64,
        before: Vec<DiagnosticsReply>,
    ) {
        let bystanders = self.bystanders(id);
        let Some(check) = self.check.as_mut().filter(|check| check.id == id) else {
            return;
        };
        check.stage = Stage::Edited { before, bystanders };
        let session = check.session;
        let edited = check
            .edits
            .iter()
            .map(|edit| edit.document.unsaved(edit.text.clone()))
            .collect();
        self.check_diagnostics(myself, id, session, edited);
    }

    /// The open documents outside check `id`, with their diagnostics now.
    fn bystanders(&self, id: u64) -> Vec<Bystander> {
        let Some(check) = self.check.as_ref().filter(|check| check.id == id) else {
            return Vec::new();
        };
        self.documents
            .snapshots()
            .into_iter()
            .filter(|document| !check.covers(&document.uri))
            .filter_map(|document| {
                let entry = self.diagnostics.entry(&document.uri)?;
                Some(Bystander {
                    generation: entry.generation,
                    items: entry.items.clone(),
                    document,
                })
            })
            .collect()
    }

    /// The edits' diagnostics are in: the answer, with the dependents the
    /// server published again meanwhile. Without dependents the check
    /// ends; with some, the caller is answered at once and the check goes
    /// on, holding other work, until the disk texts are checked again.
    fn edits_checked(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        id: u64,
        before: Vec<DiagnosticsReply>,
        after: Vec<DiagnosticsReply>,
        bystanders: Vec<Bystander>,
    ) {
        let edited = before
            .into_iter()
            .zip(after)
            .map(|(before, after)| CheckReply { before, after })
            .collect();
        let mut dependents = Vec::new();
        let mut touched = Vec::new();
        for bystander in bystanders {
            let Some(entry) = self.diagnostics.entry(&bystander.document.uri) else {
                continue;
            };
            if entry.generation == bystander.generation || entry.items == bystander.items {
                continue;
            }
            touched.push(Touched {
                uri: bystander.document.uri.clone(),
                generation: entry.generation,
                before: bystander.items.clone(),
            });
            dependents.push(DependentReply {
                check: CheckReply {
                    before: self.cached_reply(bystander.items),
                    after: self.cached_reply(entry.items.clone()),
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
        let session = check.session;
        let disk: Vec<DocumentSnapshot> = check.documents().cloned().collect();
        self.check_diagnostics(myself, id, session, disk);
    }

    fn cached_reply(&self, items: Arc<[Value]>) -> DiagnosticsReply {
        DiagnosticsReply {
            items: Some(items),
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
            for document in check.documents() {
                self.sync_document(document.clone(), &capabilities);
            }
        }
        if let (Some(reply), Some(answer)) = (check.reply, answer) {
            let _gone = reply.send(answer);
        }
        for work in check.held {
            let _stopped = myself.send_message(work.into_message());
        }
    }

    /// Asks for the fresh diagnostics of each of `documents` as one step
    /// of check `id`, on the path every diagnostics call takes. Every
    /// document is sent before any answer is read: the actor handles the
    /// publications only after this returns.
    fn check_diagnostics(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        id: u64,
        session: SessionId,
        documents: Vec<DocumentSnapshot>,
    ) {
        for document in documents {
            let uri = document.uri.clone();
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
