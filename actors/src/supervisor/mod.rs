//! The Supervisor actor: the root of the tree.
//!
//! Owns the child actors (Monitor, Roots, Router, Watcher, Gateway and one
//! LanguageServer per configured server that has been started) and each
//! server's [`Slot`]: its phase, restart budget, and the callers and
//! requests waiting for it. Takes [`SupervisorMsg`]: `Ensure` (forwarded by
//! the Router when a tool needs a server that is not running), `Start`
//! (what start-up detection found the roots need), `Checked` (a zero-config
//! binary ran, or did not), `ServerExited` (from a LanguageServer whose
//! process died, with the requests it had not sent), `Restart` (its own
//! backoff timer), `ConfigChanged` (from the Watcher) and `ConfigReloaded`
//! (`reload.rs`), `RootsChanged` (from Roots, `folders.rs`), `Servers`,
//! `Warnings` and `WorkspaceServers`. Tells the
//! Router whenever a server comes up or goes down, and its new table after
//! a reload.
//!
//! ractor has no restart policy of its own and stops a parent when a child
//! exits by default; this actor overrides supervision events and counts
//! crashes, spawn failures included, in a sliding window. A request that
//! never reached a dead process waits for the restart instead of failing.

mod check;
mod folders;
mod reload;
mod slot;

pub use slot::RestartPolicy;

use crate::error::{Error, Result};
use crate::gateway::{self, Gateway};
use crate::language::ServerSpec;
use crate::language_server::{
    self, DocumentSnapshot, LanguageServer, LanguageServerMsg, Timeouts, Work,
};
use crate::monitor::{Monitor, MonitorMsg};
use crate::roots::{Detection, Roots, RootsChanged};
use crate::router::{Router, RouterMsg, ServerHandle, is_alive};
use crate::settings::Settings;
use crate::watcher::{Watcher, WatcherMsg};
use ractor::{
    Actor, ActorCell, ActorProcessingErr, ActorRef, RpcReplyPort, SpawnErr, SupervisionEvent,
};
use slot::{Phase, Slot};
use std::collections::HashMap;
use std::time::Instant;

/// The actor type; its state lives in [`State`].
pub struct Supervisor;

/// What `status` reports of one configured server.
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
}

pub enum SupervisorMsg {
    Ensure {
        server: String,
        reply: RpcReplyPort<Result<ServerHandle>>,
    },
    Start(Detection),
    /// The outcome of running a zero-config server's binary once.
    Checked {
        server: String,
        outcome: std::result::Result<(), String>,
    },
    ServerExited {
        server: String,
        exit: ServerExit,
    },
    Restart(String),
    /// The project configuration file changed on disk.
    ConfigChanged,
    /// The configuration read again after a change, or why it could not be.
    ConfigReloaded(std::result::Result<Box<Settings>, String>),
    /// Configuration problems worth showing in `status`.
    Warnings(RpcReplyPort<Vec<String>>),
    /// The root set changed (from the Roots actor).
    RootsChanged(RootsChanged),
    Servers(RpcReplyPort<Vec<ServerRecord>>),
    /// The running servers for a workspace-wide query, after starting
    /// those the roots need (answered once start-up detection is done).
    WorkspaceServers(RpcReplyPort<WorkspaceServers>),
}

/// What a LanguageServer hands over when its process has stopped.
pub struct ServerExit {
    pub documents: Vec<DocumentSnapshot>,
    pub stderr: String,
    pub error: String,
    /// Requests the process never received; they go to the next one.
    pub orphans: Vec<Work>,
    /// Stopped on purpose (its configuration changed), not crashed: it is
    /// started again at once and the stop is not counted as a crash.
    pub planned: bool,
}

/// The servers a workspace-wide query asks, and the needed ones it cannot.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceServers {
    pub running: Vec<ServerHandle>,
    /// Names of servers the roots need that are failed, restarting or
    /// could not start.
    pub unavailable: Vec<String>,
}

pub struct Arguments {
    pub settings: Settings,
    pub policy: RestartPolicy,
}

pub struct State {
    settings: Settings,
    policy: RestartPolicy,
    slots: HashMap<String, Slot>,
    router: ActorRef<RouterMsg>,
    monitor: ActorRef<MonitorMsg>,
    watcher: ActorRef<WatcherMsg>,
    gateway: ActorCell,
    /// The servers the roots need; `None` until detection has finished.
    needed: Option<Vec<String>>,
    /// Workspace-wide queries waiting for detection to finish, or for a
    /// needed server's binary check.
    awaiting_servers: Vec<RpcReplyPort<WorkspaceServers>>,
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
        let settings = args.settings;
        let (monitor, _) = Actor::spawn_linked(None, Monitor, (), myself.get_cell()).await?;
        let (roots, _) = Actor::spawn_linked(
            None,
            Roots,
            crate::roots::Arguments {
                roots: settings.roots.clone(),
                pinned: settings.roots_pinned,
                supervisor: myself.clone(),
            },
            myself.get_cell(),
        )
        .await?;
        let (router, _) = Actor::spawn_linked(
            None,
            Router,
            crate::router::Arguments {
                specs: settings.servers.clone(),
                supervisor: myself.clone(),
            },
            myself.get_cell(),
        )
        .await?;
        let (watcher, _) = Actor::spawn_linked(
            None,
            Watcher,
            crate::watcher::Arguments {
                roots: settings.roots.clone(),
                router: router.clone(),
                supervisor: myself.clone(),
                config_directories: settings.config_directories.clone(),
            },
            myself.get_cell(),
        )
        .await?;
        let (gateway, _) = Actor::spawn_linked(
            None,
            Gateway,
            gateway::Arguments {
                roots,
                router: router.clone(),
                supervisor: myself.clone(),
                watcher: watcher.clone(),
                settings: settings.clone(),
            },
            myself.get_cell(),
        )
        .await?;
        let slots = settings
            .servers
            .iter()
            .map(|spec| (spec.name.clone(), Slot::new(spec.clone())))
            .collect();
        Ok(State {
            settings,
            policy: args.policy,
            slots,
            router,
            monitor,
            watcher,
            gateway: gateway.get_cell(),
            needed: None,
            awaiting_servers: Vec::new(),
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        let roots = state.settings.roots.clone();
        let specs = state.settings.servers.clone();
        tokio::task::spawn_blocking(move || {
            let detection = crate::roots::detect_servers(&roots, &specs);
            let _stopped = myself.send_message(SupervisorMsg::Start(detection));
        });
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SupervisorMsg::Ensure { server, reply } => state.ensure(&myself, &server, reply).await,
            SupervisorMsg::Start(detection) => {
                for (server, probe) in detection.probes {
                    if let Some(slot) = state.slots.get_mut(&server) {
                        slot.probe = Some(probe);
                    }
                }
                for server in &detection.needed {
                    state.start_if_idle(&myself, server).await;
                }
                let needed = state.needed.get_or_insert_with(Vec::new);
                for server in detection.needed {
                    if !needed.contains(&server) {
                        needed.push(server);
                    }
                }
                state.answer_workspace_queries();
            }
            SupervisorMsg::WorkspaceServers(reply) => {
                for server in state.needed.clone().iter().flatten() {
                    state.start_if_idle(&myself, server).await;
                }
                state.awaiting_servers.push(reply);
                state.answer_workspace_queries();
            }
            SupervisorMsg::Checked { server, outcome } => {
                state.checked(&myself, &server, outcome).await;
                state.answer_workspace_queries();
            }
            SupervisorMsg::ServerExited { server, exit } => {
                state.server_exited(&myself, &server, exit);
            }
            SupervisorMsg::ConfigChanged => state.reload(&myself),
            SupervisorMsg::ConfigReloaded(Ok(settings)) => state.apply_settings(*settings),
            SupervisorMsg::ConfigReloaded(Err(error)) => {
                tracing::warn!("configuration not reloaded: {error}");
                state.settings.warnings = vec![format!("configuration not reloaded: {error}")];
            }
            SupervisorMsg::Warnings(reply) => {
                let _gone = reply.send(state.settings.warnings.clone());
            }
            SupervisorMsg::RootsChanged(changed) => state.roots_changed(&myself, changed),
            SupervisorMsg::Restart(server) => state.restart(&myself, &server).await,
            SupervisorMsg::Servers(reply) => {
                let _gone = reply.send(state.records());
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
            SupervisionEvent::ActorTerminated(cell, ..) => state.child_stopped(&myself, &cell),
            SupervisionEvent::ActorFailed(cell, error) => {
                state.child_failed(&myself, &cell, error.to_string())
            }
            SupervisionEvent::ActorStarted(_) | SupervisionEvent::ProcessGroupChanged(_) => {}
        }
        Ok(())
    }
}

impl State {
    async fn ensure(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        server: &str,
        reply: RpcReplyPort<Result<ServerHandle>>,
    ) {
        let Some(slot) = self.slots.get_mut(server) else {
            let _gone = reply.send(Err(Error::NoServer(server.to_owned())));
            return;
        };
        match (slot.phase, &slot.actor) {
            (Phase::Running, Some(actor)) if is_alive(actor) => {
                let _gone = reply.send(Ok(slot.handle(actor.clone())));
            }
            // A stopping server's exit report is on its way; the restart
            // answers the waiter.
            (Phase::Running, Some(_)) | (Phase::Backoff | Phase::Checking, _) => {
                slot.waiters.push(reply)
            }
            (Phase::Failed { until }, _) if Instant::now() < until => {
                let _gone = reply.send(Err(slot.failed_error(until)));
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

    async fn start_if_idle(&mut self, myself: &ActorRef<SupervisorMsg>, server: &str) {
        if self
            .slots
            .get(server)
            .is_some_and(|slot| slot.phase == Phase::NotStarted)
        {
            self.spawn(myself, server).await;
        }
    }

    async fn restart(&mut self, myself: &ActorRef<SupervisorMsg>, server: &str) {
        if let Some(slot) = self
            .slots
            .get_mut(server)
            .filter(|slot| slot.phase == Phase::Backoff)
        {
            slot.restarts += 1;
            self.spawn(myself, server).await;
        }
    }

    /// Starts the server's actor and process, after checking once that a
    /// zero-config binary runs at all. Spawning only starts the process;
    /// `initialize` is answered later, so this does not wait on the server.
    async fn spawn(&mut self, myself: &ActorRef<SupervisorMsg>, server: &str) {
        let Some(slot) = self.slots.get_mut(server) else {
            return;
        };
        if let Some(args) = slot.spec.check.clone() {
            slot.phase = Phase::Checking;
            let command = slot.spec.command.clone();
            let myself = myself.clone();
            let server = server.to_owned();
            tokio::spawn(async move {
                let outcome = check::run(&command, &args).await;
                let _stopped = myself.send_message(SupervisorMsg::Checked { server, outcome });
            });
            return;
        }
        let args = language_server::Arguments {
            spec: slot.spec.clone(),
            folders: self.settings.roots.workspace_folders(),
            directory: self.settings.roots.first_directory(),
            monitor: self.monitor.clone(),
            timeouts: Timeouts {
                request: self.settings.request_timeout,
                idle: self.settings.idle_timeout,
                fixed_settle: self.settings.diagnostics_settle,
            },
            reopen: std::mem::take(&mut slot.reopen)
                .into_iter()
                .filter(|document| self.settings.roots.root_of(&document.path).is_some())
                .collect(),
            probe: slot
                .probe
                .clone()
                .filter(|document| self.settings.roots.root_of(&document.path).is_some()),
            supervisor: myself.clone(),
        };
        match Actor::spawn_linked(None, LanguageServer, args, myself.get_cell()).await {
            Ok((actor, _)) => {
                let handle = slot.started(actor);
                let _stopped = self.router.send_message(RouterMsg::ServerUp(handle));
            }
            Err(error) => {
                // A spawn failure sends no supervision event, so it is
                // counted here; the next request tries again.
                let error = spawn_error(&slot.spec, error);
                tracing::error!(server, "{error}");
                slot.last_error = Some(error.to_string());
                let crashes = slot.record_crash(self.policy.window);
                slot.phase = if crashes > self.policy.max_crashes {
                    Phase::Failed {
                        until: Instant::now() + self.policy.cooldown,
                    }
                } else {
                    Phase::NotStarted
                };
                slot.fail_waiting(&error);
            }
        }
    }

    /// A zero-config binary was run once: start it, or never use it.
    async fn checked(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        server: &str,
        outcome: std::result::Result<(), String>,
    ) {
        let Some(slot) = self
            .slots
            .get_mut(server)
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
                tracing::warn!(server, "{reason}; the server is not used");
                slot.phase = Phase::Unusable;
                slot.last_error = Some(reason);
                let error = unusable_error(slot);
                slot.fail_waiting(&error);
            }
        }
    }

    fn server_exited(&mut self, myself: &ActorRef<SupervisorMsg>, server: &str, exit: ServerExit) {
        let Some(slot) = self
            .slots
            .get_mut(server)
            .filter(|slot| slot.phase == Phase::Running)
        else {
            for work in exit.orphans {
                work.fail(Error::ServerExited {
                    server: server.to_owned(),
                    detail: String::new(),
                });
            }
            return;
        };
        slot.actor = None;
        slot.reopen = exit.documents;
        slot.stderr = exit.stderr;
        slot.orphans.extend(exit.orphans);
        if !exit.error.is_empty() {
            slot.last_error = Some(exit.error);
        }
        let _stopped = self
            .router
            .send_message(RouterMsg::ServerDown(server.to_owned()));
        if exit.planned {
            slot.phase = Phase::Backoff;
            let _stopped = myself.send_message(SupervisorMsg::Restart(server.to_owned()));
            return;
        }
        let crashes = slot.record_crash(self.policy.window);
        if crashes > self.policy.max_crashes {
            let until = Instant::now() + self.policy.cooldown;
            slot.phase = Phase::Failed { until };
            tracing::error!(
                server,
                crashes,
                "language server failed after repeated crashes"
            );
            let error = slot.failed_error(until);
            slot.fail_waiting(&error);
            return;
        }
        slot.phase = Phase::Backoff;
        let backoff = self.policy.backoff(crashes);
        tracing::warn!(
            server,
            crashes,
            backoff_ms = backoff.as_millis() as u64,
            "restarting language server"
        );
        let server = server.to_owned();
        myself.send_after(backoff, move || SupervisorMsg::Restart(server));
    }

    /// A child stopped cleanly. The gateway stopping means the client is
    /// gone, so the whole tree stops. A server actor stops cleanly only
    /// after sending `ServerExited`, which does the bookkeeping.
    fn child_stopped(&mut self, myself: &ActorRef<SupervisorMsg>, cell: &ActorCell) {
        if cell.get_id() == self.gateway.get_id() {
            tracing::info!("MCP client disconnected; shutting down");
            myself.stop(Some("client disconnected".into()));
        }
    }

    /// A child panicked or returned an error. A server actor that died
    /// this way never reported its exit, so it counts as a crash here.
    fn child_failed(&mut self, myself: &ActorRef<SupervisorMsg>, cell: &ActorCell, error: String) {
        tracing::error!(actor = ?cell.get_id(), "actor failed: {error}");
        let crashed = self.slots.iter().find_map(|(name, slot)| {
            let same = slot
                .actor
                .as_ref()
                .is_some_and(|actor| actor.get_id() == cell.get_id());
            same.then(|| name.clone())
        });
        match crashed {
            Some(server) => {
                let exit = ServerExit {
                    documents: Vec::new(),
                    stderr: String::new(),
                    error,
                    orphans: Vec::new(),
                    planned: false,
                };
                self.server_exited(myself, &server, exit)
            }
            None => myself.stop(Some(format!("a core actor failed: {error}"))),
        }
    }

    /// Answers the waiting workspace-wide queries once detection is done
    /// and no needed server is still having its binary checked.
    fn answer_workspace_queries(&mut self) {
        let Some(needed) = &self.needed else {
            return;
        };
        let checking = needed.iter().any(|name| {
            self.slots
                .get(name)
                .is_some_and(|slot| slot.phase == Phase::Checking)
        });
        if checking {
            return;
        }
        for reply in std::mem::take(&mut self.awaiting_servers) {
            let _gone = reply.send(self.workspace_servers());
        }
    }

    fn workspace_servers(&self) -> WorkspaceServers {
        let running = self
            .slots
            .values()
            .filter_map(|slot| slot.actor.clone().map(|actor| slot.handle(actor)))
            .collect();
        let unavailable = self
            .needed
            .iter()
            .flatten()
            .filter(|name| {
                self.slots
                    .get(*name)
                    .is_some_and(|slot| slot.actor.is_none())
            })
            .cloned()
            .collect();
        WorkspaceServers {
            running,
            unavailable,
        }
    }

    fn records(&self) -> Vec<ServerRecord> {
        let mut records: Vec<ServerRecord> = self
            .slots
            .values()
            .map(|slot| ServerRecord {
                name: slot.spec.name.clone(),
                languages: slot.spec.languages.clone(),
                command: slot.spec.command.clone(),
                phase: slot.phase.name(),
                actor: slot.actor.clone(),
                restarts: slot.restarts,
                last_error: slot.last_error.clone(),
                stderr: slot.stderr.clone(),
            })
            .collect();
        records.sort_by(|a, b| a.name.cmp(&b.name));
        records
    }
}

fn unusable_error(slot: &Slot) -> Error {
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
