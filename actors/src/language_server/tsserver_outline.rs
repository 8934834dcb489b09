//! Outlines of files no agent has open, asked of tsserver's `navtree`
//! through typescript-language-server's `typescript.tsserverRequest`
//! command instead of opening the file.
//!
//! typescript-language-server outlines only a document it has open, and
//! every open and close has it check all its open documents again. A
//! `codebase_map` or an index pass outlines files by the hundred, so
//! with 16 agents mapping a cold tree the one tsserver spent its time
//! re-checking, and every other agent's question waited behind it
//! (`codebase_map` p90 34–49 s on the million-line tree). tsserver
//! outlines any file of a project it has loaded without its being open.
//!
//! The outline is the file's text as tsserver holds it: changes on disk
//! reach tsserver through its client down the same pipe as this request
//! (`useClientFileWatcher`), and the gateway has the Watcher hand on
//! every change it has seen before asking. A file in no loaded project
//! (tsserver says "No Project"), or a server without the command, is
//! outlined the usual way, with the document opened in passing.

use super::State;
use super::pull::METHOD_NOT_FOUND;
use crate::error::{Error, Result};
use crate::lsp::position::PositionEncoding;
use crate::lsp::protocol::TSSERVER_REQUEST;
use crate::lsp::tsserver::{self, position};
use crate::messages::language_server::{Call, LanguageServerMsg, Reply, ServerRequest};
use lsp_types::request::{DocumentSymbolRequest, Request};
use ractor::ActorRef;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// The languages tsserver outlines itself (a Vue component's outline is
/// its Vue server's).
const LANGUAGES: [&str; 4] = [
    "typescript",
    "typescriptreact",
    "javascript",
    "javascriptreact",
];

impl State {
    /// Whether `request` is an outline, asked in passing, of a file this
    /// server does not have open, that tsserver can answer.
    pub(super) fn outlines_without_opening(&self, request: &ServerRequest) -> bool {
        let Some(document) = &request.document else {
            return false;
        };
        self.spec.tsserver_commands
            && !self.navtree_refused
            && request.background
            && request.method == DocumentSymbolRequest::METHOD
            && LANGUAGES.contains(&document.language_id.as_str())
            && !self.documents.is_open(&document.uri)
    }

    /// Asks tsserver's `navtree` of the file, and answers the caller with
    /// it as typescript-language-server's outline; when tsserver cannot
    /// answer, the outline is asked again with the document opened.
    pub(super) fn ask_tsserver_outline(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        call: Call,
    ) {
        let Some(document) = &call.request.document else {
            return self.request_opening(myself, call);
        };
        let file = document.path.to_string_lossy().into_owned();
        let file_problem = self.coverage.problem(&document.uri);
        let (answered, answer) = oneshot::channel::<Result<Reply>>();
        let navtree = ServerRequest {
            method: "workspace/executeCommand",
            params: json!({"command": TSSERVER_REQUEST, "arguments": ["navtree", {"file": file}]}),
            document: None,
            position: None,
            capability: None,
            background: true,
        };
        self.request(
            myself,
            Call {
                session: call.session,
                request: navtree,
                reply: answered.into(),
            },
        );
        let inbox = myself.clone();
        tokio::spawn(async move {
            let answered = answer.await.unwrap_or(Err(Error::ShuttingDown));
            let refused = match answered {
                Ok(mut reply) => match outline(&reply.result) {
                    Some(symbols) => {
                        reply.result = Value::Array(symbols);
                        reply.encoding = PositionEncoding::Utf16;
                        reply.file_problem = file_problem;
                        reply.problems = Vec::new();
                        return drop(call.reply.send(Ok(reply)));
                    }
                    None => reply.result.get("success").is_none(),
                },
                Err(Error::ServerError { code, .. }) => code == METHOD_NOT_FOUND,
                Err(error) => return drop(call.reply.send(Err(error))),
            };
            let _stopped =
                inbox.send_message(LanguageServerMsg::OutlineByOpening { call, refused });
        });
    }

    /// tsserver could not outline a file unopened: the outline is asked
    /// with the document opened, and never again unopened if the server
    /// cannot run the command at all.
    pub(super) fn outline_by_opening(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        call: Call,
        refused: bool,
    ) {
        if refused && !self.navtree_refused {
            tracing::info!(server = %self.spec.name, "the server cannot outline a file through tsserver: files are opened to be outlined");
        }
        self.navtree_refused |= refused;
        self.request_opening(myself, call);
    }
}

/// tsserver's navigation tree of a file as typescript-language-server's
/// outline of it (`DocumentSymbol`s), or `None` when `response` is not a
/// successful `navtree` response.
fn outline(response: &Value) -> Option<Vec<Value>> {
    if response.get("success").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let file = response.get("body")?;
    file.get("spans")?.as_array()?;
    let mut symbols = Vec::new();
    for item in children(file) {
        let spans = spans(item);
        if let (Some(first), Some(last)) = (spans.first(), spans.last()) {
            collect(item, Span::new(first.start, last.end), &mut symbols);
        }
    }
    Some(symbols)
}

/// Adds `item`, once for each of its spans within `within`, to `symbols`,
/// with the children under each span. An item without a name of its own
/// (`<function>`, an alias) is left out unless one of its children is
/// kept. Returns whether it was kept.
fn collect(item: &Value, within: Span, symbols: &mut Vec<Value>) -> bool {
    let mut kept = has_own_name(item);
    for span in spans(item) {
        if !span.overlaps(within) {
            continue;
        }
        let mut inside = Vec::new();
        for child in children(item) {
            if spans(child)
                .iter()
                .any(|child_span| child_span.overlaps(span))
            {
                kept |= collect(child, span, &mut inside);
            }
        }
        if !kept {
            continue;
        }
        let selection = item
            .get("nameSpan")
            .and_then(Span::read)
            .filter(|name| name.overlaps(span))
            .unwrap_or(span);
        let kind = item.get("kind").and_then(Value::as_str).unwrap_or_default();
        symbols.push(json!({
            "name": item.get("text").and_then(Value::as_str).unwrap_or_default(),
            "detail": "",
            "kind": tsserver::symbol_kind(kind),
            "range": span.range(),
            "selectionRange": selection.range(),
            "children": inside,
        }));
    }
    kept
}

fn has_own_name(item: &Value) -> bool {
    if item.get("kind").and_then(Value::as_str) == Some("alias") {
        return false;
    }
    let text = item.get("text").and_then(Value::as_str).unwrap_or_default();
    !matches!(text, "" | "<function>" | "<class>")
}

fn children(item: &Value) -> &[Value] {
    item.get("childItems")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn spans(item: &Value) -> Vec<Span> {
    item.get("spans")
        .and_then(Value::as_array)
        .map(|spans| spans.iter().filter_map(Span::read).collect())
        .unwrap_or_default()
}

/// A position as LSP counts it: (line, character), comparable in order.
type Point = (u64, u64);

/// A tsserver span read as LSP positions.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    start: Point,
    end: Point,
}

impl Span {
    fn new(start: Point, end: Point) -> Self {
        Self { start, end }
    }

    fn read(span: &Value) -> Option<Self> {
        let point = |location: &Value| -> Option<Point> {
            let lsp = position(location)?;
            Some((lsp["line"].as_u64()?, lsp["character"].as_u64()?))
        };
        Some(Self::new(
            point(span.get("start")?)?,
            point(span.get("end")?)?,
        ))
    }

    /// Whether the two share a position; touching ends count.
    fn overlaps(self, other: Span) -> bool {
        self.start.max(other.start) <= self.end.min(other.end)
    }

    fn range(self) -> Value {
        let at = |(line, character): Point| json!({"line": line, "character": character});
        json!({"start": at(self.start), "end": at(self.end)})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: (u64, u64), end: (u64, u64)) -> Value {
        json!({"start": {"line": start.0, "offset": start.1}, "end": {"line": end.0, "offset": end.1}})
    }

    fn range(start: (u64, u64), end: (u64, u64)) -> Value {
        json!({"start": {"line": start.0, "character": start.1}, "end": {"line": end.0, "character": end.1}})
    }

    #[test]
    fn a_navigation_tree_reads_as_nested_symbols_counted_from_zero() {
        let response = json!({"success": true, "body": {
            "text": "\"Option\"", "kind": "module", "spans": [span((1, 1), (9, 2))],
            "childItems": [
                {"text": "some", "kind": "const", "spans": [span((2, 14), (2, 40))],
                 "nameSpan": span((2, 14), (2, 18))},
                {"text": "Box", "kind": "class", "spans": [span((4, 1), (8, 2))],
                 "nameSpan": span((4, 14), (4, 17)),
                 "childItems": [
                     {"text": "open", "kind": "method", "spans": [span((5, 3), (7, 4))],
                      "nameSpan": span((5, 3), (5, 7))},
                 ]},
                {"text": "Other", "kind": "alias", "spans": [span((9, 1), (9, 2))]},
            ],
        }});
        assert_eq!(
            outline(&response),
            Some(vec![
                json!({"name": "some", "detail": "", "kind": 14,
                       "range": range((1, 13), (1, 39)), "selectionRange": range((1, 13), (1, 17)),
                       "children": []}),
                json!({"name": "Box", "detail": "", "kind": 5,
                "range": range((3, 0), (7, 1)), "selectionRange": range((3, 13), (3, 16)),
                "children": [
                    {"name": "open", "detail": "", "kind": 6,
                     "range": range((4, 2), (6, 3)), "selectionRange": range((4, 2), (4, 6)),
                     "children": []},
                ]}),
            ])
        );
    }

    #[test]
    fn an_unnamed_item_is_kept_only_for_the_names_inside_it() {
        let response = json!({"success": true, "body": {
            "text": "<global>", "kind": "script", "spans": [span((1, 1), (6, 1))],
            "childItems": [
                {"text": "<function>", "kind": "function", "spans": [span((1, 1), (3, 2))]},
                {"text": "<function>", "kind": "function", "spans": [span((4, 1), (6, 1))],
                 "childItems": [
                     {"text": "inner", "kind": "local function", "spans": [span((5, 3), (5, 20))]},
                 ]},
            ],
        }});
        let symbols = outline(&response).unwrap();
        assert_eq!(symbols.len(), 1, "{symbols:?}");
        assert_eq!(symbols[0]["name"], "<function>");
        assert_eq!(symbols[0]["children"][0]["name"], "inner");
        assert_eq!(
            symbols[0]["children"][0]["selectionRange"],
            range((4, 2), (4, 19))
        );
    }

    #[test]
    fn anything_but_a_navigation_tree_is_no_outline() {
        assert_eq!(
            outline(&json!({"success": false, "message": "No Project."})),
            None
        );
        assert_eq!(
            outline(&json!({"success": true, "body": {"displayString": "x"}})),
            None
        );
        assert_eq!(outline(&Value::Null), None);
        assert_eq!(
            outline(
                &json!({"success": true, "body": {"text": "<global>", "kind": "script", "spans": []}})
            ),
            Some(Vec::new())
        );
    }
}
