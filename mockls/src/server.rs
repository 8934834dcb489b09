//! mockls's well-behaved side: a tower-lsp-server `LanguageServer` that
//! keeps the documents it is sent, answers from their text, publishes
//! diagnostics, and reports progress, with the delays and habits the flags
//! ask for. Faults on the wire are the wire's business (`wire/`).

use crate::features::Answers;
use crate::flags::Flags;
use crate::position::{self, Encoding};
use crate::text::{Workspace, path_of};
use crate::tsserver;
use serde_json::json;
use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::notification::Progress;
use tower_lsp_server::ls_types::request::{
    GotoDeclarationParams, GotoDeclarationResponse, GotoImplementationParams,
    GotoImplementationResponse, GotoTypeDefinitionParams, GotoTypeDefinitionResponse,
};
use tower_lsp_server::ls_types::{
    CallHierarchyIncomingCall, CallHierarchyIncomingCallsParams, CallHierarchyItem,
    CallHierarchyOutgoingCall, CallHierarchyOutgoingCallsParams, CallHierarchyPrepareParams,
    CallHierarchyServerCapability, CodeActionParams, CodeActionProviderCapability,
    CodeActionResponse, CompletionOptions, CompletionParams, CompletionResponse, ConfigurationItem,
    DeclarationCapability, Diagnostic, DiagnosticOptions, DiagnosticServerCapabilities,
    DiagnosticSeverity, DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidChangeWorkspaceFoldersParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DidSaveTextDocumentParams, DocumentDiagnosticParams, DocumentDiagnosticReport,
    DocumentDiagnosticReportResult, DocumentSymbolParams, DocumentSymbolResponse,
    ExecuteCommandOptions, ExecuteCommandParams, FullDocumentDiagnosticReport,
    GotoDefinitionParams, GotoDefinitionResponse, Hover, HoverParams, HoverProviderCapability,
    ImplementationProviderCapability, InitializeParams, InitializeResult, InitializedParams,
    Location, MessageType, NumberOrString, OneOf, ProgressParams, ProgressParamsValue,
    ReferenceParams, Registration, RelatedFullDocumentDiagnosticReport, RenameParams, SaveOptions,
    ServerCapabilities, ServerInfo, SignatureHelp, SignatureHelpOptions, SignatureHelpParams,
    TextDocumentContentChangeEvent, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions, TypeDefinitionProviderCapability,
    TypeHierarchyItem, TypeHierarchyPrepareParams, TypeHierarchySubtypesParams,
    TypeHierarchySupertypesParams, Uri, WorkDoneProgress, WorkDoneProgressBegin,
    WorkDoneProgressEnd, WorkspaceEdit, WorkspaceFolder, WorkspaceFoldersServerCapabilities,
    WorkspaceServerCapabilities, WorkspaceSymbolParams, WorkspaceSymbolResponse,
};
use tower_lsp_server::{Client, LanguageServer};

/// What mockls knows, shared by its handlers and publishing threads.
#[derive(Default)]
struct State {
    workspace: Workspace,
    versions: HashMap<String, i32>,
    /// Bumped per change of a document, so a slow publication for an
    /// older version never lands over a newer one.
    generations: HashMap<String, u64>,
    indexing: bool,
    /// The findings of each document's last check on save.
    checked_on_save: HashMap<String, Vec<Diagnostic>>,
    /// Each document's diagnostics as last computed, for
    /// `--stale-publications`.
    last_diagnostics: HashMap<String, Vec<Diagnostic>>,
}

pub struct Mock {
    client: Client,
    flags: Arc<Flags>,
    encoding: Encoding,
    state: Arc<Mutex<State>>,
    progress_tokens: Arc<AtomicU64>,
    relay: tsserver::Relay,
    /// Whether `--register-pull` serves diagnostics on request to this
    /// client: it announced that it can take their registration.
    pull_registered: Arc<AtomicBool>,
    references: Arc<ReferencesTurn>,
}

/// What `--references-one-at-a-time` keeps.
#[derive(Default)]
struct ReferencesTurn {
    /// The number of the latest references request.
    latest: AtomicU64,
    /// Whether the client has cancelled one.
    broken: AtomicBool,
}

/// Sets its flag when dropped still holding it: a request future dropped
/// before it finished was cancelled by the client.
struct BreaksWhenDropped<'a>(Option<&'a AtomicBool>);

impl Drop for BreaksWhenDropped<'_> {
    fn drop(&mut self) {
        if let Some(broken) = self.0 {
            broken.store(true, Ordering::SeqCst);
        }
    }
}

impl Mock {
    pub fn new(client: Client, flags: Arc<Flags>) -> Self {
        Self {
            client,
            encoding: flags
                .position_encoding
                .as_deref()
                .map(Encoding::named)
                .unwrap_or_default(),
            flags,
            state: Arc::default(),
            progress_tokens: Arc::new(AtomicU64::new(1)),
            relay: tsserver::Relay::default(),
            pull_registered: Arc::default(),
            references: Arc::default(),
        }
    }

    /// Whether diagnostics are answered on request rather than published.
    fn pulled(&self) -> bool {
        self.flags.pull_diagnostics || self.pull_registered.load(Ordering::Relaxed)
    }

    /// The client's answer to one of its `tsserver/request`s.
    pub async fn tsserver_response(&self, params: serde_json::Value) {
        self.relay.answered(&params);
    }

    /// Computes an answer from the documents as they are now.
    fn answer<T>(&self, compute: impl FnOnce(&Answers) -> Option<T>) -> Option<T> {
        let state = self.state.lock().ok()?;
        compute(&Answers {
            workspace: &state.workspace,
            encoding: self.encoding,
            outside_uri: self.flags.outside_uri,
            nested_symbols: self.flags.nested_symbols,
            repeat_symbols: self.flags.repeat_symbols,
            top_level_symbols: self.flags.top_level_symbols,
            indexing: state.indexing,
            files_while_indexing: self.flags.answers_files_while_indexing,
        })
    }

    /// Gives an answer after the response delay.
    async fn respond<T>(&self, answer: T) -> Result<T> {
        if self.flags.response_delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(self.flags.response_delay_ms)).await;
        }
        Ok(answer)
    }

    /// References as pyright gives them: a later request ends this one,
    /// and this one cancelled by the client breaks every later one.
    async fn references_one_at_a_time(
        &self,
        params: ReferenceParams,
    ) -> Result<Option<Vec<Location>>> {
        let turn = &self.references;
        if turn.broken.load(Ordering::SeqCst) {
            return Err(Error {
                code: ErrorCode::InternalError,
                message: "Request textDocument/references failed with message: this._token.cancel is not a function".into(),
                data: None,
            });
        }
        let mine = turn.latest.fetch_add(1, Ordering::SeqCst) + 1;
        let mut cancelled = BreaksWhenDropped(Some(&turn.broken));
        let deadline = Instant::now() + Duration::from_millis(self.flags.response_delay_ms);
        loop {
            if turn.latest.load(Ordering::SeqCst) != mine {
                cancelled.0 = None;
                return Err(Error::request_cancelled());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            tokio::time::sleep(left.min(Duration::from_millis(10))).await;
        }
        cancelled.0 = None;
        Ok(self.answer(|a| a.references(&params)))
    }

    fn capabilities(&self) -> ServerCapabilities {
        let save = (self.flags.diagnostics_on_save || self.flags.check_on_save_ms > 0).then_some(
            TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                include_text: Some(false),
            }),
        );
        let mut capabilities = ServerCapabilities {
            position_encoding: self.flags.position_encoding.as_deref().map(position::kind),
            text_document_sync: Some(TextDocumentSyncCapability::Options(
                TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::FULL),
                    save,
                    ..TextDocumentSyncOptions::default()
                },
            )),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            definition_provider: Some(OneOf::Left(true)),
            declaration_provider: Some(DeclarationCapability::Simple(true)),
            type_definition_provider: Some(TypeDefinitionProviderCapability::Simple(true)),
            implementation_provider: Some(ImplementationProviderCapability::Simple(true)),
            references_provider: Some(OneOf::Left(true)),
            document_symbol_provider: Some(OneOf::Left(true)),
            workspace_symbol_provider: Some(OneOf::Left(true)),
            call_hierarchy_provider: Some(CallHierarchyServerCapability::Simple(true)),
            code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
            rename_provider: Some(OneOf::Left(true)),
            completion_provider: Some(CompletionOptions {
                trigger_characters: Some(vec![".".into()]),
                ..CompletionOptions::default()
            }),
            signature_help_provider: Some(SignatureHelpOptions {
                trigger_characters: Some(vec!["(".into(), ",".into()]),
                ..SignatureHelpOptions::default()
            }),
            diagnostic_provider: (self.flags.pull_diagnostics
                || self.flags.claim_pull_diagnostics
                || self.flags.publish_only_changes)
                .then(|| {
                    DiagnosticServerCapabilities::Options(DiagnosticOptions {
                        identifier: Some("mockls".into()),
                        inter_file_dependencies: true,
                        ..DiagnosticOptions::default()
                    })
                }),
            workspace: self
                .flags
                .workspace_folders
                .then_some(WorkspaceServerCapabilities {
                    workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                        supported: Some(true),
                        change_notifications: Some(OneOf::Left(true)),
                    }),
                    file_operations: None,
                }),
            execute_command_provider: self.flags.answers_tsserver.then(|| ExecuteCommandOptions {
                commands: vec![tsserver::COMMAND.into()],
                ..ExecuteCommandOptions::default()
            }),
            ..ServerCapabilities::default()
        };
        for name in &self.flags.without {
            leave_out(&mut capabilities, name);
        }
        capabilities
    }

    /// Asks the client for its workspace folders, as servers that support
    /// them do after `initialized` and after a change; the answer replaces
    /// the roots mockls knows.
    fn ask_folders(&self) {
        let client = self.client.clone();
        let state = self.state.clone();
        tokio::spawn(async move {
            if let Ok(Some(folders)) = client.workspace_folders().await
                && let Ok(mut state) = state.lock()
            {
                state.workspace.roots = paths_of(&folders);
            }
        });
    }

    /// Registers `method` with the client, as servers do after
    /// `initialized`.
    fn register(&self, id: &str, method: &str, options: serde_json::Value) {
        let client = self.client.clone();
        let registration = Registration {
            id: id.into(),
            method: method.into(),
            register_options: Some(options),
        };
        tokio::spawn(async move {
            let _ = client.register_capability(vec![registration]).await;
        });
    }

    fn ask_configuration(&self) {
        let client = self.client.clone();
        let item = ConfigurationItem {
            scope_uri: None,
            section: Some("mockls".into()),
        };
        tokio::spawn(async move {
            let _ = client.configuration(vec![item]).await;
        });
    }

    /// Reports indexing from now until the indexing delay has passed;
    /// position queries answer empty meanwhile.
    fn index(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.indexing = true;
        }
        let client = self.client.clone();
        let state = self.state.clone();
        let token = self.progress_token();
        let delay = Duration::from_millis(self.flags.indexing_delay_ms);
        let by_status = self.flags.server_status;
        tokio::spawn(async move {
            match by_status {
                true => {
                    client
                        .send_notification::<ServerStatus>(status(false))
                        .await
                }
                false => begin_progress(&client, &token, "indexing").await,
            }
            tokio::time::sleep(delay).await;
            if let Ok(mut state) = state.lock() {
                state.indexing = false;
            }
            match by_status {
                true => client.send_notification::<ServerStatus>(status(true)).await,
                false => end_progress(&client, &token).await,
            }
        });
    }

    /// Says it discovered the workspace's files, as pyright does, then
    /// burns CPU on a thread of its own: busy, though it has loaded.
    async fn discover(&self) {
        let files = self
            .state
            .lock()
            .map(|state| state.workspace.documents().len())
            .unwrap_or_default();
        for said in [
            "Starting service instance \"mockls\"".to_owned(),
            format!("Found {files} source files"),
        ] {
            self.client.log_message(MessageType::INFO, said).await;
        }
        let busy = Duration::from_millis(self.flags.busy_after_discovery_ms);
        std::thread::spawn(move || burn_cpu(busy));
    }

    fn progress_token(&self) -> String {
        format!(
            "mockls-{}",
            self.progress_tokens.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// Computes diagnostics for the document as it is now and publishes
    /// them on a thread of their own, after the delays and progress the
    /// flags ask for; CPU is burnt only for a `change`, and a `flood` of
    /// publications goes first.
    fn publish(&self, uri: &Uri, change: bool, flood: u64) {
        if let Some(job) = self.publish_job(uri, change, flood) {
            std::thread::spawn(move || job.run());
        }
    }

    /// A changed document's publication, then (`--publish-dependents`)
    /// every other open document's at once after it, in that order.
    fn publish_with_dependents(&self, uri: &Uri) {
        let Some(mut job) = self.publish_job(uri, true, 0) else {
            return;
        };
        if self.flags.publish_dependents {
            let open: Vec<String> = match self.state.lock() {
                Ok(state) => state.workspace.open.keys().cloned().collect(),
                Err(_) => Vec::new(),
            };
            job.then = open
                .iter()
                .filter(|other| other.as_str() != uri.as_str())
                .filter_map(|other| Uri::from_str(other).ok())
                .filter_map(|other| self.publish_job(&other, false, 0))
                .map(|dependent| PublishJob {
                    delay: Duration::ZERO,
                    ..dependent
                })
                .collect();
        }
        std::thread::spawn(move || job.run());
    }

    fn publish_job(&self, uri: &Uri, change: bool, flood: u64) -> Option<PublishJob> {
        if self.flags.no_diagnostics || self.pulled() {
            return None;
        }
        let mut state = self.state.lock().ok()?;
        let key = uri.as_str().to_owned();
        let generation = {
            let entry = state.generations.entry(key.clone()).or_insert(0);
            *entry += 1;
            *entry
        };
        let now = self.diagnostics_of(&state, &key);
        let before = state.last_diagnostics.insert(key.clone(), now.clone());
        if self.flags.publish_only_changes && before.as_ref() == Some(&now) {
            return None;
        }
        let diagnostics = match (change && self.flags.stale_publications, before) {
            (true, Some(before)) => before,
            _ => now,
        };
        let job = PublishJob {
            uri: uri.clone(),
            version: state.versions.get(&key).copied(),
            diagnostics,
            busy_ms: if change { self.flags.cpu_busy_ms } else { 0 },
            generation,
            state: self.state.clone(),
            client: self.client.clone(),
            runtime: tokio::runtime::Handle::current(),
            flags: self.flags.clone(),
            progress: self.flags.progress_on_change.then(|| self.progress_token()),
            flood,
            delay: Duration::from_millis(self.flags.diagnostics_delay_ms),
            then: Vec::new(),
        };
        Some(job)
    }
}

impl Mock {
    /// The diagnostics of a document as mockls holds it in `state`.
    fn diagnostics_of(&self, state: &State, uri: &str) -> Vec<Diagnostic> {
        let text = state.workspace.open.get(uri).cloned().unwrap_or_default();
        let source = self.flags.source.as_deref().unwrap_or("mockls");
        let mut found = diagnostics(&state.workspace, self.encoding, uri, &text, source);
        found.extend(
            state
                .checked_on_save
                .get(uri)
                .into_iter()
                .flatten()
                .cloned(),
        );
        found
    }

    /// `--check-on-save`: checks the workspace under progress after the
    /// delay, as `cargo check` does, each file as it is on disk, and
    /// publishes the findings of every file they changed for, and of the
    /// saved and open documents, with each document's own.
    fn check_on_save(&self, uri: Uri) {
        let delay = Duration::from_millis(self.flags.check_on_save_ms);
        let check_time = Duration::from_millis(self.flags.diagnostics_delay_ms.max(50));
        let token = self.progress_token();
        let client = self.client.clone();
        let state = self.state.clone();
        let encoding = self.encoding;
        let publish_version = self.flags.publish_version;
        let source = self.flags.source.clone().unwrap_or_else(|| "mockls".into());
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            begin_progress(&client, &token, "cargo check").await;
            tokio::time::sleep(check_time).await;
            let published = state
                .lock()
                .map(|mut state| {
                    checked_workspace(&mut state, encoding, uri.as_str(), &source, publish_version)
                })
                .unwrap_or_default();
            for (uri, all, version) in published {
                if let Ok(uri) = Uri::from_str(&uri) {
                    client.publish_diagnostics(uri, all, version).await;
                }
            }
            end_progress(&client, &token).await;
        });
    }
}

/// A check on save of every file as on disk (a compiler reads the files,
/// whatever the editor holds): the publications it makes, each with the
/// document's own diagnostics of the text mockls holds.
fn checked_workspace(
    state: &mut State,
    encoding: Encoding,
    saved: &str,
    source: &str,
    publish_version: bool,
) -> Vec<(String, Vec<Diagnostic>, Option<i32>)> {
    let mut uris: Vec<String> = state.workspace.documents().into_keys().collect();
    if !uris.iter().any(|uri| uri == saved) {
        uris.push(saved.to_owned());
    }
    let mut published = Vec::new();
    for uri in uris {
        let on_disk = path_of(&uri).and_then(|path| std::fs::read_to_string(path).ok());
        let found = diagnostics(
            &state.workspace,
            encoding,
            &uri,
            &on_disk.unwrap_or_default(),
            "mockcheck",
        );
        let open = state.workspace.open.get(&uri).cloned();
        let changed = state
            .checked_on_save
            .get(&uri)
            .map_or(!found.is_empty(), |before| *before != found);
        state.checked_on_save.insert(uri.clone(), found.clone());
        if !(changed || open.is_some() || uri == saved) {
            continue;
        }
        let version = state
            .versions
            .get(&uri)
            .copied()
            .filter(|_| publish_version && open.is_some());
        let mut all = diagnostics(
            &state.workspace,
            encoding,
            &uri,
            &open.unwrap_or_default(),
            source,
        );
        all.extend(found);
        published.push((uri, all, version));
    }
    published
}

impl LanguageServer for Mock {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        #[allow(deprecated, reason = "clients without folders still send a root URI")]
        let roots = match (&params.workspace_folders, &params.root_uri) {
            (Some(folders), _) if !folders.is_empty() => paths_of(folders),
            (_, Some(root)) => path_of(root.as_str()).into_iter().collect(),
            _ => Vec::new(),
        };
        if let Ok(mut state) = self.state.lock() {
            state.workspace.roots = roots;
        }
        let can_register = params
            .capabilities
            .text_document
            .as_ref()
            .and_then(|document| document.diagnostic.as_ref())
            .and_then(|diagnostic| diagnostic.dynamic_registration)
            .unwrap_or(false);
        self.pull_registered
            .store(self.flags.register_pull && can_register, Ordering::Relaxed);
        Ok(InitializeResult {
            capabilities: self.capabilities(),
            server_info: Some(ServerInfo {
                name: "mockls".into(),
                version: None,
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        if self.flags.workspace_folders {
            self.ask_folders();
        }
        if self.flags.watch_files {
            let watchers = json!({"watchers": [{"globPattern": "**/*"}]});
            self.register("mockls-watch", "workspace/didChangeWatchedFiles", watchers);
        }
        if self.pull_registered.load(Ordering::Relaxed) {
            let options = json!({"interFileDependencies": true, "workspaceDiagnostics": false,
                "documentSelector": null, "identifier": "mockls"});
            self.register("mockls-pull", "textDocument/diagnostic", options);
        }
        if self.flags.send_configuration_request {
            self.ask_configuration();
        }
        if self.flags.indexing_delay_ms > 0 {
            self.index();
        }
        if self.flags.busy_after_discovery_ms > 0 {
            self.discover().await;
        }
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let document = params.text_document;
        if let Ok(mut state) = self.state.lock() {
            let key = document.uri.as_str().to_owned();
            state.workspace.open.insert(key.clone(), document.text);
            state.versions.insert(key, document.version);
        }
        self.publish(&document.uri, false, self.flags.flood_diagnostics);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        if let Ok(mut state) = self.state.lock() {
            let key = uri.as_str().to_owned();
            let mut text = state.workspace.open.get(&key).cloned().unwrap_or_default();
            for change in params.content_changes {
                text = apply(&text, change, self.encoding);
            }
            state.workspace.open.insert(key.clone(), text);
            state.versions.insert(key, params.text_document.version);
        }
        if !self.flags.diagnostics_on_save {
            self.publish_with_dependents(&uri);
        }
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        if self.flags.check_on_save_ms > 0 {
            self.check_on_save(params.text_document.uri.clone());
        }
        if self.flags.diagnostics_on_save {
            self.publish(&params.text_document.uri, true, 0);
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        if let Ok(mut state) = self.state.lock() {
            state
                .workspace
                .open
                .remove(params.text_document.uri.as_str());
        }
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        if let Ok(mut state) = self.state.lock() {
            let removed = paths_of(&params.event.removed);
            state.workspace.roots.retain(|root| !removed.contains(root));
            state.workspace.roots.extend(paths_of(&params.event.added));
        }
        self.ask_folders();
    }

    /// As pyright does: every open document is checked again.
    async fn did_change_watched_files(&self, _: DidChangeWatchedFilesParams) {
        if !self.flags.watch_files {
            return;
        }
        if self.flags.busy_on_watched_ms > 0 {
            let busy = Duration::from_millis(self.flags.busy_on_watched_ms);
            let _ = tokio::task::spawn_blocking(move || burn_cpu(busy)).await;
        }
        let open: Vec<String> = match self.state.lock() {
            Ok(state) => state.workspace.open.keys().cloned().collect(),
            Err(_) => return,
        };
        tokio::time::sleep(Duration::from_millis(self.flags.recheck_delay_ms)).await;
        for uri in open.iter().filter_map(|uri| Uri::from_str(uri).ok()) {
            self.publish(&uri, false, 0);
        }
    }

    async fn diagnostic(
        &self,
        params: DocumentDiagnosticParams,
    ) -> Result<DocumentDiagnosticReportResult> {
        if !self.pulled() && !self.flags.publish_only_changes {
            return Err(tower_lsp_server::jsonrpc::Error::method_not_found());
        }
        tokio::time::sleep(Duration::from_millis(self.flags.diagnostics_delay_ms)).await;
        let items = match self.state.lock() {
            Ok(state) => self.diagnostics_of(&state, params.text_document.uri.as_str()),
            Err(_) => Vec::new(),
        };
        let report = FullDocumentDiagnosticReport {
            result_id: None,
            items,
        };
        Ok(DocumentDiagnosticReportResult::Report(
            DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
                related_documents: None,
                full_document_diagnostic_report: report,
            }),
        ))
    }

    async fn execute_command(
        &self,
        params: ExecuteCommandParams,
    ) -> Result<Option<serde_json::Value>> {
        if !self.flags.answers_tsserver || params.command != tsserver::COMMAND {
            return Err(tower_lsp_server::jsonrpc::Error::method_not_found());
        }
        let checked = |file: &str| {
            let state = self.state.lock().ok()?;
            let uri = state
                .workspace
                .open
                .keys()
                .find(|uri| crate::text::path_of(uri).is_some_and(|path| path.as_os_str() == file))?
                .clone();
            Some(self.diagnostics_of(&state, &uri))
        };
        // As tsserver, which loads a project when a file of it is first
        // opened, and outlines any of its files from then on.
        let outlined = |file: &str| {
            let loaded = !self.state.lock().ok()?.versions.is_empty();
            let uri = Uri::from_str(&crate::text::uri_of(std::path::Path::new(file))?).ok()?;
            match self.answer(|a| a.document_symbols(&uri))? {
                DocumentSymbolResponse::Nested(symbols) if loaded => Some(symbols),
                _ => None,
            }
        };
        self.respond(Some(tsserver::answer(&params.arguments, checked, outlined)))
            .await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let position = &params.text_document_position_params;
        if self.flags.asks_tsserver {
            let answer = self.relay.hover(&self.client, position).await;
            return self.respond(answer).await;
        }
        let answer = self.answer(|a| a.hover(position));
        self.respond(answer).await
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let answer = self.answer(|a| a.definition(&params.text_document_position_params));
        self.respond(answer).await
    }

    async fn goto_declaration(
        &self,
        params: GotoDeclarationParams,
    ) -> Result<Option<GotoDeclarationResponse>> {
        let answer = self.answer(|a| a.definition(&params.text_document_position_params));
        self.respond(answer).await
    }

    async fn goto_type_definition(
        &self,
        params: GotoTypeDefinitionParams,
    ) -> Result<Option<GotoTypeDefinitionResponse>> {
        let answer = self.answer(|a| a.definition(&params.text_document_position_params));
        self.respond(answer).await
    }

    async fn goto_implementation(
        &self,
        params: GotoImplementationParams,
    ) -> Result<Option<GotoImplementationResponse>> {
        let answer = self.answer(|a| a.implementation(&params.text_document_position_params));
        self.respond(answer).await
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        if self.flags.references_one_at_a_time {
            return self.references_one_at_a_time(params).await;
        }
        let answer = self.answer(|a| a.references(&params));
        self.respond(answer).await
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let answer = self.answer(|a| a.document_symbols(&params.text_document.uri));
        self.respond(answer).await
    }

    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> Result<Option<WorkspaceSymbolResponse>> {
        let answer = self.answer(|a| a.workspace_symbols(&params.query));
        self.respond(answer).await
    }

    async fn prepare_call_hierarchy(
        &self,
        params: CallHierarchyPrepareParams,
    ) -> Result<Option<Vec<CallHierarchyItem>>> {
        let answer = self.answer(|a| a.prepare_calls(&params.text_document_position_params));
        self.respond(answer).await
    }

    async fn incoming_calls(
        &self,
        params: CallHierarchyIncomingCallsParams,
    ) -> Result<Option<Vec<CallHierarchyIncomingCall>>> {
        let answer = self.answer(|a| a.incoming(&params.item.name));
        self.respond(answer).await
    }

    async fn outgoing_calls(
        &self,
        params: CallHierarchyOutgoingCallsParams,
    ) -> Result<Option<Vec<CallHierarchyOutgoingCall>>> {
        let answer = self.answer(|a| a.outgoing(&params.item.name));
        self.respond(answer).await
    }

    async fn prepare_type_hierarchy(
        &self,
        params: TypeHierarchyPrepareParams,
    ) -> Result<Option<Vec<TypeHierarchyItem>>> {
        let answer = self.answer(|a| a.prepare_types(&params.text_document_position_params));
        self.respond(answer).await
    }

    async fn supertypes(
        &self,
        params: TypeHierarchySupertypesParams,
    ) -> Result<Option<Vec<TypeHierarchyItem>>> {
        let answer = self.answer(|a| a.supertypes(&params.item.name));
        self.respond(answer).await
    }

    async fn subtypes(
        &self,
        params: TypeHierarchySubtypesParams,
    ) -> Result<Option<Vec<TypeHierarchyItem>>> {
        let answer = self.answer(|a| a.subtypes(&params.item.name));
        self.respond(answer).await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let answer = self.answer(|a| a.code_actions(&params));
        self.respond(answer).await
    }

    async fn rename(&self, params: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let answer = self.answer(|a| a.rename(&params));
        self.respond(answer).await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let answer = self.answer(|a| a.completion(&params.text_document_position));
        self.respond(answer).await
    }

    async fn signature_help(&self, params: SignatureHelpParams) -> Result<Option<SignatureHelp>> {
        let answer = self.answer(|a| a.signature_help(&params.text_document_position_params));
        self.respond(answer).await
    }
}

/// Removes the capability `--without` names.
fn leave_out(capabilities: &mut ServerCapabilities, name: &str) {
    match name {
        "hoverProvider" => capabilities.hover_provider = None,
        "executeCommandProvider" => capabilities.execute_command_provider = None,
        "definitionProvider" => capabilities.definition_provider = None,
        "declarationProvider" => capabilities.declaration_provider = None,
        "typeDefinitionProvider" => capabilities.type_definition_provider = None,
        "implementationProvider" => capabilities.implementation_provider = None,
        "referencesProvider" => capabilities.references_provider = None,
        "documentSymbolProvider" => capabilities.document_symbol_provider = None,
        "workspaceSymbolProvider" => capabilities.workspace_symbol_provider = None,
        "callHierarchyProvider" => capabilities.call_hierarchy_provider = None,
        "codeActionProvider" => capabilities.code_action_provider = None,
        "renameProvider" => capabilities.rename_provider = None,
        "completionProvider" => capabilities.completion_provider = None,
        "signatureHelpProvider" => capabilities.signature_help_provider = None,
        // Added by the wire, which reads `--without` itself.
        "typeHierarchyProvider" => {}
        other => eprintln!("mockls: --without {other}: no such capability"),
    }
}

fn paths_of(folders: &[WorkspaceFolder]) -> Vec<PathBuf> {
    folders
        .iter()
        .filter_map(|folder| path_of(folder.uri.as_str()))
        .collect()
}

/// A document's text after one change, whole or ranged.
fn apply(text: &str, change: TextDocumentContentChangeEvent, encoding: Encoding) -> String {
    let Some(range) = change.range else {
        return change.text;
    };
    let start = encoding.offset(text, range.start).min(text.len());
    let end = encoding.offset(text, range.end).clamp(start, text.len());
    format!("{}{}{}", &text[..start], change.text, &text[end..])
}

/// One error per line containing `ERROR`, one warning per line containing
/// `WARN`, and one error per line `uses FILE` whose FILE (beside the
/// document, as open or on disk) has an `ERROR`.
fn diagnostics(
    workspace: &Workspace,
    encoding: Encoding,
    uri: &str,
    text: &str,
    source: &str,
) -> Vec<Diagnostic> {
    let problem =
        |line: &str, index: usize, start: usize, length: usize, severity, code: &str, message| {
            Diagnostic {
                range: encoding.range(line, index, start, start + length),
                severity: Some(severity),
                code: Some(NumberOrString::String(code.into())),
                source: Some(source.into()),
                message,
                ..Diagnostic::default()
            }
        };
    let error = |line: &str, index, start, length, code: &str, message| {
        problem(
            line,
            index,
            start,
            length,
            DiagnosticSeverity::ERROR,
            code,
            message,
        )
    };
    text.lines()
        .enumerate()
        .filter_map(|(index, line)| {
            if let Some(byte) = line.find("ERROR") {
                let column = line[..byte].chars().count();
                let message = format!("mockls: ERROR on line {}", index + 1);
                return Some(error(line, index, column, 5, "E1", message));
            }
            if let Some(byte) = line.find("WARN") {
                let column = line[..byte].chars().count();
                let message = format!("mockls: WARN on line {}", index + 1);
                let severity = DiagnosticSeverity::WARNING;
                return Some(problem(line, index, column, 4, severity, "W1", message));
            }
            let used = line.trim().strip_prefix("uses ")?.trim();
            let dependency = workspace.text(&sibling_uri(uri, used)?)?;
            if !dependency.contains("ERROR") {
                return None;
            }
            let column = line.chars().take_while(|c| c.is_whitespace()).count();
            let message = format!("mockls: {used} has an ERROR");
            Some(error(line, index, column, 4, "E2", message))
        })
        .collect()
}

/// The URI of `name` in the directory of the document `uri`.
fn sibling_uri(uri: &str, name: &str) -> Option<String> {
    let path = path_of(uri)?;
    crate::text::uri_of(&path.parent()?.join(name))
}

/// rust-analyzer's word on whether it is busy loading.
enum ServerStatus {}

impl tower_lsp_server::ls_types::notification::Notification for ServerStatus {
    type Params = serde_json::Value;
    const METHOD: &'static str = "experimental/serverStatus";
}

fn status(quiescent: bool) -> serde_json::Value {
    json!({"health": "ok", "quiescent": quiescent})
}

async fn begin_progress(client: &Client, token: &str, title: &str) {
    let token = NumberOrString::String(token.to_owned());
    let create = client.create_work_done_progress(token.clone());
    let begin = client.send_notification::<Progress>(ProgressParams {
        token,
        value: ProgressParamsValue::WorkDone(WorkDoneProgress::Begin(WorkDoneProgressBegin {
            title: title.to_owned(),
            percentage: Some(0),
            ..WorkDoneProgressBegin::default()
        })),
    });
    // The request to create the token goes out first; progress begins
    // without waiting for its answer, as real servers do.
    tokio::pin!(begin);
    tokio::select! {
        biased;
        _ = create => begin.await,
        () = &mut begin => {}
    }
}

async fn end_progress(client: &Client, token: &str) {
    client
        .send_notification::<Progress>(ProgressParams {
            token: NumberOrString::String(token.to_owned()),
            value: ProgressParamsValue::WorkDone(WorkDoneProgress::End(WorkDoneProgressEnd {
                message: None,
            })),
        })
        .await;
}

/// One diagnostics publication waiting for its delays.
struct PublishJob {
    uri: Uri,
    version: Option<i32>,
    diagnostics: Vec<Diagnostic>,
    /// CPU to burn first.
    busy_ms: u64,
    generation: u64,
    state: Arc<Mutex<State>>,
    client: Client,
    runtime: tokio::runtime::Handle,
    flags: Arc<Flags>,
    progress: Option<String>,
    /// Publications, each with a message of its own, before the real one
    /// (`--flood-diagnostics`).
    flood: u64,
    /// How long it takes to check the document.
    delay: Duration,
    /// Publications that follow this one (`--publish-dependents`).
    then: Vec<PublishJob>,
}

impl PublishJob {
    fn run(self) {
        for n in 0..self.flood {
            let diagnostic = Diagnostic {
                range: Default::default(),
                severity: Some(DiagnosticSeverity::WARNING),
                source: Some("mockls".into()),
                message: format!("mockls: flood {n}"),
                ..Diagnostic::default()
            };
            self.send(vec![diagnostic], None);
        }
        if let Some(token) = &self.progress {
            self.runtime
                .block_on(begin_progress(&self.client, token, "checking"));
        }
        if self.busy_ms > 0 {
            burn_cpu(Duration::from_millis(self.busy_ms));
        }
        std::thread::sleep(self.delay);
        if self.is_current() && self.flags.multi_round_diagnostics {
            self.send(Vec::new(), self.version);
            std::thread::sleep(Duration::from_millis(
                self.flags.diagnostics_delay_ms.max(50),
            ));
        }
        if self.is_current() {
            self.send(self.diagnostics.clone(), self.version);
        }
        if let Some(token) = &self.progress {
            self.runtime.block_on(end_progress(&self.client, token));
        }
        for next in self.then {
            next.run();
        }
    }

    fn is_current(&self) -> bool {
        self.state
            .lock()
            .map(|s| s.generations.get(self.uri.as_str()) == Some(&self.generation))
            .unwrap_or(false)
    }

    fn send(&self, diagnostics: Vec<Diagnostic>, version: Option<i32>) {
        let version = version.filter(|_| self.flags.publish_version);
        self.runtime.block_on(self.client.publish_diagnostics(
            self.uri.clone(),
            diagnostics,
            version,
        ));
    }
}

fn burn_cpu(duration: Duration) {
    let start = Instant::now();
    let mut counter = 0u64;
    while start.elapsed() < duration {
        counter = std::hint::black_box(counter.wrapping_add(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::{Position, Range};

    #[test]
    fn applies_whole_and_ranged_changes() {
        let whole = TextDocumentContentChangeEvent {
            range: None,
            range_length: None,
            text: "new".into(),
        };
        assert_eq!(apply("old", whole, Encoding::Utf16), "new");
        let ranged = TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(1, 1), Position::new(1, 2))),
            range_length: None,
            text: "Y".into(),
        };
        assert_eq!(apply("ab\n😀x\n", ranged, Encoding::Utf32), "ab\n😀Y\n");
    }
}
