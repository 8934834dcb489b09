//! The Supervisor actor: the root of the tree.
//!
//! Owns the daemon-level actors (Monitor, Router, Watcher, SymbolIndex), one Session
//! per MCP connection, and the pool of language servers: a [`Slot`] per
//! pooled server, each with its phase, restart budget, the callers and
//! requests waiting for it, and the sessions using it, whose roots
//! together are its workspace folders. Sessions whose configuration
//! resolves to the same [`ServerKey`] (command, arguments, languages,
//! options and settings) share one server, unless it cannot take new
//! workspace folders and their roots differ (`pool.rs`, `sessions.rs`).
//!
//! Its inbox is `messages::supervisor`: new connections; servers the
//! Router needs started; what detection found a session's roots need;
//! LanguageServers saying what they can do and that their process
//! stopped (with the requests it never received); sessions' roots and
//! configurations changing; the Watcher's configuration changes; and the
//! daemon socket's questions about sessions. Tells the Router which servers run, which tables sessions use and which
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
mod sweep;

pub use lifetime::{Lifetime, Mode};
pub use slot::RestartPolicy;

use crate::language::{ServerKey, ServerSpec};
use crate::messages::monitor::MonitorMsg;
use crate::messages::recorder::{RecorderMsg, server_event};
use crate::messages::router::RouterMsg;
use crate::messages::session::{Addressee, SessionMsg};
use crate::messages::supervisor::{
    Connection, Ending, Overview, ServerExit, ServerRecord, SupervisorMsg, WorkspaceServers,
};
use crate::messages::symbol_index::SymbolIndexMsg;
use crate::messages::watcher::WatcherMsg;
use crate::monitor::Monitor;
use crate::router::Router;
use crate::settings::{Settings, Timeouts};
use crate::sketches::Sketches;
use crate::symbol_index::SymbolIndex;
use crate::vocabulary::events::EventKind;
use crate::vocabulary::ids::{ServerId, SessionId};
use crate::vocabulary::root_set::{RootSet, outermost};
use crate::vocabulary::server_states::Phase;
use crate::watcher::Watcher;
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use slot::Slot;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// The actor type; its state lives in [`State`].
pub struct Supervisor;

pub struct Arguments {
    pub policy: RestartPolicy,
    pub mode: Mode,
    /// The first session, attached at start (standalone: the only one).
    pub first: Option<(Settings, Connection)>,
    /// Where events go; it outlives the tree, to write its last words.
    pub recorder: ActorRef<RecorderMsg>,
    /// Where the symbol index lives; none without a state directory.
    pub index: Option<PathBuf>,
    /// Where the text searches' filters are kept; none without a state
    /// directory.
    pub sketches: Option<PathBuf>,
    /// The daemon's socket, recorded with each session for `monitor`.
    pub socket: Option<PathBuf>,
}

/// A session as the Supervisor keeps it.
struct SessionEntry {
    actor: ActorRef<SessionMsg>,
    attached: Instant,
    host_session: Option<String>,
    /// The MCP client's process, by which its host's hooks find it.
    client_pid: Option<u32>,
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
    index: ActorRef<SymbolIndexMsg>,
    recorder: ActorRef<RecorderMsg>,
    socket: Option<PathBuf>,
    /// What the text searches of every session remember of the files.
    sketches: Arc<Sketches>,
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
        let (index, _) = Actor::spawn_linked(
            None,
            SymbolIndex,
            crate::symbol_index::Arguments { path: args.index },
            myself.get_cell(),
        )
        .await?;
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
        let watched = outermost(roots);
        let roots = RootSet::from_canonical(watched.clone());
        let sketches = args.sketches.map_or_else(Arc::default, Sketches::saved_at);
        let (watcher, _) = Actor::spawn_linked(
            None,
            Watcher,
            crate::watcher::Arguments {
                roots,
                router: router.clone(),
                index: index.clone(),
                supervisor: myself.clone(),
                config_directories,
                listings: sketches.listings().clone(),
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
            index,
            recorder: args.recorder,
            socket: args.socket,
            watched,
            sketches,
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
            } => state.ensure(&myself, *spec, session, reply).await,
            SupervisorMsg::TsserverOf { server, reply } => {
                let _gone = reply.send(state.tsserver_of(server));
            }
            SupervisorMsg::Start { session, detection } => {
                state.start(&myself, session, detection).await
            }
            SupervisorMsg::Checked { server, outcome } => {
                state.checked(&myself, server, outcome).await;
                state.answer_workspace_queries();
            }
            SupervisorMsg::AskSession { to, question } => {
                let entry = match &to {
                    Addressee::Named(session) => state.session_named(*session),
                    Addressee::Holding(file) => state.session_holding(file),
                };
                match entry {
                    Some(entry) => {
                        let _stopped = entry.actor.send_message(SessionMsg::Ask(question));
                    }
                    None => question.unanswered(&to),
                }
            }
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
                    memory_budget: match state.mode {
                        Mode::Daemon(lifetime) => lifetime.memory_budget,
                        Mode::Standalone => None,
                    },
                    servers: state.records(session),
                };
                let _gone = reply.send(overview);
            }
            SupervisorMsg::Pool(reply) => {
                let _gone = reply.send(Ok(state.pool_records()));
            }
            SupervisorMsg::WorkspaceServers { session, reply } => {
                state.workspace_servers(&myself, session, reply).await
            }
        }
        Ok(())
    }

    /// The text searches' filters made since the last save are written
    /// before the process ends: the next one starts from them.
    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        let sketches = state.sketches.clone();
        let _saved = tokio::task::spawn_blocking(move || sketches.save()).await;
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
                record(spec, slot, Some(session))
            })
            .collect();
        records.sort_by(|a, b| a.name.cmp(&b.name));
        records
    }

    /// Every server the pool has started, whoever uses it (if anyone
    /// does), in name order.
    fn pool_records(&self) -> Vec<ServerRecord> {
        let mut records: Vec<ServerRecord> = self
            .slots
            .values()
            .filter(|slot| slot.phase != Phase::NotStarted)
            .map(|slot| record(&slot.spec, Some(slot), None))
            .collect();
        records.sort_by(|a, b| a.name.cmp(&b.name));
        records
    }
}

/// What `status` shows of a server of `spec`, from its slot when it has
/// one; its users other than `asking` are those it is shared with.
fn record(spec: &ServerSpec, slot: Option<&Slot>, asking: Option<SessionId>) -> ServerRecord {
    ServerRecord {
        name: spec.name.clone(),
        languages: spec.languages.clone(),
        command: spec.command.clone(),
        duties: spec.duties.described(),
        phase: slot.map_or(Phase::NotStarted, |slot| slot.phase),
        actor: slot.and_then(|slot| slot.actor.clone()),
        restarts: slot.map_or(0, |slot| slot.restarts),
        last_error: slot.and_then(|slot| slot.last_error.clone()),
        stderr: slot.map(|slot| slot.stderr.clone()).unwrap_or_default(),
        shared_with: slot
            .map(|slot| {
                slot.users
                    .keys()
                    .filter(|user| Some(**user) != asking)
                    .copied()
                    .collect()
            })
            .unwrap_or_default(),
        stopped: slot
            .filter(|slot| slot.phase == Phase::Stopped)
            .and_then(|slot| slot.stopped.clone()),
    }
}
