//! The answers mockls gives, computed from the text of its documents and
//! written in the negotiated position encoding.

use crate::assist;
use crate::hierarchy::{self, Item};
use crate::text::{self, Span, Symbol, Workspace};
use serde_json::{Value, json};
use windlass_actors::lsp::position::{PositionEncoding, line_at};

/// Finds callers or callees of a function by name.
type CallFinder = fn(&Workspace, &str) -> Vec<(Item, Vec<Span>)>;

/// Everything an answer needs: the documents and how to write positions.
pub struct Answers<'a> {
    pub workspace: &'a Workspace,
    pub encoding: PositionEncoding,
    /// Point definitions outside the workspace (`--outside-uri`).
    pub outside_uri: bool,
    /// Answer document symbols as one chain this deep (`--nested-symbols`).
    pub nested_symbols: u64,
}

/// An LSP range on one line, from code-point columns.
pub fn range_json(
    encoding: PositionEncoding,
    line_text: &str,
    line: usize,
    start: usize,
    end: usize,
) -> Value {
    json!({
        "start": {"line": line, "character": encoding.encode_column(line_text, start)},
        "end": {"line": line, "character": encoding.encode_column(line_text, end)},
    })
}

impl Answers<'_> {
    /// The result of `method`, or its JSON-RPC error. While indexing, the
    /// position queries answer empty, as real servers do.
    pub fn answer(&self, method: &str, params: &Value, indexing: bool) -> Result<Value, Value> {
        let answer = self.answer_from_text(method, params, indexing)?;
        Ok(match self.outside_uri {
            true => with_outside(method, answer),
            false => answer,
        })
    }

    fn answer_from_text(
        &self,
        method: &str,
        params: &Value,
        indexing: bool,
    ) -> Result<Value, Value> {
        let empty_while_indexing = |value: Value| if indexing { Value::Null } else { value };
        Ok(match method {
            "textDocument/hover" => empty_while_indexing(self.hover(params)),
            "textDocument/definition"
            | "textDocument/declaration"
            | "textDocument/typeDefinition" => empty_while_indexing(self.definition(params)),
            "textDocument/implementation" => {
                let word = self.word(params);
                self.locations(
                    word.map(|w| self.workspace.implementations(&w))
                        .unwrap_or_default(),
                )
            }
            "textDocument/references" => empty_while_indexing(self.references(params)),
            "textDocument/documentSymbol" => self.document_symbols(params),
            "workspace/symbol" => self.workspace_symbols(params),
            "textDocument/prepareCallHierarchy" | "textDocument/prepareTypeHierarchy" => {
                self.prepare(params)
            }
            "callHierarchy/incomingCalls" => self.calls(params, "from", hierarchy::incoming),
            "callHierarchy/outgoingCalls" => self.calls(params, "to", hierarchy::outgoing),
            "typeHierarchy/supertypes" => self.types(params, hierarchy::supertypes),
            "typeHierarchy/subtypes" => self.types(params, hierarchy::subtypes),
            "textDocument/codeAction" => self.code_actions(params),
            "textDocument/rename" => self.rename(params),
            "textDocument/completion" => self.completion(params),
            "textDocument/signatureHelp" => self.signature_help(params),
            _ => {
                return Err(
                    json!({"code": -32601, "message": format!("mockls: no method {method}")}),
                );
            }
        })
    }

    fn word(&self, params: &Value) -> Option<String> {
        let uri = params.pointer("/textDocument/uri")?.as_str()?;
        let line = usize::try_from(params.pointer("/position/line")?.as_u64()?).ok()?;
        let character = u32::try_from(params.pointer("/position/character")?.as_u64()?).ok()?;
        let text = self.workspace.text(uri)?;
        let line_text = line_at(&text, line)?;
        let column = self.encoding.decode_column(line_text, character);
        text::word_at(line_text, column).map(|(word, _, _)| word)
    }

    fn hover(&self, params: &Value) -> Value {
        match self.word(params) {
            Some(word) => {
                json!({"contents": {"kind": "markdown", "value": format!("```mockls\n{word}\n```")}})
            }
            None => Value::Null,
        }
    }

    fn definition(&self, params: &Value) -> Value {
        if self.outside_uri {
            return json!([{"uri": OUTSIDE, "range": outside_range()}]);
        }
        let current = params
            .pointer("/textDocument/uri")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let spans = self
            .word(params)
            .map(|word| self.workspace.definitions(&word, current))
            .unwrap_or_default();
        self.locations(spans)
    }

    fn references(&self, params: &Value) -> Value {
        let Some(word) = self.word(params) else {
            return json!([]);
        };
        let mut spans = self.workspace.references(&word);
        let include_declaration = params
            .pointer("/context/includeDeclaration")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        if !include_declaration {
            let definitions = self.workspace.definitions(&word, "");
            spans.retain(|span| !definitions.contains(span));
        }
        self.locations(spans)
    }

    fn document_symbols(&self, params: &Value) -> Value {
        let uri = params
            .pointer("/textDocument/uri")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let text = self.workspace.text(uri).unwrap_or_default();
        if self.nested_symbols > 0 {
            return nested_symbols(self.nested_symbols);
        }
        Value::Array(
            text::document_symbols(&text)
                .iter()
                .map(|symbol| self.symbol_json(&text, symbol))
                .collect(),
        )
    }

    fn symbol_json(&self, text: &str, symbol: &Symbol) -> Value {
        let line = line_at(text, symbol.line).unwrap_or("");
        let selection = self.range(line, symbol.line, symbol.start, symbol.end);
        let end_text = line_at(text, symbol.end_line).unwrap_or("");
        let end_character = self
            .encoding
            .encode_column(end_text, end_text.chars().count());
        json!({
            "name": symbol.name,
            "kind": symbol.kind,
            "range": {"start": {"line": symbol.line, "character": 0}, "end": {"line": symbol.end_line, "character": end_character}},
            "selectionRange": selection,
            "children": symbol.children.iter().map(|child| self.symbol_json(text, child)).collect::<Vec<_>>(),
        })
    }

    fn workspace_symbols(&self, params: &Value) -> Value {
        let query = params
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let symbols = self.workspace.workspace_symbols(query);
        Value::Array(
            symbols
                .into_iter()
                .map(|(name, kind, span)| json!({"name": name, "kind": kind, "location": self.location(&span)}))
                .collect(),
        )
    }

    fn locations(&self, spans: Vec<Span>) -> Value {
        Value::Array(spans.iter().map(|span| self.location(span)).collect())
    }

    fn location(&self, span: &Span) -> Value {
        let text = self.workspace.text(&span.uri).unwrap_or_default();
        let line = line_at(&text, span.line).unwrap_or("");
        json!({"uri": span.uri, "range": self.range(line, span.line, span.start, span.end)})
    }

    fn range(&self, line_text: &str, line: usize, start: usize, end: usize) -> Value {
        range_json(self.encoding, line_text, line, start, end)
    }

    fn item_json(&self, item: &Item) -> Value {
        let mut value = self.symbol_json(
            &self.workspace.text(&item.uri).unwrap_or_default(),
            &item.symbol,
        );
        value["uri"] = json!(item.uri);
        if let Some(object) = value.as_object_mut() {
            object.remove("children");
        }
        value
    }

    fn prepare(&self, params: &Value) -> Value {
        let item = self
            .word(params)
            .and_then(|word| hierarchy::item_named(self.workspace, &word));
        match item {
            Some(item) => json!([self.item_json(&item)]),
            None => Value::Null,
        }
    }

    fn item_name(params: &Value) -> &str {
        params
            .pointer("/item/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    fn calls(&self, params: &Value, side: &str, find: CallFinder) -> Value {
        let calls = find(self.workspace, Self::item_name(params));
        Value::Array(
            calls
                .iter()
                .map(|(item, spans)| {
                    let ranges: Vec<Value> = spans
                        .iter()
                        .map(|span| self.location(span)["range"].clone())
                        .collect();
                    json!({side: self.item_json(item), "fromRanges": ranges})
                })
                .collect(),
        )
    }

    fn types(&self, params: &Value, find: fn(&Workspace, &str) -> Vec<Item>) -> Value {
        Value::Array(
            find(self.workspace, Self::item_name(params))
                .iter()
                .map(|item| self.item_json(item))
                .collect(),
        )
    }

    /// One quick fix per `ERROR` in the range; the title says how many
    /// diagnostics the client sent as context, so tests can see them.
    fn code_actions(&self, params: &Value) -> Value {
        let uri = params
            .pointer("/textDocument/uri")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let text = self.workspace.text(uri).unwrap_or_default();
        let first = params
            .pointer("/range/start/line")
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize;
        let last = params
            .pointer("/range/end/line")
            .and_then(Value::as_u64)
            .unwrap_or(0) as usize;
        let context = params
            .pointer("/context/diagnostics")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let actions: Vec<Value> = assist::error_spans(uri, &text, first, last)
            .iter()
            .map(|span| {
                let edit = json!({"range": self.location(span)["range"], "newText": "FIXED"});
                json!({
                    "title": format!("Replace ERROR on line {} with FIXED ({context} diagnostics in context)", span.line + 1),
                    "kind": "quickfix",
                    "edit": {"changes": {uri: [edit]}},
                })
            })
            .collect();
        Value::Array(actions)
    }

    fn rename(&self, params: &Value) -> Value {
        let new_name = params
            .get("newName")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let Some(word) = self.word(params) else {
            return Value::Null;
        };
        let mut changes = serde_json::Map::new();
        for span in self.workspace.references(&word) {
            let edit = json!({"range": self.location(&span)["range"], "newText": new_name});
            if let Some(edits) = changes
                .entry(span.uri.clone())
                .or_insert_with(|| json!([]))
                .as_array_mut()
            {
                edits.push(edit);
            }
        }
        json!({"changes": changes})
    }

    /// The identifier text before the cursor, and the cursor's column.
    fn prefix(&self, params: &Value) -> Option<(String, String, usize)> {
        let uri = params.pointer("/textDocument/uri")?.as_str()?;
        let line = usize::try_from(params.pointer("/position/line")?.as_u64()?).ok()?;
        let character = u32::try_from(params.pointer("/position/character")?.as_u64()?).ok()?;
        let text = self.workspace.text(uri)?;
        let line_text = line_at(&text, line)?.to_owned();
        let column = self.encoding.decode_column(&line_text, character);
        let before: Vec<char> = line_text.chars().take(column).collect();
        let start = before
            .iter()
            .rposition(|c| !(c.is_alphanumeric() || *c == '_'))
            .map_or(0, |i| i + 1);
        Some((before[start..].iter().collect(), line_text, column))
    }

    fn completion(&self, params: &Value) -> Value {
        let Some((prefix, _, _)) = self.prefix(params) else {
            return json!([]);
        };
        let items: Vec<Value> = assist::completions(self.workspace, &prefix)
            .into_iter()
            .map(|(label, function)| json!({"label": label, "kind": if function { 3 } else { 6 }, "sortText": label}))
            .collect();
        json!({"isIncomplete": false, "items": items})
    }

    fn signature_help(&self, params: &Value) -> Value {
        let Some((_, line, column)) = self.prefix(params) else {
            return Value::Null;
        };
        let Some((name, active)) = assist::call_at(&line, column) else {
            return Value::Null;
        };
        let Some(parameters) = assist::parameters(self.workspace, &name) else {
            return Value::Null;
        };
        let label = format!("{name}({})", parameters.join(", "));
        let parameters: Vec<Value> = parameters.iter().map(|p| json!({"label": p})).collect();
        json!({"signatures": [{"label": label, "parameters": parameters}], "activeSignature": 0, "activeParameter": active})
    }
}

/// One symbol per level, each the only child of the one above, built from
/// the innermost out.
fn nested_symbols(depth: u64) -> Value {
    let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}});
    let mut symbol = Value::Null;
    for level in (0..depth).rev() {
        let children = match symbol {
            Value::Null => Vec::new(),
            inner => vec![inner],
        };
        symbol = json!({"name": format!("level{level}"), "kind": 5, "range": range, "selectionRange": range, "children": children});
    }
    Value::Array(vec![symbol])
}

/// Where `--outside-uri` points: a file outside every test's roots.
const OUTSIDE: &str = "file:///etc/passwd";

fn outside_range() -> Value {
    json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 4}})
}

/// `answer` with a location outside the roots added, in the shape of
/// each kind of answer: a location, a symbol, a call, a type, an edit.
fn with_outside(method: &str, answer: Value) -> Value {
    let range = outside_range();
    let item = json!({"name": "outside", "kind": 5, "uri": OUTSIDE, "range": range, "selectionRange": range});
    let added = match method {
        "textDocument/references" | "textDocument/implementation" => {
            json!({"uri": OUTSIDE, "range": range})
        }
        "workspace/symbol" => {
            json!({"name": "Shape", "kind": 5, "location": {"uri": OUTSIDE, "range": range}})
        }
        "textDocument/prepareCallHierarchy" | "textDocument/prepareTypeHierarchy" => return answer,
        "callHierarchy/incomingCalls" => json!({"from": item, "fromRanges": [range]}),
        "callHierarchy/outgoingCalls" => json!({"to": item, "fromRanges": [range]}),
        "typeHierarchy/supertypes" | "typeHierarchy/subtypes" => item,
        "textDocument/rename" => {
            let mut answer = answer;
            answer["changes"][OUTSIDE] = json!([{"range": range, "newText": "overwritten"}]);
            return answer;
        }
        "textDocument/codeAction" => {
            let mut answer = answer;
            if let Some(actions) = answer.as_array_mut() {
                for action in actions {
                    action["edit"]["changes"][OUTSIDE] =
                        json!([{"range": range, "newText": "overwritten"}]);
                }
            }
            return answer;
        }
        _ => return answer,
    };
    match answer {
        Value::Array(mut items) => {
            items.push(added);
            Value::Array(items)
        }
        Value::Null => Value::Array(vec![added]),
        other => other,
    }
}
