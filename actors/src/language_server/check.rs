//! Checks of edits before they are written (`check_edit`): the fresh
//! diagnostics of each edited document as on disk, then as the edit would
//! make them (all sent as unsaved versions before any is waited for, so
//! that documents which change together, as a rename's do, are checked
//! together), then the disk texts sent back.
//!
//! While a check runs, every other caller's work about one of its
//! documents (requests, diagnostics waits, other checks) is held and taken
//! up once the disk texts are back, so no session is answered from a text
//! that was never written. Each step is an ordinary diagnostics call of
//! the actor's own (a wait for a publication, or a question to a server
//! that is asked), whose answer comes back as `CheckStep`.

use super::State;
use crate::error::{Error, Result};
use crate::messages::language_server::{
    CheckCall, CheckReply, DiagnosticsCall, DiagnosticsReply, LanguageServerMsg, Work,
};
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::ids::SessionId;
use ractor::ActorRef;
use tokio::sync::oneshot;

/// One check in progress.
pub struct Check {
    id: u64,
    call: CheckCall,
    /// The diagnostics as on disk, per edited document, once all are in.
    before: Option<Vec<DiagnosticsReply>>,
    /// The current step's diagnostics, per edited document.
    step: Vec<Option<DiagnosticsReply>>,
    /// Other callers' work about its documents, in arrival order.
    held: Vec<Work>,
}

impl Check {
    /// Its documents as they are on disk.
    pub(super) fn documents(&self) -> impl Iterator<Item = &DocumentSnapshot> {
        self.call.edits.iter().map(|edit| &edit.document)
    }

    pub(super) fn covers(&self, uri: &str) -> bool {
        self.documents().any(|document| document.uri == uri)
    }
}

impl State {
    /// Starts a check, or holds it behind one running on its documents.
    pub(super) fn check_edit(&mut self, myself: &ActorRef<LanguageServerMsg>, call: CheckCall) {
        let running = self.checks.iter_mut().find(|check| {
            call.edits
                .iter()
                .any(|edit| check.covers(&edit.document.uri))
        });
        if let Some(running) = running {
            running.held.push(Work::Check(call));
            return;
        }
        let id = self.next_check_id;
        self.next_check_id += 1;
        let disk: Vec<DocumentSnapshot> = call
            .edits
            .iter()
            .map(|edit| edit.document.clone())
            .collect();
        let session = call.session;
        self.checks.push(Check {
            id,
            step: vec![None; call.edits.len()],
            call,
            before: None,
            held: Vec::new(),
        });
        self.check_diagnostics(myself, id, session, disk);
    }

    /// Takes work about a document under check into that check's hold;
    /// gives it back when there is no such check.
    pub(super) fn hold_for_check(&mut self, work: Work) -> Option<Work> {
        let running = self.checks.iter_mut().find(|check| {
            work.documents()
                .iter()
                .any(|document| check.covers(&document.uri))
        });
        match running {
            Some(check) => {
                check.held.push(work);
                None
            }
            None => Some(work),
        }
    }

    /// The diagnostics of one document at one step are in. Once every
    /// document's are: after the disk texts', the edits' texts are sent;
    /// after those, the disk texts are sent back and the caller answered.
    pub(super) fn check_step(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        id: u64,
        uri: &str,
        result: Result<DiagnosticsReply>,
    ) {
        let Some(check) = self.checks.iter_mut().find(|check| check.id == id) else {
            return;
        };
        let reply = match result {
            Ok(reply) => reply,
            Err(error) => return self.finish_check(myself, id, Err(error)),
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
        match check.before.take() {
            None => {
                check.before = Some(replies);
                let session = check.call.session;
                let edited = check
                    .call
                    .edits
                    .iter()
                    .map(|edit| edit.document.unsaved(edit.text.clone()))
                    .collect();
                self.check_diagnostics(myself, id, session, edited);
            }
            Some(before) => {
                let answer = before
                    .into_iter()
                    .zip(replies)
                    .map(|(before, after)| CheckReply { before, after })
                    .collect();
                self.finish_check(myself, id, Ok(answer));
            }
        }
    }

    /// Sends the disk texts back, answers the caller, and takes up the
    /// work held meanwhile.
    fn finish_check(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        id: u64,
        answer: Result<Vec<CheckReply>>,
    ) {
        let Some(index) = self.checks.iter().position(|check| check.id == id) else {
            return;
        };
        let check = self.checks.remove(index);
        if let super::Phase::Ready(capabilities) = &self.phase {
            let capabilities = capabilities.clone();
            for document in check.documents() {
                self.sync_document(document.clone(), &capabilities);
            }
        }
        let _gone = check.call.reply.send(answer);
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

    /// Every check's caller and held work, for a process that is going:
    /// the checks to be run again by the next one, and the documents under
    /// check as they are on disk.
    pub(super) fn checks_to_hand_over(&mut self) -> Vec<Work> {
        let mut work = Vec::new();
        for check in self.checks.drain(..) {
            work.push(Work::Check(check.call));
            work.extend(check.held);
        }
        work
    }

    /// Answers every check's caller and held work with `error`.
    pub(super) fn fail_checks(&mut self, error: &Error) {
        for check in self.checks.drain(..) {
            let _gone = check.call.reply.send(Err(error.clone()));
            for work in check.held {
                work.fail(error.clone());
            }
        }
    }
}
