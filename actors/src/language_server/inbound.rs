//! What the server sends: responses to parked requests, its own requests
//! to the client, notifications (diagnostics, progress, logs), garbage,
//! and the end of its output when it exits.

use super::progress::Change;
use super::{Pending, Phase, State};
use crate::error::Error;
use crate::lsp::message::{self, Incoming, ResponseError};
use crate::lsp::protocol::{self, Capabilities};
use crate::messages::language_server::{Call, LanguageServerMsg, Reply, SymbolsPace, Work};
use crate::messages::recorder::server_event;
use crate::messages::supervisor::{Ending, ServerExit, SupervisorMsg};
use crate::vocabulary::events::EventKind;
use lsp_types::LogMessageParams;
use ractor::ActorRef;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

impl State {
    pub(super) fn receive(&mut self, myself: &ActorRef<LanguageServerMsg>, incoming: Incoming) {
        match incoming {
            Incoming::Response { id, result } => self.complete(myself, id, result),
            Incoming::Request { id, method, params } => {
                self.answer(&id, &method, &params);
                match method.as_str() {
                    "client/registerCapability" => self.capabilities_registered(myself, &params),
                    "workspace/configuration" => self.configuration_answered(myself),
                    _ => {}
                }
            }
            Incoming::Notification { method, params } => self.observe(myself, &method, &params),
            Incoming::Malformed { id, detail } => self.malformed(myself, id, detail),
            Incoming::Closed => self.exited(myself),
        }
    }

    fn complete(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        id: i64,
        result: Result<Value, ResponseError>,
    ) {
        if let Err(error) = &result
            && self.retry(myself, id, error.code)
        {
            return;
        }
        match self.take_pending(id) {
            Some(Pending::Initialize) => self.initialized(myself, result),
            Some(Pending::Caller(mut sent)) => {
                if result.is_ok() {
                    self.readiness.answered(Instant::now());
                }
                let took = sent.written.elapsed();
                self.note_symbols_pace(sent.method, SymbolsPace::Answered(took));
                let encoding = self.encoding();
                let answer = match result {
                    Ok(result) => Ok(Reply {
                        server: self.spec.label(),
                        result,
                        encoding,
                        warnings: std::mem::take(&mut sent.warnings),
                        file_problem: sent
                            .request
                            .document
                            .as_ref()
                            .and_then(|document| self.coverage.problem(&document.uri)),
                        problems: match sent.request.document {
                            Some(_) => Vec::new(),
                            None => self.coverage.problems(),
                        },
                        background_index: self.progress.indexes_in_background(),
                    }),
                    Err(error) => Err(self.server_error(error)),
                };
                if sent.request.background
                    && let Some(document) = &sent.request.document
                {
                    self.close_background(&document.uri);
                }
                sent.answer(answer);
                self.send_queued(myself);
            }
            None => {
                tracing::debug!(server = %self.spec.name, request_id = id, "response to no pending request dropped")
            }
        }
    }

    fn initialized(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        result: Result<Value, ResponseError>,
    ) {
        let capabilities = match result {
            Ok(result) => Capabilities::from_initialize_result(&result),
            Err(error) => {
                let error = self.server_error(error);
                return self.fail_startup(myself, error);
            }
        };
        self.notify("initialized", json!({}));
        tracing::info!(server = %self.spec.name, encoding = capabilities.encoding.lsp_name(), "language server initialized");
        let _stopped = self.supervisor.send_message(SupervisorMsg::Initialized {
            server: self.id,
            folder_changes: self.takes_folder_changes(&capabilities),
        });
        if self.spec.pull_diagnostics {
            self.start_pulling(&capabilities);
        }
        let mut opening = std::mem::take(&mut self.reopen);
        if opening.is_empty() {
            opening.extend(self.probe.take());
        }
        for document in opening {
            self.sync_document(document, &capabilities);
        }
        let queued = match std::mem::replace(&mut self.phase, Phase::Ready(Arc::new(capabilities)))
        {
            Phase::Initializing(queued) => queued,
            Phase::Ready(_) => Vec::new(),
        };
        if let Some(announced) = self.folders_at_start.take() {
            self.announce_folders(myself, &announced);
        }
        for work in queued {
            match work {
                Work::Request(call) => self.request(myself, call),
                Work::Diagnostics(call) => self.diagnostics(myself, call),
                Work::Check(call) => self.check_edit(myself, call),
            }
        }
    }

    /// A server that cannot initialize is treated as crashed, so the
    /// Supervisor's restart budget decides what happens next.
    pub(super) fn fail_startup(&mut self, myself: &ActorRef<LanguageServerMsg>, error: Error) {
        self.last_error = Some(error.to_string());
        self.report_exit(myself);
    }

    fn answer(&mut self, id: &Value, method: &str, params: &Value) {
        let registering = method == "client/registerCapability";
        match method {
            "client/registerCapability" => self.registrations.register(params),
            "client/unregisterCapability" => self.registrations.unregister(params),
            _ => {}
        }
        let answered = match self.coverage.note_request(method, params) {
            true => Some(Value::Null),
            false => {
                protocol::answer_server_request(method, params, &self.spec.settings, &self.folders)
            }
        };
        let body = match answered {
            Some(result) => message::response(id, result),
            None => {
                message::error_response(id, message::METHOD_NOT_FOUND, "not supported by windlass")
            }
        };
        self.transport.send(body);
        if registering && self.registrations.any() {
            self.tell_early_changes();
        }
    }

    fn observe(&mut self, myself: &ActorRef<LanguageServerMsg>, method: &str, params: &Value) {
        match method {
            "textDocument/publishDiagnostics" => self.published(myself, params),
            "tsserver/request" => self.relay_to_tsserver(myself, params),
            "$/progress" => {
                match self.progress.apply(params) {
                    Change::Began(token) => {
                        self.save_check.progress_began();
                        self.diagnostics.progress_began(Instant::now());
                        self.readiness.progress_began(&token, Instant::now());
                    }
                    Change::Ended(token) => self.readiness.progress_ended(&token),
                    Change::Reported | Change::Ignored => {}
                }
                self.release_ready(myself);
                self.check_waits(myself);
            }
            // rust-analyzer's word on whether it is still loading, and on
            // what failed ("Failed to load workspaces."), which `status`
            // shows until it says it is healthy again (the manifest that
            // broke the load was fixed).
            "experimental/serverStatus" => {
                let message = params.get("message").and_then(Value::as_str);
                match (params.get("health").and_then(Value::as_str), message) {
                    (Some("error"), Some(message)) => {
                        let error = format!("[{}] {message}", self.spec.label());
                        self.health_error = Some(error.clone());
                        self.last_error = Some(error);
                    }
                    (Some("ok"), _) => {
                        let withdrawn = self.health_error.take();
                        if withdrawn.is_some() && self.last_error == withdrawn {
                            self.last_error = None;
                        }
                    }
                    _ => {}
                }
                if let Some(quiescent) = params.get("quiescent").and_then(Value::as_bool) {
                    self.readiness.server_status(quiescent, Instant::now());
                    self.release_ready(myself);
                    self.check_waits(myself);
                }
            }
            // Both carry a `type` and a `message`.
            "window/logMessage" | "window/showMessage" => {
                match LogMessageParams::deserialize(params) {
                    Ok(logged) => {
                        let text = &logged.message;
                        tracing::debug!(server = %self.spec.name, level = ?logged.typ, "{text}");
                        self.coverage.note_message(logged.typ, text);
                        if self.readiness.logged(text) {
                            tracing::debug!(server = %self.spec.name, "loaded in its own words");
                            self.release_ready(myself);
                            self.check_waits(myself);
                        }
                    }
                    Err(error) => {
                        tracing::debug!(server = %self.spec.name, "{method} that does not follow LSP: {error}")
                    }
                }
            }
            _ => {}
        }
    }

    /// Keeps a document's diagnostics as JSON, each read only when shown
    /// (`gateway/diagnostics.rs`): lsp-types' `PublishDiagnosticsParams`
    /// would refuse the whole notification for one diagnostic that does
    /// not follow LSP, where that one alone is left out, and said so.
    fn published(&mut self, myself: &ActorRef<LanguageServerMsg>, params: &Value) {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return tracing::debug!(server = %self.spec.name, "publishDiagnostics without a uri dropped");
        };
        let version = params.get("version").and_then(Value::as_i64);
        let items = params
            .get("diagnostics")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let _stopped = self.recorder.send_message(server_event(
            EventKind::Diagnostics,
            &self.spec.name,
            self.id,
            json!({"uri": uri, "version": version, "count": items.len()}),
        ));
        self.diagnostics
            .publish(uri, version, items, Instant::now());
        for parked in self.waits.values_mut() {
            parked.wait.saw_publication();
        }
        self.note_taken_in(myself, uri, Instant::now());
        if let Some(version) = version {
            self.documents.published(uri, version);
            self.release_ready(myself);
        }
        self.check_waits(myself);
    }

    fn malformed(&mut self, myself: &ActorRef<LanguageServerMsg>, id: Option<i64>, detail: String) {
        tracing::warn!(server = %self.spec.name, request_id = ?id, "malformed message: {detail}");
        let error = Error::Malformed {
            server: self.spec.label(),
            detail,
        };
        self.last_error = Some(error.to_string());
        match id.and_then(|id| self.take_pending(id)) {
            Some(Pending::Caller(sent)) => {
                sent.answer(Err(error));
                self.send_queued(myself);
            }
            Some(Pending::Initialize) => self.fail_startup(myself, error),
            None => {}
        }
    }

    /// Times out every request whose deadline has passed.
    pub(super) fn deadlines_due(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        let now = Instant::now();
        let (passed, timer) = self.deadlines.fired(now);
        super::arm_deadline_timer(myself, timer, now);
        for id in passed {
            self.time_out(myself, id);
        }
    }

    fn time_out(&mut self, myself: &ActorRef<LanguageServerMsg>, id: i64) {
        let Some(pending) = self.take_pending(id) else {
            return;
        };
        let method = match &pending {
            Pending::Initialize => "initialize",
            Pending::Caller(sent) => sent.method,
        };
        self.note_symbols_pace(method, SymbolsPace::TimedOut(self.timeouts.request));
        let error = Error::Timeout {
            server: self.spec.label(),
            method: method.into(),
            after: self.timeouts.request,
        };
        tracing::warn!(server = %self.spec.name, request_id = id, method, "request timed out");
        // One a server works on alone is left to finish: the next of its
        // kind ends it there, and a cancelled one can break its successors.
        if !self.takes_turns(method) {
            self.notify("$/cancelRequest", json!({"id": id}));
        }
        self.last_error = Some(error.to_string());
        match pending {
            Pending::Caller(sent) => {
                sent.answer(Err(error));
                self.send_queued(myself);
            }
            Pending::Initialize => self.fail_startup(myself, error),
        }
    }

    pub(super) fn exited(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        if self.exiting {
            return;
        }
        let error = Error::ServerExited {
            server: self.spec.label(),
            detail: self.exit_detail(),
        };
        tracing::warn!(server = %self.spec.name, "language server exited");
        self.last_error = Some(error.to_string());
        self.report_exit(myself);
    }

    /// Hands the open documents, and the requests the process never
    /// received, to the Supervisor, which restarts the server with them,
    /// and stops this actor. Requests the process did receive fail in
    /// `post_stop`, once this actor no longer looks alive, so a caller
    /// that retries at once is routed to the restarted server.
    fn report_exit(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        self.hand_over(myself, Ending::Crashed);
    }

    /// Stops the process on purpose. With `restart` the Supervisor starts
    /// it again at once with the documents and waiting requests; requests
    /// already sent are told why they failed.
    pub(super) fn retire(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        reason: String,
        restart: bool,
    ) {
        tracing::info!(server = %self.spec.name, "stopping the language server: {reason}");
        self.retired = Some(reason);
        if !restart {
            let error = Error::ServerExited {
                server: self.spec.label(),
                detail: self.retired.clone().unwrap_or_default(),
            };
            self.fail_everything(&error);
        }
        let ending = if restart {
            Ending::Restart
        } else {
            Ending::Stopped
        };
        self.hand_over(myself, ending);
    }

    fn hand_over(&mut self, myself: &ActorRef<LanguageServerMsg>, ending: Ending) {
        if self.exiting {
            return;
        }
        self.exiting = true;
        // A document under check goes on as it is on disk, and its check
        // is run again by the next process.
        let mut documents = self.documents.to_reopen();
        if let Some(check) = &self.check {
            documents.retain(|document| !check.covers(&document.uri));
            documents.extend(check.documents().cloned());
        }
        documents.append(&mut self.reopen);
        let mut orphans = std::mem::take(&mut self.orphans);
        if ending == Ending::Restart {
            // Restarted on purpose: what this process was asked, the next
            // one is asked again, rather than the callers failing for it.
            orphans.extend(self.in_flight());
        }
        orphans.extend(self.checks_to_hand_over());
        // A check's own steps are its; the check itself is run again.
        orphans.retain(|work| work.documents().iter().all(|document| document.on_disk));
        orphans.extend(self.held.drain(..).map(|held| Work::Request(held.call)));
        orphans.extend(
            self.held_diagnostics
                .drain(..)
                .map(|held| Work::Diagnostics(held.call)),
        );
        orphans.extend(
            self.fairness
                .drain()
                .into_iter()
                .map(|(_, call)| Work::Request(call)),
        );
        if let Phase::Initializing(queued) = &mut self.phase {
            orphans.append(queued);
        }
        let exit = ServerExit {
            server: self.spec.label(),
            documents,
            stderr: self.transport.stderr_text(),
            error: self.last_error.clone().unwrap_or_default(),
            orphans,
            ending,
        };
        let _stopped = self.supervisor.send_message(SupervisorMsg::ServerExited {
            server: self.id,
            exit,
        });
        myself.stop(Some("language server exited".into()));
    }

    /// The requests this process has been sent and not answered, each
    /// caller (and each caller who asked the same) as a request of its own.
    fn in_flight(&mut self) -> Vec<Work> {
        let mut calls = Vec::new();
        for (_, pending) in self.pending.drain() {
            if let Pending::Caller(sent) = pending {
                let sent = *sent;
                for follower in sent.followers {
                    calls.push(Work::Request(Call {
                        session: sent.session,
                        request: sent.request.clone(),
                        reply: follower,
                    }));
                }
                calls.push(Work::Request(Call {
                    session: sent.session,
                    request: sent.request,
                    reply: sent.reply,
                }));
            }
        }
        self.asked.clear();
        calls.extend(self.turns.drain().map(Work::Request));
        calls
    }

    /// Answers every parked caller with `error`.
    pub(super) fn fail_everything(&mut self, error: &Error) {
        for (_, pending) in self.pending.drain() {
            if let Pending::Caller(sent) = pending {
                sent.answer(Err(error.clone()));
            }
        }
        self.asked.clear();
        for held in self.held.drain(..) {
            let _gone = held.call.reply.send(Err(error.clone()));
        }
        for held in self.held_diagnostics.drain(..) {
            let _gone = held.call.reply.send(Err(error.clone()));
        }
        for (_, call) in self.fairness.drain() {
            let _gone = call.reply.send(Err(error.clone()));
        }
        for call in self.turns.drain() {
            let _gone = call.reply.send(Err(error.clone()));
        }
        for (_, parked) in self.waits.drain() {
            let _gone = parked.reply.send(Err(error.clone()));
        }
        self.fail_checks(error);
        for work in self.orphans.drain(..) {
            work.fail(error.clone());
        }
        if let Phase::Initializing(queued) = &mut self.phase {
            for work in queued.drain(..) {
                work.fail(error.clone());
            }
        }
    }

    pub(super) fn server_error(&self, error: ResponseError) -> Error {
        Error::ServerError {
            server: self.spec.label(),
            code: error.code,
            message: error.message,
        }
    }
}
