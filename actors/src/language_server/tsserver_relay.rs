//! A server that answers through a tsserver plugin (Vue's) asks its
//! client every TypeScript question as a `tsserver/request` notification
//! and waits, unanswered requests and all, for the matching
//! `tsserver/response`. Each is relayed off the actor's thread: the
//! Supervisor names the session's TypeScript server that loads the
//! plugin, the question goes to it as its `typescript.tsserverRequest`
//! command, and the answer's body comes back here to be sent on. Every
//! request is answered, `null` when nothing could answer it, since the
//! server would otherwise wait for ever.

use super::State;
use crate::error::{Error, Result};
use crate::lsp::protocol::TSSERVER_REQUEST;
use crate::messages::ask;
use crate::messages::language_server::{Call, LanguageServerMsg, Reply, ServerRequest};
use crate::messages::supervisor::SupervisorMsg;
use crate::vocabulary::ids::ServerId;
use ractor::ActorRef;
use serde_json::{Value, json};
use std::time::Duration;

/// One `tsserver/request`: its id, the tsserver command and its
/// arguments.
#[derive(Debug, PartialEq)]
struct TsserverRequest {
    id: Value,
    command: String,
    arguments: Value,
}

impl TsserverRequest {
    /// The notification's params: `[[id, command, arguments]]` as
    /// vscode-jsonrpc writes one array argument, or the bare triple.
    fn read(params: &Value) -> Option<Self> {
        let triple = match params.get(0) {
            Some(Value::Array(inner)) => inner.as_slice(),
            _ => params.as_array()?.as_slice(),
        };
        let [id, command, arguments] = triple else {
            return None;
        };
        Some(Self {
            id: id.clone(),
            command: command.as_str()?.to_owned(),
            arguments: arguments.clone(),
        })
    }

    /// The command that has a TypeScript server ask tsserver itself.
    fn as_command(&self) -> ServerRequest {
        ServerRequest {
            method: "workspace/executeCommand",
            params: json!({
                "command": TSSERVER_REQUEST,
                "arguments": [self.command, self.arguments, {"isAsync": true, "lowPriority": true}],
            }),
            document: None,
            position: None,
            capability: None,
            background: false,
        }
    }
}

impl State {
    pub(super) fn relay_to_tsserver(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        params: &Value,
    ) {
        let Some(request) = TsserverRequest::read(params) else {
            return tracing::debug!(server = %self.spec.name, "tsserver/request that names no request dropped");
        };
        tracing::debug!(server = %self.spec.name, command = %request.command, "tsserver request relayed");
        self.relayed += 1;
        let supervisor = self.supervisor.clone();
        let asker = self.id;
        let limit = self.timeouts.request * 2;
        let myself = myself.clone();
        let label = self.spec.label();
        tokio::spawn(async move {
            let body = match ask_tsserver(&supervisor, asker, &request, limit).await {
                Ok(body) => body,
                Err(error) => {
                    tracing::debug!(server = %label, command = %request.command, "tsserver request unanswered: {error}");
                    Value::Null
                }
            };
            let _stopped = myself.send_message(LanguageServerMsg::TsserverAnswered {
                id: request.id,
                body,
            });
        });
    }

    /// Sends the body of a relayed answer to the server that asked.
    pub(super) fn answer_tsserver(&mut self, id: Value, body: Value) {
        self.relayed = self.relayed.saturating_sub(1);
        tracing::debug!(server = %self.spec.name, answered = !body.is_null(), "tsserver request answered");
        self.notify("tsserver/response", json!([[id, body]]));
        self.work_handed();
    }
}

/// The body of the TypeScript server's answer to `request`.
async fn ask_tsserver(
    supervisor: &ActorRef<SupervisorMsg>,
    asker: ServerId,
    request: &TsserverRequest,
    limit: Duration,
) -> Result<Value> {
    let Some((session, spec)) = ask(
        supervisor,
        |reply| SupervisorMsg::TsserverOf {
            server: asker,
            reply,
        },
        limit,
    )
    .await?
    else {
        return Err(Error::NoServer(
            "a TypeScript server that loads the plugin".into(),
        ));
    };
    let handle = ask(
        supervisor,
        |reply| SupervisorMsg::Ensure {
            spec: Box::new(spec),
            session,
            reply,
        },
        limit,
    )
    .await??;
    let reply: Reply = ask(
        &handle.actor,
        |reply| {
            LanguageServerMsg::Request(Call {
                session,
                request: request.as_command(),
                reply,
            })
        },
        limit,
    )
    .await??;
    Ok(reply.result.get("body").cloned().unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_request_as_vscode_jsonrpc_writes_it_and_bare() {
        let expected = TsserverRequest {
            id: json!(3),
            command: "_vue:projectInfo".into(),
            arguments: json!({"file": "/p/App.vue"}),
        };
        let wrapped = json!([[3, "_vue:projectInfo", {"file": "/p/App.vue"}]]);
        let bare = json!([3, "_vue:projectInfo", {"file": "/p/App.vue"}]);
        assert_eq!(TsserverRequest::read(&wrapped), Some(expected));
        assert_eq!(
            TsserverRequest::read(&bare).map(|request| request.command),
            Some("_vue:projectInfo".into())
        );
        assert_eq!(TsserverRequest::read(&json!({"id": 3})), None);
        assert_eq!(TsserverRequest::read(&json!([[3, 4, {}]])), None);
    }

    #[test]
    fn asks_through_the_typescript_servers_command() {
        let request = TsserverRequest {
            id: json!(1),
            command: "_vue:quickinfo".into(),
            arguments: json!({"file": "/p/App.vue", "line": 2, "offset": 5}),
        };
        let command = request.as_command();
        assert_eq!(command.method, "workspace/executeCommand");
        assert_eq!(command.params["arguments"][0], "_vue:quickinfo");
        assert_eq!(command.params["arguments"][1]["offset"], 5);
        assert_eq!(command.params["command"], "typescript.tsserverRequest");
    }
}
