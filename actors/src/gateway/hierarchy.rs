//! `call_hierarchy` and `type_hierarchy`: prepare an item at the position,
//! then ask for its callers, callees, supertypes or subtypes.

use super::address::Position;
use super::address::Target;
use super::context::Context;
use super::navigation::target_or_candidates;
use super::render::{self, Sources, Spot};
use crate::error::{Error, Result};
use crate::lsp::message::METHOD_NOT_FOUND;
use crate::lsp::position::PositionEncoding;
use crate::lsp::protocol::Feature;
use crate::messages::language_server::{Reply, ServerRequest};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

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
    /// incoming = callers, outgoing = callees.
    pub direction: CallDirection,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeHierarchyArgs {
    #[serde(flatten)]
    pub position: Position,
    pub direction: TypeDirection,
}

/// The two protocols differ only in names; this says which to use.
struct Protocol {
    prepare: &'static str,
    feature: Feature,
    query: &'static str,
    /// Where each result keeps its item (`from`/`to`), if not the result itself.
    item_key: Option<&'static str>,
    /// Whether `fromRanges` lie in each result's item (incoming calls) or
    /// in the prepared item (outgoing calls).
    ranges_in_result: bool,
    /// The pre-standard type hierarchy (clangd before 16): one request with
    /// a direction number, answered with the item and its `parents` or
    /// `children`. Used when the server does not know the prepare method.
    legacy: Option<(u8, &'static str)>,
    label: &'static str,
}

pub async fn call_hierarchy(context: &Context, args: &CallHierarchyArgs) -> Result<String> {
    let (query, item_key, label) = match args.direction {
        CallDirection::Incoming => ("callHierarchy/incomingCalls", "from", "callers"),
        CallDirection::Outgoing => ("callHierarchy/outgoingCalls", "to", "callees"),
    };
    let protocol = Protocol {
        prepare: "textDocument/prepareCallHierarchy",
        feature: Feature::CallHierarchy,
        query,
        item_key: Some(item_key),
        ranges_in_result: matches!(args.direction, CallDirection::Incoming),
        legacy: None,
        label,
    };
    hierarchy(context, &args.position, &protocol).await
}

pub async fn type_hierarchy(context: &Context, args: &TypeHierarchyArgs) -> Result<String> {
    let (query, label, legacy) = match args.direction {
        TypeDirection::Supertypes => ("typeHierarchy/supertypes", "supertypes", (1, "parents")),
        TypeDirection::Subtypes => ("typeHierarchy/subtypes", "subtypes", (0, "children")),
    };
    let protocol = Protocol {
        prepare: "textDocument/prepareTypeHierarchy",
        feature: Feature::TypeHierarchy,
        query,
        item_key: None,
        ranges_in_result: true,
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
    let prepare = target.request(protocol.prepare, json!({}), protocol.feature);
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
    let Some(item) = prepared
        .result
        .as_array()
        .and_then(|items| items.first())
        .cloned()
    else {
        return Ok(format!(
            "no {} item at {}",
            protocol.feature.name(),
            target.describe()
        ));
    };
    let query = ServerRequest {
        method: protocol.query,
        params: json!({"item": item}),
        document: None,
        position: None,
        capability: Some(protocol.feature),
    };
    let mut reply = context.request(&target.server, query).await?;
    reply.warnings.splice(0..0, prepared.warnings);
    reply.file_problem = prepared.file_problem;
    let results = reply.result.as_array().cloned().unwrap_or_default();
    Ok(render_results(
        context, &target, protocol, &item, &results, &reply,
    ))
}

async fn legacy_type_hierarchy(
    context: &Context,
    target: &Target,
    protocol: &Protocol,
    (direction, key): (u8, &'static str),
) -> Result<String> {
    let params = json!({"resolve": 1, "direction": direction});
    let request = target.request("textDocument/typeHierarchy", params, protocol.feature);
    let reply = context.request(&target.server, request).await?;
    if reply.result.is_null() {
        return Ok(format!(
            "no {} item at {}",
            protocol.feature.name(),
            target.describe()
        ));
    }
    let results = reply
        .result
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    Ok(render_results(
        context,
        target,
        protocol,
        &reply.result,
        &results,
        &reply,
    ))
}

fn render_results(
    context: &Context,
    target: &Target,
    protocol: &Protocol,
    item: &Value,
    results: &[Value],
    reply: &Reply,
) -> String {
    let encoding = reply.encoding;
    let name = item.get("name").and_then(Value::as_str).unwrap_or("?");
    let mut lines = render::notes(&target.roots, &target.server.label(), reply);
    if results.is_empty() {
        lines.push(format!("no {} of {name}", protocol.label));
        return render::bounded(&lines, context.settings.max_output_bytes);
    }
    let mut sources = Sources::new(&target.roots);
    let mut entries = Vec::new();
    for result in results {
        let found = protocol
            .item_key
            .and_then(|key| result.get(key))
            .unwrap_or(result);
        let ranges_item = if protocol.ranges_in_result {
            found
        } else {
            item
        };
        let ranges_uri = ranges_item
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if let Some(entry) = entry(
            &mut sources,
            found,
            result.get("fromRanges"),
            ranges_uri,
            encoding,
        ) {
            entries.push(entry);
        }
    }
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

fn entry(
    sources: &mut Sources,
    item: &Value,
    from_ranges: Option<&Value>,
    ranges_uri: &str,
    encoding: PositionEncoding,
) -> Option<Entry> {
    let uri = item.get("uri")?.as_str()?;
    let range = item.get("selectionRange").or_else(|| item.get("range"))?;
    let spot = sources.spot(uri, range, encoding)?;
    let kind = render::symbol_kind(item.get("kind").and_then(Value::as_u64).unwrap_or(0));
    let name = item.get("name").and_then(Value::as_str).unwrap_or("?");
    let mut text = format!("{kind} {name} {}:{}", spot.line, spot.column);
    let calls: Vec<String> = from_ranges
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|range| {
            let path = crate::lsp::uri::uri_to_path(ranges_uri)?;
            let (line, column) = sources.point(&path, range.get("start")?, encoding)?;
            Some(format!("{}:{}", line + 1, column + 1))
        })
        .collect();
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
