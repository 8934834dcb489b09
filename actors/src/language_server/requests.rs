//! The request path: new work is admitted (or queued while the server
//! initializes, or handed to the restart when the process is dying), its
//! document synced at once, then held until the server can answer it
//! truthfully, and sent with what the caller should know: once for every
//! caller asking the identical question while it is in flight, and within
//! its session's fair share of the server (`fairness.rs`).

use super::documents::Use;
use super::fairness::Admitted;
use super::readiness::Taking;
use super::turns::ONE_AT_A_TIME;
use super::{Admission, Pending, Phase, Sent, State};
use crate::error::{Error, Result};
use crate::messages::language_server::{Call, LanguageServerMsg, Reply, ServerRequest, Work};
use ractor::ActorRef;
use serde_json::Value;
use std::time::Instant;

impl State {
    /// What becomes of new work now: sent to a ready process, queued
    /// until `initialize` is answered, or, when the process has died,
    /// handed back to the Supervisor for the next process.
    pub(super) fn admit(&mut self) -> Admission {
        if self.exiting || self.transport.has_exited() || self.process_stat.is_dying() {
            return Admission::Dead;
        }
        match &self.phase {
            Phase::Initializing(_) => Admission::Queue,
            Phase::Ready(capabilities) => Admission::Ready(capabilities.clone()),
        }
    }

    /// Keeps work that cannot be sent yet, or hands it on.
    pub(super) fn defer(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        admission: Admission,
        work: Work,
    ) {
        match (admission, &mut self.phase) {
            (Admission::Queue, Phase::Initializing(queued)) => queued.push(work),
            _ => {
                self.orphans.push(work);
                self.exited(myself);
            }
        }
    }

    pub(super) fn request(&mut self, myself: &ActorRef<LanguageServerMsg>, call: Call) {
        if self.outlines_without_opening(&call.request) {
            return self.ask_tsserver_outline(myself, call);
        }
        self.request_opening(myself, call);
    }

    /// Sends a request, its document opened or synced first.
    pub(super) fn request_opening(&mut self, myself: &ActorRef<LanguageServerMsg>, call: Call) {
        let capabilities = match self.admit() {
            Admission::Ready(capabilities) => capabilities,
            other => return self.defer(myself, other, Work::Request(call)),
        };
        if call.reply.is_closed() {
            return;
        }
        if let Some(feature) = call.request.capability
            && !capabilities.supports(feature)
        {
            let refusal = Error::Unsupported {
                server: self.spec.label(),
                feature: feature.name().into(),
            };
            let _gone = call.reply.send(Err(refusal));
            return;
        }
        // The document is synced at once, so a server that loads a
        // project only for an open file starts loading it now.
        if let Some(document) = &call.request.document {
            let used = match call.request.background {
                true => Use::InPassing,
                false => Use::Question,
            };
            let opened = self.sync_document_for(document.clone(), &capabilities, used);
            // The file may belong to a project the server loads only now
            // (tsserver): a question about the whole project waits until
            // the server has taken it in, or its answer is the new
            // project's alone.
            if opened && super::coverage::needs_index(call.request.method, &call.request.params) {
                self.readiness
                    .workspace_changed(Instant::now(), Taking::OpenedFiles);
            }
        }
        if self.blocks(&call.request) {
            return self.hold(myself, call);
        }
        self.send(myself, call);
    }

    /// Sends a request the server can answer now: shares the answer of an
    /// identical one in flight, or writes it when its session's share of
    /// the server allows, else queues it for its turn.
    pub(super) fn send(&mut self, myself: &ActorRef<LanguageServerMsg>, call: Call) {
        let Phase::Ready(capabilities) = &self.phase else {
            return drop(call.reply.send(Err(Error::ShuttingDown)));
        };
        if call.reply.is_closed() {
            return;
        }
        let params = self.request_params(&call.request, capabilities.encoding);
        let key = self.question(&call.request, &params);
        if let Some(Pending::Caller(sent)) =
            self.asked.get(&key).and_then(|id| self.pending.get_mut(id))
        {
            sent.followers.push(call.reply);
            // Answered with the request it follows, whose answer closes a
            // document opened in passing once: its own use ends here.
            if call.request.background
                && let Some(document) = &call.request.document
            {
                self.close_background(&document.uri);
            }
            return;
        }
        let admitted = if self.quiet_window.is_open(Instant::now()) {
            self.fairness.queue(call.session, call, Instant::now())
        } else {
            self.fairness.admit(call.session, call, Instant::now())
        };
        match admitted {
            Admitted::Now(call) => self.write(myself, call, params, key),
            Admitted::Queued => {}
            Admitted::Refused { item, queued } => {
                let server = self.spec.label();
                let _gone = item.reply.send(Err(Error::SessionBusy { server, queued }));
            }
        }
    }

    /// Sends queued requests whose session has a free share again, and
    /// the next waiting for its turn once the one before is answered.
    pub(super) fn send_queued(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        if !self.working_on(ONE_AT_A_TIME) {
            for call in self.turns.next() {
                self.send(myself, call);
            }
        }
        if self.quiet_window.is_open(Instant::now()) {
            return;
        }
        while let Some((_, call)) = self.fairness.next(Instant::now()) {
            let Phase::Ready(capabilities) = &self.phase else {
                return drop(call.reply.send(Err(Error::ShuttingDown)));
            };
            if call.reply.is_closed() {
                self.fairness.finished(call.session);
                continue;
            }
            // The document may have changed while it waited: its position
            // is encoded against the text as it is now.
            let params = self.request_params(&call.request, capabilities.encoding);
            let key = self.question(&call.request, &params);
            self.write(myself, call, params, key);
        }
    }

    /// Writes a request, with what the caller should know about it, or
    /// keeps it for its turn.
    fn write(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        call: Call,
        params: Value,
        key: String,
    ) {
        if self.takes_turns(call.request.method) && self.working_on(call.request.method) {
            return self.wait_turn(call, key);
        }
        let request = &call.request;
        let mut warnings: Vec<String> = self
            .unready_warning(request)
            .or_else(|| self.indexing_warning(request))
            .into_iter()
            .collect();
        warnings.extend(self.coverage.warnings_for(
            &self.spec.label(),
            request.method,
            &request.params,
        ));
        // rust-analyzer that failed to load a workspace answers from what
        // it did load: no references at all, and nothing else said.
        warnings.extend(self.health_error.as_ref().map(|error| {
            format!("warning: {error} Its answers may leave out what it could not load.")
        }));
        let id = self.send_request(request.method, params.clone(), myself);
        self.asked.insert(key.clone(), id);
        let sent = Sent {
            method: call.request.method,
            request: call.request,
            session: call.session,
            reply: call.reply,
            followers: Vec::new(),
            key,
            params,
            retries: 0,
            written: Instant::now(),
            warnings,
        };
        self.pending.insert(id, Pending::Caller(Box::new(sent)));
    }

    /// Whether the server works on one request of `method` at a time.
    pub(super) fn takes_turns(&self, method: &str) -> bool {
        self.spec.references_one_at_a_time && method == ONE_AT_A_TIME
    }

    /// Whether a request of `method` is at the server.
    fn working_on(&self, method: &str) -> bool {
        self.pending
            .values()
            .any(|pending| matches!(pending, Pending::Caller(sent) if sent.method == method))
    }

    /// Keeps a request until the one of its kind in flight is answered,
    /// freeing its session's share meanwhile.
    fn wait_turn(&mut self, call: Call, key: String) {
        self.fairness.finished(call.session);
        if let Err((call, queued)) = self.turns.wait(key, call.session, call) {
            let server = self.spec.label();
            let _gone = call.reply.send(Err(Error::SessionBusy { server, queued }));
        }
    }

    /// What makes two requests the same question: the method, the
    /// document's version and the parameters (position included) as sent.
    fn question(&self, request: &ServerRequest, params: &Value) -> String {
        let version = request
            .document
            .as_ref()
            .and_then(|document| self.documents.version(&document.uri))
            .unwrap_or_default();
        format!("{}\u{0}{version}\u{0}{params}", request.method)
    }

    /// Sends request `id` again under a new id when the server answered
    /// it with one of `RETRIED_CODES` and it has retries
    /// left, keeping its session's share, its question and its callers.
    /// Returns whether it did.
    pub(super) fn retry(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        id: i64,
        code: i64,
    ) -> bool {
        if !RETRIED_CODES.contains(&code) {
            return false;
        }
        let Some(Pending::Caller(sent)) = self.pending.get(&id) else {
            return false;
        };
        if sent.retries >= MAX_RETRIES {
            return false;
        }
        let Some(Pending::Caller(mut sent)) = self.pending.remove(&id) else {
            return false;
        };
        self.deadlines.remove(id);
        sent.retries += 1;
        tracing::debug!(server = %self.spec.name, request_id = id, code, retry = sent.retries, "the server asked for the request again");
        let again = self.send_request(sent.method, sent.params.clone(), myself);
        self.asked.insert(sent.key.clone(), again);
        self.pending.insert(again, Pending::Caller(sent));
        true
    }

    /// Takes a request out of the pending table, freeing its session's
    /// share and its question.
    pub(super) fn take_pending(&mut self, id: i64) -> Option<Pending> {
        let pending = self.pending.remove(&id)?;
        self.deadlines.remove(id);
        if let Pending::Caller(sent) = &pending {
            self.asked.remove(&sent.key);
            self.fairness.finished(sent.session);
        }
        Some(pending)
    }
}

/// `ContentModified` and `ServerCancelled`: the server dropped the
/// request but would answer it if asked again. `RequestCancelled` too:
/// a request Windlass cancels leaves the pending table when it does, so
/// one still pending was cancelled by the server itself (pyrefly does,
/// "due to subsequent mutation", when a change comes in behind it).
const RETRIED_CODES: [i64; 3] = [-32801, -32802, -32800];
/// How many times such a request is sent again before its error is the
/// answer.
const MAX_RETRIES: u32 = 3;

impl Sent {
    /// Answers the caller and everyone who asked the same meanwhile.
    pub(super) fn answer(self, answer: Result<Reply>) {
        for follower in self.followers {
            let _gone = follower.send(answer.clone());
        }
        let _gone = self.reply.send(answer);
    }
}
