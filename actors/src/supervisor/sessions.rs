//! Sessions as the pool sees them: attaching a connection, starting what
//! its roots need, following its roots and configuration, answering its
//! workspace-wide queries, and letting go of the servers it used when it
//! ends.

use super::{Mode, SessionEntry, State};
use crate::detect::{Detection, detect_servers};
use crate::language::{ServerKey, ServerSpec};
use crate::messages::language_server::LanguageServerMsg;
use crate::messages::roots::RootsChanged;
use crate::messages::router::RouterMsg;
use crate::messages::session::SessionMsg;
use crate::messages::supervisor::{
    AttachedSession, Connection, Shared, SupervisorMsg, WorkspaceServers,
};
use crate::messages::watcher::WatcherMsg;
use crate::session::Session;
use crate::settings::{Settings, Timeouts};
use crate::sketches::Sketches;
use crate::vocabulary::ids::{ServerId, SessionId};
use crate::vocabulary::root_set::RootSet;
use crate::vocabulary::server_states::Phase;
use ractor::{Actor, ActorRef, RpcReplyPort};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// Why a server is restarted when its only session's configuration
/// changed its command, arguments or options.
const RESTARTED: &str = "restarted after a configuration change";
/// Why a server no configuration names any more is stopped.
const REMOVED: &str = "removed from the configuration";

impl State {
    /// Every attached session, most recently attached first.
    pub(super) fn attached_sessions(&self) -> Vec<AttachedSession> {
        let mut entries: Vec<(&SessionId, &SessionEntry)> = self.sessions.iter().collect();
        entries.sort_by_key(|(_, entry)| std::cmp::Reverse(entry.attached));
        entries
            .into_iter()
            .map(|(id, entry)| AttachedSession {
                id: *id,
                host_session: entry.host_session.clone(),
                client_pid: entry.client_pid,
                roots: entry
                    .roots
                    .roots()
                    .iter()
                    .map(|root| root.path.clone())
                    .collect(),
            })
            .collect()
    }

    /// The attached session whose id is `id`.
    pub(super) fn session_named(&self, id: SessionId) -> Option<&SessionEntry> {
        self.sessions.get(&id)
    }

    /// The most recently attached session whose roots hold `file`.
    pub(super) fn session_holding(&self, file: &Path) -> Option<&SessionEntry> {
        self.sessions
            .values()
            .filter(|entry| entry.roots.root_of(file).is_some())
            .max_by_key(|entry| entry.attached)
    }

    /// Starts a session for a new connection.
    pub(super) async fn attach(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        settings: Settings,
        connection: Connection,
    ) {
        let session = SessionId::random();
        self.next_session += 1;
        let roots = Arc::new(settings.roots.clone());
        let servers = settings.servers.clone();
        let timeouts = settings.timeouts();
        let config_directories = settings.config_directories.clone();
        let host_session = settings.identity.host_session.clone();
        let client_pid = settings.identity.client_pid;
        // The Router hears of the table before the gateway can route.
        let _stopped = self.router.send_message(RouterMsg::Servers {
            session,
            specs: servers.clone(),
        });
        let arguments = crate::session::Arguments {
            id: session,
            settings,
            connection,
            shared: Shared {
                supervisor: myself.clone(),
                router: self.router.clone(),
                watcher: self.watcher.clone(),
                monitor: self.monitor.clone(),
                index: self.index.clone(),
                recorder: self.recorder.clone(),
                socket: self.socket.clone(),
                sketches: self.sketches.clone(),
                daemon: matches!(self.mode, Mode::Daemon(_)),
            },
        };
        let actor = match Actor::spawn_linked(None, Session, arguments, myself.get_cell()).await {
            Ok((actor, _)) => actor,
            Err(error) => {
                tracing::error!(%session, "the session could not start: {error}");
                let _stopped = self.router.send_message(RouterMsg::SessionEnded(session));
                return self.stop_if_unused(myself);
            }
        };
        tracing::info!(%session, "session attached");
        self.sessions.insert(
            session,
            SessionEntry {
                actor,
                attached: std::time::Instant::now(),
                host_session: host_session.clone(),
                client_pid,
                roots: roots.clone(),
                servers: servers.clone(),
                timeouts,
                config_directories,
                bound: HashMap::new(),
                needed: None,
                awaiting: Vec::new(),
            },
        );
        self.watch_roots();
        self.watch_config();
        detect(myself, session, (*roots).clone(), servers, &self.sketches);
    }

    /// Binds and starts the servers a session's roots need, then answers
    /// its workspace-wide queries waiting for them.
    pub(super) async fn start(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        session: SessionId,
        detection: Detection,
    ) {
        let Some(entry) = self.sessions.get(&session) else {
            return;
        };
        let specs: Vec<ServerSpec> = detection
            .needed
            .iter()
            .filter_map(|name| entry.servers.iter().find(|spec| &spec.name == name))
            .cloned()
            .collect();
        let mut needed = Vec::new();
        for spec in &specs {
            let Some(server) = self.bind(session, spec) else {
                return;
            };
            let probe = detection
                .probes
                .iter()
                .find(|(name, _)| *name == spec.name)
                .map(|(_, probe)| probe.clone());
            if let Some(slot) = self.slots.get_mut(&server)
                && slot.probe.is_none()
            {
                slot.probe = probe;
            }
            self.start_if_idle(myself, server).await;
            needed.push(server);
        }
        if let Some(entry) = self.sessions.get_mut(&session) {
            let known = entry.needed.get_or_insert_with(Vec::new);
            for server in needed {
                if !known.contains(&server) {
                    known.push(server);
                }
            }
        }
        self.answer_workspace_queries();
    }

    /// The session's client went away: its servers lose a user, and the
    /// Router and Watcher forget what only it needed.
    pub(super) fn detach(&mut self, myself: &ActorRef<SupervisorMsg>, session: SessionId) {
        let Some(entry) = self.sessions.remove(&session) else {
            return;
        };
        tracing::info!(%session, "session detached");
        for server in entry.bound.values() {
            self.set_user(*server, session, None);
        }
        for reply in entry.awaiting {
            let _gone = reply.send(WorkspaceServers::default());
        }
        let _stopped = self.router.send_message(RouterMsg::SessionEnded(session));
        self.watch_roots();
        self.stop_if_unused(myself);
    }

    /// A standalone process ends with its session; a daemon lingers.
    fn stop_if_unused(&self, myself: &ActorRef<SupervisorMsg>) {
        if !self.sessions.is_empty() {
            return;
        }
        match self.mode {
            Mode::Standalone => {
                tracing::info!("MCP client disconnected; shutting down");
                myself.stop(Some("client disconnected".into()));
            }
            Mode::Daemon(_) if self.superseded => {
                tracing::info!("last session gone and another version's daemon runs; stopping");
                myself.stop(Some("superseded".into()));
            }
            Mode::Daemon(_) => super::lifetime::linger(myself, self.mode, self.next_session),
        }
    }

    /// A session's roots changed: its servers' folders follow, and servers
    /// for languages found only in the added roots are started.
    pub(super) fn session_roots(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        session: SessionId,
        changed: RootsChanged,
    ) {
        let Some(entry) = self.sessions.get_mut(&session) else {
            return;
        };
        entry.roots = changed.roots.clone();
        let bound: Vec<(ServerKey, ServerId)> = entry
            .bound
            .iter()
            .map(|(key, server)| (key.clone(), *server))
            .collect();
        let servers = entry.servers.clone();
        for (key, server) in bound {
            self.follow_roots(session, key, server, &changed.roots);
        }
        self.watch_roots();
        if !changed.added.is_empty() {
            detect(
                myself,
                session,
                RootSet::from_canonical(changed.added),
                servers,
                &self.sketches,
            );
        }
    }

    /// Moves one of a session's servers to its new roots. A server that
    /// cannot take new folders and is shared is left to the others; the
    /// session is bound to one that has its roots.
    fn follow_roots(
        &mut self,
        session: SessionId,
        key: ServerKey,
        server: ServerId,
        roots: &Arc<RootSet>,
    ) {
        let Some(slot) = self.slots.get(&server) else {
            return;
        };
        if slot.folder_changes != Some(false) || slot.users.len() < 2 {
            return self.set_user(server, session, Some(roots.clone()));
        }
        let spec = slot.spec.clone();
        self.set_user(server, session, None);
        if let Some(entry) = self.sessions.get_mut(&session) {
            entry.bound.remove(&key);
        }
        self.bind(session, &spec);
    }

    /// A session's configuration now names `servers`. A server only this
    /// session uses is brought in line in place (new settings are sent to
    /// it; a new command or options restart it with its documents); a
    /// shared one is left to the others and the session is bound anew on
    /// demand; one nobody uses any more stops.
    pub(super) fn session_servers(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        session: SessionId,
        servers: Vec<ServerSpec>,
        timeouts: Timeouts,
    ) {
        let Some(entry) = self.sessions.get_mut(&session) else {
            return;
        };
        let old = std::mem::replace(&mut entry.servers, servers.clone());
        entry.timeouts = timeouts;
        entry.needed = None;
        let bound = std::mem::take(&mut entry.bound);
        let roots = entry.roots.clone();
        let _stopped = self.router.send_message(RouterMsg::Servers {
            session,
            specs: servers.clone(),
        });
        for (key, server) in bound {
            let name = old
                .iter()
                .find(|spec| spec.key() == key)
                .map(|spec| &spec.name);
            let new = name.and_then(|name| servers.iter().find(|spec| &spec.name == name));
            match new {
                Some(new) if new.key() == key => self.keep_binding(session, key, server),
                Some(new) if self.sole_user(server, session) => {
                    self.reconfigure(server, new);
                    self.keep_binding(session, new.key(), server);
                }
                _ => {
                    self.set_user(server, session, None);
                    if self
                        .slots
                        .get(&server)
                        .is_some_and(|slot| slot.users.is_empty())
                    {
                        self.discard(server, REMOVED);
                    }
                }
            }
        }
        detect(myself, session, (*roots).clone(), servers, &self.sketches);
    }

    fn sole_user(&self, server: ServerId, session: SessionId) -> bool {
        self.slots
            .get(&server)
            .is_some_and(|slot| slot.users.len() == 1 && slot.users.contains_key(&session))
    }

    fn keep_binding(&mut self, session: SessionId, key: ServerKey, server: ServerId) {
        if let Some(entry) = self.sessions.get_mut(&session) {
            entry.bound.insert(key.clone(), server);
        }
        let _stopped = self.router.send_message(RouterMsg::Bound {
            session,
            key,
            server,
        });
    }

    /// Gives a server a new spec: settings alone are sent to the running
    /// process; anything else restarts it.
    fn reconfigure(&mut self, server: ServerId, new: &ServerSpec) {
        let Some(slot) = self.slots.get_mut(&server) else {
            return;
        };
        let same_process = slot.spec.same_process(new);
        slot.spec = new.clone();
        slot.key = new.key();
        let Some(actor) = &slot.actor else {
            return;
        };
        let message = if same_process {
            LanguageServerMsg::Configure(new.settings.clone())
        } else {
            LanguageServerMsg::Retire {
                reason: RESTARTED.into(),
                restart: true,
            }
        };
        let _gone = actor.send_message(message);
    }

    /// A `.windlass.toml` changed: the sessions whose configuration reads
    /// it reload.
    pub(super) fn config_changed(&self, path: &Path) {
        let Some(directory) = path.parent() else {
            return;
        };
        for entry in self.sessions.values() {
            if entry.config_directories.iter().any(|dir| dir == directory) {
                let _stopped = entry.actor.send_message(SessionMsg::ConfigChanged);
            }
        }
    }

    /// Tells the Watcher every session's configuration directories.
    fn watch_config(&self) {
        let mut directories: Vec<_> = self
            .sessions
            .values()
            .flat_map(|entry| entry.config_directories.iter().cloned())
            .collect();
        directories.sort();
        directories.dedup();
        let _stopped = self
            .watcher
            .send_message(WatcherMsg::ConfigDirectories(directories));
    }

    pub(super) async fn workspace_servers(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        session: SessionId,
        reply: RpcReplyPort<WorkspaceServers>,
    ) {
        let Some(entry) = self.sessions.get(&session) else {
            let _gone = reply.send(WorkspaceServers::default());
            return;
        };
        let needed = entry.needed.clone();
        for server in needed.into_iter().flatten() {
            self.start_if_idle(myself, server).await;
        }
        if let Some(entry) = self.sessions.get_mut(&session) {
            entry.awaiting.push(reply);
        }
        self.answer_workspace_queries();
    }

    /// Answers each session's waiting workspace-wide queries once its
    /// detection is done and none of its needed servers is still having
    /// its binary checked.
    pub(super) fn answer_workspace_queries(&mut self) {
        let answerable: Vec<SessionId> = self
            .sessions
            .iter()
            .filter(|(_, entry)| !entry.awaiting.is_empty())
            .filter(|(_, entry)| {
                entry.needed.as_ref().is_some_and(|needed| {
                    !needed.iter().any(|server| {
                        self.slots
                            .get(server)
                            .is_some_and(|slot| slot.phase == Phase::Checking)
                    })
                })
            })
            .map(|(session, _)| *session)
            .collect();
        for session in answerable {
            let answer = self.workspace_servers_of(session);
            if let Some(entry) = self.sessions.get_mut(&session) {
                for reply in entry.awaiting.drain(..) {
                    let _gone = reply.send(answer.clone());
                }
            }
        }
    }

    /// The running servers a session uses, and its needed ones that are
    /// not running.
    fn workspace_servers_of(&self, session: SessionId) -> WorkspaceServers {
        let Some(entry) = self.sessions.get(&session) else {
            return WorkspaceServers::default();
        };
        let running = entry
            .bound
            .values()
            .filter_map(|server| {
                let slot = self.slots.get(server)?;
                Some(slot.handle(*server, slot.actor.clone()?))
            })
            .collect();
        let unavailable = entry
            .needed
            .iter()
            .flatten()
            .filter_map(|server| self.slots.get(server))
            .filter(|slot| slot.actor.is_none())
            .map(|slot| slot.spec.name.clone())
            .collect();
        WorkspaceServers {
            running,
            unavailable,
        }
    }
}

/// Finds, off the actor's thread, which servers `roots` need; then loads
/// the text searches' kept filters of the roots, while the servers start
/// rather than at the first search.
fn detect(
    myself: &ActorRef<SupervisorMsg>,
    session: SessionId,
    roots: RootSet,
    specs: Vec<ServerSpec>,
    sketches: &Arc<Sketches>,
) {
    let myself = myself.clone();
    let sketches = sketches.clone();
    tokio::task::spawn_blocking(move || {
        let detection = detect_servers(&roots, &specs);
        let _stopped = myself.send_message(SupervisorMsg::Start { session, detection });
        sketches.load(&roots);
    });
}
