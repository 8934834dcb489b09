//! The LanguageServer actor: one per configured server process.
//!
//! Owns the child process and its transport (stdin writer, stdout reader,
//! stderr log), the requests in flight parked by JSON-RPC id, the requests
//! held until the server can answer them truthfully, the open documents
//! and their versions, the checks of edits in progress and the work they
//! hold, the capabilities and position encoding the server negotiated, its `$/progress` work and readiness, the files it asked to
//! be told about, what it is known not to see, and the diagnostics cache
//! with its generation counters and the callers waiting on it, the check a
//! save starts (`save_check`), the moments new requests are held so
//! that the server can be seen quiet (`quiet_window`), and the last change
//! on disk as the server takes it in (`disk_change`).
//!
//! Its inbox is `messages::language_server`: requests, diagnostics
//! waits and checks of edits from the Gateways (through the Router's
//! handle), the steps of its own checks, pull refusals and outlines
//! tsserver could not give unopened, changes on disk
//! from the Watcher, what the server sends from its reader task, CPU
//! samples from the Monitor, configuration, retirement and folders from
//! the Supervisor, and its own timers. Tells the Supervisor when its process exits, handing back the requests
//! the process never received, and the Monitor which process to sample.
//!
//! Invariant: no handler awaits a server reply. A request is written, its
//! reply port parked in `pending` with a deadline (one timer for all), and the reader task
//! delivers the response as an `Incoming` message. A request the server
//! cannot yet answer truthfully (it is loading, or taking in a change on
//! disk) is held in `held` and sent once it can. Diagnostics callers are
//! parked in `waits` and answered when the cache says they may be.

mod check;
mod coverage;
mod deadlines;
mod diagnostics;
mod disk_change;
mod documents;
mod edit_check;
mod fairness;
mod inbound;
mod progress;
mod pull;
mod quiet_window;
mod readiness;
mod related;
mod requests;
mod rounds;
mod save_check;
mod sync;
mod tsserver_diagnostics;
mod tsserver_outline;
mod tsserver_relay;
mod turns;
mod waiting;
mod watched;
mod workspace;

pub use documents::{Documents, SyncAction};

use crate::error::{Error, Result};
use crate::language::{Role, ServerSpec};
use crate::lsp::message;
use crate::lsp::position::PositionEncoding;
use crate::lsp::protocol::{self, Capabilities, WorkspaceFolder};
use crate::lsp::transport::Transport;
use crate::messages::language_server::{
    Busyness, Call, DiagnosticsCall, DiagnosticsReply, LanguageServerMsg, Reply, ServerRequest,
    ServerStatus, SymbolsPace, Work,
};
use crate::messages::monitor::MonitorMsg;
use crate::messages::recorder::RecorderMsg;
use crate::messages::supervisor::SupervisorMsg;
use crate::process::ProcessSample;
use crate::settings::Timeouts;
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::file_changes::FileChange;
use crate::vocabulary::ids::{ServerId, SessionId};
use crate::vocabulary::server_states::{ProcessState, Strategy};
use crate::vocabulary::usage::Usage;
use diagnostics::Wait;
use lsp_types::request::{Request as _, WorkspaceSymbolRequest};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long what a workspace symbols request took is kept: a server
/// skipped for being slow is asked again after it, in case it was only
/// busy.
const SYMBOLS_PACE_MEMORY: Duration = Duration::from_secs(60);

/// The actor type; its state lives in [`State`].
pub struct LanguageServer;

pub struct Arguments {
    /// Its id in the Supervisor's pool, for what it reports back.
    pub id: ServerId,
    pub spec: ServerSpec,
    pub folders: Vec<WorkspaceFolder>,
    /// The process's working directory: the first root.
    pub directory: PathBuf,
    pub timeouts: Timeouts,
    /// Documents a previous process of this server had open.
    pub reopen: Vec<DocumentSnapshot>,
    /// A file of the server's language to open at start when there is
    /// nothing to reopen, so the server loads its project at once.
    pub probe: Option<DocumentSnapshot>,
    pub supervisor: ActorRef<SupervisorMsg>,
    pub monitor: ActorRef<MonitorMsg>,
    pub recorder: ActorRef<RecorderMsg>,
    /// Written here, read by the Supervisor.
    pub usage: Arc<Usage>,
}

enum Admission {
    Ready(Arc<Capabilities>),
    Queue,
    Dead,
}

enum Phase {
    /// `initialize` is in flight; work waits here in arrival order.
    Initializing(Vec<Work>),
    /// Shared with each request admitted, which checks what it needs.
    Ready(Arc<Capabilities>),
}

enum Pending {
    Initialize,
    Caller(Box<Sent>),
}

/// A request written to the server, and everyone waiting for its answer.
struct Sent {
    method: &'static str,
    /// What was asked, to ask the next process when this one is
    /// restarted on purpose while it is in flight.
    request: ServerRequest,
    session: SessionId,
    reply: RpcReplyPort<Result<Reply>>,
    /// Callers who asked the identical question while it was in flight.
    followers: Vec<RpcReplyPort<Result<Reply>>>,
    /// What makes another request identical to it.
    key: String,
    /// The parameters as sent, to send again when the server asks for it.
    params: Value,
    /// Times it was sent again after `ContentModified` / `ServerCancelled`.
    retries: u32,
    /// When it was first written to the server.
    written: Instant,
    warnings: Vec<String>,
}

/// A request waiting until the server can answer it truthfully.
struct Held {
    call: Call,
    /// When it is sent whatever the server is doing.
    deadline: Instant,
}

/// A diagnostics caller held until its document may be sent again.
struct HeldDiagnostics {
    call: DiagnosticsCall,
    /// When it goes on whatever the server is doing.
    deadline: Instant,
}

/// A diagnostics caller and what it waits for.
struct Parked {
    wait: Wait,
    session: SessionId,
    document: DocumentSnapshot,
    reply: RpcReplyPort<Result<DiagnosticsReply>>,
}

impl Parked {
    /// The caller, to be answered some other way.
    fn into_call(self) -> DiagnosticsCall {
        DiagnosticsCall {
            session: self.session,
            document: self.document,
            reply: self.reply,
        }
    }
}

pub struct State {
    id: ServerId,
    usage: Arc<Usage>,
    spec: ServerSpec,
    folders: Vec<WorkspaceFolder>,
    /// The folders `initialize` announced, while folder changes that came
    /// during it wait to be announced after it.
    folders_at_start: Option<Vec<WorkspaceFolder>>,
    timeouts: Timeouts,
    supervisor: ActorRef<SupervisorMsg>,
    monitor: ActorRef<MonitorMsg>,
    recorder: ActorRef<RecorderMsg>,
    transport: Transport,
    /// Read before each request: a dying process is not sent work.
    process_stat: crate::process::ProcessStat,
    started: Instant,
    next_id: i64,
    pending: HashMap<i64, Pending>,
    deadlines: deadlines::Deadlines,
    phase: Phase,
    documents: Documents,
    /// Held until `initialize` answers, then sent as `didOpen`.
    reopen: Vec<DocumentSnapshot>,
    probe: Option<DocumentSnapshot>,
    progress: progress::Progress,
    save_check: save_check::SaveCheck,
    quiet_window: quiet_window::QuietWindow,
    readiness: readiness::Readiness,
    registrations: watched::Registrations,
    /// Requests over their session's share, waiting for a turn.
    fairness: fairness::Fairness<Call>,
    /// Requests waiting for the one of their kind the server works on.
    turns: turns::Turns<Call>,
    /// How its last workspace symbols request went, and when.
    last_symbols: Option<(SymbolsPace, Instant)>,
    /// The request in flight for each question, to share its answer.
    asked: HashMap<String, i64>,
    /// Changes on disk that came before the server registered for any:
    /// told once it does, since its first scan may have missed them.
    early_changes: Vec<FileChange>,
    coverage: coverage::Coverage,
    held: Vec<Held>,
    /// Diagnostics callers whose document is sent again only once the
    /// server has taken in the change on disk it may depend on.
    held_diagnostics: Vec<HeldDiagnostics>,
    /// The last change on disk, as the server takes it in.
    disk_change: disk_change::DiskChange,
    diagnostics: diagnostics::Cache,
    waits: HashMap<u64, Parked>,
    next_wait: u64,
    /// Its `tsserver/request`s relayed and not answered yet: it waits on
    /// another server's work, so its silence says nothing meanwhile.
    relayed: usize,
    /// The server could not run tsserver's `navtree`: files are opened
    /// to be outlined (`tsserver_outline`).
    navtree_refused: bool,
    /// Whether the server has asked for its configuration yet.
    configured: bool,
    /// The check of an edit in progress, with the work it holds.
    check: Option<edit_check::Check>,
    next_check_id: u64,
    /// The earliest instant a `CheckDiagnostics` is already scheduled for.
    next_check: Option<Instant>,
    last_sample: Option<ProcessSample>,
    last_error: Option<String>,
    /// What the server last said was wrong with its health, withdrawn
    /// from `last_error` when it says it is healthy again.
    health_error: Option<String>,
    /// Why the process was stopped on purpose, told to requests in flight.
    retired: Option<String>,
    /// Work the process never received because it had died; handed to
    /// the Supervisor with the exit.
    orphans: Vec<Work>,
    /// Set once the exit is reported, so it is reported once.
    exiting: bool,
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
        .map_err(|error| spawn_error(&args.spec, &error))?;
        tracing::info!(server = %args.spec.name, pid = ?transport.pid(), "language server started");
        // Without CPU samples there is no telling when start-up work ends.
        let sampled = transport
            .pid()
            .and_then(crate::process::read_process)
            .is_some();
        args.usage.set_pid(transport.pid());
        args.usage.used();
        let save_check = save_check::SaveCheck::new(args.spec.checks_on_save());
        let mut state = State {
            id: args.id,
            usage: args.usage,
            spec: args.spec,
            folders: args.folders,
            folders_at_start: None,
            timeouts: args.timeouts,
            supervisor: args.supervisor,
            monitor: args.monitor,
            recorder: args.recorder,
            process_stat: crate::process::ProcessStat::open(transport.pid()),
            transport,
            started: Instant::now(),
            next_id: 1,
            pending: HashMap::new(),
            deadlines: deadlines::Deadlines::default(),
            phase: Phase::Initializing(Vec::new()),
            documents: Documents::default(),
            reopen: args.reopen,
            probe: args.probe,
            progress: progress::Progress::default(),
            save_check,
            quiet_window: quiet_window::QuietWindow::default(),
            readiness: readiness::Readiness::new(Instant::now(), sampled),
            registrations: watched::Registrations::default(),
            fairness: fairness::Fairness::default(),
            turns: turns::Turns::default(),
            last_symbols: None,
            asked: HashMap::new(),
            early_changes: Vec::new(),
            coverage: coverage::Coverage::default(),
            held: Vec::new(),
            held_diagnostics: Vec::new(),
            disk_change: disk_change::DiskChange::default(),
            diagnostics: diagnostics::Cache::default(),
            waits: HashMap::new(),
            next_wait: 1,
            relayed: 0,
            navtree_refused: false,
            configured: false,
            check: None,
            next_check_id: 0,
            next_check: None,
            last_sample: None,
            last_error: None,
            health_error: None,
            retired: None,
            orphans: Vec::new(),
            exiting: false,
        };
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
        state.find_gaps(&myself);
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
        // Work that came after the hand-over never reached this process:
        // the next one takes it.
        let late = std::mem::take(&mut state.orphans);
        if !late.is_empty() {
            let adopt = SupervisorMsg::Orphans {
                server: state.id,
                work: late,
            };
            if let Err(ractor::MessagingErr::SendErr(SupervisorMsg::Orphans { work, .. })) =
                state.supervisor.send_message(adopt)
            {
                state.orphans = work;
            }
        }
        let error = match (&state.retired, &state.last_error) {
            (Some(reason), _) => Error::ServerExited {
                server: state.spec.label(),
                detail: reason.clone(),
            },
            (None, Some(_)) => Error::ServerExited {
                server: state.spec.label(),
                detail: state.exit_detail(),
            },
            (None, None) => Error::ShuttingDown,
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
            LanguageServerMsg::Request(call) => {
                state.usage.used();
                if let Some(Work::Request(call)) = state.hold_for_check(Work::Request(call)) {
                    state.request(&myself, call)
                }
            }
            LanguageServerMsg::Diagnostics(call) => {
                state.usage.used();
                if let Some(Work::Diagnostics(call)) = state.hold_for_check(Work::Diagnostics(call))
                {
                    state.diagnostics(&myself, call)
                }
            }
            LanguageServerMsg::CheckEdit(call) => {
                state.usage.used();
                state.check_edit(&myself, call)
            }
            LanguageServerMsg::CheckStep { check, uri, result } => {
                state.check_step(&myself, check, &uri, result)
            }
            LanguageServerMsg::Status(reply) => {
                let _gone = reply.send(state.status());
            }
            LanguageServerMsg::Busyness(reply) => {
                let _gone = reply.send(state.busyness());
            }
            LanguageServerMsg::Supports(feature, reply) => {
                let supports = matches!(&state.phase, Phase::Ready(capabilities) if capabilities.supports(feature));
                let _gone = reply.send(supports);
            }
            LanguageServerMsg::FilesChanged(changes) => state.files_changed(&myself, &changes),
            LanguageServerMsg::Incoming(incoming) => state.receive(&myself, incoming),
            LanguageServerMsg::Activity(sample) => state.activity(&myself, sample),
            LanguageServerMsg::DeadlinesDue => state.deadlines_due(&myself),
            LanguageServerMsg::CheckDiagnostics => {
                state.next_check = None;
                state.check_waits(&myself);
            }
            LanguageServerMsg::ReleaseHeld => state.release_held(&myself),
            LanguageServerMsg::QuietWindowEnded => state.end_quiet_window(&myself),
            LanguageServerMsg::CloseIdle => state.close_idle(),
            LanguageServerMsg::Configure(settings) => state.configure(settings),
            LanguageServerMsg::Retire { reason, restart } => state.retire(&myself, reason, restart),
            LanguageServerMsg::Gaps(gaps) => state.coverage.set_gaps(gaps),
            LanguageServerMsg::Folders(change) => state.folders_changed(&myself, change),
            LanguageServerMsg::PullRefused(call) => state.pull_refused(&myself, call),
            LanguageServerMsg::OutlineByOpening { call, refused } => {
                if let Some(Work::Request(call)) = state.hold_for_check(Work::Request(call)) {
                    state.outline_by_opening(&myself, call, refused)
                }
            }
            LanguageServerMsg::SendOpenAgain => state.send_open_again(),
            LanguageServerMsg::TsserverAnswered { id, body } => {
                state.answer_tsserver(id, body);
                state.check_waits(&myself);
            }
        }
        state.usage.set_working(state.has_work());
        Ok(())
    }
}

/// Has `DeadlinesDue` sent at `at`, if a timer must be armed.
fn arm_deadline_timer(myself: &ActorRef<LanguageServerMsg>, at: Option<Instant>, now: Instant) {
    if let Some(at) = at {
        myself.send_after(at.saturating_duration_since(now), || {
            LanguageServerMsg::DeadlinesDue
        });
    }
}

impl State {
    fn send_initialize(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        let params = protocol::initialize_params(
            &self.folders,
            self.spec.initialization_options.as_ref(),
            self.spec.pull_diagnostics,
        );
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
        let now = Instant::now();
        let timer = self.deadlines.set(id, now + self.timeouts.request);
        arm_deadline_timer(myself, timer, now);
        id
    }

    fn notify(&self, method: &str, params: Value) {
        self.transport.send(message::notification(method, params));
    }

    /// Looks for the project files the server needs, off the actor's
    /// thread; the answer comes back as `Gaps`. A linter reads each file
    /// by itself: what a language's project files tell a type checker is
    /// nothing it misses.
    fn find_gaps(&self, myself: &ActorRef<LanguageServerMsg>) {
        if self.spec.duties.role == Role::Linter {
            return;
        }
        let languages = self.spec.languages.clone();
        let folders = self.folders.clone();
        let inbox = myself.clone();
        tokio::task::spawn_blocking(move || {
            let gaps = coverage::find_gaps(&languages, &folders);
            let _stopped = inbox.send_message(LanguageServerMsg::Gaps(gaps));
        });
    }

    /// Takes new settings and tells the server, which asks for the
    /// sections it wants with `workspace/configuration`.
    fn configure(&mut self, settings: Value) {
        self.spec.settings = settings.clone();
        self.notify(
            "workspace/didChangeConfiguration",
            json!({"settings": settings}),
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

    fn busyness(&self) -> Busyness {
        let loading = match self.phase {
            Phase::Initializing(_) => true,
            Phase::Ready(_) => self.readiness.is_loading() || self.progress.indexing().is_some(),
        };
        Busyness {
            loading,
            working: self.has_work() || self.readiness.is_settling(),
            symbols: self.symbols_pace(),
        }
    }

    /// The workspace symbols request at the server the longest, or else
    /// how the last one went, if recently.
    fn symbols_pace(&self) -> Option<SymbolsPace> {
        let working = self
            .pending
            .values()
            .filter_map(|pending| match pending {
                Pending::Caller(sent) if sent.method == WorkspaceSymbolRequest::METHOD => {
                    Some(sent.written.elapsed())
                }
                _ => None,
            })
            .max();
        working.map(SymbolsPace::Working).or_else(|| {
            self.last_symbols
                .filter(|(_, at)| at.elapsed() < SYMBOLS_PACE_MEMORY)
                .map(|(pace, _)| pace)
        })
    }

    /// Keeps how a workspace symbols request went: the symbol index
    /// answers for a server that is slow at them (pyright took 5 to 8 s
    /// for each on a million lines) rather than wait on it.
    fn note_symbols_pace(&mut self, method: &str, pace: SymbolsPace) {
        if method == WorkspaceSymbolRequest::METHOD {
            self.last_symbols = Some((pace, Instant::now()));
        }
    }

    /// Closes a document opened for background work, unless an agent's
    /// question has used it since.
    fn close_background(&mut self, uri: &str) {
        if self.documents.close_background(uri) {
            self.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri}}),
            );
        }
    }

    /// What the server said on stderr about why it stopped.
    fn exit_detail(&self) -> String {
        self.transport.stderr_reason()
    }

    fn encoding(&self) -> PositionEncoding {
        match &self.phase {
            Phase::Ready(capabilities) => capabilities.encoding,
            Phase::Initializing(_) => PositionEncoding::default(),
        }
    }

    fn strategy(&self) -> Strategy {
        self.diagnostics.observations.strategy()
    }

    /// Whether any caller waits on the server: requests sent, held or
    /// queued, diagnostics waits, work queued during `initialize`.
    fn has_work(&self) -> bool {
        let queued_at_start =
            matches!(&self.phase, Phase::Initializing(queued) if !queued.is_empty());
        self.pending
            .values()
            .any(|pending| matches!(pending, Pending::Caller(_)))
            || !self.held.is_empty()
            || !self.held_diagnostics.is_empty()
            || !self.waits.is_empty()
            || self.check.is_some()
            || self.fairness.queued() > 0
            || queued_at_start
    }

    fn status(&self) -> ServerStatus {
        let state = match &self.phase {
            Phase::Initializing(_) => ProcessState::Starting,
            Phase::Ready(_) => match self.loading_work() {
                Some(work) => ProcessState::Loading {
                    title: Some(work.title.clone()),
                    percentage: work.percentage,
                },
                None if self.readiness.is_loading() => ProcessState::Loading {
                    title: None,
                    percentage: None,
                },
                None => ProcessState::Ready,
            },
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
            rounds: (
                self.diagnostics.observations.rounds.expected(),
                self.diagnostics.observations.rounds.settle(1),
            ),
            process: self.last_sample,
            last_error: self.last_error.clone(),
            gaps: self.coverage.gaps(),
            queued: self.fairness.queued(),
            in_flight: self
                .pending
                .values()
                .filter(|pending| matches!(pending, Pending::Caller(_)))
                .count(),
        }
    }
}

/// Why a server process could not be started, in the user's terms.
fn spawn_error(spec: &ServerSpec, error: &std::io::Error) -> Error {
    match error.kind() {
        std::io::ErrorKind::NotFound => Error::NotInstalled {
            server: spec.label(),
            command: spec.command.clone(),
        },
        _ => Error::SpawnFailed {
            server: spec.label(),
            command: spec.command.clone(),
            detail: error.to_string(),
        },
    }
}
