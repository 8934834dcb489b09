//! What the server sends: responses to parked requests, its own requests
//! to the client, notifications (diagnostics, progress, logs), garbage,
//! and the end of its output when it exits.

use super::{LanguageServerMsg, Pending, Phase, Queued, Reply, State};
use crate::error::Error;
use crate::language_server::protocol::{self, Capabilities};
use crate::lsp::message::{self, Incoming, ResponseError};
use crate::supervisor::SupervisorMsg;
use ractor::ActorRef;
use serde_json::{Value, json};
use std::time::Instant;

impl State {
    pub(super) fn receive(&mut self, myself: &ActorRef<LanguageServerMsg>, incoming: Incoming) {
        match incoming {
            Incoming::Response { id, result } => self.complete(myself, id, result),
            Incoming::Request { id, method, params } => self.answer(&id, &method, &params),
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
        match self.pending.remove(&id) {
            Some(Pending::Initialize) => self.initialized(myself, result),
            Some(Pending::Caller {
                request,
                reply,
                may_hold,
            }) => {
                let empty = matches!(&result, Ok(Value::Null))
                    || matches!(&result, Ok(Value::Array(items)) if items.is_empty());
                if empty && may_hold && self.may_be_loading() {
                    // Sent while the server may still have been loading the
                    // workspace: ask again once it is done instead of
                    // answering empty.
                    return self.hold(myself, *request, reply);
                }
                let encoding = self.encoding();
                let answer = result
                    .map(|result| Reply { result, encoding })
                    .map_err(|error| self.server_error(error));
                let _gone = reply.send(answer);
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
        tracing::info!(server = %self.spec.name, encoding = capabilities.encoding.lsp_name(), "language server ready");
        for document in std::mem::take(&mut self.reopen) {
            self.sync_document(document, &capabilities);
        }
        let queued = match std::mem::replace(&mut self.phase, Phase::Ready(capabilities)) {
            Phase::Initializing(queued) => queued,
            Phase::Ready(_) => Vec::new(),
        };
        for work in queued {
            match work {
                Queued::Request(request, reply) => self.request(myself, request, reply),
                Queued::Diagnostics(document, reply) => self.diagnostics(myself, document, reply),
            }
        }
    }

    /// A server that cannot initialize is treated as crashed, so the
    /// Supervisor's restart budget decides what happens next.
    pub(super) fn fail_startup(&mut self, myself: &ActorRef<LanguageServerMsg>, error: Error) {
        self.last_error = Some(error.to_string());
        self.report_exit(myself);
    }

    fn answer(&self, id: &Value, method: &str, params: &Value) {
        let body = match protocol::answer_server_request(
            method,
            params,
            &self.spec.settings,
            &self.folders,
        ) {
            Some(result) => message::response(id, result),
            None => {
                message::error_response(id, message::METHOD_NOT_FOUND, "not supported by windlass")
            }
        };
        self.transport.send(body);
    }

    fn observe(&mut self, myself: &ActorRef<LanguageServerMsg>, method: &str, params: &Value) {
        match method {
            "textDocument/publishDiagnostics" => self.published(myself, params),
            "$/progress" => {
                let was_indexing = self.progress.indexing().is_some();
                self.progress.apply(params);
                if was_indexing && self.progress.indexing().is_none() {
                    self.release_held(myself);
                }
                self.check_waits(myself);
            }
            "window/logMessage" => {
                let text = params
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                tracing::debug!(server = %self.spec.name, "{text}");
            }
            _ => {}
        }
    }

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
        self.diagnostics
            .publish(uri, version, items, Instant::now());
        self.check_waits(myself);
    }

    fn malformed(&mut self, myself: &ActorRef<LanguageServerMsg>, id: Option<i64>, detail: String) {
        tracing::warn!(server = %self.spec.name, request_id = ?id, "malformed message: {detail}");
        let error = Error::Malformed {
            server: self.spec.label(),
            detail,
        };
        self.last_error = Some(error.to_string());
        match id.and_then(|id| self.pending.remove(&id)) {
            Some(Pending::Caller { reply, .. }) => drop(reply.send(Err(error))),
            Some(Pending::Initialize) => self.fail_startup(myself, error),
            None => {}
        }
    }

    pub(super) fn time_out(&mut self, myself: &ActorRef<LanguageServerMsg>, id: i64) {
        let Some(pending) = self.pending.remove(&id) else {
            return;
        };
        let method = match &pending {
            Pending::Initialize => "initialize",
            Pending::Caller { request, .. } => request.method,
        };
        let error = Error::Timeout {
            server: self.spec.label(),
            method: method.into(),
            after: self.timeouts.request,
        };
        tracing::warn!(server = %self.spec.name, request_id = id, method, "request timed out");
        self.notify("$/cancelRequest", json!({"id": id}));
        self.last_error = Some(error.to_string());
        match pending {
            Pending::Caller { reply, .. } => drop(reply.send(Err(error))),
            Pending::Initialize => self.fail_startup(myself, error),
        }
    }

    fn exited(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        let error = Error::ServerExited {
            server: self.spec.label(),
            detail: self.exit_detail(),
        };
        tracing::warn!(server = %self.spec.name, "language server exited");
        self.last_error = Some(error.to_string());
        self.report_exit(myself);
    }

    /// Hands the open documents to the Supervisor, which restarts the
    /// server with them, and stops this actor. Parked requests fail in
    /// `post_stop`, once this actor no longer looks alive, so a caller
    /// that retries at once is routed to the restarted server.
    fn report_exit(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        let mut documents = self.documents.snapshots();
        documents.append(&mut self.reopen);
        let _stopped = self.supervisor.send_message(SupervisorMsg::ServerExited {
            server: self.spec.name.clone(),
            documents,
            stderr: self.transport.stderr_tail(),
            error: self.last_error.clone().unwrap_or_default(),
        });
        myself.stop(Some("language server exited".into()));
    }

    /// Answers every parked caller with `error`.
    pub(super) fn fail_everything(&mut self, error: &Error) {
        for (_, pending) in self.pending.drain() {
            if let Pending::Caller { reply, .. } = pending {
                let _gone = reply.send(Err(error.clone()));
            }
        }
        for (_, reply) in self.held.drain(..) {
            let _gone = reply.send(Err(error.clone()));
        }
        for (_, parked) in self.waits.drain() {
            let _gone = parked.reply.send(Err(error.clone()));
        }
        if let Phase::Initializing(queued) = &mut self.phase {
            for work in queued.drain(..) {
                match work {
                    Queued::Request(_, reply) => drop(reply.send(Err(error.clone()))),
                    Queued::Diagnostics(_, reply) => drop(reply.send(Err(error.clone()))),
                }
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
