//! The Supervisor actor: the root of the tree.
//!
//! Owns the child actors (Monitor, Roots, Router, Gateway and one LanguageServer per
//! configured server that has been started) and each server's restart
//! budget. Takes [`SupervisorMsg`]: `Ensure` (forwarded by the Router when
//! a tool needs a server that is not running), `Start` (servers the roots
//! need, at launch), `ServerExited` (from a LanguageServer whose process
//! died), `Restart` (its own backoff timer) and `Servers` (for `status`).
//! Tells the Router whenever a server comes up or goes down.
//!
//! ractor has no restart policy of its own and stops a parent when a child
//! exits by default; this actor overrides supervision events and counts
//! crashes, spawn failures included, in a sliding window.

use crate::error::{Error, Result};
use crate::gateway::{self, Gateway};
use crate::language::ServerSpec;
use crate::language_server::{self, DocumentSnapshot, LanguageServer, LanguageServerMsg, Timeouts};
use crate::monitor::{Monitor, MonitorMsg};
use crate::roots::Roots;
use crate::router::{Router, RouterMsg, ServerHandle, is_alive};
use crate::settings::Settings;
use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, RpcReplyPort, SupervisionEvent};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// The actor type; its state lives in [`State`].
pub struct Supervisor;

/// When a crashed server is restarted, and when it is given up on.
#[derive(Debug, Clone, Copy)]
pub struct RestartPolicy {
    /// More crashes than this inside `window` mark the server failed.
    pub max_crashes: usize,
    pub window: Duration,
    pub first_backoff: Duration,
    pub max_backoff: Duration,
    /// How long a failed server stays failed before a request may retry it.
    pub cooldown: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        Self {
            max_crashes: 5,
            window: Duration::from_secs(180),
            first_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            cooldown: Duration::from_secs(60),
        }
    }
}

impl RestartPolicy {
    fn backoff(&self, recent_crashes: usize) -> Duration {
        let doublings = u32::try_from(recent_crashes.saturating_sub(1))
            .unwrap_or(u32::MAX)
            .min(16);
        (self.first_backoff * 2u32.pow(doublings)).min(self.max_backoff)
    }
}

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
    Start(Vec<String>),
    ServerExited {
        server: String,
        documents: Vec<DocumentSnapshot>,
        stderr: String,
        error: String,
    },
    Restart(String),
    Servers(RpcReplyPort<Vec<ServerRecord>>),
    /// The running servers for a workspace-wide query, after starting
    /// those the roots need (answered once start-up detection is done).
    WorkspaceServers(RpcReplyPort<WorkspaceServers>),
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    NotStarted,
    Running,
    Backoff,
    Failed { until: Instant },
}

struct Slot {
    spec: ServerSpec,
    phase: Phase,
    actor: Option<ActorRef<LanguageServerMsg>>,
    crashes: VecDeque<Instant>,
    restarts: u32,
    /// Documents to reopen on the next process.
    reopen: Vec<DocumentSnapshot>,
    /// Callers waiting for the server to come back from a backoff.
    waiters: Vec<RpcReplyPort<Result<ServerHandle>>>,
    last_error: Option<String>,
    stderr: String,
}

pub struct State {
    settings: Settings,
    policy: RestartPolicy,
    slots: HashMap<String, Slot>,
    router: ActorRef<RouterMsg>,
    monitor: ActorRef<MonitorMsg>,
    gateway: ActorCell,
    /// The servers the roots need; `None` until detection has finished.
    needed: Option<Vec<String>>,
    /// Workspace-wide queries that arrived before detection finished.
    awaiting_detection: Vec<RpcReplyPort<WorkspaceServers>>,
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
        let (roots, _) =
            Actor::spawn_linked(None, Roots, settings.roots.clone(), myself.get_cell()).await?;
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
        let (gateway, _) = Actor::spawn_linked(
            None,
            Gateway,
            gateway::Arguments {
                roots,
                router: router.clone(),
                supervisor: myself.clone(),
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
            gateway: gateway.get_cell(),
            needed: None,
            awaiting_detection: Vec::new(),
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
            let needed = crate::roots::detect_servers(&roots, &specs);
            let _stopped = myself.send_message(SupervisorMsg::Start(needed));
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
            SupervisorMsg::Start(servers) => {
                for server in &servers {
                    state.start_if_idle(&myself, server).await;
                }
                state.needed = Some(servers);
                for reply in std::mem::take(&mut state.awaiting_detection) {
                    let _gone = reply.send(state.workspace_servers());
                }
            }
            SupervisorMsg::WorkspaceServers(reply) => match state.needed.clone() {
                None => state.awaiting_detection.push(reply),
                Some(needed) => {
                    for server in &needed {
                        state.start_if_idle(&myself, server).await;
                    }
                    let _gone = reply.send(state.workspace_servers());
                }
            },
            SupervisorMsg::ServerExited {
                server,
                documents,
                stderr,
                error,
            } => {
                state.server_exited(&myself, &server, documents, stderr, error);
            }
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

impl Slot {
    fn new(spec: ServerSpec) -> Self {
        Self {
            spec,
            phase: Phase::NotStarted,
            actor: None,
            crashes: VecDeque::new(),
            restarts: 0,
            reopen: Vec::new(),
            waiters: Vec::new(),
            last_error: None,
            stderr: String::new(),
        }
    }

    fn handle(&self, actor: ActorRef<LanguageServerMsg>) -> ServerHandle {
        ServerHandle {
            name: self.spec.name.clone(),
            label: self.spec.label(),
            actor,
        }
    }

    fn failed_error(&self, until: Instant) -> Error {
        Error::Failed {
            server: self.spec.label(),
            retry_in: until.saturating_duration_since(Instant::now()),
            stderr: self.stderr.clone(),
        }
    }

    /// Records a crash and returns how many fall inside the window.
    fn record_crash(&mut self, window: Duration) -> usize {
        let now = Instant::now();
        self.crashes.push_back(now);
        while self
            .crashes
            .front()
            .is_some_and(|at| now.duration_since(*at) > window)
        {
            self.crashes.pop_front();
        }
        self.crashes.len()
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
            (Phase::Running, Some(_)) | (Phase::Backoff, _) => slot.waiters.push(reply),
            (Phase::Failed { until }, _) if Instant::now() < until => {
                let _gone = reply.send(Err(slot.failed_error(until)));
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
        if self
            .slots
            .get(server)
            .is_some_and(|slot| slot.phase == Phase::Backoff)
        {
            if let Some(slot) = self.slots.get_mut(server) {
                slot.restarts += 1;
            }
            self.spawn(myself, server).await;
        }
    }

    /// Starts the server's actor and process. Spawning only starts the
    /// process; `initialize` is answered later, so this does not wait on
    /// the server.
    async fn spawn(&mut self, myself: &ActorRef<SupervisorMsg>, server: &str) {
        let Some(slot) = self.slots.get_mut(server) else {
            return;
        };
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
            reopen: std::mem::take(&mut slot.reopen),
            supervisor: myself.clone(),
        };
        match Actor::spawn_linked(None, LanguageServer, args, myself.get_cell()).await {
            Ok((actor, _)) => {
                slot.phase = Phase::Running;
                slot.actor = Some(actor.clone());
                let handle = slot.handle(actor);
                for waiter in slot.waiters.drain(..) {
                    let _gone = waiter.send(Ok(handle.clone()));
                }
                let _stopped = self.router.send_message(RouterMsg::ServerUp(handle));
            }
            Err(error) => {
                // A spawn failure sends no supervision event, so it is
                // counted here; the next request tries again.
                let error = spawn_error(&slot.spec, &error.to_string());
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
                for waiter in slot.waiters.drain(..) {
                    let _gone = waiter.send(Err(error.clone()));
                }
            }
        }
    }

    fn server_exited(
        &mut self,
        myself: &ActorRef<SupervisorMsg>,
        server: &str,
        documents: Vec<DocumentSnapshot>,
        stderr: String,
        error: String,
    ) {
        let Some(slot) = self
            .slots
            .get_mut(server)
            .filter(|slot| slot.phase == Phase::Running)
        else {
            return;
        };
        slot.actor = None;
        slot.reopen = documents;
        slot.stderr = stderr;
        if !error.is_empty() {
            slot.last_error = Some(error);
        }
        let _stopped = self
            .router
            .send_message(RouterMsg::ServerDown(server.to_owned()));
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
            for waiter in slot.waiters.drain(..) {
                let _gone = waiter.send(Err(error.clone()));
            }
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
            Some(server) => self.server_exited(myself, &server, Vec::new(), String::new(), error),
            None => myself.stop(Some(format!("a core actor failed: {error}"))),
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
                phase: match slot.phase {
                    Phase::NotStarted => "not started",
                    Phase::Running => "running",
                    Phase::Backoff => "restarting",
                    Phase::Failed { .. } => "failed",
                },
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

fn spawn_error(spec: &ServerSpec, detail: &str) -> Error {
    Error::SpawnFailed {
        server: spec.label(),
        command: spec.command.clone(),
        detail: detail.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let policy = RestartPolicy::default();
        let delays: Vec<u128> = (1..=8).map(|n| policy.backoff(n).as_millis()).collect();
        assert_eq!(delays, vec![100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    }
}
