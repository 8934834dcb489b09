//! The Gateway actor: the MCP side of Windlass, one per client connection.
//!
//! Owns the rmcp service on stdio. The service turns each tool call into
//! messages to the Roots, Router, Watcher, Supervisor and LanguageServer
//! actors and awaits their replies in the call's own task, never in an
//! actor handler, so a server that hangs delays only the calls waiting on
//! it. Takes
//! [`GatewayMsg::ClientClosed`] from its service task and then stops, which
//! tells the Supervisor the session is over.

mod address;
mod assist;
mod context;
mod definitions;
mod diagnostics;
mod directory;
mod editing;
mod edits;
mod hierarchy;
mod map;
mod navigation;
mod render;
mod schema;
mod search;
mod status;
mod tools;

use crate::roots::RootsMsg;
use crate::router::RouterMsg;
use crate::settings::Settings;
use crate::supervisor::SupervisorMsg;
use crate::watcher::WatcherMsg;
use context::Context;
use ractor::{Actor, ActorProcessingErr, ActorRef};
use rmcp::ServiceExt;
use tokio::task::JoinHandle;

/// The actor type; its state is the task serving MCP.
pub struct Gateway;

pub enum GatewayMsg {
    ClientClosed,
}

pub struct Arguments {
    pub roots: ActorRef<RootsMsg>,
    pub router: ActorRef<RouterMsg>,
    pub supervisor: ActorRef<SupervisorMsg>,
    pub watcher: ActorRef<WatcherMsg>,
    pub settings: Settings,
}

/// Aborts the MCP task when the actor goes away, however it goes.
pub struct State {
    service: JoinHandle<()>,
}

impl Drop for State {
    fn drop(&mut self) {
        self.service.abort();
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
            roots: args.roots,
            router: args.router,
            supervisor: args.supervisor,
            watcher: args.watcher,
            settings: args.settings,
        };
        let service = tokio::spawn(serve_stdio(tools::Tools::new(context), myself));
        Ok(State { service })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        _state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            GatewayMsg::ClientClosed => {
                myself.stop(Some("MCP client closed the connection".into()))
            }
        }
        Ok(())
    }
}

/// Serves MCP until the client goes away, then says so.
async fn serve_stdio(tools: tools::Tools, gateway: ActorRef<GatewayMsg>) {
    match tools.serve(rmcp::transport::io::stdio_pipes()).await {
        Ok(running) => {
            let reason = running.waiting().await;
            tracing::info!(?reason, "MCP session ended");
        }
        Err(error) => tracing::error!("MCP handshake failed: {error}"),
    }
    let _stopped = gateway.send_message(GatewayMsg::ClientClosed);
}
