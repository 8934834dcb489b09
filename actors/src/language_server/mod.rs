//! The LanguageServer actor: one per configured server process.
//!
//! Owns the child process and its transport (stdin writer, stdout reader,
//! stderr tail), the requests in flight parked by JSON-RPC id, the open
//! documents and their versions, and the capabilities and position encoding
//! the server negotiated.
//!
//! Takes [`LanguageServerMsg`]: `Request` from the gateway (through the
//! router's handle), `Status`, and `Incoming`/`TimedOut`/`CloseIdle` from its
//! own tasks and timers. Tells the Supervisor when its process exits.
//!
//! Invariant: no handler awaits a server reply. A request is written, its
//! reply port parked in `pending` with a deadline timer, and the reader task
//! delivers the response as an `Incoming` message.

mod documents;
pub mod protocol;

pub use documents::{DocumentSnapshot, Documents, SyncAction};

use crate::error::{Error, Result};
use crate::language::ServerSpec;
use crate::lsp::message::{self, Incoming, ResponseError};
use crate::lsp::position::{PositionEncoding, line_at};
use crate::lsp::transport::Transport;
use crate::supervisor::SupervisorMsg;
use protocol::{Capabilities, SyncKind, WorkspaceFolder};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The actor type; its state lives in [`State`].
pub struct LanguageServer;

/// A position in a document as agents give it: 0-based line, 0-based
/// column in Unicode code points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextPosition {
    pub line: usize,
    pub column: usize,
}

/// One LSP request a tool wants answered.
#[derive(Debug)]
pub struct ServerRequest {
    pub method: &'static str,
    /// Parameters besides `textDocument` and `position`, which the actor
    /// fills in from `document` and `position`.
    pub params: Value,
    /// The file the request is about, synced before the request is sent.
    pub document: Option<DocumentSnapshot>,
    pub position: Option<TextPosition>,
    /// The capability the server must have announced, and the feature name
    /// used in the refusal when it has not.
    pub capability: Option<(&'static str, &'static str)>,
}

/// A server's answer, with the encoding its positions are in.
#[derive(Debug, Clone)]
pub struct Reply {
    pub result: Value,
    pub encoding: PositionEncoding,
}

/// One server's health, as `status` shows it.
#[derive(Debug, Clone)]
pub struct ServerStatus {
    pub state: &'static str,
    pub pid: Option<u32>,
    pub uptime: Duration,
    pub open_documents: usize,
    pub encoding: Option<PositionEncoding>,
    pub last_error: Option<String>,
}

pub enum LanguageServerMsg {
    Request(ServerRequest, RpcReplyPort<Result<Reply>>),
    Status(RpcReplyPort<ServerStatus>),
    /// A message from the reader task.
    Incoming(Incoming),
    /// The deadline of request `id` has passed.
    TimedOut(i64),
    /// Periodic sweep of documents idle past the idle timeout.
    CloseIdle,
}

/// Timeouts that apply to one server.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub request: Duration,
    /// Zero keeps documents open for ever.
    pub idle: Duration,
}

pub struct Arguments {
    pub spec: ServerSpec,
    pub folders: Vec<WorkspaceFolder>,
    /// The process's working directory: the first root.
    pub directory: PathBuf,
    pub timeouts: Timeouts,
    /// Documents a previous process of this server had open.
    pub reopen: Vec<DocumentSnapshot>,
    pub supervisor: ActorRef<SupervisorMsg>,
}

enum Phase {
    /// `initialize` is in flight; requests wait here in arrival order.
    Initializing(Vec<(ServerRequest, RpcReplyPort<Result<Reply>>)>),
    Ready(Capabilities),
}

enum Pending {
    Initialize,
    Caller {
        method: &'static str,
        reply: RpcReplyPort<Result<Reply>>,
    },
}

pub struct State {
    spec: ServerSpec,
    folders: Vec<WorkspaceFolder>,
    timeouts: Timeouts,
    supervisor: ActorRef<SupervisorMsg>,
    transport: Transport,
    started: Instant,
    next_id: i64,
    pending: HashMap<i64, Pending>,
    phase: Phase,
    documents: Documents,
    /// Held until `initialize` answers, then sent as `didOpen`.
    reopen: Vec<DocumentSnapshot>,
    last_error: Option<String>,
}

impl Actor for LanguageServer {
    type Msg = LanguageServerMsg;
    type State = State;
    type Arguments = Arguments;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: Arguments,
    ) -> Result<State, ActorProcessingErr> {
        let inbox = myself.clone();
        let transport = Transport::spawn(
            &args.spec.command,
            &args.spec.args,
            &args.directory,
            move |incoming| {
                let _stopped = inbox.send_message(LanguageServerMsg::Incoming(incoming));
            },
        )
        .map_err(|error| Error::SpawnFailed {
            server: args.spec.label(),
            command: args.spec.command.clone(),
            detail: error.to_string(),
        })?;
        tracing::info!(server = %args.spec.name, pid = ?transport.pid(), "language server started");
        let mut state = State {
            spec: args.spec,
            folders: args.folders,
            timeouts: args.timeouts,
            supervisor: args.supervisor,
            transport,
            started: Instant::now(),
            next_id: 1,
            pending: HashMap::new(),
            phase: Phase::Initializing(Vec::new()),
            documents: Documents::default(),
            reopen: args.reopen,
            last_error: None,
        };
        state.send_initialize(&myself);
        Ok(state)
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        if !state.timeouts.idle.is_zero() {
            let sweep =
                (state.timeouts.idle / 2).clamp(Duration::from_millis(50), Duration::from_secs(30));
            myself.send_interval(sweep, || LanguageServerMsg::CloseIdle);
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        let error = match &state.last_error {
            Some(_) => Error::ServerExited {
                server: state.spec.label(),
                detail: state.exit_detail(),
            },
            None => Error::ShuttingDown,
        };
        state.fail_everything(&error);
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            LanguageServerMsg::Request(request, reply) => state.request(&myself, request, reply),
            LanguageServerMsg::Status(reply) => {
                let _gone = reply.send(state.status());
            }
            LanguageServerMsg::Incoming(incoming) => state.receive(&myself, incoming),
            LanguageServerMsg::TimedOut(id) => state.time_out(&myself, id),
            LanguageServerMsg::CloseIdle => state.close_idle(),
        }
        Ok(())
    }
}

impl State {
    fn send_initialize(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        let params =
            protocol::initialize_params(&self.folders, self.spec.initialization_options.as_ref());
        let id = self.send_request("initialize", params, myself);
        self.pending.insert(id, Pending::Initialize);
    }

    /// Writes a request and arms its deadline; the caller parks the reply.
    fn send_request(
        &mut self,
        method: &str,
        params: Value,
        myself: &ActorRef<LanguageServerMsg>,
    ) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.transport.send(message::request(id, method, params));
        myself.send_after(self.timeouts.request, move || {
            LanguageServerMsg::TimedOut(id)
        });
        id
    }

    fn notify(&self, method: &str, params: Value) {
        self.transport.send(message::notification(method, params));
    }

    fn request(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        request: ServerRequest,
        reply: RpcReplyPort<Result<Reply>>,
    ) {
        let capabilities = match &mut self.phase {
            Phase::Initializing(queued) => return queued.push((request, reply)),
            Phase::Ready(capabilities) => capabilities.clone(),
        };
        if reply.is_closed() {
            return;
        }
        if let Some((provider, feature)) = request.capability
            && !capabilities.supports(provider)
        {
            let refusal = Error::Unsupported {
                server: self.spec.label(),
                feature: feature.into(),
            };
            let _gone = reply.send(Err(refusal));
            return;
        }
        let params = self.prepare_params(
            request.params,
            request.document,
            request.position,
            &capabilities,
        );
        let id = self.send_request(request.method, params, myself);
        self.pending.insert(
            id,
            Pending::Caller {
                method: request.method,
                reply,
            },
        );
    }

    /// Syncs the document and adds `textDocument` and `position`.
    fn prepare_params(
        &mut self,
        mut params: Value,
        document: Option<DocumentSnapshot>,
        position: Option<TextPosition>,
        capabilities: &Capabilities,
    ) -> Value {
        let Some(document) = document else {
            return params;
        };
        let uri = document.uri.clone();
        self.sync_document(document, capabilities);
        if !params.is_object() {
            params = json!({});
        }
        params["textDocument"] = json!({"uri": uri});
        if let Some(position) = position {
            let line = self
                .documents
                .text(&uri)
                .and_then(|text| line_at(text, position.line))
                .unwrap_or("");
            let character = capabilities.encoding.encode_column(line, position.column);
            params["position"] = json!({"line": position.line, "character": character});
        }
        params
    }

    fn sync_document(&mut self, document: DocumentSnapshot, capabilities: &Capabilities) {
        let uri = document.uri.clone();
        let text = document.text.clone();
        let language = document.language_id.clone();
        match self.documents.sync(document) {
            SyncAction::Unchanged => {}
            SyncAction::Open { version } => self.did_open(&uri, &language, version, &text),
            SyncAction::Change { version, previous } => {
                self.did_change(&uri, &language, version, &previous, &text, capabilities);
                if let Some(include_text) = capabilities.save {
                    let mut params = json!({"textDocument": {"uri": uri}});
                    if include_text {
                        params["text"] = json!(&*text);
                    }
                    self.notify("textDocument/didSave", params);
                }
            }
        }
    }

    fn did_open(&self, uri: &str, language: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": version, "text": text}}),
        );
    }

    fn did_change(
        &self,
        uri: &str,
        language: &str,
        version: i32,
        previous: &str,
        text: &str,
        capabilities: &Capabilities,
    ) {
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
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
        );
    }

    fn receive(&mut self, myself: &ActorRef<LanguageServerMsg>, incoming: Incoming) {
        match incoming {
            Incoming::Response { id, result } => self.complete(myself, id, result),
            Incoming::Request { id, method, params } => self.answer(&id, &method, &params),
            Incoming::Notification { method, params } => self.observe(&method, &params),
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
            Some(Pending::Caller { reply, .. }) => {
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
        for (request, reply) in queued {
            self.request(myself, request, reply);
        }
    }

    /// A server that cannot initialize is treated as crashed, so the
    /// Supervisor's restart budget decides what happens next.
    fn fail_startup(&mut self, myself: &ActorRef<LanguageServerMsg>, error: Error) {
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

    fn observe(&self, method: &str, params: &Value) {
        if method == "window/logMessage" {
            let text = params
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            tracing::debug!(server = %self.spec.name, "{text}");
        }
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

    fn time_out(&mut self, myself: &ActorRef<LanguageServerMsg>, id: i64) {
        let Some(pending) = self.pending.remove(&id) else {
            return;
        };
        let method = match &pending {
            Pending::Initialize => "initialize",
            Pending::Caller { method, .. } => method,
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

    fn fail_everything(&mut self, error: &Error) {
        for (_, pending) in self.pending.drain() {
            if let Pending::Caller { reply, .. } = pending {
                let _gone = reply.send(Err(error.clone()));
            }
        }
        if let Phase::Initializing(queued) = &mut self.phase {
            for (_, reply) in queued.drain(..) {
                let _gone = reply.send(Err(error.clone()));
            }
        }
    }

    /// The last thing the server said on stderr, for exit errors.
    fn exit_detail(&self) -> String {
        self.transport
            .stderr_tail()
            .lines()
            .last()
            .unwrap_or_default()
            .to_owned()
    }

    fn close_idle(&mut self) {
        for uri in self.documents.close_idle(self.timeouts.idle) {
            self.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri}}),
            );
        }
    }

    fn server_error(&self, error: ResponseError) -> Error {
        Error::ServerError {
            server: self.spec.label(),
            code: error.code,
            message: error.message,
        }
    }

    fn encoding(&self) -> PositionEncoding {
        match &self.phase {
            Phase::Ready(capabilities) => capabilities.encoding,
            Phase::Initializing(_) => PositionEncoding::default(),
        }
    }

    fn status(&self) -> ServerStatus {
        let (state, encoding) = match &self.phase {
            Phase::Initializing(_) => ("starting", None),
            Phase::Ready(capabilities) => ("ready", Some(capabilities.encoding)),
        };
        ServerStatus {
            state,
            pid: self.transport.pid(),
            uptime: self.started.elapsed(),
            open_documents: self.documents.len(),
            encoding,
            last_error: self.last_error.clone(),
        }
    }
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
