//! The Supervisor actor: the root of the tree.
//!
//! Owns the daemon-level actors (Monitor, Router, Watcher), one Session
//! per MCP connection, and the pool of language servers: a [`Slot`] per
//! pooled server, each with its phase, restart budget, the callers and
//! requests waiting for it, and the sessions using it, whose roots
//! together are its workspace folders. Sessions whose configuration
//! resolves to the same [`ServerKey`] (command, arguments, languages,
//! options and settings) share one server, unless it cannot take new
//! workspace folders and their roots differ (`pool.rs`, `sessions.rs`).
//!
//! Takes [`SupervisorMsg`]: `Attach` (a new connection), `Ensure`
//! (forwarded by the Router when a session needs a server that is not
//! running), `Start` (what detection found a session's roots need),
//! `Checked` (a zero-config binary ran, or did not), `Initialized` and
//! `ServerExited` (from a LanguageServer: what it can do; its process
//! stopped, with the requests it had not sent), `Restart` (its own backoff
//! timer), `SessionRoots` and
//! `SessionServers` (a session's roots or configuration changed),
//! `ConfigChanged` (from the Watcher), `Servers` and `WorkspaceServers`.
//! Tells the Router which servers run, which tables sessions use and which
//! server each session is bound to.
//!
//! ractor has no restart policy of its own and stops a parent when a child
//! exits by default; this actor overrides supervision events and counts
//! crashes, spawn failures included, in a sliding window. A request that
//! never reached a dead process waits for the restart instead of failing.

pub mod check;
mod lifetime;
mod pool;
mod sessions;
mod slot;

pub use slot::RestartPolicy;

use crate::error::Error;
use crate::gateway::Connection;
use crate::language::{ServerKey, ServerSpec};
use crate::language_server::{LanguageServerMsg, Work};
use crate::monitor::{Monitor, MonitorMsg};
use crate::recorder::{RecorderMsg, server_event};
use crate::roots::{Change, ChangeAnswer, Detection, RootsChanged};
use crate::router::{Router, RouterMsg, ServerHandle};
use crate::session::SessionMsg;
use crate::settings::Settings;
use crate::settings::Timeouts;
use crate::vocabulary::diagnostics::FileDiagnostics;
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::events::EventKind;
use crate::vocabulary::ids::ServerId;
use crate::vocabulary::ids::SessionId;
use crate::vocabulary::root_set::RootSet;
use crate::watcher::{Watcher, WatcherMsg};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use slot::Slot;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The actor type; its state lives in [`State`].
pub struct Supervisor;

/// What `status` reports of one of a session's servers.
#[derive(Debug, Clone)]
pub struct ServerRecord {
    pub name: String,
    pub languages: Vec<String>,
    pub command: String,
    pub phase: &'static str,
    pub actor: Option<ActorRef<LanguageServerMsg>>,
    pub restarts: u32,
    pub last_error: Option<String>,
    pub stderr: String,
    /// The other sessions that share the server, by id.
    pub shared_with: Vec<String>,
    /// Why it was stopped, while it is stopped on purpose.
    pub stopped: Option<String>,
}

/// What `status` shows of the process and a session's servers.
#[derive(Debug, Clone)]
pub struct Overview {
    /// `Some(sessions attached)` in a daemon.
    pub daemon_sessions: Option<usize>,
    pub servers: Vec<ServerRecord>,
}

pub enum SupervisorMsg {
    /// The `status` of the session shown as `session` (its id), for
    /// `windlass status SESSION`.
    SessionStatus {
        session: String,
        reply: RpcReplyPort<Result<String, String>>,
    },
    /// Fresh diagnostics of `file` through the session named (its id), or
    /// else the most recently attached session whose roots hold the file.
    SessionDiagnostics {
        session: Option<String>,
        file: PathBuf,
        reply: RpcReplyPort<Result<FileDiagnostics, String>>,
    },
    /// Roots added, removed or set for the session named (its id).
    ChangeSessionRoots {
        session: String,
        change: Change,
        reply: RpcReplyPort<Result<ChangeAnswer, String>>,
    },
    /// Every attached session, most recently attached first. Answered,
    /// as every question of the daemon's socket is, with a `Result`.
    Sessions(RpcReplyPort<Result<Vec<AttachedSession>, String>>),
    /// A new MCP connection: start its session.
    Attach {
        settings: Box<Settings>,
        connection: Connection,
    },
    Ensure {
        spec: ServerSpec,
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

/// Whether the tree serves one session or many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The process ends with its only session.
    Standalone,
    /// Sessions come and go.
    Daemon(Lifetime),
}

/// How long a daemon and its servers live unused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetime {
    /// The tree stops this long after its last session ended, when none
    /// attached since.
    pub linger: Duration,
    /// A server without a request for this long stops.
    pub server_idle: Option<Duration>,
    /// When the servers' resident memory together passes this many bytes,
    /// idle servers stop, least recently used first.
    pub memory_budget: Option<u64>,
}

pub struct Arguments {
    pub policy: RestartPolicy,
    pub mode: Mode,
    /// The first session, attached at start (standalone: the only one).
    pub first: Option<(Settings, Connection)>,
    /// Where events go; it outlives the tree, to write its last words.
    pub recorder: ActorRef<RecorderMsg>,
    /// The daemon's socket, recorded with each session for `monitor`.
    pub socket: Option<PathBuf>,
}

/// A session as the daemon's socket lists it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct AttachedSession {
    pub id: String,
    pub host_session: Option<String>,
    pub roots: Vec<PathBuf>,
}

/// A session as the Supervisor keeps it.
struct SessionEntry {
    actor: ActorRef<SessionMsg>,
    attached: Instant,
    host_session: Option<String>,
    roots: Arc<RootSet>,
    servers: Vec<ServerSpec>,
    timeouts: Timeouts,
    config_directories: Vec<PathBuf>,
    /// The server it uses for each configuration.
    bound: HashMap<ServerKey, ServerId>,
    /// The servers its roots need; `None` until its detection finished.
    needed: Option<Vec<ServerId>>,
    /// Workspace-wide queries waiting for detection or a binary check.
    awaiting: Vec<RpcReplyPort<WorkspaceServers>>,
}

pub struct State {
    policy: RestartPolicy,
    mode: Mode,
    slots: HashMap<ServerId, Slot>,
    next_server: u64,
    sessions: HashMap<SessionId, SessionEntry>,
    next_session: u64,
    router: ActorRef<RouterMsg>,
    monitor: ActorRef<MonitorMsg>,
    watcher: ActorRef<WatcherMsg>,
    recorder: ActorRef<RecorderMsg>,
    socket: Option<PathBuf>,
    /// Every session's roots together, as the Watcher watches them.
    watched: Vec<PathBuf>,
    /// Another version's daemon runs: no lingering.
    superseded: bool,
}

impl Actor for Supervisor {
    type Msg = SupervisorMsg;
    type State = State;
    type Arguments = Arguments;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: Arguments,
    ) -> Result<State, ActorProcessingErr> {
        let (monitor, _) = Actor::spawn_linked(None, Monitor, (), myself.get_cell()).await?;
        let (router, _) = Actor::spawn_linked(
            None,
            Router,
            crate::router::Arguments {
                supervisor: myself.clone(),
            },
            myself.get_cell(),
        )
        .await?;
        let (roots, config_directories) = match &args.first {
            Some((settings, _)) => (
                settings
                    .roots
                    .roots()
                    .iter()
                    .map(|root| root.path.clone())
                    .collect(),
                settings.config_directories.clone(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        let watched = pool::outermost(roots);
        let roots = RootSet::from_canonical(watched.clone());
        let (watcher, _) = Actor::spawn_linked(
            None,
            Watcher,
            crate::watcher::Arguments {
                roots,
                router: router.clone(),
                supervisor: myself.clone(),
                config_directories,
            },
            myself.get_cell(),
        )
        .await?;
        match args.first {
            Some((settings, connection)) => {
                let _stopped = myself.send_message(SupervisorMsg::Attach {
                    settings: Box::new(settings),
                    connection,
                });
            }
            None => lifetime::linger(&myself, args.mode, 1),
        }
        lifetime::start_sweeping(&myself, args.mode);
        Ok(State {
            policy: args.policy,
            mode: args.mode,
            slots: HashMap::new(),
            next_server: 1,
            sessions: HashMap::new(),
            next_session: 1,
            router,
            monitor,
            watcher,
            recorder: args.recorder,
            socket: args.socket,
            watched,
            superseded: false,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SupervisorMsg::Attach {
                settings,
                connection,
            } => state.attach(&myself, *settings, connection).await,
            SupervisorMsg::Ensure {
                spec,
                session,
                reply,
            } => state.ensure(&myself, spec, session, reply).await,
            SupervisorMsg::Start { session, detection } => {
                state.start(&myself, session, detection).await
            }
            SupervisorMsg::Checked { server, outcome } => {
                state.checked(&myself, server, outcome).await;
                state.answer_workspace_queries();
            }
            SupervisorMsg::SessionStatus { session, reply } => {
                match state
                    .sessions
                    .iter()
                    .find(|(id, _)| id.to_string() == session)
                {
                    Some((_, entry)) => {
                        let _stopped = entry.actor.send_message(SessionMsg::Status(reply));
                    }
                    None => {
                        let _gone = reply.send(Err(format!(
                            "session {session} is not attached to this daemon"
                        )));
                    }
                }
            }
            SupervisorMsg::SessionDiagnostics {
                session,
                file,
                reply,
            } => match session.as_deref().map_or_else(
                || state.session_holding(&file),
                |id| state.session_named(id),
            ) {
                Some(entry) => {
                    let file = file.display().to_string();
                    let _stopped = entry
                        .actor
                        .send_message(SessionMsg::Diagnostics { file, reply });
                }
                None => {
                    let _gone = reply.send(Err(format!(
                        "no session attached to this daemon has {} in its roots",
                        file.display()
                    )));
                }
            },
            SupervisorMsg::ChangeSessionRoots {
                session,
                change,
                reply,
            } => match state.session_named(&session) {
                Some(entry) => {
                    let _stopped = entry
                        .actor
                        .send_message(SessionMsg::ChangeRoots { change, reply });
                }
                None => {
                    let _gone = reply.send(Err(format!(
                        "session {session} is not attached to this daemon"
                    )));
                }
            },
            SupervisorMsg::Sessions(reply) => {
                let _gone = reply.send(Ok(state.attached_sessions()));
            }
            SupervisorMsg::Initialized {
                server,
                folder_changes,
            } => {
                if let Some(slot) = state.slots.get_mut(&server) {
                    slot.folder_changes = Some(folder_changes);
                    let _stopped = state.recorder.send_message(server_event(
                        EventKind::ServerState,
                        &slot.spec.name,
                        server,
                        serde_json::json!({"state": "ready"}),
                    ));
                }
            }
            SupervisorMsg::ServerExited { server, exit } => {
                state.server_exited(&myself, server, exit).await
            }
            SupervisorMsg::Restart(server) => state.restart(&myself, server).await,
            SupervisorMsg::Orphans { server, work } => state.adopt(&myself, server, work),
            SupervisorMsg::SessionRoots { session, changed } => {
                state.session_roots(&myself, session, changed)
            }
            SupervisorMsg::SessionServers {
                session,
                servers,
                timeouts,
            } => state.session_servers(&myself, session, servers, timeouts),
            SupervisorMsg::ConfigChanged(path) => state.config_changed(&path),
            SupervisorMsg::Sweep => state.sweep(),
            SupervisorMsg::Superseded => state.superseded(&myself),
            SupervisorMsg::Linger(attached) => {
                if state.sessions.is_empty() && state.next_session == attached {
                    tracing::info!("no session attached while lingering; stopping");
                    myself.stop(Some("linger expired".into()));
                }
            }
            SupervisorMsg::Servers { session, reply } => {
                let overview = Overview {
                    daemon_sessions: matches!(state.mode, Mode::Daemon(_))
                        .then_some(state.sessions.len()),
                    servers: state.records(session),
                };
                let _gone = reply.send(overview);
            }
            SupervisorMsg::WorkspaceServers { session, reply } => {
                state.workspace_servers(&myself, session, reply).await
            }
        }
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match event {
            SupervisionEvent::ActorTerminated(cell, ..) => {
                state.child_stopped(&myself, cell.get_id())
            }
            SupervisionEvent::ActorFailed(cell, error) => {
                state
                    .child_failed(&myself, cell.get_id(), error.to_string())
                    .await
            }
            SupervisionEvent::ActorStarted(_) | SupervisionEvent::ProcessGroupChanged(_) => {}
        }
        Ok(())
    }
}

impl State {
    /// A child stopped cleanly. A session stopping means its client went
    /// away; a server actor stops cleanly only after sending
    /// `ServerExited`, which does the bookkeeping.
    fn child_stopped(&mut self, myself: &ActorRef<SupervisorMsg>, id: ractor::ActorId) {
        let ended = self
            .sessions
            .iter()
            .find(|(_, entry)| entry.actor.get_id() == id)
            .map(|(session, _)| *session);
        if let Some(session) = ended {
            self.detach(myself, session);
        }
    }

    /// A child panicked or returned an error. A server actor that died
    /// this way never reported its exit, so it counts as a crash here; a
    /// session that failed is detached; anything else stops the tree.
    async fn child_failed(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        id: ractor::ActorId,
        error: String,
    ) {
        tracing::error!(actor = ?id, "actor failed: {error}");
        let crashed = self.slots.iter().find_map(|(server, slot)| {
            let same = slot
                .actor
                .as_ref()
                .is_some_and(|actor| actor.get_id() == id);
            same.then_some(*server)
        });
        if let Some(server) = crashed {
            let label = self
                .slots
                .get(&server)
                .map(|slot| slot.spec.label())
                .unwrap_or_default();
            let exit = ServerExit {
                server: label,
                documents: Vec::new(),
                stderr: String::new(),
                error,
                orphans: Vec::new(),
                ending: Ending::Crashed,
            };
            return self.server_exited(myself, server, exit).await;
        }
        let session = self
            .sessions
            .iter()
            .find(|(_, entry)| entry.actor.get_id() == id)
            .map(|(session, _)| *session);
        match session {
            Some(session) => self.detach(myself, session),
            None => myself.stop(Some(format!("a core actor failed: {error}"))),
        }
    }

    /// What `status` shows of a session's servers, in name order.
    fn records(&self, session: SessionId) -> Vec<ServerRecord> {
        let Some(entry) = self.sessions.get(&session) else {
            return Vec::new();
        };
        let mut records: Vec<ServerRecord> = entry
            .servers
            .iter()
            .map(|spec| {
                let slot = entry
                    .bound
                    .get(&spec.key())
                    .and_then(|server| self.slots.get(server));
                ServerRecord {
                    name: spec.name.clone(),
                    languages: spec.languages.clone(),
                    command: spec.command.clone(),
                    phase: slot.map_or("not started", |slot| slot.phase.name()),
                    actor: slot.and_then(|slot| slot.actor.clone()),
                    restarts: slot.map_or(0, |slot| slot.restarts),
                    last_error: slot.and_then(|slot| slot.last_error.clone()),
                    stderr: slot.map(|slot| slot.stderr.clone()).unwrap_or_default(),
                    shared_with: slot
                        .map(|slot| {
                            slot.users
                                .keys()
                                .filter(|user| **user != session)
                                .map(ToString::to_string)
                                .collect()
                        })
                        .unwrap_or_default(),
                    stopped: slot
                        .filter(|slot| slot.phase == slot::Phase::Stopped)
                        .and_then(|slot| slot.stopped.clone()),
                }
            })
            .collect();
        records.sort_by(|a, b| a.name.cmp(&b.name));
        records
    }
}
