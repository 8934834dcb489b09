//! What every tool needs: the actors to ask, the settings, and the few
//! calls that turn a tool's arguments into actor messages.

use crate::error::{Error, Result};
use crate::language;
use crate::language_server::{
    DiagnosticsReply, DocumentSnapshot, LanguageServerMsg, Reply, ServerRequest,
};
use crate::roots::{RootSet, RootsMsg};
use crate::router::{RouterMsg, ServerHandle};
use crate::settings::Settings;
use crate::supervisor::{ServerRecord, SupervisorMsg, WorkspaceServers};
use ractor::rpc::CallResult;
use ractor::{ActorRef, RpcReplyPort};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Files larger than this are not opened in a server.
const MAX_DOCUMENT_BYTES: u64 = 16 * 1024 * 1024;

/// How long an actor that never waits on a server may take to answer.
const ACTOR_REPLY_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Clone)]
pub struct Context {
    pub roots: ActorRef<RootsMsg>,
    pub router: ActorRef<RouterMsg>,
    pub supervisor: ActorRef<SupervisorMsg>,
    pub settings: Settings,
}

impl Context {
    pub async fn root_set(&self) -> Result<Arc<RootSet>> {
        ask(&self.roots, RootsMsg::Get, ACTOR_REPLY_TIMEOUT).await
    }

    /// The server for a file; starting it, if needed, is the Supervisor's
    /// business and bounded by the request timeout.
    pub async fn route(&self, path: &Path) -> Result<ServerHandle> {
        let path = path.to_path_buf();
        let limit = self.settings.request_timeout;
        match self
            .router
            .call(|reply| RouterMsg::Route { path, reply }, Some(limit))
            .await
        {
            Ok(CallResult::Success(routed)) => routed,
            Ok(CallResult::Timeout) => Err(Error::NotReady { after: limit }),
            Ok(CallResult::SenderError) | Err(_) => Err(Error::ShuttingDown),
        }
    }

    /// Every server a workspace-wide query should ask.
    pub async fn workspace_servers(&self) -> Result<WorkspaceServers> {
        ask(
            &self.supervisor,
            SupervisorMsg::WorkspaceServers,
            self.settings.request_timeout,
        )
        .await
    }

    pub async fn servers(&self) -> Result<Vec<ServerRecord>> {
        ask(
            &self.supervisor,
            SupervisorMsg::Servers,
            ACTOR_REPLY_TIMEOUT,
        )
        .await
    }

    /// Sends one request and waits for its reply. The actor enforces the
    /// request timeout itself; the margin here only covers an actor that
    /// vanished without answering.
    pub async fn request(&self, server: &ServerHandle, request: ServerRequest) -> Result<Reply> {
        let method = request.method;
        let limit = self.settings.request_timeout * 2 + Duration::from_secs(5);
        match server
            .actor
            .call(
                |reply| LanguageServerMsg::Request(request, reply),
                Some(limit),
            )
            .await
        {
            Ok(CallResult::Success(reply)) => reply,
            Ok(CallResult::Timeout) => Err(Error::Timeout {
                server: server.label.clone(),
                method: method.into(),
                after: limit,
            }),
            Ok(CallResult::SenderError) | Err(_) => Err(Error::ServerExited {
                server: server.label.clone(),
                detail: String::new(),
            }),
        }
    }

    /// The outline of a document, as the server answers it.
    pub async fn document_symbols(
        &self,
        server: &ServerHandle,
        document: DocumentSnapshot,
    ) -> Result<Reply> {
        let request = ServerRequest {
            method: "textDocument/documentSymbol",
            params: serde_json::json!({}),
            document: Some(document),
            position: None,
            capability: Some(("documentSymbolProvider", "document symbols")),
        };
        self.request(server, request).await
    }

    /// One server's symbols matching `query` across the workspace.
    pub async fn workspace_symbols(&self, server: &ServerHandle, query: &str) -> Result<Reply> {
        let request = ServerRequest {
            method: "workspace/symbol",
            params: serde_json::json!({"query": query}),
            document: None,
            position: None,
            capability: Some(("workspaceSymbolProvider", "workspace symbols")),
        };
        self.request(server, request).await
    }

    /// Asks for the diagnostics of a document as it is now. The server
    /// actor bounds the wait itself; the limit here only covers an actor
    /// that vanished without answering.
    pub async fn diagnostics(
        &self,
        server: &ServerHandle,
        document: DocumentSnapshot,
    ) -> Result<DiagnosticsReply> {
        let limit = crate::language_server::DIAGNOSTICS_HARD_LIMIT + Duration::from_secs(10);
        match server
            .actor
            .call(
                |reply| LanguageServerMsg::Diagnostics(document, reply),
                Some(limit),
            )
            .await
        {
            Ok(CallResult::Success(reply)) => reply,
            Ok(CallResult::Timeout) => Err(Error::Timeout {
                server: server.label.clone(),
                method: "diagnostics".into(),
                after: limit,
            }),
            Ok(CallResult::SenderError) | Err(_) => Err(Error::ServerExited {
                server: server.label.clone(),
                detail: String::new(),
            }),
        }
    }

    /// Reads a file as the server should see it now. Plain blocking reads:
    /// source files are small, and a hop to tokio's blocking pool per call
    /// costs more than the read itself.
    pub fn snapshot(&self, path: &Path, display: &str) -> Result<DocumentSnapshot> {
        let language = language::language_id(path).unwrap_or("plaintext");
        let metadata = std::fs::metadata(path).map_err(|error| io_error(display, &error))?;
        if !metadata.is_file() {
            return Err(Error::InvalidArgument(format!("{display} is not a file")));
        }
        if metadata.len() > MAX_DOCUMENT_BYTES {
            return Err(Error::InvalidArgument(format!(
                "{display} is larger than {MAX_DOCUMENT_BYTES} bytes"
            )));
        }
        let bytes = std::fs::read(path).map_err(|error| io_error(display, &error))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::InvalidArgument(format!("{display} is not UTF-8 text")))?;
        Ok(DocumentSnapshot::new(path.to_path_buf(), language, text))
    }

    /// Resolves a path an agent gave, with its display form.
    pub async fn resolve(&self, given: &str) -> Result<(Arc<RootSet>, PathBuf)> {
        let roots = self.root_set().await?;
        let path = roots.resolve(given)?;
        Ok((roots, path))
    }
}

fn io_error(display: &str, error: &std::io::Error) -> Error {
    Error::InvalidArgument(format!("{display}: {error}"))
}

/// Asks an actor that answers without waiting on anything outside.
async fn ask<M, T>(
    actor: &ActorRef<M>,
    message: impl FnOnce(RpcReplyPort<T>) -> M,
    limit: Duration,
) -> Result<T>
where
    M: ractor::Message,
    T: Send + 'static,
{
    match actor.call(message, Some(limit)).await {
        Ok(CallResult::Success(value)) => Ok(value),
        _ => Err(Error::ShuttingDown),
    }
}
