//! The navigation tools: hover, the go-to family, references and the
//! document outline. Each resolves its address, sends one request and
//! renders the answer.

use super::address::{self, Position, Resolved, Target};
use super::context::Context;
use super::render::{self, Sources, Spot};
use crate::error::{Error, Result};
use crate::lsp::protocol::Feature;
use lsp_types::Hover;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Above this size, references are listed as bare positions, so that a
/// heavily used symbol is still listed completely.
const REFERENCES_WITH_SOURCE_BYTES: usize = 8 * 1024;

/// One of the go-to requests, with the capability it needs.
#[derive(Debug, Clone, Copy)]
pub struct Goto {
    pub method: &'static str,
    pub feature: Feature,
}

pub const DEFINITION: Goto = Goto {
    method: "textDocument/definition",
    feature: Feature::Definition,
};
pub const DECLARATION: Goto = Goto {
    method: "textDocument/declaration",
    feature: Feature::Declaration,
};
pub const TYPE_DEFINITION: Goto = Goto {
    method: "textDocument/typeDefinition",
    feature: Feature::TypeDefinition,
};
pub const IMPLEMENTATION: Goto = Goto {
    method: "textDocument/implementation",
    feature: Feature::Implementation,
};

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReferencesArgs {
    #[serde(flatten)]
    pub position: Position,
    /// Default true.
    pub include_declaration: Option<bool>,
    pub offset: Option<u32>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutlineArgs {
    pub file: String,
    /// Nesting levels (default 3).
    pub depth: Option<u32>,
    pub offset: Option<u32>,
}

/// Resolves the address, or returns the candidate list as the answer.
pub async fn target_or_candidates(
    context: &Context,
    position: &Position,
) -> Result<Result<Target, String>> {
    Ok(match address::resolve(context, position).await? {
        Resolved::Target(target) => Ok(*target),
        Resolved::Ambiguous(candidates) => Err(candidates),
    })
}

pub async fn hover(context: &Context, position: &Position) -> Result<String> {
    let target = match target_or_candidates(context, position).await? {
        Ok(target) => target,
        Err(candidates) => return Ok(candidates),
    };
    let request = target.request("textDocument/hover", json!({}), Feature::Hover);
    let reply = context.request(&target.server, request).await?;
    let hover = Option::<Hover>::deserialize(&reply.result).map_err(|error| Error::Malformed {
        server: target.server.label(),
        detail: format!("its hover does not follow LSP: {error}"),
    })?;
    let text = hover.as_ref().map(render::hover_text).unwrap_or_default();
    let mut lines = render::notes(&target.roots, &target.server.label(), &reply);
    match text.is_empty() {
        true => lines.push(format!("no hover information at {}", target.describe())),
        false => lines.push(text),
    }
    Ok(render::bounded(&lines, context.settings.max_output_bytes))
}

pub async fn goto(context: &Context, position: &Position, goto: Goto) -> Result<String> {
    let target = match target_or_candidates(context, position).await? {
        Ok(target) => target,
        Err(candidates) => return Ok(candidates),
    };
    let request = target.request(goto.method, json!({}), goto.feature);
    let reply = context.request(&target.server, request).await?;
    let (spots, outside) = spots(&target, &reply.result, reply.encoding);
    let mut lines = render::notes(&target.roots, &target.server.label(), &reply);
    if spots.is_empty() {
        let what = target
            .word()
            .map(|word| format!("`{word}` at "))
            .unwrap_or_default();
        lines.push(format!(
            "no {} found for {what}{}",
            goto.feature.name(),
            target.describe()
        ));
    }
    lines.extend(render::spot_lines(&spots));
    lines.extend(outside);
    Ok(render::bounded(&lines, context.settings.max_output_bytes))
}

pub async fn references(context: &Context, args: &ReferencesArgs) -> Result<String> {
    let target = match target_or_candidates(context, &args.position).await? {
        Ok(target) => target,
        Err(candidates) => return Ok(candidates),
    };
    let include = args.include_declaration.unwrap_or(true);
    let params = json!({"context": {"includeDeclaration": include}});
    let request = target.request("textDocument/references", params, Feature::References);
    let reply = context.request(&target.server, request).await?;
    let (spots, outside) = spots(&target, &reply.result, reply.encoding);
    let mut head = render::notes(&target.roots, &target.server.label(), &reply);
    if spots.is_empty() {
        head.push(format!("no references found for {}", target.describe()));
        head.extend(outside);
        return Ok(render::bounded(&head, context.settings.max_output_bytes));
    }
    let files = spots
        .iter()
        .map(|spot| &spot.path)
        .collect::<std::collections::HashSet<_>>()
        .len();
    head.push(format!("{} references in {files} files", spots.len()));
    head.extend(outside);
    let with_source = render::grouped_lines(&spots);
    let size: usize = with_source.iter().map(|line| line.len() + 1).sum();
    let body = match size <= REFERENCES_WITH_SOURCE_BYTES {
        true => with_source,
        false => render::compact_grouped_lines(&spots),
    };
    Ok(render::paged(
        &head,
        &body,
        offset(args.offset),
        context.settings.max_output_bytes,
    ))
}

/// The spots of a location result, and the note on those left out.
fn spots(
    target: &Target,
    result: &Value,
    encoding: crate::lsp::position::PositionEncoding,
) -> (Vec<Spot>, Option<String>) {
    let mut sources = Sources::new(&target.roots);
    let mut spots = Vec::new();
    for (uri, range) in render::locations(result) {
        if let Some(spot) = sources.spot(uri, range, encoding) {
            spots.push(spot);
        }
    }
    (spots, sources.outside_note())
}

pub fn offset(given: Option<u32>) -> usize {
    given.map_or(0, |offset| offset as usize)
}

pub async fn document_symbols(context: &Context, args: &OutlineArgs) -> Result<String> {
    let (roots, path) = context.resolve(&args.file).await?;
    let document = context.snapshot(&path, &args.file)?;
    let server = context.route(&path).await?;
    let reply = context.document_symbols(&server, document).await?;
    let depth = args.depth.unwrap_or(3).max(1) as usize;
    let mut body = Vec::new();
    outline(&reply.result, 0, depth, &mut body);
    let mut head = render::notes(&roots, &server.label(), &reply);
    if body.is_empty() {
        head.push(format!("no symbols in {}", args.file));
    }
    Ok(render::paged(
        &head,
        &body,
        offset(args.offset),
        context.settings.max_output_bytes,
    ))
}

/// Where a symbol starts, for putting an outline in line order whatever
/// order the server sent it in.
fn start_of(symbol: &Value) -> (u64, u64) {
    let start = symbol
        .pointer("/range/start")
        .or_else(|| symbol.pointer("/location/range/start"));
    let field = |key: &str| {
        start
            .and_then(|start| start.get(key))
            .and_then(Value::as_u64)
            .unwrap_or(u64::MAX)
    };
    (field("line"), field("character"))
}

/// `kind name first-last` per symbol in line order, indented by nesting,
/// down to `depth` levels; the deepest level shown says how many children
/// it hides.
fn outline(symbols: &Value, level: usize, depth: usize, lines: &mut Vec<String>) {
    let mut ordered: Vec<&Value> = symbols.as_array().into_iter().flatten().collect();
    ordered.sort_by_key(|symbol| start_of(symbol));
    for symbol in ordered {
        let name = symbol.get("name").and_then(Value::as_str).unwrap_or("?");
        let kind = render::symbol_kind(symbol.get("kind").and_then(Value::as_u64).unwrap_or(0));
        let range = symbol
            .get("range")
            .or_else(|| symbol.get("location").and_then(|l| l.get("range")));
        let line_of = |end: &str| {
            range
                .and_then(|r| r.get(end))
                .and_then(|p| p.get("line"))
                .and_then(Value::as_u64)
                .map(|line| line + 1)
        };
        let span = match (line_of("start"), line_of("end")) {
            (Some(start), Some(end)) if end > start => format!(" {start}-{end}"),
            (Some(start), _) => format!(" {start}"),
            _ => String::new(),
        };
        let children = symbol
            .get("children")
            .and_then(Value::as_array)
            .filter(|c| !c.is_empty());
        let hidden = match children {
            Some(children) if level + 1 >= depth => format!(" (+{} nested)", children.len()),
            _ => String::new(),
        };
        lines.push(format!("{}{kind} {name}{span}{hidden}", "  ".repeat(level)));
        if let Some(children) = symbol.get("children")
            && level + 1 < depth
        {
            outline(children, level + 1, depth, lines);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outlines_come_in_line_order_whatever_the_server_sent() {
        let symbols = json!([
            {"name": "zeta", "kind": 12, "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1}}},
            {"name": "Alpha", "kind": 5, "range": {"start": {"line": 4, "character": 0}, "end": {"line": 8}}, "children": [
                {"name": "z", "kind": 6, "range": {"start": {"line": 7, "character": 2}, "end": {"line": 7}}},
                {"name": "a", "kind": 6, "range": {"start": {"line": 5, "character": 2}, "end": {"line": 5}}}
            ]},
            {"name": "beta", "kind": 12, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0}}},
        ]);
        let mut lines = Vec::new();
        outline(&symbols, 0, 3, &mut lines);
        assert_eq!(
            lines,
            vec![
                "function beta 1",
                "function zeta 2",
                "class Alpha 5-9",
                "  method a 6",
                "  method z 8"
            ]
        );
    }

    #[test]
    fn outlines_nested_symbols_to_a_depth() {
        let symbols = json!([
            {"name": "Shape", "kind": 5, "range": {"start": {"line": 0}, "end": {"line": 9}}, "children": [
                {"name": "area", "kind": 6, "range": {"start": {"line": 2}, "end": {"line": 4}}, "children": [
                    {"name": "inner", "kind": 13, "range": {"start": {"line": 3}, "end": {"line": 3}}}
                ]}
            ]},
            {"name": "main", "kind": 12, "location": {"uri": "file:///x", "range": {"start": {"line": 11}, "end": {"line": 11}}}},
        ]);
        let mut lines = Vec::new();
        outline(&symbols, 0, 2, &mut lines);
        assert_eq!(
            lines,
            vec![
                "class Shape 1-10",
                "  method area 3-5 (+1 nested)",
                "function main 12"
            ]
        );
    }
}
