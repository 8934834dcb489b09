//! What every tool needs: the actors to ask, the settings, and the few
//! calls that turn a tool's arguments into actor messages.

use super::indexed;
use super::prepared_edits::PreparedEdits;
use crate::error::{Error, Result};
use crate::language::{ServerSpec, language_id};
use crate::lsp::protocol::Feature;
use crate::messages::ask;
use crate::messages::language_server::{
    Call, CheckAnswer, CheckCall, DiagnosticsCall, DiagnosticsReply, EditedDocument,
    LanguageServerMsg, Reply, ServerRequest,
};
use crate::messages::recorder::RecorderMsg;
use crate::messages::roots::{Change, ChangeAnswer, RootListing, RootsMsg, Source};
use crate::messages::router::{RoutedFile, RouterMsg, ServerHandle};
use crate::messages::session::SessionMsg;
use crate::messages::supervisor::{Overview, Shared, SupervisorMsg, WorkspaceServers};
use crate::messages::symbol_index::SymbolIndexMsg;
use crate::messages::watcher::{WatcherMsg, WatcherStatus};
use crate::settings::Settings;
use crate::store::index::Stamp;
use crate::vocabulary::client::ClientName;
use crate::vocabulary::documents::{DocumentSnapshot, ReadError};
use crate::vocabulary::ids::SessionId;
use crate::vocabulary::root_set::RootSet;
use crate::vocabulary::running::InFlight;
use ractor::rpc::CallResult;
use ractor::{ActorRef, RpcReplyPort};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// How long an actor that never waits on a server may take to answer.
const ACTOR_REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// How many times a request follows its server through restarts.
const MAX_RESTARTS_FOLLOWED: usize = 3;

#[derive(Clone)]
pub struct Context {
    pub session: SessionId,
    pub session_actor: ActorRef<SessionMsg>,
    pub roots: ActorRef<RootsMsg>,
    pub shared: Shared,
    pub settings: Settings,
    /// The session's tool calls in flight.
    pub in_flight: InFlight,
    /// Who the client said it is, for the session's `status`: the store
    /// has it too, but a batch later.
    pub client: ClientName,
    /// Files a host's hook said are about to be edited, as they were.
    pub prepared: PreparedEdits,
}

impl Context {
    pub async fn root_set(&self) -> Result<Arc<RootSet>> {
        ask(&self.roots, RootsMsg::Get, ACTOR_REPLY_TIMEOUT).await
    }

    /// Has every change on disk the watcher has seen sent to the servers
    /// before a question is put to them: an agent may ask milliseconds
    /// after its editor wrote a file.
    pub async fn take_in_changes(&self) -> Result<()> {
        ask(&self.shared.watcher, WatcherMsg::Flush, ACTOR_REPLY_TIMEOUT).await
    }

    /// Roots added, removed or set by a host's hook, with the roots in
    /// effect after it and those refused.
    pub async fn change_roots(&self, change: Change) -> std::result::Result<ChangeAnswer, String> {
        let message = |reply| RootsMsg::Change {
            source: Source::Hook,
            change,
            reply,
        };
        ask(&self.roots, message, ACTOR_REPLY_TIMEOUT)
            .await
            .map_err(|_| "the session's roots did not answer".to_owned())
    }

    /// Every root with where it came from, for `status`.
    pub async fn roots_listing(&self) -> Result<Vec<RootListing>> {
        ask(&self.roots, RootsMsg::Listing, ACTOR_REPLY_TIMEOUT).await
    }

    /// Has the Roots actor hold questions until the client's new roots
    /// come.
    pub fn client_roots_changing(&self) {
        if let Err(error) = self.roots.send_message(RootsMsg::ClientChanging) {
            tracing::warn!("roots actor unreachable: {error}");
        }
    }

    /// Asks the MCP client for its roots, if it declared that it has any,
    /// and hands them to the Roots actor. rmcp marks the roots API
    /// deprecated (protocol 2026-07-28 drops it); today's clients speak
    /// 2025-11-25, where it works, and other sources of roots remain.
    #[allow(deprecated)]
    pub async fn follow_client_roots(&self, peer: Peer<RoleServer>) {
        let declared = peer
            .peer_info()
            .is_some_and(|client| client.capabilities.roots.is_some());
        let message = if declared {
            match peer.list_roots().await {
                Ok(listed) => {
                    RootsMsg::Client(listed.roots.into_iter().map(|root| root.uri).collect())
                }
                Err(error) => {
                    tracing::warn!("the client's roots/list failed: {error}");
                    RootsMsg::NoClientRoots
                }
            }
        } else {
            RootsMsg::NoClientRoots
        };
        if let Err(error) = self.roots.send_message(message) {
            tracing::warn!("roots actor unreachable: {error}");
        }
    }

    pub async fn watcher_status(&self) -> Result<WatcherStatus> {
        ask(
            &self.shared.watcher,
            WatcherMsg::Status,
            ACTOR_REPLY_TIMEOUT,
        )
        .await
    }

    /// The first server for a file; starting it, if needed, is the
    /// Supervisor's business and bounded by the request timeout.
    pub async fn route(&self, path: &Path) -> Result<ServerHandle> {
        self.take_in_changes().await?;
        self.route_rank(path, 0).await
    }

    /// The server of `rank` among a file's servers (0: the first).
    async fn route_rank(&self, path: &Path, rank: usize) -> Result<ServerHandle> {
        let file = RoutedFile::new(path);
        let session = self.session;
        let limit = self.settings.request_timeout;
        match self
            .shared
            .router
            .call(
                |reply| RouterMsg::Route {
                    file,
                    session,
                    rank,
                    reply,
                },
                Some(limit),
            )
            .await
        {
            Ok(CallResult::Success(routed)) => routed,
            Ok(CallResult::Timeout) => Err(Error::NotReady { after: limit }),
            Ok(CallResult::SenderError) | Err(_) => Err(Error::ShuttingDown),
        }
    }

    /// Every server of a file that contributes diagnostics, in the order
    /// they serve the file, each started if it is not running, with its
    /// label: one that cannot be reached is its error, not the others'.
    pub async fn diagnosing(&self, path: &Path) -> Result<Vec<(String, Result<ServerHandle>)>> {
        self.take_in_changes().await?;
        let serving = self.serving(path).await?;
        let mut routes = JoinSet::new();
        for (rank, spec) in serving.iter().enumerate() {
            if !spec.duties.diagnostics {
                continue;
            }
            let context = self.clone();
            let path = path.to_path_buf();
            routes.spawn(async move { (rank, context.route_rank(&path, rank).await) });
        }
        let mut routed = Vec::new();
        while let Some(joined) = routes.join_next().await {
            if let Ok(route) = joined {
                routed.push(route);
            }
        }
        routed.sort_by_key(|(rank, _)| *rank);
        Ok(routed
            .into_iter()
            .map(|(rank, handle)| (serving[rank].label(), handle))
            .collect())
    }

    /// A file's servers in the order they serve it, running or not.
    pub async fn serving(&self, path: &Path) -> Result<Vec<Arc<ServerSpec>>> {
        let file = RoutedFile::new(path);
        let session = self.session;
        ask(
            &self.shared.router,
            |reply| RouterMsg::Serving {
                file,
                session,
                reply,
            },
            ACTOR_REPLY_TIMEOUT,
        )
        .await?
    }

    /// The running handle of a server whose actor went away, once the
    /// Supervisor has restarted it.
    async fn restarted(&self, server: &ServerHandle, deadline: Instant) -> Result<ServerHandle> {
        let spec = (*server.spec).clone();
        let session = self.session;
        let limit = deadline.saturating_duration_since(Instant::now());
        match self
            .shared
            .supervisor
            .call(
                |reply| SupervisorMsg::Ensure {
                    spec: Box::new(spec),
                    session,
                    reply,
                },
                Some(limit),
            )
            .await
        {
            Ok(CallResult::Success(handle)) => handle,
            Ok(CallResult::Timeout) => Err(Error::NotReady { after: limit }),
            Ok(CallResult::SenderError) | Err(_) => Err(Error::ShuttingDown),
        }
    }

    /// Every server a workspace-wide query should ask.
    pub async fn workspace_servers(&self) -> Result<WorkspaceServers> {
        self.take_in_changes().await?;
        let session = self.session;
        ask(
            &self.shared.supervisor,
            |reply| SupervisorMsg::WorkspaceServers { session, reply },
            self.settings.request_timeout,
        )
        .await
    }

    /// Configuration problems, as of the last (re)load.
    pub async fn warnings(&self) -> Result<Vec<String>> {
        ask(
            &self.session_actor,
            SessionMsg::Warnings,
            ACTOR_REPLY_TIMEOUT,
        )
        .await
    }

    /// Why events are not being recorded, if they are not.
    pub async fn recording_problem(&self) -> Result<Option<String>> {
        ask(
            &self.shared.recorder,
            RecorderMsg::Problem,
            ACTOR_REPLY_TIMEOUT,
        )
        .await
    }

    pub async fn servers(&self) -> Result<Overview> {
        let session = self.session;
        ask(
            &self.shared.supervisor,
            |reply| SupervisorMsg::Servers { session, reply },
            ACTOR_REPLY_TIMEOUT,
        )
        .await
    }

    /// Sends one request and waits for its reply. The actor enforces the
    /// request timeout itself; the margin here only covers an actor that
    /// vanished without answering.
    ///
    /// A question about a document that its server cannot answer (it
    /// lacks the capability) goes to the document's other servers in
    /// turn: a linter before a language server's fallback, say.
    pub async fn request(&self, server: &ServerHandle, request: ServerRequest) -> Result<Reply> {
        let answer = self.request_of(server, &request).await;
        let Err(Error::Unsupported { .. }) = &answer else {
            return answer;
        };
        let Some(path) = request
            .document
            .as_ref()
            .map(|document| document.path.clone())
        else {
            return answer;
        };
        match self.ask_others(server, &request, &path).await {
            Some(other) => other,
            None => answer,
        }
    }

    /// The answer of the first of a file's other servers able to give it.
    async fn ask_others(
        &self,
        tried: &ServerHandle,
        request: &ServerRequest,
        path: &Path,
    ) -> Option<Result<Reply>> {
        let serving = self.serving(path).await.ok()?;
        for rank in 0..serving.len() {
            // By id: the handle of a server started for the question holds
            // a spec of its own, equal to the table's but not the same.
            let Ok(server) = self.route_rank(path, rank).await else {
                continue;
            };
            if server.id == tried.id {
                continue;
            }
            match self.request_of(&server, request).await {
                Err(Error::Unsupported { .. }) => continue,
                answer => return Some(answer),
            }
        }
        None
    }

    async fn request_of(&self, server: &ServerHandle, request: &ServerRequest) -> Result<Reply> {
        let method = request.method;
        let limit = self.settings.request_timeout * 2 + Duration::from_secs(5);
        let session = self.session;
        self.call_server(server, method, limit, |reply| {
            LanguageServerMsg::Request(Call {
                session,
                request: request.clone(),
                reply,
            })
        })
        .await
    }

    /// Sends `message` to a server and waits up to `limit` for its answer.
    /// A server actor that stopped before it took the message (its process
    /// died) is followed to its restart: the message never reached the
    /// dead process, so it goes to the next.
    async fn call_server<T: Send + 'static>(
        &self,
        server: &ServerHandle,
        method: &str,
        limit: Duration,
        message: impl Fn(RpcReplyPort<Result<T>>) -> LanguageServerMsg,
    ) -> Result<T> {
        let deadline = Instant::now() + limit;
        let mut server = server.clone();
        for _ in 0..=MAX_RESTARTS_FOLLOWED {
            let remaining = deadline.saturating_duration_since(Instant::now());
            match server.actor.call(&message, Some(remaining)).await {
                Ok(CallResult::Success(answer)) => return answer,
                Ok(CallResult::Timeout) => {
                    return Err(Error::Timeout {
                        server: server.label(),
                        method: method.into(),
                        after: limit,
                    });
                }
                Ok(CallResult::SenderError) | Err(_) => {
                    server = self.restarted(&server, deadline).await?;
                }
            }
        }
        Err(Error::ServerExited {
            server: server.label(),
            detail: String::new(),
        })
    }

    /// The outline of a document, as the server answers it; kept in the
    /// symbol index too.
    pub async fn document_symbols(
        &self,
        server: &ServerHandle,
        document: DocumentSnapshot,
    ) -> Result<Reply> {
        let request = outline_request(document.clone())?;
        self.outline(server, document, request).await
    }

    /// The outline of one of many documents a question goes over
    /// (`codebase_map`'s): as `document_symbols`, the document closed
    /// again once answered unless another question used it meanwhile, so
    /// that a server that checks every open document after each change
    /// (typescript-language-server) is not left with all of them.
    pub async fn document_symbols_in_passing(
        &self,
        server: &ServerHandle,
        document: DocumentSnapshot,
    ) -> Result<Reply> {
        let request = outline_request(document.clone())?.in_background();
        self.outline(server, document, request).await
    }

    async fn outline(
        &self,
        server: &ServerHandle,
        document: DocumentSnapshot,
        request: ServerRequest,
    ) -> Result<Reply> {
        let path = document.path.clone();
        let reply = self.request(server, request.clone()).await?;
        if !is_empty_list(&reply.result) {
            self.keep_outline(document, &reply);
            return Ok(reply);
        }
        // A server that reads only part of a file (TypeScript's, of a Vue
        // component) has no outline of it, where another of its servers
        // sees the rest.
        match self.ask_others(server, &request, &path).await {
            Some(Ok(other)) if !is_empty_list(&other.result) => {
                self.keep_outline(document, &other);
                Ok(other)
            }
            _ => Ok(reply),
        }
    }

    /// The outline of a file on disk, asked in the background: of this
    /// server only, and the document closed again once answered unless an
    /// agent's question used it meanwhile.
    pub async fn outline_in_background(
        &self,
        server: &ServerHandle,
        document: DocumentSnapshot,
    ) -> Result<Reply> {
        // tsserver outlines a file it does not have open from its own view
        // of the disk: every change seen before the text was read reaches
        // it ahead of the question.
        if server.spec.tsserver_commands {
            self.take_in_changes().await?;
        }
        let request = outline_request(document)?.in_background();
        self.request_of(server, &request).await
    }

    /// Sends the symbol index an outline of a file as on disk, with the
    /// file's stamp, in a task of its own: the stamp is read first and the
    /// file again after it, so that the outline is kept only if the text
    /// it was made from is the file's at that stamp.
    fn keep_outline(&self, document: DocumentSnapshot, reply: &Reply) {
        if !document.on_disk {
            return;
        }
        let index = self.shared.index.clone();
        let mut reply = reply.clone();
        tokio::task::spawn_blocking(move || {
            let Some(stamp) = Stamp::of(&document.path) else {
                return;
            };
            let now = DocumentSnapshot::read(&document.path, Some(&document.language_id));
            if now.ok().is_none_or(|now| now.hash != document.hash) {
                return;
            }
            if let Some(outline) =
                indexed::outline(&document.path, stamp, &mut reply, &document.text)
            {
                let _stopped = index.send_message(SymbolIndexMsg::Record(Box::new(outline)));
            }
        });
    }

    /// One server's symbols matching `query` across the workspace.
    pub async fn workspace_symbols(&self, server: &ServerHandle, query: &str) -> Result<Reply> {
        use lsp_types::request::{Request, WorkspaceSymbolRequest};
        use lsp_types::{PartialResultParams, WorkDoneProgressParams, WorkspaceSymbolParams};
        let params = WorkspaceSymbolParams {
            query: query.to_owned(),
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        };
        let request = ServerRequest::new(
            WorkspaceSymbolRequest::METHOD,
            &params,
            Feature::WorkspaceSymbols,
        )?;
        // A server that cannot run the command, or answers it with no
        // tsserver response, is asked its own way; one that timed out
        // would only time out again.
        if server.spec.tsserver_commands {
            let navto = super::tsserver_symbols::navto_request(query)?;
            match self.request(server, navto).await {
                Ok(mut reply) => {
                    if let Some(symbols) =
                        super::tsserver_symbols::symbol_informations(&reply.result)
                    {
                        reply.result = symbols;
                        return Ok(reply);
                    }
                }
                Err(error @ Error::Timeout { .. }) => return Err(error),
                Err(_) => {}
            }
        }
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
        let limit =
            crate::messages::language_server::DIAGNOSTICS_HARD_LIMIT + Duration::from_secs(10);
        let session = self.session;
        self.call_server(server, "diagnostics", limit, |reply| {
            LanguageServerMsg::Diagnostics(DiagnosticsCall {
                session,
                document: document.clone(),
                reply,
            })
        })
        .await
    }

    /// Asks for the diagnostics of documents as on disk and as their
    /// edits would make them, and of the documents the edits touch (open
    /// ones, and `users`), without writing anything; bounded as
    /// `diagnostics` is, for each of the check's waits.
    pub async fn check_edit(
        &self,
        server: &ServerHandle,
        edits: &[EditedDocument],
        users: Vec<DocumentSnapshot>,
    ) -> Result<CheckAnswer> {
        let limit =
            crate::messages::language_server::DIAGNOSTICS_HARD_LIMIT * 3 + Duration::from_secs(10);
        let session = self.session;
        self.call_server(server, "check_edit", limit, |reply| {
            LanguageServerMsg::CheckEdit(CheckCall {
                session,
                edits: edits.to_vec(),
                users: users.clone(),
                reply,
            })
        })
        .await
    }

    /// Reads a file as the server should see it now.
    pub fn snapshot(&self, path: &Path, display: &str) -> Result<DocumentSnapshot> {
        DocumentSnapshot::read(path, language_id(path)).map_err(|error| match error {
            ReadError::Io(error) => io_error(display, &error),
            other => Error::InvalidArgument(format!("{display} {other}")),
        })
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

/// `null` or `[]`, as a server answers a list it has nothing in.
/// `textDocument/documentSymbol` about `document`.
fn outline_request(document: DocumentSnapshot) -> Result<ServerRequest> {
    use crate::messages::language_server::document_identifier;
    use lsp_types::request::{DocumentSymbolRequest, Request};
    use lsp_types::{DocumentSymbolParams, PartialResultParams, WorkDoneProgressParams};
    let params = DocumentSymbolParams {
        text_document: document_identifier(&document)?,
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    let request = ServerRequest::new(
        DocumentSymbolRequest::METHOD,
        &params,
        Feature::DocumentSymbols,
    )?;
    Ok(request.about(document, None))
}

fn is_empty_list(result: &Value) -> bool {
    result.is_null() || result.as_array().is_some_and(Vec::is_empty)
}
