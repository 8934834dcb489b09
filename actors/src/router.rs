//! The Router actor: which server answers for a file.
//!
//! Owns the language table's mapping from language id to configured server
//! and the handles of the servers that are running. Takes [`RouterMsg`]:
//! `Route` from the gateway, `ServerUp`/`ServerDown` from the Supervisor,
//! and `FilesChanged` from the Watcher, which it hands to every running
//! server.
//! A route to a server that is not running is forwarded, reply port and
//! all, to the Supervisor, which answers the caller once the server is
//! started; the Router never waits.

use crate::error::{Error, Result};
use crate::language::{self, ServerSpec};
use crate::language_server::LanguageServerMsg;
use crate::supervisor::SupervisorMsg;
use crate::watcher::FileChange;
use ractor::{Actor, ActorProcessingErr, ActorRef, ActorStatus, RpcReplyPort};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// A running server as callers address it.
#[derive(Debug, Clone)]
pub struct ServerHandle {
    /// The configuration key.
    pub name: String,
    /// The languages it serves, for error prefixes.
    pub label: String,
    pub actor: ActorRef<LanguageServerMsg>,
}

pub enum RouterMsg {
    Route {
        path: PathBuf,
        reply: RpcReplyPort<Result<ServerHandle>>,
    },
    ServerUp(ServerHandle),
    ServerDown(String),
    FilesChanged(Arc<[FileChange]>),
    /// The server table after a configuration reload.
    Specs(Vec<ServerSpec>),
}

pub struct Arguments {
    pub specs: Vec<ServerSpec>,
    pub supervisor: ActorRef<SupervisorMsg>,
}

/// The actor type; its state lives in [`State`].
pub struct Router;

pub struct State {
    specs: Vec<ServerSpec>,
    supervisor: ActorRef<SupervisorMsg>,
    running: HashMap<String, ServerHandle>,
}

impl Actor for Router {
    type Msg = RouterMsg;
    type State = State;
    type Arguments = Arguments;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: Arguments,
    ) -> Result<State, ActorProcessingErr> {
        Ok(State {
            specs: args.specs,
            supervisor: args.supervisor,
            running: HashMap::new(),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            RouterMsg::Route { path, reply } => state.route(&path, reply),
            RouterMsg::ServerUp(handle) => {
                state.running.insert(handle.name.clone(), handle);
            }
            RouterMsg::ServerDown(name) => {
                state.running.remove(&name);
            }
            RouterMsg::Specs(specs) => state.specs = specs,
            RouterMsg::FilesChanged(changes) => {
                for handle in state.running.values() {
                    let changed = LanguageServerMsg::FilesChanged(changes.clone());
                    if let Err(error) = handle.actor.send_message(changed) {
                        tracing::debug!(server = %handle.name, "not told of changes: {error}");
                    }
                }
            }
        }
        Ok(())
    }
}

impl State {
    fn route(&self, path: &std::path::Path, reply: RpcReplyPort<Result<ServerHandle>>) {
        let server = match self.server_for(path) {
            Ok(server) => server,
            Err(error) => {
                let _gone = reply.send(Err(error));
                return;
            }
        };
        match self
            .running
            .get(server)
            .filter(|handle| is_alive(&handle.actor))
        {
            Some(handle) => {
                let _gone = reply.send(Ok(handle.clone()));
            }
            None => {
                let ensure = SupervisorMsg::Ensure {
                    server: server.to_owned(),
                    reply,
                };
                if let Err(error) = self.supervisor.send_message(ensure) {
                    tracing::error!("supervisor unreachable: {error}");
                }
            }
        }
    }

    fn server_for(&self, path: &std::path::Path) -> Result<&str> {
        let candidates = language::candidate_languages(path);
        let Some(own) = candidates.first() else {
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            return Err(Error::NoServer(format!("{name} (unknown language)")));
        };
        candidates
            .iter()
            .find_map(|language| self.specs.iter().find(|spec| spec.serves(language)))
            .map(|spec| spec.name.as_str())
            .ok_or_else(|| Error::NoServer(format!("language `{own}`")))
    }
}

/// Whether an actor still takes requests. One that is stopping has
/// already reported its exit, and its requests would be dropped.
pub fn is_alive(actor: &ActorRef<LanguageServerMsg>) -> bool {
    matches!(
        actor.get_status(),
        ActorStatus::Running | ActorStatus::Starting
    )
}
