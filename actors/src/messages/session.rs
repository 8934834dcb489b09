//! A Session's inbox, and the daemon-level actors every session talks to.
use crate::messages::monitor::MonitorMsg;
use crate::messages::recorder::RecorderMsg;
use crate::messages::roots::{Change, ChangeAnswer, RootsChanged};
use crate::messages::router::RouterMsg;
use crate::messages::supervisor::SupervisorMsg;
use crate::messages::watcher::WatcherMsg;
use crate::settings::Settings;
use crate::vocabulary::diagnostics::FileDiagnostics;
use crate::vocabulary::status::SessionStatus;
use ractor::{ActorRef, RpcReplyPort};

pub enum SessionMsg {
    /// The session's roots changed (from its Roots actor).
    RootsChanged(RootsChanged),
    /// A `.windlass.toml` of this session's configuration changed.
    ConfigChanged,
    ConfigReloaded(Result<Box<Settings>, String>),
    Warnings(RpcReplyPort<Vec<String>>),
    /// The session's `status`, asked from outside its connection.
    Status(RpcReplyPort<Result<SessionStatus, String>>),
    /// Fresh diagnostics of a file, asked from outside its connection.
    Diagnostics {
        file: String,
        reply: RpcReplyPort<Result<FileDiagnostics, String>>,
    },
    /// Roots added, removed or set from outside its connection (a host's
    /// hook); answered with the roots in effect and those refused.
    ChangeRoots {
        change: Change,
        reply: RpcReplyPort<Result<ChangeAnswer, String>>,
    },
}

/// The daemon-level actors a session talks to.
#[derive(Clone)]
pub struct Shared {
    pub supervisor: ActorRef<SupervisorMsg>,
    pub router: ActorRef<RouterMsg>,
    pub watcher: ActorRef<WatcherMsg>,
    pub monitor: ActorRef<MonitorMsg>,
    pub recorder: ActorRef<RecorderMsg>,
    /// The socket `monitor` subscribes on: the daemon's.
    pub socket: Option<std::path::PathBuf>,
    /// Whether this is a daemon, whose servers other sessions may share.
    pub daemon: bool,
}
