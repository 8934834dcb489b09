//! Workspace symbols asked of tsserver itself, through
//! typescript-language-server's `typescript.tsserverRequest` command, as
//! `navto` without a file.
//!
//! typescript-language-server's own `workspace/symbol` names a file in
//! its `navto`: the document it opened or used last. tsserver then
//! searches only that file's projects, and typescript-language-server
//! cancels every request in flight for a file when the file closes,
//! answering an empty list for a cancelled one. With 16 agents, a search
//! sent among another agent's `codebase_map` outlines (documents opened
//! and closed in passing) named one of those documents, its close
//! cancelled the search, and four agents were told no symbol matched.
//! Without a file, tsserver searches every project it has loaded, and
//! no close can cancel it.

use crate::error::Result;
use crate::lsp::protocol::{Feature, TSSERVER_REQUEST};
use crate::lsp::tsserver::{range, symbol_kind};
use crate::lsp::uri::path_to_uri;
use crate::messages::language_server::ServerRequest;
use serde_json::{Value, json};
use std::path::Path;

/// The `navto` of every loaded project for names like `query`.
pub fn navto_request(query: &str) -> Result<ServerRequest> {
    let params = json!({
        "command": TSSERVER_REQUEST,
        "arguments": ["navto", {"searchValue": query}],
    });
    ServerRequest::new(
        "workspace/executeCommand",
        &params,
        Feature::WorkspaceSymbols,
    )
}

/// tsserver's answer as LSP `SymbolInformation`s, or `None` when it is
/// not a successful `navto` response.
pub fn symbol_informations(response: &Value) -> Option<Value> {
    if response.get("success").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let items = response.get("body")?.as_array()?;
    Some(Value::Array(items.iter().filter_map(symbol_of).collect()))
}

fn symbol_of(item: &Value) -> Option<Value> {
    let name = item.get("name")?.as_str()?;
    let file = item.get("file")?.as_str()?;
    let kind = symbol_kind(item.get("kind").and_then(Value::as_str).unwrap_or(""));
    let mut symbol = json!({
        "name": name,
        "kind": kind,
        "location": {
            "uri": path_to_uri(Path::new(file)),
            "range": range(item)?,
        },
    });
    if let Some(container) = item
        .get("containerName")
        .and_then(Value::as_str)
        .filter(|container| !container.is_empty())
    {
        symbol["containerName"] = json!(container);
    }
    Some(symbol)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn navto_items_read_as_symbols_counted_from_zero() {
        let response = json!({"success": true, "body": [
            {"name": "dual", "kind": "const", "file": "/w/src/Function.ts",
             "start": {"line": 95, "offset": 14}, "end": {"line": 95, "offset": 18},
             "containerName": "\"Function\""},
            {"name": "Dual", "kind": "type", "file": "/w/src/a.ts",
             "start": {"line": 1, "offset": 1}, "end": {"line": 1, "offset": 5}},
            {"name": "broken", "kind": "const", "file": "/w/src/b.ts"},
        ]});
        let symbols = symbol_informations(&response).unwrap();
        assert_eq!(
            symbols,
            json!([
                {"name": "dual", "kind": 14, "containerName": "\"Function\"",
                 "location": {"uri": "file:///w/src/Function.ts", "range": {
                     "start": {"line": 94, "character": 13}, "end": {"line": 94, "character": 17}}}},
                {"name": "Dual", "kind": 13,
                 "location": {"uri": "file:///w/src/a.ts", "range": {
                     "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 4}}}},
            ])
        );
    }

    #[test]
    fn a_failed_navto_is_no_answer() {
        assert_eq!(
            symbol_informations(&json!({"success": false, "message": "No Project."})),
            None
        );
        assert_eq!(symbol_informations(&Value::Null), None);
    }
}
