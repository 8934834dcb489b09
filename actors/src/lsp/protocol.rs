//! What Windlass, as a client, tells a server about itself, what it reads from the
//! server's answer to `initialize`, and how it answers the requests servers
//! send to their client. Pure functions over JSON.

use crate::lsp::position::PositionEncoding;
use lsp_types::{
    CallHierarchyServerCapability, CodeActionProviderCapability, DeclarationCapability,
    HoverProviderCapability, ImplementationProviderCapability, OneOf, ServerCapabilities,
    TypeDefinitionProviderCapability,
};
use serde::Deserialize;
use serde_json::{Value, json};

/// A workspace folder as announced to servers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceFolder {
    pub uri: String,
    pub name: String,
}

impl WorkspaceFolder {
    fn to_json(&self) -> Value {
        json!({"uri": self.uri, "name": self.name})
    }
}

/// The `initialize` parameters: what this client can do. `pulls`: the
/// client asks this server for diagnostics (`textDocument/diagnostic`),
/// which some servers serve only to a client that announces it can take
/// the capability's dynamic registration.
pub fn initialize_params(
    folders: &[WorkspaceFolder],
    options: Option<&Value>,
    pulls: bool,
) -> Value {
    let root_uri = folders.first().map(|folder| folder.uri.clone());
    let mut capabilities = client_capabilities();
    if pulls {
        capabilities["textDocument"]["diagnostic"] =
            json!({"dynamicRegistration": true, "relatedInformation": false});
    }
    let mut params = json!({
        "processId": std::process::id(),
        "clientInfo": {"name": "windlass", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": root_uri,
        "workspaceFolders": folders.iter().map(WorkspaceFolder::to_json).collect::<Vec<_>>(),
        "capabilities": capabilities,
    });
    if let Some(options) = options {
        params["initializationOptions"] = options.clone();
    }
    params
}

fn client_capabilities() -> Value {
    json!({
        "general": {"positionEncodings": ["utf-8", "utf-32", "utf-16"]},
        "offsetEncoding": ["utf-8", "utf-16"],
        "window": {"workDoneProgress": true},
        "experimental": {"serverStatusNotification": true},
        "workspace": {
            "configuration": true,
            "workspaceFolders": true,
            "symbol": {"dynamicRegistration": false},
            "didChangeWatchedFiles": {"dynamicRegistration": true, "relativePatternSupport": true},
        },
        "textDocument": {
            "synchronization": {"didSave": true, "dynamicRegistration": false},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "definition": {"linkSupport": true},
            "declaration": {"linkSupport": true},
            "typeDefinition": {"linkSupport": true},
            "implementation": {"linkSupport": true},
            "references": {},
            "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
            "publishDiagnostics": {"versionSupport": true, "relatedInformation": false},
            "callHierarchy": {},
            "typeHierarchy": {},
            "rename": {"prepareSupport": false},
            "codeAction": {},
            "completion": {"completionItem": {"snippetSupport": false}},
            "signatureHelp": {},
        },
    })
}

/// How a server wants document changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncKind {
    None,
    Full,
    Incremental,
}

/// What a tool asks a server for, checked against what the server
/// announced before the request is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    Hover,
    Definition,
    Declaration,
    TypeDefinition,
    Implementation,
    References,
    DocumentSymbols,
    WorkspaceSymbols,
    CodeActions,
    CodeActionResolve,
    Rename,
    Completion,
    SignatureHelp,
    CallHierarchy,
    TypeHierarchy,
    FolderChanges,
    /// Diagnostics given when asked (`textDocument/diagnostic`).
    PullDiagnostics,
}

impl Feature {
    /// As answers and refusals name it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Hover => "hover",
            Self::Definition => "definition",
            Self::Declaration => "declaration",
            Self::TypeDefinition => "type definition",
            Self::Implementation => "implementation",
            Self::References => "references",
            Self::DocumentSymbols => "document symbols",
            Self::WorkspaceSymbols => "workspace symbols",
            Self::CodeActions => "code actions",
            Self::CodeActionResolve => "code action resolve",
            Self::Rename => "rename",
            Self::Completion => "completion",
            Self::SignatureHelp => "signature help",
            Self::CallHierarchy => "call hierarchy",
            Self::TypeHierarchy => "type hierarchy",
            Self::FolderChanges => "workspace folder changes",
            Self::PullDiagnostics => "diagnostics on request",
        }
    }

    /// Where the `initialize` result announces it: a dotted path looks
    /// inside an options object.
    pub fn key(self) -> &'static str {
        match self {
            Self::Hover => "hoverProvider",
            Self::Definition => "definitionProvider",
            Self::Declaration => "declarationProvider",
            Self::TypeDefinition => "typeDefinitionProvider",
            Self::Implementation => "implementationProvider",
            Self::References => "referencesProvider",
            Self::DocumentSymbols => "documentSymbolProvider",
            Self::WorkspaceSymbols => "workspaceSymbolProvider",
            Self::CodeActions => "codeActionProvider",
            Self::CodeActionResolve => "codeActionProvider.resolveProvider",
            Self::Rename => "renameProvider",
            Self::Completion => "completionProvider",
            Self::SignatureHelp => "signatureHelpProvider",
            Self::CallHierarchy => "callHierarchyProvider",
            Self::TypeHierarchy => "typeHierarchyProvider",
            Self::FolderChanges => "workspace.workspaceFolders.changeNotifications",
            Self::PullDiagnostics => "diagnosticProvider",
        }
    }
}

/// What Windlass keeps from a server's `initialize` result.
#[derive(Debug, Clone, PartialEq)]
pub struct Capabilities {
    /// `None` for a server whose capabilities `lsp-types` cannot read
    /// (a field of the wrong type): `raw` answers for it.
    typed: Option<ServerCapabilities>,
    raw: Value,
    pub encoding: PositionEncoding,
    pub sync: SyncKind,
    /// `Some(include_text)` when the server asked for `didSave`.
    pub save: Option<bool>,
}

/// The command through which typescript-language-server runs any
/// tsserver request it is given (`workspace/executeCommand`).
pub const TSSERVER_REQUEST: &str = "typescript.tsserverRequest";

impl Capabilities {
    pub fn from_initialize_result(result: &Value) -> Self {
        let raw = result.get("capabilities").cloned().unwrap_or(Value::Null);
        let typed = match ServerCapabilities::deserialize(&raw) {
            Ok(typed) => Some(typed),
            Err(error) => {
                tracing::info!("server capabilities read without their types: {error}");
                None
            }
        };
        let encoding = raw
            .get("positionEncoding")
            .or_else(|| result.get("offsetEncoding"))
            .and_then(Value::as_str)
            .map(PositionEncoding::from_lsp_name)
            .unwrap_or_default();
        let sync_option = raw.get("textDocumentSync");
        let change = match sync_option {
            Some(Value::Number(kind)) => kind.as_i64(),
            Some(options) => options.get("change").and_then(Value::as_i64),
            None => None,
        };
        let sync = match change {
            Some(2) => SyncKind::Incremental,
            Some(0) => SyncKind::None,
            _ => SyncKind::Full,
        };
        let save = match sync_option.and_then(|options| options.get("save")) {
            Some(Value::Bool(true)) => Some(false),
            Some(Value::Object(save)) => Some(save.get("includeText") == Some(&Value::Bool(true))),
            _ => None,
        };
        Self {
            typed,
            raw,
            encoding,
            sync,
            save,
        }
    }

    /// Whether the server announced `feature` (present and not `false`).
    pub fn supports(&self, feature: Feature) -> bool {
        let Some(typed) = &self.typed else {
            return self.announces(feature.key());
        };
        match feature {
            Feature::Hover => !matches!(
                typed.hover_provider,
                None | Some(HoverProviderCapability::Simple(false))
            ),
            Feature::Definition => enabled(typed.definition_provider.as_ref()),
            Feature::Declaration => !matches!(
                typed.declaration_provider,
                None | Some(DeclarationCapability::Simple(false))
            ),
            Feature::TypeDefinition => !matches!(
                typed.type_definition_provider,
                None | Some(TypeDefinitionProviderCapability::Simple(false))
            ),
            Feature::Implementation => !matches!(
                typed.implementation_provider,
                None | Some(ImplementationProviderCapability::Simple(false))
            ),
            Feature::References => enabled(typed.references_provider.as_ref()),
            Feature::DocumentSymbols => enabled(typed.document_symbol_provider.as_ref()),
            Feature::WorkspaceSymbols => enabled(typed.workspace_symbol_provider.as_ref()),
            Feature::CodeActions => !matches!(
                typed.code_action_provider,
                None | Some(CodeActionProviderCapability::Simple(false))
            ),
            Feature::CodeActionResolve => matches!(
                &typed.code_action_provider,
                Some(CodeActionProviderCapability::Options(options))
                    if options.resolve_provider == Some(true)
            ),
            Feature::Rename => enabled(typed.rename_provider.as_ref()),
            Feature::Completion => typed.completion_provider.is_some(),
            Feature::SignatureHelp => typed.signature_help_provider.is_some(),
            Feature::CallHierarchy => !matches!(
                typed.call_hierarchy_provider,
                None | Some(CallHierarchyServerCapability::Simple(false))
            ),
            // lsp-types has no field for the standard type hierarchy.
            Feature::TypeHierarchy => self.announces(feature.key()),
            Feature::FolderChanges => matches!(
                typed
                    .workspace
                    .as_ref()
                    .and_then(|workspace| workspace.workspace_folders.as_ref())
                    .and_then(|folders| folders.change_notifications.as_ref()),
                Some(OneOf::Left(true) | OneOf::Right(_))
            ),
            Feature::PullDiagnostics => typed.diagnostic_provider.is_some(),
        }
    }

    /// Whether the server announced `command` among those it executes
    /// (`workspace/executeCommand`).
    pub fn runs_command(&self, command: &str) -> bool {
        self.raw
            .pointer("/executeCommandProvider/commands")
            .and_then(Value::as_array)
            .is_some_and(|commands| commands.iter().any(|known| known == command))
    }

    /// The capabilities once the server has registered `method` itself
    /// (`client/registerCapability`), if that adds one Windlass uses.
    pub fn registered(&self, method: &str, options: &Value) -> Option<Self> {
        let feature = match method {
            "textDocument/diagnostic" => Feature::PullDiagnostics,
            _ => return None,
        };
        if self.supports(feature) {
            return None;
        }
        // Registered without options is registered all the same.
        let options = match options {
            Value::Object(_) => options.clone(),
            _ => json!({}),
        };
        let mut raw = self.raw.clone();
        match &mut raw {
            Value::Object(fields) => drop(fields.insert(feature.key().to_owned(), options)),
            _ => raw = json!({feature.key(): options}),
        }
        let typed = ServerCapabilities::deserialize(&raw).ok();
        Some(Self {
            typed,
            raw,
            ..self.clone()
        })
    }

    /// Whether the raw result holds `key` (a dotted path), not `false`.
    fn announces(&self, key: &str) -> bool {
        let found = key
            .split('.')
            .try_fold(&self.raw, |value, key| value.get(key));
        !matches!(found, None | Some(Value::Null) | Some(Value::Bool(false)))
    }
}

/// A `bool`-or-options capability that is on.
fn enabled<T>(capability: Option<&OneOf<bool, T>>) -> bool {
    !matches!(capability, None | Some(OneOf::Left(false)))
}

/// The answer to a request a server sent to its client.
pub fn answer_server_request(
    method: &str,
    params: &Value,
    settings: &Value,
    folders: &[WorkspaceFolder],
) -> Option<Value> {
    match method {
        "workspace/configuration" => Some(configuration(params, settings)),
        "workspace/workspaceFolders" => Some(Value::Array(
            folders.iter().map(WorkspaceFolder::to_json).collect(),
        )),
        "window/workDoneProgress/create"
        | "client/registerCapability"
        | "client/unregisterCapability"
        | "window/showMessageRequest"
        | "workspace/diagnostic/refresh"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/codeLens/refresh" => Some(Value::Null),
        _ => None,
    }
}

/// One settings value per requested item, `null` where nothing is set;
/// an item without a section, or with the empty one (as VS Code's
/// `getConfiguration("")` asks), gets them all.
/// Read as JSON, not as lsp-types' `ConfigurationParams`: only `section`
/// counts, and lsp-types would refuse the whole request for a `scopeUri`
/// written with characters URIs do not allow (`é`, as Java's
/// `URI.toString` leaves it), where every item must still be answered.
fn configuration(params: &Value, settings: &Value) -> Value {
    let items = params.get("items").and_then(Value::as_array);
    let answers = items
        .into_iter()
        .flatten()
        .map(|item| match item.get("section").and_then(Value::as_str) {
            Some(section) if !section.is_empty() => lookup_section(settings, section),
            _ => settings.clone(),
        })
        .collect();
    Value::Array(answers)
}

/// Finds `a.b.c` either as nested tables or as a literal dotted key.
fn lookup_section(settings: &Value, section: &str) -> Value {
    if let Some(value) = settings.get(section) {
        return value.clone();
    }
    section
        .split('.')
        .try_fold(settings, |value, key| value.get(key))
        .cloned()
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_encoding_sync_and_save() {
        let capabilities = Capabilities::from_initialize_result(&json!({
            "capabilities": {
                "positionEncoding": "utf-8",
                "textDocumentSync": {"change": 2, "save": {"includeText": true}},
                "hoverProvider": true,
                "callHierarchyProvider": false,
                "codeActionProvider": {"resolveProvider": true},
            }
        }));
        assert_eq!(capabilities.encoding, PositionEncoding::Utf8);
        assert_eq!(capabilities.sync, SyncKind::Incremental);
        assert_eq!(capabilities.save, Some(true));
        assert!(capabilities.supports(Feature::Hover));
        assert!(!capabilities.supports(Feature::CallHierarchy));
        assert!(!capabilities.supports(Feature::Rename));
        assert!(capabilities.supports(Feature::CodeActions));
        assert!(capabilities.supports(Feature::CodeActionResolve));
        assert!(!capabilities.supports(Feature::FolderChanges));
    }

    #[test]
    fn the_type_hierarchy_lsp_types_lacks_is_read_from_the_raw_result() {
        let capabilities = Capabilities::from_initialize_result(&json!({
            "capabilities": {"typeHierarchyProvider": true, "workspace": {
                "workspaceFolders": {"supported": true, "changeNotifications": "folders"}
            }}
        }));
        assert!(capabilities.typed.is_some());
        assert!(capabilities.supports(Feature::TypeHierarchy));
        assert!(capabilities.supports(Feature::FolderChanges));
        assert!(!capabilities.supports(Feature::Hover));
    }

    #[test]
    fn capabilities_lsp_types_cannot_read_are_read_by_key() {
        // A boolean where the protocol has an options object.
        let capabilities = Capabilities::from_initialize_result(&json!({
            "capabilities": {"completionProvider": true, "hoverProvider": true, "renameProvider": false}
        }));
        assert!(capabilities.typed.is_none());
        assert!(capabilities.supports(Feature::Completion));
        assert!(capabilities.supports(Feature::Hover));
        assert!(!capabilities.supports(Feature::Rename));
    }

    #[test]
    fn diagnostics_registered_later_are_supported_from_then_on() {
        let capabilities = Capabilities::from_initialize_result(&json!({
            "capabilities": {"hoverProvider": true, "textDocumentSync": 2}
        }));
        assert!(!capabilities.supports(Feature::PullDiagnostics));
        let pyright = json!({"interFileDependencies": true, "workspaceDiagnostics": false,
            "documentSelector": null, "identifier": "pyright"});
        let registered = capabilities
            .registered("textDocument/diagnostic", &pyright)
            .unwrap();
        assert!(registered.supports(Feature::PullDiagnostics));
        assert!(registered.supports(Feature::Hover));
        assert_eq!(registered.sync, SyncKind::Incremental);
        assert!(
            registered
                .registered("textDocument/diagnostic", &pyright)
                .is_none()
        );
        let bare = capabilities.registered("textDocument/diagnostic", &Value::Null);
        assert!(bare.unwrap().supports(Feature::PullDiagnostics));
        assert!(
            capabilities
                .registered("workspace/didChangeWatchedFiles", &json!({}))
                .is_none()
        );
    }

    #[test]
    fn only_a_client_that_asks_for_diagnostics_announces_their_registration() {
        let asking = initialize_params(&[], None, true);
        assert_eq!(
            asking["capabilities"]["textDocument"]["diagnostic"]["dynamicRegistration"],
            true
        );
        let waiting = initialize_params(&[], None, false);
        assert!(
            waiting["capabilities"]["textDocument"]
                .get("diagnostic")
                .is_none()
        );
    }

    #[test]
    fn reads_clangd_offset_encoding_and_numeric_sync() {
        let capabilities = Capabilities::from_initialize_result(&json!({
            "capabilities": {"textDocumentSync": 1},
            "offsetEncoding": "utf-8",
        }));
        assert_eq!(capabilities.encoding, PositionEncoding::Utf8);
        assert_eq!(capabilities.sync, SyncKind::Full);
        assert_eq!(capabilities.save, None);
    }

    #[test]
    fn defaults_to_utf16() {
        let capabilities = Capabilities::from_initialize_result(&json!({"capabilities": {}}));
        assert_eq!(capabilities.encoding, PositionEncoding::Utf16);
    }

    #[test]
    fn answers_configuration_by_section() {
        let settings = json!({"python": {"analysis": {"typeCheckingMode": "strict"}}, "a.b": 1});
        let params = json!({"items": [
            {"section": "python.analysis"}, {"section": "a.b"}, {"section": "missing"}, {},
            {"section": ""}
        ]});
        let answer = answer_server_request("workspace/configuration", &params, &settings, &[]);
        assert_eq!(
            answer,
            Some(json!([{"typeCheckingMode": "strict"}, 1, null, settings, settings]))
        );
    }

    #[test]
    fn answers_configuration_whatever_its_scope_uri() {
        let settings = json!({"java": {"home": "/opt/jdk"}});
        let params = json!({"items": [
            {"scopeUri": "file:///home/josé/w", "section": "java.home"}, {"section": "java"}
        ]});
        assert!(lsp_types::ConfigurationParams::deserialize(&params).is_err());
        let answer = answer_server_request("workspace/configuration", &params, &settings, &[]);
        assert_eq!(answer, Some(json!(["/opt/jdk", {"home": "/opt/jdk"}])));
    }

    #[test]
    fn leaves_unknown_requests_unanswered() {
        assert_eq!(
            answer_server_request("x/y", &Value::Null, &Value::Null, &[]),
            None
        );
    }
}
