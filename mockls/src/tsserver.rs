//! The two halves of Vue's TypeScript relay: a server that asks its
//! client every hover as a `tsserver/request` notification and waits for
//! the `tsserver/response` (`--asks-tsserver`, as @vue/language-server
//! does), and one that answers typescript-language-server's
//! `typescript.tsserverRequest` command (`--answers-tsserver`): its
//! diagnostics checks, `navtree`, and a body that names any other command
//! it was asked.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::oneshot;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::{
    Diagnostic, DiagnosticSeverity, DocumentSymbol, Hover, HoverContents, MarkupContent,
    MarkupKind, Position, Range, SymbolKind, TextDocumentPositionParams,
};

/// The command whose answers this module plays.
pub const COMMAND: &str = "typescript.tsserverRequest";

/// The notification that asks the client.
enum TsserverRequest {}

impl Notification for TsserverRequest {
    type Params = Value;
    const METHOD: &'static str = "tsserver/request";
}

/// The questions asked and not answered yet, by id.
#[derive(Default)]
pub struct Relay {
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Value>>>,
}

impl Relay {
    /// Asks the client TypeScript's quick info at `position`, and shows
    /// its `displayString`; none when the answer's body is `null`.
    pub async fn hover(
        &self,
        client: &Client,
        position: &TextDocumentPositionParams,
    ) -> Option<Hover> {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (sender, answer) = oneshot::channel();
        self.waiting.lock().ok()?.insert(id, sender);
        let file = crate::text::path_of(position.text_document.uri.as_str())?;
        let arguments = json!({
            "file": file,
            "line": position.position.line + 1,
            "offset": position.position.character + 1,
        });
        client
            .send_notification::<TsserverRequest>(json!([[id, "_vue:quickinfo", arguments]]))
            .await;
        let body = answer.await.ok()?;
        let shown = body.get("displayString")?.as_str()?;
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: MarkupKind::PlainText,
                value: shown.to_owned(),
            }),
            range: None,
        })
    }

    /// A `tsserver/response`: `[[id, body]]`.
    pub fn answered(&self, params: &Value) {
        let Some([id, body]) = params.get(0).and_then(Value::as_array).map(Vec::as_slice) else {
            return;
        };
        let sender = id
            .as_u64()
            .and_then(|id| self.waiting.lock().ok()?.remove(&id));
        if let Some(sender) = sender {
            let _ = sender.send(body.clone());
        }
    }
}

/// typescript-language-server's answer to `typescript.tsserverRequest`
/// with `arguments` `[command, args, options]`: tsserver's whole response.
/// Its semantic check gives `checked`'s diagnostics of the file (those
/// of an open document), its other checks none; `navtree` gives
/// `outlined`'s outline of the file as tsserver's navigation tree. Either
/// fails with "No Project." where its closure has no answer.
pub fn answer(
    arguments: &[Value],
    checked: impl Fn(&str) -> Option<Vec<Diagnostic>>,
    outlined: impl Fn(&str) -> Option<Vec<DocumentSymbol>>,
) -> Value {
    let command = arguments
        .first()
        .and_then(Value::as_str)
        .unwrap_or_default();
    let file = arguments
        .get(1)
        .and_then(|args| args.get("file"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let body = match command {
        "semanticDiagnosticsSync" => match checked(file) {
            Some(diagnostics) => diagnostics.iter().map(as_tsserver).collect(),
            None => {
                return json!({"type": "response", "command": command, "success": false, "message": "No Project."});
            }
        },
        "navtree" => match outlined(file) {
            Some(symbols) => navigation_tree(&symbols),
            None => {
                return json!({"type": "response", "command": command, "success": false, "message": "No Project."});
            }
        },
        "syntacticDiagnosticsSync" | "suggestionDiagnosticsSync" => json!([]),
        _ => json!({"displayString": format!("tsserver answered {command}")}),
    };
    json!({
        "type": "response",
        "command": command,
        "success": true,
        "body": body,
    })
}

/// An outline as tsserver's navigation tree of the file: a script item
/// whose children are the outline's symbols.
fn navigation_tree(symbols: &[DocumentSymbol]) -> Value {
    let end = symbols
        .iter()
        .map(|symbol| symbol.range.end)
        .max_by_key(|end| (end.line, end.character))
        .unwrap_or(Position::new(0, 0));
    json!({
        "text": "<global>",
        "kind": "script",
        "spans": [span(Range::new(Position::new(0, 0), end))],
        "childItems": symbols.iter().map(navigation_item).collect::<Vec<_>>(),
    })
}

fn navigation_item(symbol: &DocumentSymbol) -> Value {
    let kind = match symbol.kind {
        SymbolKind::CLASS | SymbolKind::STRUCT => "class",
        SymbolKind::METHOD => "method",
        SymbolKind::INTERFACE => "interface",
        SymbolKind::FUNCTION => "function",
        SymbolKind::CONSTANT => "const",
        SymbolKind::VARIABLE => "let",
        _ => "var",
    };
    let children: Vec<Value> = symbol
        .children
        .iter()
        .flatten()
        .map(navigation_item)
        .collect();
    json!({
        "text": symbol.name,
        "kind": kind,
        "spans": [span(symbol.range)],
        "nameSpan": span(symbol.selection_range),
        "childItems": children,
    })
}

/// A position as tsserver writes one: line and offset from 1.
fn location(position: Position) -> Value {
    json!({"line": position.line + 1, "offset": position.character + 1})
}

fn span(range: Range) -> Value {
    json!({"start": location(range.start), "end": location(range.end)})
}

/// A diagnostic as tsserver writes one: lines and offsets from 1.
fn as_tsserver(diagnostic: &Diagnostic) -> Value {
    let category = match diagnostic.severity {
        Some(DiagnosticSeverity::ERROR) => "error",
        Some(DiagnosticSeverity::WARNING) => "warning",
        _ => "suggestion",
    };
    json!({
        "start": location(diagnostic.range.start),
        "end": location(diagnostic.range.end),
        "text": diagnostic.message,
        "code": diagnostic.code,
        "category": category,
    })
}
