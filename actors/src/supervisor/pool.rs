//! The pool: which server a session uses for a configuration, the
//! server's workspace folders (the union of its users' roots), and its
//! processes: started, checked, restarted after a crash with the documents
//! and requests it had, and stopped on purpose.
//!
//! A session is bound to a server of its configuration's key that takes
//! its roots: any one of that key when the server takes new workspace
//! folders, else one whose users have exactly its roots, else a new one.
//! So a server that cannot change folders is never restarted under
//! sessions already using it because another came with other roots.

use super::State;
use super::check;
use super::slot::Slot;
use crate::error::Error;
use crate::language::ServerSpec;
use crate::language_server::LanguageServer;
use crate::messages::language_server::{FolderChange, LanguageServerMsg, Work, is_alive};
use crate::messages::recorder::{RecorderMsg, server_event};
use crate::messages::router::{RouterMsg, ServerHandle};
use crate::messages::supervisor::{Ending, ServerExit, SupervisorMsg};
use crate::messages::watcher::WatcherMsg;
use crate::settings::Timeouts;
use crate::vocabulary::events::EventKind;
use crate::vocabulary::ids::{ServerId, SessionId};
use crate::vocabulary::root_set::{RootSet, outermost};
use crate::vocabulary::server_states::Phase;
use ractor::{Actor, ActorRef, RpcReplyPort, SpawnErr};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

impl State {
    /// The server `session` uses for `spec`: the one it is bound to, a
    /// pooled one that takes its roots, or a new one. `None` when the
    /// session has ended.
    pub(super) fn bind(&mut self, session: SessionId, spec: &ServerSpec) -> Option<ServerId> {
        let entry = self.sessions.get(&session)?;
        let key = spec.key();
        if let Some(server) = entry.bound.get(&key)
            && self.slots.contains_key(server)
        {
            return Some(*server);
        }
        let roots = entry.roots.clone();
        let timeouts = entry.timeouts;
        let pooled = self
            .slots
            .iter()
            .filter(|(_, slot)| slot.key == key && slot.accepts(&roots))
            .map(|(server, _)| *server)
            .min();
        let server = pooled.unwrap_or_else(|| self.add_slot(spec.clone(), timeouts));
        if let Some(entry) = self.sessions.get_mut(&session) {
            entry.bound.insert(key.clone(), server);
        }
        let _stopped = self.router.send_message(RouterMsg::Bound {
            session,
            key,
            server,
        });
        self.set_user(server, session, Some(roots));
        Some(server)
    }

    /// The TypeScript server that answers `server`'s `tsserver/request`s:
    /// in the configuration of the first session using it that has one,
    /// the first other server of one of its languages that loads tsserver
    /// plugins.
    pub(super) fn tsserver_of(&self, server: ServerId) -> Option<(SessionId, ServerSpec)> {
        let slot = self.slots.get(&server)?;
        slot.users.keys().find_map(|session| {
            let entry = self.sessions.get(session)?;
            entry
                .servers
                .iter()
                .find(|spec| {
                    spec.key() != slot.key
                        && spec.loads_tsserver_plugins()
                        && slot
                            .spec
                            .languages
                            .iter()
                            .any(|language| spec.serves(language))
                })
                .map(|spec| (*session, spec.clone()))
        })
    }

    fn add_slot(&mut self, spec: ServerSpec, timeouts: Timeouts) -> ServerId {
        let server = ServerId(self.next_server);
        self.next_server += 1;
        self.slots.insert(server, Slot::new(spec, timeouts));
        server
    }

    /// Adds or moves (`Some` roots) or removes (`None`) one user of a
    /// server, and gives a running server its new folders when they
    /// changed: one `didChangeWorkspaceFolders` per change.
    pub(super) fn set_user(
        &mut self,
        server: ServerId,
        session: SessionId,
        roots: Option<Arc<RootSet>>,
    ) {
        let Some(slot) = self.slots.get_mut(&server) else {
            return;
        };
        match roots {
            Some(roots) => slot.users.insert(session, roots),
            None => slot.users.remove(&session),
        };
        let folders = slot.users_roots();
        if folders == slot.folders {
            return;
        }
        slot.folders = folders;
        if let Some(actor) = &slot.actor {
            let roots = slot.root_set();
            let change = FolderChange {
                folders: roots.workspace_folders(),
                roots: Arc::new(roots),
            };
            let _gone = actor.send_message(LanguageServerMsg::Folders(change));
        }
        self.watch_roots();
    }

    /// Keeps the Watcher on every session's roots and every running
    /// server's folders: a server no session uses any more still holds
    /// documents that must not go stale.
    pub(super) fn watch_roots(&mut self) {
        let mut paths: Vec<PathBuf> = self
            .sessions
            .values()
            .flat_map(|entry| entry.roots.roots().iter().map(|root| root.path.clone()))
            .collect();
        paths.extend(
            self.slots
                .values()
                .filter(|slot| slot.actor.is_some())
                .flat_map(|slot| slot.folders.iter().cloned()),
        );
        let wanted = outermost(paths);
        let added: Vec<PathBuf> = wanted
            .iter()
            .filter(|path| !self.watched.contains(path))
            .cloned()
            .collect();
        let removed: Vec<PathBuf> = self
            .watched
            .iter()
            .filter(|path| !wanted.contains(path))
            .cloned()
            .collect();
        if added.is_empty() && removed.is_empty() {
            return;
        }
        self.watched = wanted;
        let _stopped = self
            .watcher
            .send_message(WatcherMsg::Roots { added, removed });
    }

    /// Answers a session's request for a server that the Router did not
    /// find running: at once if it is, else when it has started.
    pub(super) async fn ensure(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        spec: ServerSpec,
        session: SessionId,
        reply: RpcReplyPort<Result<ServerHandle, Error>>,
    ) {
        let Some(server) = self.bind(session, &spec) else {
            let _gone = reply.send(Err(Error::ShuttingDown));
            return;
        };
        let Some(slot) = self.slots.get_mut(&server) else {
            return;
        };
        match (slot.phase, &slot.actor) {
            (Phase::Running, Some(actor)) if is_alive(actor) => {
                let handle = ServerHandle {
                    id: server,
                    spec: Arc::new(spec),
                    actor: actor.clone(),
                };
                let _gone = reply.send(Ok(handle));
            }
            // A stopping server's exit report is on its way; the restart
            // answers the waiter.
            (Phase::Running, Some(_)) | (Phase::Backoff | Phase::Checking, _) => {
                slot.waiters.push(reply)
            }
            (Phase::Failed, _)
                if slot
                    .failed_until
                    .is_some_and(|until| Instant::now() < until) =>
            {
                let _gone = reply.send(Err(slot.failed_error()));
            }
            (Phase::Unusable, _) => {
                let _gone = reply.send(Err(unusable_error(slot)));
            }
            _ => {
                slot.waiters.push(reply);
                self.spawn(myself, server).await;
            }
        }
    }

    /// Starts a server nobody has started, or one stopped on purpose.
    pub(super) async fn start_if_idle(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        server: ServerId,
    ) {
        if self
            .slots
            .get(&server)
            .is_some_and(|slot| matches!(slot.phase, Phase::NotStarted | Phase::Stopped))
        {
            self.spawn(myself, server).await;
        }
    }

    pub(super) async fn restart(&mut self, myself: &ActorRef<SupervisorMsg>, server: ServerId) {
        if let Some(slot) = self
            .slots
            .get_mut(&server)
            .filter(|slot| slot.phase == Phase::Backoff)
        {
            slot.restarts += 1;
            self.spawn(myself, server).await;
        }
    }

    /// Starts the server's actor and process, after checking once that a
    /// zero-config binary runs at all. Spawning only starts the process;
    /// `initialize` is answered later, so this does not wait on the server.
    async fn spawn(&mut self, myself: &ActorRef<SupervisorMsg>, server: ServerId) {
        let Some(slot) = self.slots.get_mut(&server) else {
            return;
        };
        if let Some(args) = slot.spec.check.clone() {
            slot.phase = Phase::Checking;
            let command = slot.spec.command.clone();
            let myself = myself.clone();
            tokio::spawn(async move {
                let outcome = check::run(&command, &args).await;
                let _stopped = myself.send_message(SupervisorMsg::Checked { server, outcome });
            });
            return;
        }
        let roots = slot.root_set();
        slot.usage = Arc::default();
        let args = crate::language_server::Arguments {
            id: server,
            spec: slot.spec.clone(),
            folders: roots.workspace_folders(),
            directory: roots.first_directory(),
            timeouts: slot.timeouts,
            reopen: std::mem::take(&mut slot.reopen)
                .into_iter()
                .filter(|document| roots.root_of(&document.path).is_some())
                .collect(),
            probe: slot
                .probe
                .clone()
                .filter(|document| roots.root_of(&document.path).is_some()),
            supervisor: myself.clone(),
            monitor: self.monitor.clone(),
            recorder: self.recorder.clone(),
            usage: slot.usage.clone(),
        };
        match Actor::spawn_linked(None, LanguageServer, args, myself.get_cell()).await {
            Ok((actor, _)) => {
                record(
                    &self.recorder,
                    EventKind::ServerState,
                    (&slot.spec.name, server),
                    json!({
                        "state": "starting",
                        "restarts": slot.restarts,
                        "pid": slot.usage.pid(),
                        "command": slot.spec.command_line(),
                    }),
                );
                slot.stopped = None;
                slot.started(server, actor.clone());
                let _stopped = self.router.send_message(RouterMsg::ServerUp(server, actor));
                self.watch_roots();
            }
            Err(error) => {
                // A spawn failure sends no supervision event, so it is
                // counted here; the next request tries again.
                let error = spawn_error(&slot.spec, error);
                tracing::error!(server = %slot.spec.name, "{error}");
                record(
                    &self.recorder,
                    EventKind::Error,
                    (&slot.spec.name, server),
                    json!({"error": error.to_string()}),
                );
                slot.last_error = Some(error.to_string());
                let crashes = slot.record_crash(self.policy.window);
                slot.phase = if crashes > self.policy.max_crashes {
                    slot.failed_until = Some(Instant::now() + self.policy.cooldown);
                    Phase::Failed
                } else {
                    Phase::NotStarted
                };
                slot.fail_waiting(&error);
            }
        }
    }

    /// A zero-config binary was run once: start it, or never use it.
    pub(super) async fn checked(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        server: ServerId,
        outcome: Result<(), String>,
    ) {
        let Some(slot) = self
            .slots
            .get_mut(&server)
            .filter(|slot| slot.phase == Phase::Checking)
        else {
            return;
        };
        match outcome {
            Ok(()) => {
                slot.spec.check = None;
                self.spawn(myself, server).await;
            }
            Err(reason) => {
                tracing::warn!(server = %slot.spec.name, "{reason}; the server is not used");
                record(
                    &self.recorder,
                    EventKind::ServerState,
                    (&slot.spec.name, server),
                    json!({"state": "unusable", "reason": reason}),
                );
                slot.phase = Phase::Unusable;
                slot.last_error = Some(reason);
                let error = unusable_error(slot);
                slot.fail_waiting(&error);
            }
        }
    }

    /// Stops a server on purpose and leaves it stopped until a session
    /// needs it again.
    pub(super) fn stop_server(&mut self, server: ServerId, reason: &str) {
        if let Some(slot) = self.slots.get_mut(&server)
            && slot.stopped.is_none()
            && let Some(actor) = &slot.actor
        {
            tracing::info!(server = %slot.spec.name, "stopping: {reason}");
            record(
                &self.recorder,
                EventKind::Eviction,
                (&slot.spec.name, server),
                json!({"reason": reason}),
            );
            slot.stopped = Some(reason.to_owned());
            let _gone = actor.send_message(LanguageServerMsg::Retire {
                reason: reason.to_owned(),
                restart: false,
            });
        }
    }

    /// Forgets a server no session's configuration names any more, and
    /// stops it.
    pub(super) fn discard(&mut self, server: ServerId, reason: &str) {
        self.stop_server(server, reason);
        self.slots.remove(&server);
        let _stopped = self.router.send_message(RouterMsg::ServerDown(server));
        self.watch_roots();
    }

    pub(super) async fn server_exited(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        server: ServerId,
        exit: ServerExit,
    ) {
        let Some(slot) = self
            .slots
            .get_mut(&server)
            .filter(|slot| slot.phase == Phase::Running)
        else {
            for work in exit.orphans {
                work.fail(Error::ServerExited {
                    server: exit.server.clone(),
                    detail: exit.error.clone(),
                });
            }
            return;
        };
        record(
            &self.recorder,
            EventKind::ServerState,
            (&slot.spec.name, server),
            json!({"state": "exited", "ending": exit.ending.name(), "error": exit.error}),
        );
        slot.actor = None;
        slot.reopen = exit.documents;
        slot.stderr = exit.stderr;
        slot.orphans.extend(exit.orphans);
        if !exit.error.is_empty() {
            slot.last_error = Some(exit.error);
        }
        let _stopped = self.router.send_message(RouterMsg::ServerDown(server));
        match exit.ending {
            // Someone asked for it while it stopped: it starts again.
            Ending::Stopped if slot.waiters.is_empty() && slot.orphans.is_empty() => {
                slot.phase = Phase::Stopped;
                self.watch_roots();
            }
            // Started again in this same turn, so that no question sees
            // the server missing between its two processes.
            Ending::Restart | Ending::Stopped => {
                slot.phase = Phase::Backoff;
                self.restart(myself, server).await;
            }
            Ending::Crashed => self.crashed(myself, server),
        }
    }

    /// Work that reached a server's actor after it handed over: sent to
    /// the running process, kept for the next, or failed when the server
    /// will not run again soon.
    pub(super) fn adopt(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        server: ServerId,
        work: Vec<Work>,
    ) {
        let Some(slot) = self.slots.get_mut(&server) else {
            for work in work {
                work.fail(Error::ShuttingDown);
            }
            return;
        };
        match (slot.phase, &slot.actor) {
            (Phase::Running, Some(actor)) => {
                for work in work {
                    if let Err(error) = actor.send_message(work.into_message()) {
                        tracing::warn!(server = %slot.spec.name, "could not hand over a request: {error}");
                    }
                }
            }
            (Phase::Failed, _) => {
                let error = slot.failed_error();
                for work in work {
                    work.fail(error.clone());
                }
            }
            (Phase::Unusable, _) => {
                let error = unusable_error(slot);
                for work in work {
                    work.fail(error.clone());
                }
            }
            (Phase::Stopped, _) => {
                slot.orphans.extend(work);
                slot.phase = Phase::Backoff;
                let _stopped = myself.send_message(SupervisorMsg::Restart(server));
            }
            _ => slot.orphans.extend(work),
        }
    }

    /// Counts a crash: restarts after a backoff, or marks the server
    /// failed when it crashed too often.
    fn crashed(&mut self, myself: &ActorRef<SupervisorMsg>, server: ServerId) {
        let Some(slot) = self.slots.get_mut(&server) else {
            return;
        };
        let crashes = slot.record_crash(self.policy.window);
        if crashes > self.policy.max_crashes {
            let until = Instant::now() + self.policy.cooldown;
            slot.failed_until = Some(until);
            slot.phase = Phase::Failed;
            tracing::error!(
                server = %slot.spec.name,
                crashes,
                "language server failed after repeated crashes"
            );
            record(
                &self.recorder,
                EventKind::ServerState,
                (&slot.spec.name, server),
                json!({"state": "failed", "crashes": crashes}),
            );
            let error = slot.failed_error();
            slot.fail_waiting(&error);
            return;
        }
        slot.phase = Phase::Backoff;
        let backoff = self.policy.backoff(crashes);
        tracing::warn!(
            server = %slot.spec.name,
            crashes,
            backoff_ms = backoff.as_millis() as u64,
            "restarting language server"
        );
        record(
            &self.recorder,
            EventKind::Restart,
            (&slot.spec.name, server),
            json!({"crashes": crashes, "backoff_ms": backoff.as_millis() as u64}),
        );
        myself.send_after(backoff, move || SupervisorMsg::Restart(server));
    }
}

/// Tells the Recorder what happened to a server.
fn record(
    recorder: &ActorRef<RecorderMsg>,
    kind: EventKind,
    (name, server): (&str, ServerId),
    detail: serde_json::Value,
) {
    let _stopped = recorder.send_message(server_event(kind, name, server, detail));
}

pub(super) fn unusable_error(slot: &Slot) -> Error {
    Error::Unusable {
        server: slot.spec.label(),
        command: slot.spec.command.clone(),
        detail: slot.last_error.clone().unwrap_or_default(),
    }
}

/// The error a failed spawn reports: the server actor's own, when it
/// failed to start its process, rather than ractor's wrapping of it.
fn spawn_error(spec: &ServerSpec, error: SpawnErr) -> Error {
    if let SpawnErr::StartupFailed(inner) = &error
        && let Some(own) = inner.downcast_ref::<Error>()
    {
        return own.clone();
    }
    Error::SpawnFailed {
        server: spec.label(),
        command: spec.command.clone(),
        detail: error.to_string(),
    }
}
