//! What Windlass, as a client, tells a server about itself, what it reads from the
//! server's answer to `initialize`, and how it answers the requests servers
//! send to their client. Pure functions over JSON.

use crate::lsp::position::PositionEncoding;
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

/// The `initialize` parameters: what this client can do.
pub fn initialize_params(folders: &[WorkspaceFolder], options: Option<&Value>) -> Value {
    let root_uri = folders.first().map(|folder| folder.uri.clone());
    let mut params = json!({
        "processId": std::process::id(),
        "clientInfo": {"name": "windlass", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": root_uri,
        "workspaceFolders": folders.iter().map(WorkspaceFolder::to_json).collect::<Vec<_>>(),
        "capabilities": client_capabilities(),
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

/// What Windlass keeps from a server's `initialize` result.
#[derive(Debug, Clone, PartialEq)]
pub struct Capabilities {
    raw: Value,
    pub encoding: PositionEncoding,
    pub sync: SyncKind,
    /// `Some(include_text)` when the server asked for `didSave`.
    pub save: Option<bool>,
}

impl Capabilities {
    pub fn from_initialize_result(result: &Value) -> Self {
        let raw = result.get("capabilities").cloned().unwrap_or(Value::Null);
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
            raw,
            encoding,
            sync,
            save,
        }
    }

    /// Whether a capability is present and not `false`; a dotted path
    /// (`codeActionProvider.resolveProvider`) looks inside an options object.
    pub fn supports(&self, provider: &str) -> bool {
        let found = provider
            .split('.')
            .try_fold(&self.raw, |value, key| value.get(key));
        !matches!(found, None | Some(Value::Null) | Some(Value::Bool(false)))
    }
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

/// One settings value per requested item, `null` where nothing is set.
fn configuration(params: &Value, settings: &Value) -> Value {
    let items = params.get("items").and_then(Value::as_array);
    let answers = items
        .into_iter()
        .flatten()
        .map(|item| match item.get("section").and_then(Value::as_str) {
            Some(section) => lookup_section(settings, section),
            None => settings.clone(),
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
        assert!(capabilities.supports("hoverProvider"));
        assert!(!capabilities.supports("callHierarchyProvider"));
        assert!(!capabilities.supports("renameProvider"));
        assert!(!capabilities.supports("hoverProvider.resolveProvider"));
        assert!(capabilities.supports("codeActionProvider.resolveProvider"));
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
            {"section": "python.analysis"}, {"section": "a.b"}, {"section": "missing"}, {}
        ]});
        let answer = answer_server_request("workspace/configuration", &params, &settings, &[]);
        assert_eq!(
            answer,
            Some(json!([{"typeCheckingMode": "strict"}, 1, null, settings]))
        );
    }

    #[test]
    fn leaves_unknown_requests_unanswered() {
        assert_eq!(
            answer_server_request("x/y", &Value::Null, &Value::Null, &[]),
            None
        );
    }
}
