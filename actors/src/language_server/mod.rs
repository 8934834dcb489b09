//! The LanguageServer actor: one per configured server process.
//!
//! Owns the child process and its transport (stdin writer, stdout reader,
//! stderr tail), the requests in flight parked by JSON-RPC id, the open
//! documents and their versions, the capabilities and position encoding the
//! server negotiated, its `$/progress` work, and the diagnostics cache with
//! its generation counters and the callers waiting on it.
//!
//! Takes [`LanguageServerMsg`]: `Request`, `Diagnostics` and `Status` from
//! the gateway (through the router's handle); `Incoming` from its reader
//! task; `Activity` from the Monitor; `TimedOut`, `CheckDiagnostics`,
//! `ReleaseHeld` and `CloseIdle` from its own timers. Tells the Supervisor
//! when its process exits and the Monitor which process to sample.
//!
//! Invariant: no handler awaits a server reply. A request is written, its
//! reply port parked in `pending` with a deadline timer, and the reader task
//! delivers the response as an `Incoming` message. Diagnostics callers are
//! parked in `waits` and answered when the cache says they may be.

mod diagnostics;
mod documents;
mod inbound;
mod progress;
pub mod protocol;
mod sync;
mod waiting;

pub use diagnostics::Strategy;
pub use documents::{DocumentSnapshot, Documents, SyncAction};
pub use waiting::HARD_LIMIT as DIAGNOSTICS_HARD_LIMIT;

use crate::error::{Error, Result};
use crate::language::ServerSpec;
use crate::lsp::message;
use crate::lsp::message::Incoming;
use crate::lsp::position::PositionEncoding;
use crate::lsp::transport::Transport;
use crate::monitor::{MonitorMsg, ProcessSample};
use crate::supervisor::SupervisorMsg;
use protocol::{Capabilities, WorkspaceFolder};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
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
#[derive(Debug, Clone)]
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

/// Fresh diagnostics of one document.
#[derive(Debug, Clone)]
pub struct DiagnosticsReply {
    /// `None` when the server has never published anything.
    pub items: Option<Arc<[Value]>>,
    pub encoding: PositionEncoding,
}

/// One server's health, as `status` shows it.
#[derive(Debug, Clone)]
pub struct ServerStatus {
    pub state: String,
    pub pid: Option<u32>,
    pub uptime: Duration,
    pub open_documents: usize,
    pub encoding: Option<PositionEncoding>,
    pub strategy: Strategy,
    pub process: Option<ProcessSample>,
    pub last_error: Option<String>,
}

pub enum LanguageServerMsg {
    Request(ServerRequest, RpcReplyPort<Result<Reply>>),
    Diagnostics(DocumentSnapshot, RpcReplyPort<Result<DiagnosticsReply>>),
    Status(RpcReplyPort<ServerStatus>),
    /// A message from the reader task.
    Incoming(Incoming),
    /// A CPU sample of the process, from the Monitor.
    Activity(ProcessSample),
    /// The deadline of request `id` has passed.
    TimedOut(i64),
    /// A diagnostics wait may be due.
    CheckDiagnostics,
    /// The hard limit of diagnostics wait `id` has passed.
    DiagnosticsExpired(u64),
    /// Requests held while the server indexed have waited long enough.
    ReleaseHeld,
    /// Periodic sweep of documents idle past the idle timeout.
    CloseIdle,
}

/// Limits that apply to one server.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub request: Duration,
    /// Zero keeps documents open for ever.
    pub idle: Duration,
    /// A fixed diagnostics settle window instead of the learned one (for
    /// baseline measurements).
    pub fixed_settle: Option<Duration>,
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
    pub monitor: ActorRef<MonitorMsg>,
}

/// Work that arrived before the server could take it.
enum Queued {
    Request(ServerRequest, RpcReplyPort<Result<Reply>>),
    Diagnostics(DocumentSnapshot, RpcReplyPort<Result<DiagnosticsReply>>),
}

enum Phase {
    /// `initialize` is in flight; work waits here in arrival order.
    Initializing(Vec<Queued>),
    Ready(Capabilities),
}

enum Pending {
    Initialize,
    /// The request is kept so that it can be sent again if the server
    /// answered it empty because it began indexing meanwhile; `may_hold`
    /// is false for a request already sent during indexing.
    Caller {
        request: Box<ServerRequest>,
        reply: RpcReplyPort<Result<Reply>>,
        may_hold: bool,
    },
}

pub struct State {
    spec: ServerSpec,
    folders: Vec<WorkspaceFolder>,
    timeouts: Timeouts,
    supervisor: ActorRef<SupervisorMsg>,
    monitor: ActorRef<MonitorMsg>,
    transport: Transport,
    started: Instant,
    next_id: i64,
    pending: HashMap<i64, Pending>,
    phase: Phase,
    documents: Documents,
    /// Held until `initialize` answers, then sent as `didOpen`.
    reopen: Vec<DocumentSnapshot>,
    progress: progress::Progress,
    /// Requests held while the server indexes.
    held: Vec<(ServerRequest, RpcReplyPort<Result<Reply>>)>,
    diagnostics: diagnostics::Cache,
    waits: HashMap<u64, waiting::Parked>,
    next_wait: u64,
    /// The earliest instant a `CheckDiagnostics` is already scheduled for.
    next_check: Option<Instant>,
    last_sample: Option<ProcessSample>,
    /// Whether the process has been seen idle since it started. Until then
    /// it may still be loading the workspace without saying so, and an
    /// empty answer is asked again once it is idle.
    warmed_up: bool,
    /// Since when CPU samples have found the process idle, if they do.
    idle_since: Option<Instant>,
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
            monitor: args.monitor,
            transport,
            started: Instant::now(),
            next_id: 1,
            pending: HashMap::new(),
            phase: Phase::Initializing(Vec::new()),
            documents: Documents::default(),
            reopen: args.reopen,
            progress: progress::Progress::default(),
            held: Vec::new(),
            diagnostics: diagnostics::Cache::default(),
            waits: HashMap::new(),
            next_wait: 1,
            next_check: None,
            last_sample: None,
            warmed_up: false,
            idle_since: None,
            last_error: None,
        };
        // Without CPU samples there is no telling when start-up work ends,
        // so such a server counts as warmed up from the start.
        state.warmed_up = state
            .transport
            .pid()
            .and_then(crate::monitor::read_process)
            .is_none();
        state.send_initialize(&myself);
        Ok(state)
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(pid) = state.transport.pid() {
            let _gone = state.monitor.send_message(MonitorMsg::Watch {
                pid,
                server: myself.clone(),
            });
        }
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
        if let Some(pid) = state.transport.pid() {
            let _gone = state.monitor.send_message(MonitorMsg::Unwatch { pid });
        }
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
            LanguageServerMsg::Diagnostics(document, reply) => {
                state.diagnostics(&myself, document, reply)
            }
            LanguageServerMsg::Status(reply) => {
                let _gone = reply.send(state.status());
            }
            LanguageServerMsg::Incoming(incoming) => state.receive(&myself, incoming),
            LanguageServerMsg::Activity(sample) => state.activity(&myself, sample),
            LanguageServerMsg::TimedOut(id) => state.time_out(&myself, id),
            LanguageServerMsg::CheckDiagnostics => {
                state.next_check = None;
                state.check_waits(&myself);
            }
            LanguageServerMsg::DiagnosticsExpired(id) => state.expire_wait(id),
            LanguageServerMsg::ReleaseHeld => state.release_held(&myself),
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
        tracing::debug!(server = %self.spec.name, request_id = id, method, "request sent");
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
        if matches!(self.phase, Phase::Ready(_)) && self.progress.indexing().is_some() {
            return self.hold(myself, request, reply);
        }
        self.send(myself, request, reply, true);
    }

    /// Sends a request now. `may_hold` is false for a request that was
    /// held once already: its answer is final, empty or not.
    fn send(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        request: ServerRequest,
        reply: RpcReplyPort<Result<Reply>>,
        may_hold: bool,
    ) {
        let capabilities = match &mut self.phase {
            Phase::Initializing(queued) => return queued.push(Queued::Request(request, reply)),
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
        let params = self.prepare_params(&request, &capabilities);
        let id = self.send_request(request.method, params, myself);
        self.pending.insert(
            id,
            Pending::Caller {
                request: Box::new(request),
                reply,
                may_hold,
            },
        );
    }

    fn close_idle(&mut self) {
        for uri in self.documents.close_idle(self.timeouts.idle) {
            self.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri}}),
            );
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

    fn encoding(&self) -> PositionEncoding {
        match &self.phase {
            Phase::Ready(capabilities) => capabilities.encoding,
            Phase::Initializing(_) => PositionEncoding::default(),
        }
    }

    fn strategy(&self) -> Strategy {
        self.diagnostics.observations.strategy(self.progress.seen)
    }

    fn status(&self) -> ServerStatus {
        let state = match (&self.phase, self.progress.indexing()) {
            (Phase::Initializing(_), _) => "starting".to_owned(),
            (Phase::Ready(_), Some(work)) => match work.percentage {
                Some(percentage) => format!("indexing ({} {percentage}%)", work.title),
                None => format!("indexing ({})", work.title),
            },
            (Phase::Ready(_), None) => "ready".to_owned(),
        };
        let encoding = match &self.phase {
            Phase::Ready(capabilities) => Some(capabilities.encoding),
            Phase::Initializing(_) => None,
        };
        ServerStatus {
            state,
            pid: self.transport.pid(),
            uptime: self.started.elapsed(),
            open_documents: self.documents.len(),
            encoding,
            strategy: self.strategy(),
            process: self.last_sample,
            last_error: self.last_error.clone(),
        }
    }
}
