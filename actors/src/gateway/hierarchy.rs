//! `call_hierarchy` and `type_hierarchy`: prepare an item at the position,
//! then ask for its callers, callees, supertypes or subtypes.

use super::address::Position;
use super::context::Context;
use super::navigation::target_or_candidates;
use super::render::{self, Sources, Spot};
use super::symbols::{self, Symbol};
use super::target::Target;
use crate::error::{Error, Result};
use crate::lsp::message::METHOD_NOT_FOUND;
use crate::lsp::position::PositionEncoding;
use crate::lsp::protocol::Feature;
use crate::lsp::uri::uri_to_path;
use crate::messages::language_server::{Reply, ServerRequest, read_each};
use lsp_types::request::{
    CallHierarchyIncomingCalls, CallHierarchyOutgoingCalls, CallHierarchyPrepare, Request,
    TypeHierarchyPrepare, TypeHierarchySubtypes, TypeHierarchySupertypes,
};
use lsp_types::{
    CallHierarchyIncomingCall, CallHierarchyIncomingCallsParams, CallHierarchyItem,
    CallHierarchyOutgoingCall, CallHierarchyOutgoingCallsParams, Location, PartialResultParams,
    SymbolKind, TextDocumentPositionParams, WorkDoneProgressParams,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CallDirection {
    Incoming,
    Outgoing,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TypeDirection {
    Supertypes,
    Subtypes,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallHierarchyArgs {
    #[serde(flatten)]
    pub position: Position,
    pub direction: CallDirection,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeHierarchyArgs {
    #[serde(flatten)]
    pub position: Position,
    pub direction: TypeDirection,
}

/// An item of either hierarchy. Type hierarchy items are read as call
/// hierarchy items, which have the same fields: lsp-types 0.97's
/// `TypeHierarchyItem` takes one tag where the protocol has a list
/// (`"tags": [1]` for a deprecated type), and would refuse such an item.
type Item = CallHierarchyItem;

/// The two protocols differ only in names and in where each result keeps
/// its item; this says which to use.
struct Protocol {
    prepare: &'static str,
    feature: Feature,
    query: Query,
    /// The pre-standard type hierarchy (clangd before 16): one request
    /// with a direction, answered with the item and its `parents` or
    /// `children`. Used when the server does not know the prepare method.
    legacy: Option<Legacy>,
    label: &'static str,
}

/// What is asked about the prepared item.
#[derive(Debug, Clone, Copy)]
enum Query {
    Incoming,
    Outgoing,
    Supertypes,
    Subtypes,
}

/// Which relatives the pre-standard type hierarchy is asked for.
#[derive(Debug, Clone, Copy)]
enum Legacy {
    Parents,
    Children,
}

/// One caller, callee or type found, with where its calls are.
struct Found {
    item: Item,
    calls: Vec<Location>,
}

/// The params of a supertypes or subtypes query. lsp-types' own hold a
/// `TypeHierarchyItem`, which a tag list does not fit (see [`Item`]).
#[derive(Serialize)]
struct TypeQuery<'a> {
    item: &'a Item,
}

/// clangd's pre-standard `textDocument/typeHierarchy` params, which
/// lsp-types does not have.
#[derive(Serialize)]
struct LegacyParams {
    #[serde(flatten)]
    at: TextDocumentPositionParams,
    /// How many levels to resolve.
    resolve: u8,
    /// 1 for parents, 0 for children.
    direction: u8,
}

/// clangd's pre-standard type hierarchy answer: the item at the position
/// with the relatives asked for, read one by one.
#[derive(Deserialize)]
struct LegacyAnswer {
    #[serde(flatten)]
    item: Item,
    #[serde(default)]
    parents: Vec<Value>,
    #[serde(default)]
    children: Vec<Value>,
}

impl Query {
    fn method(self) -> &'static str {
        match self {
            Self::Incoming => CallHierarchyIncomingCalls::METHOD,
            Self::Outgoing => CallHierarchyOutgoingCalls::METHOD,
            Self::Supertypes => TypeHierarchySupertypes::METHOD,
            Self::Subtypes => TypeHierarchySubtypes::METHOD,
        }
    }

    /// The query about `item`.
    fn request(self, item: &Item, feature: Feature) -> Result<ServerRequest> {
        let work_done_progress_params = WorkDoneProgressParams::default();
        let partial_result_params = PartialResultParams::default();
        match self {
            Self::Incoming => {
                let params = CallHierarchyIncomingCallsParams {
                    item: item.clone(),
                    work_done_progress_params,
                    partial_result_params,
                };
                ServerRequest::new(self.method(), &params, feature)
            }
            Self::Outgoing => {
                let params = CallHierarchyOutgoingCallsParams {
                    item: item.clone(),
                    work_done_progress_params,
                    partial_result_params,
                };
                ServerRequest::new(self.method(), &params, feature)
            }
            Self::Supertypes | Self::Subtypes => {
                ServerRequest::new(self.method(), &TypeQuery { item }, feature)
            }
        }
    }

    /// The answer about `item`: callers with the calls in their own
    /// files, callees with the calls in `item`'s file, or types.
    fn read(self, reply: &mut Reply, item: &Item) -> Result<Vec<Found>> {
        let feature = match self {
            Self::Incoming | Self::Outgoing => Feature::CallHierarchy,
            Self::Supertypes | Self::Subtypes => Feature::TypeHierarchy,
        };
        let calls_in = |uri: &lsp_types::Uri, ranges: Vec<lsp_types::Range>| {
            let located = |range| Location::new(uri.clone(), range);
            ranges.into_iter().map(located).collect()
        };
        Ok(match self {
            Self::Incoming => reply
                .read_list::<CallHierarchyIncomingCall>(feature)?
                .into_iter()
                .map(|call| Found {
                    calls: calls_in(&call.from.uri, call.from_ranges),
                    item: call.from,
                })
                .collect(),
            Self::Outgoing => reply
                .read_list::<CallHierarchyOutgoingCall>(feature)?
                .into_iter()
                .map(|call| Found {
                    calls: calls_in(&item.uri, call.from_ranges),
                    item: call.to,
                })
                .collect(),
            Self::Supertypes | Self::Subtypes => reply
                .read_list::<Item>(feature)?
                .into_iter()
                .map(|item| Found {
                    item,
                    calls: Vec::new(),
                })
                .collect(),
        })
    }
}

pub async fn call_hierarchy(context: &Context, args: &CallHierarchyArgs) -> Result<String> {
    let (query, label) = match args.direction {
        CallDirection::Incoming => (Query::Incoming, "callers"),
        CallDirection::Outgoing => (Query::Outgoing, "callees"),
    };
    let protocol = Protocol {
        prepare: CallHierarchyPrepare::METHOD,
        feature: Feature::CallHierarchy,
        query,
        legacy: None,
        label,
    };
    hierarchy(context, &args.position, &protocol).await
}

pub async fn type_hierarchy(context: &Context, args: &TypeHierarchyArgs) -> Result<String> {
    let (query, label, legacy) = match args.direction {
        TypeDirection::Supertypes => (Query::Supertypes, "supertypes", Legacy::Parents),
        TypeDirection::Subtypes => (Query::Subtypes, "subtypes", Legacy::Children),
    };
    let protocol = Protocol {
        prepare: TypeHierarchyPrepare::METHOD,
        feature: Feature::TypeHierarchy,
        query,
        legacy: Some(legacy),
        label,
    };
    hierarchy(context, &args.position, &protocol).await
}

async fn hierarchy(context: &Context, position: &Position, protocol: &Protocol) -> Result<String> {
    let target = match target_or_candidates(context, position).await? {
        Ok(target) => target,
        Err(candidates) => return Ok(candidates),
    };
    // Both prepare requests take the position alone.
    let prepare = target.request(
        protocol.prepare,
        &target.position_params()?,
        protocol.feature,
    )?;
    let prepared = match (
        context.request(&target.server, prepare).await,
        protocol.legacy,
    ) {
        (
            Err(Error::ServerError {
                code: METHOD_NOT_FOUND,
                ..
            }),
            Some(legacy),
        ) => {
            return legacy_type_hierarchy(context, &target, protocol, legacy).await;
        }
        (prepared, _) => prepared?,
    };
    let mut prepared = prepared;
    let items: Vec<Item> = prepared.read_list(protocol.feature)?;
    let Some(item) = items.into_iter().next() else {
        return Ok(format!(
            "no {} item at {}",
            protocol.feature.name(),
            target.describe()
        ));
    };
    let query = protocol.query.request(&item, protocol.feature)?;
    let mut reply = context.request(&target.server, query).await?;
    let mut found = protocol.query.read(&mut reply, &item)?;
    methods_by_outline(context, &target, &mut found).await;
    reply.warnings.splice(0..0, prepared.warnings);
    reply.file_problem = prepared.file_problem;
    Ok(render_results(
        context, &target, protocol, &item, found, &reply,
    ))
}

/// Calls its functions what their files' outlines call them: pyright's
/// call hierarchy names every method a function, where its outline
/// knows a method (`Session.get`) from a function.
async fn methods_by_outline(context: &Context, target: &Target, found: &mut [Found]) {
    let mut outlines: HashMap<String, Option<Vec<Symbol>>> = HashMap::new();
    for found in found.iter_mut() {
        let item = &mut found.item;
        if item.kind != SymbolKind::FUNCTION {
            continue;
        }
        let uri = item.uri.as_str().to_owned();
        if !outlines.contains_key(&uri) {
            let outline = outline_of(context, target, &uri).await;
            outlines.insert(uri.clone(), outline);
        }
        let Some(Some(outline)) = outlines.get(&uri) else {
            continue;
        };
        if let Some(kind) = kind_at(outline, item.selection_range.start) {
            item.kind = kind;
        }
    }
}

/// The outline of the file at `uri`, as the target's server gives it.
async fn outline_of(context: &Context, target: &Target, uri: &str) -> Option<Vec<Symbol>> {
    let path = uri_to_path(uri)?;
    let document = context.snapshot(&path, &target.roots.display(&path)).ok()?;
    let text = document.text.clone();
    let mut reply = context
        .document_symbols(&target.server, document)
        .await
        .ok()?;
    symbols::document_symbols(&mut reply, &text).ok()
}

/// The kind of the innermost symbol whose name starts at `at`.
fn kind_at(outline: &[Symbol], at: lsp_types::Position) -> Option<SymbolKind> {
    outline.iter().find_map(|symbol| {
        kind_at(&symbol.children, at)
            .or_else(|| (symbol.selection_range.start == at).then_some(symbol.kind))
    })
}

async fn legacy_type_hierarchy(
    context: &Context,
    target: &Target,
    protocol: &Protocol,
    legacy: Legacy,
) -> Result<String> {
    let params = LegacyParams {
        at: target.position_params()?,
        resolve: 1,
        direction: match legacy {
            Legacy::Parents => 1,
            Legacy::Children => 0,
        },
    };
    let request = target.request("textDocument/typeHierarchy", &params, protocol.feature)?;
    let mut reply = context.request(&target.server, request).await?;
    let Some(answer) = reply.read::<Option<LegacyAnswer>>(protocol.feature)? else {
        return Ok(format!(
            "no {} item at {}",
            protocol.feature.name(),
            target.describe()
        ));
    };
    let relatives = match legacy {
        Legacy::Parents => answer.parents,
        Legacy::Children => answer.children,
    };
    let (items, unreadable) = read_each::<Item>(&relatives);
    reply.note_unreadable(protocol.feature, unreadable);
    let found = items
        .into_iter()
        .map(|item| Found {
            item,
            calls: Vec::new(),
        })
        .collect();
    Ok(render_results(
        context,
        target,
        protocol,
        &answer.item,
        found,
        &reply,
    ))
}

fn render_results(
    context: &Context,
    target: &Target,
    protocol: &Protocol,
    item: &Item,
    found: Vec<Found>,
    reply: &Reply,
) -> String {
    let name = &item.name;
    let mut lines = render::notes(&target.roots, reply);
    if found.is_empty() {
        lines.push(format!("no {} of {name}", protocol.label));
        return render::bounded(&lines, context.settings.max_output_bytes);
    }
    let mut sources = Sources::new(&target.roots);
    let entries: Vec<Entry> = found
        .iter()
        .filter_map(|found| entry(&mut sources, found, reply.encoding))
        .collect();
    lines.push(format!("{} of {name} ({})", protocol.label, entries.len()));
    lines.extend(grouped(entries));
    lines.extend(sources.outside_note());
    render::bounded(&lines, context.settings.max_output_bytes)
}

/// One caller, callee or type: its spot, kind and name, and where the
/// calls are.
struct Entry {
    spot: Spot,
    text: String,
}

fn entry(sources: &mut Sources, found: &Found, encoding: PositionEncoding) -> Option<Entry> {
    let item = &found.item;
    let spot = sources.spot(item.uri.as_str(), item.selection_range, encoding)?;
    let kind = render::symbol_kind(item.kind);
    let mut text = format!("{kind} {} {}:{}", item.name, spot.line, spot.column);
    let mut calls: Vec<String> = Vec::new();
    for call in &found.calls {
        let Some(path) = uri_to_path(call.uri.as_str()) else {
            continue;
        };
        let (line, column) = sources.point(&path, call.range.start, encoding);
        let at = format!("{}:{}", line + 1, column + 1);
        // pyright names some call sites twice; each is shown once.
        if !calls.contains(&at) {
            calls.push(at);
        }
    }
    if !calls.is_empty() {
        text.push_str(&format!(" — calls at {}", calls.join(", ")));
    }
    Some(Entry { spot, text })
}

fn grouped(entries: Vec<Entry>) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current: Option<String> = None;
    let mut entries = entries;
    entries.sort_by(|a, b| (&a.spot.path, a.spot.line).cmp(&(&b.spot.path, b.spot.line)));
    for entry in entries {
        if current.as_deref() != Some(entry.spot.path.as_str()) {
            lines.push(entry.spot.path.clone());
            current = Some(entry.spot.path.clone());
        }
        lines.push(format!("  {}", entry.text));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, SymbolTag, TextDocumentIdentifier, TypeHierarchyItem};
    use serde_json::json;

    fn item(name: &str) -> Value {
        let range =
            json!({"start": {"line": 0, "character": 7}, "end": {"line": 0, "character": 10}});
        json!({"name": name, "kind": 5, "uri": "file:///w/a.cpp", "range": range, "selectionRange": range})
    }

    #[test]
    fn type_hierarchy_items_with_a_tag_list_are_read_and_sent_back_as_they_came() {
        let mut deprecated = item("Old");
        deprecated["tags"] = json!([1]);
        deprecated["data"] = json!({"id": 7});
        assert!(
            TypeHierarchyItem::deserialize(&deprecated).is_err(),
            "lsp-types' TypeHierarchyItem still takes one tag, not a list"
        );
        let read = Item::deserialize(&deprecated).unwrap();
        assert_eq!(read.tags, Some(vec![SymbolTag::DEPRECATED]));
        assert_eq!(
            serde_json::to_value(TypeQuery { item: &read }).unwrap(),
            json!({"item": deprecated})
        );
    }

    #[test]
    fn the_legacy_type_hierarchy_is_asked_and_read_as_clangd_speaks_it() {
        let params = LegacyParams {
            at: TextDocumentPositionParams {
                text_document: TextDocumentIdentifier {
                    uri: "file:///w/a.cpp".parse().unwrap(),
                },
                position: Position::new(1, 7),
            },
            resolve: 1,
            direction: 0,
        };
        assert_eq!(
            serde_json::to_value(params).unwrap(),
            json!({"textDocument": {"uri": "file:///w/a.cpp"}, "position": {"line": 1, "character": 7}, "resolve": 1, "direction": 0})
        );
        let mut answer = item("Mid");
        answer["deprecated"] = json!(false);
        answer["children"] = json!([item("Leaf"), {"name": "no range"}]);
        let read = LegacyAnswer::deserialize(&answer).unwrap();
        assert_eq!(read.item.name, "Mid");
        assert!(read.parents.is_empty());
        let (children, unreadable) = read_each::<Item>(&read.children);
        assert_eq!((children.len(), unreadable), (1, 1));
        assert_eq!(children[0].name, "Leaf");
    }
}
