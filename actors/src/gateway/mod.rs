//! The Gateway actor: the MCP side of Windlass, one per session.
//!
//! Owns the rmcp service on the session's connection (the process's stdio
//! standalone, a bridge's socket in the daemon); an HTTP session's service
//! is the HTTP endpoint's, made by [`Attaching`] before the session
//! exists, and the Gateway hands it the session's parts. The service turns each
//! tool call into messages to the session's Roots and Session actors and
//! to the shared Router, Watcher, Supervisor and LanguageServer actors,
//! and awaits their replies in the call's own task, never in an actor
//! handler, so a server that hangs delays only the calls waiting on it.
//! Its inbox is `messages::gateway`: its service task says when the client
//! closed, and it stops, which tells its Session the client is gone; its
//! Session passes on the daemon socket's questions (status, diagnostics,
//! roots changes), answered as data in tasks of their own.

mod address;
mod aliases;
mod assist;
mod attaching;
mod bodies;
mod candidates;
mod check_edit;
mod checked_users;
mod configured_files;
mod context;
mod definitions;
mod diagnostics;
mod directory;
mod edit_effect;
mod edit_reach;
mod goto;
mod hierarchy;
mod hover;
mod impact;
mod indexed;
mod indexing;
mod map;
mod navigation;
mod prepared_edits;
mod proposals;
mod read_file;
mod record;
mod render;
mod same_line;
mod schema;
mod search;
mod search_hints;
mod source;
mod source_files;
mod status;
mod symbols;
mod target;
mod text_uses;
mod tools;
mod tsserver_symbols;
mod unresolved_code;
mod words;
mod workspace_edit;
mod workspace_names;

pub use attaching::{Attaching, SettingsSource};
pub use status::server_reports;
pub use tools::{Needs, TOOL_NEEDS};

use crate::messages::gateway::GatewayMsg;
use crate::messages::roots::RootsMsg;
use crate::messages::session::{SessionMsg, SessionQuestion};
use crate::messages::supervisor::{Connection, SessionParts, Shared};
use crate::settings::Settings;
use crate::vocabulary::client::ClientName;
use crate::vocabulary::ids::SessionId;
use crate::vocabulary::running::InFlight;
use context::Context;
use prepared_edits::PreparedEdits;
use ractor::{Actor, ActorProcessingErr, ActorRef};
use rmcp::ServiceExt;
use tokio::task::JoinHandle;

/// The actor type; its state is the task serving MCP.
pub struct Gateway;

pub struct Arguments {
    pub session: SessionId,
    pub session_actor: ActorRef<SessionMsg>,
    pub roots: ActorRef<RootsMsg>,
    pub shared: Shared,
    pub settings: Settings,
    pub connection: Connection,
}

/// Aborts the MCP task, if it runs one, and the index pass when the
/// actor goes away, however it goes.
pub struct State {
    service: Option<JoinHandle<()>>,
    /// The session's background pass over the symbol index.
    indexing: JoinHandle<()>,
    context: Context,
}

impl Drop for State {
    fn drop(&mut self) {
        if let Some(service) = &self.service {
            service.abort();
        }
        self.indexing.abort();
    }
}

impl Actor for Gateway {
    type Msg = GatewayMsg;
    type State = State;
    type Arguments = Arguments;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: Arguments,
    ) -> Result<State, ActorProcessingErr> {
        let context = Context {
            session: args.session,
            session_actor: args.session_actor,
            roots: args.roots,
            shared: args.shared,
            settings: args.settings,
            in_flight: InFlight::default(),
            client: ClientName::default(),
            prepared: PreparedEdits::default(),
        };
        let service = match args.connection {
            Connection::Handed(handover) => {
                let parts = SessionParts {
                    session: context.session,
                    session_actor: context.session_actor.clone(),
                    roots: context.roots.clone(),
                    shared: context.shared.clone(),
                    settings: context.settings.clone(),
                    in_flight: context.in_flight.clone(),
                    client: context.client.clone(),
                    gateway: myself,
                };
                // Nobody waiting means the client's `initialize` was
                // given up on; the session ends as its client would.
                if handover.send(parts).is_err() {
                    return Err("the transport gave up before the session started".into());
                }
                None
            }
            connection => Some(tokio::spawn(serve(
                tools::Tools::new(context.clone()),
                connection,
                myself,
            ))),
        };
        let indexing = tokio::spawn(indexing::keep_index(context.clone()));
        Ok(State {
            service,
            indexing,
            context,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            GatewayMsg::ClientClosed => {
                myself.stop(Some("MCP client closed the connection".into()))
            }
            // In a task: answering asks the Session and the Roots actor,
            // which may be telling the Session of a change meanwhile.
            GatewayMsg::Ask(question) => {
                let context = state.context.clone();
                tokio::spawn(answer(context, question));
            }
        }
        Ok(())
    }
}

/// Serves MCP until the client goes away, then says so.
async fn serve(tools: tools::Tools, connection: Connection, gateway: ActorRef<GatewayMsg>) {
    let served = match connection {
        Connection::Stdio => tools.serve(rmcp::transport::io::stdio_pipes()).await,
        Connection::Stream(reader, writer) => tools.serve((reader, writer)).await,
        Connection::Handed(_) => return,
    };
    match served {
        Ok(running) => {
            let reason = running.waiting().await;
            tracing::info!(?reason, "MCP session ended");
        }
        Err(error) => tracing::error!("MCP handshake failed: {error}"),
    }
    let _stopped = gateway.send_message(GatewayMsg::ClientClosed);
}

/// Answers a question of the daemon's socket from the tools' own code.
async fn answer(context: Context, question: SessionQuestion) {
    match question {
        SessionQuestion::Status(reply) => {
            let status = status::session_status(&context).await;
            let _gone = reply.send(status.map_err(|error| error.to_string()));
        }
        SessionQuestion::Diagnostics { file, reply } => {
            let file = file.display().to_string();
            let answer = diagnostics::file_diagnostics(&context, &file).await;
            let _gone = reply.send(answer.map_err(|error| error.to_string()));
        }
        SessionQuestion::ChangeRoots { change, reply } => {
            let _gone = reply.send(context.change_roots(change).await);
        }
        SessionQuestion::PrepareEdit { file, reply } => {
            let prepared = edit_effect::prepare_edit(&context, &file).await;
            let _gone = reply.send(prepared.map_err(|error| error.to_string()));
        }
        SessionQuestion::EditEffect { file, reply } => {
            let effect = edit_effect::edit_effect(&context, &file).await;
            let _gone = reply.send(effect.map_err(|error| error.to_string()));
        }
    }
}
