//! The Session actor: one agent's MCP connection.
//!
//! Owns what belongs to one agent: its settings (its servers, timeouts,
//! output cap, configuration warnings), its Roots actor and its Gateway.
//! Its inbox is `messages::session`. It hands its roots' changes on to the
//! Supervisor, which keeps the servers' folders the union of their
//! sessions' roots; reloads its configuration when a `.windlass.toml` of
//! it changes; and passes the daemon socket's questions about the session
//! to its Gateway. It stops when its Gateway does (the client went away),
//! and the Supervisor then lets go of what the session used.
//!
//! Servers are not the session's: the Supervisor pools them, and sessions
//! whose configuration resolves to the same server share one process.

use crate::gateway::Gateway;
use crate::messages::gateway::GatewayMsg;
use crate::messages::recorder::RecorderMsg;
use crate::messages::session::SessionMsg;
use crate::messages::supervisor::{Connection, Shared, SupervisorMsg};
use crate::roots::Roots;
use crate::settings::Settings;
use crate::store::sessions::SessionRow;
use crate::vocabulary::ids::SessionId;
use ractor::{Actor, ActorProcessingErr, ActorRef, SupervisionEvent};

pub struct Arguments {
    pub id: SessionId,
    pub settings: Settings,
    pub connection: Connection,
    pub shared: Shared,
}

/// The actor type; its state lives in [`State`].
pub struct Session;

pub struct State {
    id: SessionId,
    settings: Settings,
    shared: Shared,
    gateway: ActorRef<GatewayMsg>,
}

impl Actor for Session {
    type Msg = SessionMsg;
    type State = State;
    type Arguments = Arguments;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: Arguments,
    ) -> Result<State, ActorProcessingErr> {
        let (roots, _) = Actor::spawn_linked(
            None,
            Roots,
            crate::roots::Arguments {
                roots: args.settings.roots.clone(),
                pinned: args.settings.roots_pinned,
                session: myself.clone(),
            },
            myself.get_cell(),
        )
        .await?;
        let (gateway, _) = Actor::spawn_linked(
            None,
            Gateway,
            crate::gateway::Arguments {
                session: args.id,
                session_actor: myself.clone(),
                roots: roots.clone(),
                shared: args.shared.clone(),
                settings: args.settings.clone(),
                connection: args.connection,
            },
            myself.get_cell(),
        )
        .await?;
        let _stopped = args
            .shared
            .recorder
            .send_message(RecorderMsg::SessionStarted(SessionRow {
                id: args.id,
                pid: std::process::id(),
                socket: args.shared.socket.clone(),
                daemon: args.shared.daemon,
                host_session: args.settings.identity.host_session.clone(),
                client_pid: args.settings.identity.client_pid,
                transport: args.settings.identity.transport.name(),
                started: crate::store::now_ms(),
                roots: root_paths(&args.settings.roots),
            }));
        Ok(State {
            id: args.id,
            settings: args.settings,
            shared: args.shared,
            gateway,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SessionMsg::RootsChanged(changed) => {
                state.settings.roots = (*changed.roots).clone();
                let _stopped = state.shared.recorder.send_message(RecorderMsg::Roots {
                    session: state.id,
                    roots: root_paths(&changed.roots),
                });
                let _stopped = state
                    .shared
                    .supervisor
                    .send_message(SupervisorMsg::SessionRoots {
                        session: state.id,
                        changed,
                    });
            }
            SessionMsg::ConfigChanged => state.reload(&myself),
            SessionMsg::ConfigReloaded(Ok(settings)) => state.apply(*settings),
            SessionMsg::ConfigReloaded(Err(error)) => {
                tracing::warn!(session = %state.id, "configuration not reloaded: {error}");
                state.settings.warnings = vec![format!("configuration not reloaded: {error}")];
            }
            SessionMsg::Warnings(reply) => {
                let _gone = reply.send(state.settings.warnings.clone());
            }
            SessionMsg::Ask(question) => {
                let _stopped = state.gateway.send_message(GatewayMsg::Ask(question));
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        let _stopped = state
            .shared
            .recorder
            .send_message(RecorderMsg::SessionEnded { session: state.id });
        Ok(())
    }

    async fn handle_supervisor_evt(
        &self,
        myself: ActorRef<Self::Msg>,
        event: SupervisionEvent,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match event {
            SupervisionEvent::ActorTerminated(cell, ..)
                if cell.get_id() == state.gateway.get_cell().get_id() =>
            {
                tracing::info!(session = %state.id, "MCP client disconnected");
                myself.stop(Some("client disconnected".into()));
            }
            SupervisionEvent::ActorFailed(cell, error) => {
                tracing::error!(session = %state.id, actor = ?cell.get_id(), "session actor failed: {error}");
                myself.stop(Some("a session actor failed".into()));
            }
            _ => {}
        }
        Ok(())
    }
}

fn root_paths(roots: &crate::vocabulary::root_set::RootSet) -> Vec<std::path::PathBuf> {
    roots.roots().iter().map(|root| root.path.clone()).collect()
}

impl State {
    /// Reads the configuration again, off the actor's thread.
    fn reload(&self, myself: &ActorRef<SessionMsg>) {
        let Some(reloader) = self.settings.reload.clone() else {
            return;
        };
        let myself = myself.clone();
        tokio::task::spawn_blocking(move || {
            let reloaded = reloader.reload().map(Box::new);
            let _stopped = myself.send_message(SessionMsg::ConfigReloaded(reloaded));
        });
    }

    /// Takes a reloaded configuration: the roots stay as they are; the
    /// Supervisor moves the session onto the servers it now names.
    fn apply(&mut self, new: Settings) {
        let _stopped = self
            .shared
            .supervisor
            .send_message(SupervisorMsg::SessionServers {
                session: self.id,
                servers: new.servers.clone(),
                timeouts: new.timeouts(),
            });
        self.settings = Settings {
            roots: self.settings.roots.clone(),
            reload: self.settings.reload.clone(),
            ..new
        };
        tracing::info!(session = %self.id, "configuration reloaded");
    }
}
