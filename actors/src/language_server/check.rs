//! Checks of edits before they are written (`check_edit`): the document's
//! fresh diagnostics as on disk, then as the edit would make it (sent as
//! an unsaved version), then the disk text sent back.
//!
//! While a check of a document runs, every other caller's work about that
//! document (requests, diagnostics waits, other checks) is held and taken
//! up once the disk text is back, so no session is answered from a text
//! that was never written. Each step is an ordinary diagnostics call of
//! the actor's own (a wait for a publication, or a question to a server
//! that is asked), whose answer comes back as `CheckStep`.

use super::State;
use crate::error::{Error, Result};
use crate::messages::language_server::{
    CheckCall, CheckReply, DiagnosticsCall, DiagnosticsReply, LanguageServerMsg, Work,
};
use crate::vocabulary::documents::DocumentSnapshot;
use ractor::ActorRef;
use tokio::sync::oneshot;

/// One check in progress, by the URI it is about.
pub struct Check {
    call: CheckCall,
    /// The diagnostics as on disk, once they are in.
    before: Option<DiagnosticsReply>,
    /// Other callers' work about the document, in arrival order.
    held: Vec<Work>,
}

impl Check {
    /// The document as it is on disk.
    pub(super) fn document(&self) -> &DocumentSnapshot {
        &self.call.document
    }
}

impl State {
    /// Starts a check, or holds it behind the one running on its document.
    pub(super) fn check_edit(&mut self, myself: &ActorRef<LanguageServerMsg>, call: CheckCall) {
        let uri = call.document.uri.clone();
        if let Some(running) = self.checks.get_mut(&uri) {
            running.held.push(Work::Check(call));
            return;
        }
        let session = call.session;
        let disk = call.document.clone();
        self.checks.insert(
            uri.clone(),
            Check {
                call,
                before: None,
                held: Vec::new(),
            },
        );
        self.check_diagnostics(myself, session, disk);
    }

    /// Takes work about a document under check into that check's hold;
    /// gives it back when there is no such check.
    pub(super) fn hold_for_check(&mut self, work: Work) -> Option<Work> {
        let uri = work.document().map(|document| document.uri.clone());
        match uri.and_then(|uri| self.checks.get_mut(&uri)) {
            Some(check) => {
                check.held.push(work);
                None
            }
            None => Some(work),
        }
    }

    /// The diagnostics of one step are in: the disk text's, after which
    /// the edit's text is sent; or the edit's, after which the disk text is
    /// sent back and the caller answered.
    pub(super) fn check_step(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        uri: &str,
        result: Result<DiagnosticsReply>,
    ) {
        let Some(check) = self.checks.get_mut(uri) else {
            return;
        };
        let reply = match result {
            Ok(reply) => reply,
            Err(error) => return self.finish_check(myself, uri, Err(error)),
        };
        match check.before.take() {
            None => {
                check.before = Some(reply);
                let session = check.call.session;
                let edited = check.call.document.unsaved(check.call.text.clone());
                self.check_diagnostics(myself, session, edited);
            }
            Some(before) => self.finish_check(
                myself,
                uri,
                Ok(CheckReply {
                    before,
                    after: reply,
                }),
            ),
        }
    }

    /// Sends the disk text back, answers the caller, and takes up the work
    /// held meanwhile.
    fn finish_check(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        uri: &str,
        answer: Result<CheckReply>,
    ) {
        let Some(check) = self.checks.remove(uri) else {
            return;
        };
        if let super::Phase::Ready(capabilities) = &self.phase {
            let capabilities = capabilities.clone();
            self.sync_document(check.call.document.clone(), &capabilities);
        }
        let _gone = check.call.reply.send(answer);
        for work in check.held {
            let _stopped = myself.send_message(work.into_message());
        }
    }

    /// Asks for the fresh diagnostics of `document` as one step of the
    /// check of its URI, on the path every diagnostics call takes.
    fn check_diagnostics(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        session: crate::vocabulary::ids::SessionId,
        document: DocumentSnapshot,
    ) {
        let uri = document.uri.clone();
        let (sender, receiver) = oneshot::channel::<Result<DiagnosticsReply>>();
        let inbox = myself.clone();
        tokio::spawn(async move {
            let result = receiver.await.unwrap_or(Err(Error::ShuttingDown));
            let _stopped = inbox.send_message(LanguageServerMsg::CheckStep { uri, result });
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

    /// Every check's caller and held work, for a process that is going:
    /// the checks to be run again by the next one, and the documents under
    /// check as they are on disk.
    pub(super) fn checks_to_hand_over(&mut self) -> Vec<Work> {
        let mut work = Vec::new();
        for (_, check) in self.checks.drain() {
            work.push(Work::Check(check.call));
            work.extend(check.held);
        }
        work
    }

    /// Answers every check's caller and held work with `error`.
    pub(super) fn fail_checks(&mut self, error: &Error) {
        for (_, check) in self.checks.drain() {
            let _gone = check.call.reply.send(Err(error.clone()));
            for work in check.held {
                work.fail(error.clone());
            }
        }
    }
}
