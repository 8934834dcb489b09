//! The Supervisor's inbox: new connections, servers to ensure, start,
//! restart and retire, what its children report, and the daemon socket's
//! questions about sessions; with what it answers them. A new connection
//! carries what its session is made of (the daemon-level actors it talks
//! to, `Shared`, and for a transport that serves the session's tools
//! itself, the `SessionParts` handed to it), so those live here too: they
//! name this inbox, and this inbox names them.
use crate::detect::Detection;
use crate::error::Error;
use crate::language::ServerSpec;
use crate::messages::gateway::GatewayMsg;
use crate::messages::language_server::{LanguageServerMsg, Work};
use crate::messages::monitor::MonitorMsg;
use crate::messages::recorder::RecorderMsg;
use crate::messages::roots::{RootsChanged, RootsMsg};
use crate::messages::router::{RouterMsg, ServerHandle};
use crate::messages::session::{Addressee, SessionMsg, SessionQuestion};
use crate::messages::symbol_index::SymbolIndexMsg;
use crate::messages::watcher::WatcherMsg;
use crate::settings::{Settings, Timeouts};
use crate::sketches::Sketches;
use crate::vocabulary::client::ClientName;
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::ids::{ServerId, SessionId};
use crate::vocabulary::running::InFlight;
use crate::vocabulary::server_states::Phase;
use ractor::{ActorRef, RpcReplyPort};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;

/// What `status` reports of one of a session's servers.
#[derive(Debug, Clone)]
pub struct ServerRecord {
    pub name: String,
    pub languages: Vec<String>,
    pub command: String,
    /// How the session uses it, when it is more than a language server.
    pub duties: Vec<String>,
    pub phase: Phase,
    pub actor: Option<ActorRef<LanguageServerMsg>>,
    pub restarts: u32,
    pub last_error: Option<String>,
    pub stderr: String,
    /// The other sessions that share the server, by id.
    pub shared_with: Vec<SessionId>,
    /// Why it was stopped, while it is stopped on purpose.
    pub stopped: Option<String>,
}

/// What `status` shows of the process and a session's servers.
#[derive(Debug, Clone)]
pub struct Overview {
    /// `Some(sessions attached)` in a daemon.
    pub daemon_sessions: Option<usize>,
    /// The servers' resident memory above which idle ones stop, in
    /// bytes, when the daemon has a budget.
    pub memory_budget: Option<u64>,
    pub servers: Vec<ServerRecord>,
}

pub enum SupervisorMsg {
    /// A question of the daemon's socket for one session, handed to it
    /// unread, or answered that no such session is attached.
    AskSession {
        to: Addressee,
        question: SessionQuestion,
    },
    /// Every attached session, most recently attached first. Answered,
    /// as every question of the daemon's socket is, with a `Result`.
    Sessions(RpcReplyPort<Result<Vec<AttachedSession>, String>>),
    /// Every server started, used by a session or kept for the next,
    /// each with all its users as `shared_with`.
    Pool(RpcReplyPort<Result<Vec<ServerRecord>, String>>),
    /// A new MCP connection: start its session.
    Attach {
        settings: Box<Settings>,
        connection: Connection,
    },
    /// The session and spec of the TypeScript server that answers this
    /// server's `tsserver/request`s: one of a session using it that
    /// serves one of its languages and loads tsserver plugins.
    TsserverOf {
        server: ServerId,
        reply: RpcReplyPort<Option<(SessionId, ServerSpec)>>,
    },
    Ensure {
        spec: Box<ServerSpec>,
        session: SessionId,
        reply: RpcReplyPort<Result<ServerHandle, Error>>,
    },
    /// What detection found a session's roots need.
    Start {
        session: SessionId,
        detection: Detection,
    },
    /// The outcome of running a zero-config server's binary once.
    Checked {
        server: ServerId,
        outcome: Result<(), String>,
    },
    /// The server answered `initialize`: whether it takes new workspace
    /// folders without a restart.
    Initialized {
        server: ServerId,
        folder_changes: bool,
    },
    ServerExited {
        server: ServerId,
        exit: ServerExit,
    },
    Restart(ServerId),
    /// A session's roots changed.
    SessionRoots {
        session: SessionId,
        changed: RootsChanged,
    },
    /// A session's configuration now names these servers, with these
    /// limits for servers started from now on.
    SessionServers {
        session: SessionId,
        servers: Vec<ServerSpec>,
        timeouts: Timeouts,
    },
    /// A `.windlass.toml` changed on disk.
    ConfigChanged(PathBuf),
    /// The linger timer set when the daemon's last session ended; the
    /// number of sessions attached by then tells whether any came since.
    Linger(u64),
    /// Time to stop idle servers, and to keep to the memory budget.
    Sweep,
    /// A daemon of another version runs beside this one: this one stops
    /// after its last session instead of lingering.
    Superseded,
    /// Work a stopping LanguageServer took after it handed over (a
    /// request that reached it as it retired or died): for the server's
    /// next process.
    Orphans {
        server: ServerId,
        work: Vec<Work>,
    },
    Servers {
        session: SessionId,
        reply: RpcReplyPort<Overview>,
    },
    /// The running servers for a session's workspace-wide query, after
    /// starting those its roots need (answered once its detection is done).
    WorkspaceServers {
        session: SessionId,
        reply: RpcReplyPort<WorkspaceServers>,
    },
}

/// What a LanguageServer hands over when its process has stopped.
pub struct ServerExit {
    /// The server's label, for errors.
    pub server: String,
    pub documents: Vec<DocumentSnapshot>,
    pub stderr: String,
    pub error: String,
    /// Requests the process never received; they go to the next one.
    pub orphans: Vec<Work>,
    pub ending: Ending,
}

/// Why a server's process stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It exited or failed on its own: a crash, counted against its
    /// restart budget.
    Crashed,
    /// Stopped on purpose to be started again at once (its configuration
    /// or folders changed); not a crash.
    Restart,
    /// Stopped on purpose and left stopped (idle, over the memory budget,
    /// removed from the configuration) until something needs it.
    Stopped,
}

impl Ending {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Crashed => "crashed",
            Self::Restart => "restart",
            Self::Stopped => "stopped",
        }
    }
}

/// The servers a workspace-wide query asks, and the needed ones it cannot.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceServers {
    pub running: Vec<ServerHandle>,
    /// Names of servers the roots need that are failed, restarting or
    /// could not start.
    pub unavailable: Vec<String>,
}

/// A session as the daemon's socket lists it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct AttachedSession {
    pub id: SessionId,
    pub host_session: Option<String>,
    /// The MCP client's process; absent from an older daemon's answer.
    #[serde(default)]
    pub client_pid: Option<u32>,
    pub roots: Vec<PathBuf>,
}

/// Where a session's MCP messages come from and go to.
pub enum Connection {
    /// The process's own stdin and stdout.
    Stdio,
    /// A bridge's socket, or any other byte stream.
    Stream(
        Box<dyn AsyncRead + Send + Unpin>,
        Box<dyn AsyncWrite + Send + Unpin>,
    ),
    /// A transport that runs its MCP service itself (the HTTP endpoint,
    /// whose sessions start with the client's `initialize`): the Gateway
    /// serves nothing and hands over what the session's tools need.
    Handed(oneshot::Sender<SessionParts>),
}

/// What a session's tools are made of, for a transport that serves them.
pub struct SessionParts {
    pub session: SessionId,
    pub session_actor: ActorRef<SessionMsg>,
    pub roots: ActorRef<RootsMsg>,
    pub shared: Shared,
    pub settings: Settings,
    /// The session's calls in flight, which its `status` reports.
    pub in_flight: InFlight,
    /// The MCP client's name and version, once it said them.
    pub client: ClientName,
    /// Told [`GatewayMsg::ClientClosed`] when the transport's session ends.
    pub gateway: ActorRef<GatewayMsg>,
}

/// The daemon-level actors a session talks to.
#[derive(Clone)]
pub struct Shared {
    pub supervisor: ActorRef<SupervisorMsg>,
    pub router: ActorRef<RouterMsg>,
    pub watcher: ActorRef<WatcherMsg>,
    pub monitor: ActorRef<MonitorMsg>,
    pub index: ActorRef<SymbolIndexMsg>,
    pub recorder: ActorRef<RecorderMsg>,
    /// The socket `monitor` subscribes on: the daemon's.
    pub socket: Option<std::path::PathBuf>,
    /// What the text searches remember of the files, for every session.
    pub sketches: Arc<Sketches>,
    /// Whether this is a daemon, whose servers other sessions may share.
    pub daemon: bool,
}
