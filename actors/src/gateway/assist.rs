//! `completion` and `signature_help` at a position.

use super::address::Position;
use super::context::Context;
use super::navigation::{offset, target_or_candidates};
use super::render;
use crate::error::Result;
use crate::lsp::protocol::Feature;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// At most this many completion items are shown.
const MAX_COMPLETIONS: usize = 50;

const COMPLETION_KINDS: [&str; 25] = [
    "text",
    "method",
    "function",
    "constructor",
    "field",
    "variable",
    "class",
    "interface",
    "module",
    "property",
    "unit",
    "value",
    "enum",
    "keyword",
    "snippet",
    "color",
    "file",
    "reference",
    "folder",
    "enum-member",
    "constant",
    "struct",
    "event",
    "operator",
    "type-parameter",
];

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompletionArgs {
    #[serde(flatten)]
    pub position: Position,
    pub offset: Option<u32>,
}

pub async fn completion(context: &Context, args: &CompletionArgs) -> Result<String> {
    let target = match target_or_candidates(context, &args.position).await? {
        Ok(target) => target,
        Err(candidates) => return Ok(candidates),
    };
    let request = target.request(
        "textDocument/completion",
        json!({"context": {"triggerKind": 1}}),
        Feature::Completion,
    );
    let reply = context.request(&target.server, request).await?;
    let items = match &reply.result {
        Value::Array(items) => items.clone(),
        other => other
            .get("items")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    };
    let mut lines = render::notes(&target.roots, &target.server.label(), &reply);
    if items.is_empty() {
        lines.push(format!("no completions at {}", target.describe()));
        return Ok(render::bounded(&lines, context.settings.max_output_bytes));
    }
    let prefix = typed_prefix(
        &target.document.text,
        target.position.line,
        target.position.column,
    );
    let mut ranked: Vec<&Value> = items.iter().collect();
    ranked.sort_by_key(|item| {
        let label = item
            .get("label")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let sort = item
            .get("sortText")
            .and_then(Value::as_str)
            .unwrap_or(label);
        (!label.starts_with(prefix.as_str()), sort.to_owned())
    });
    let start = offset(args.offset).min(ranked.len());
    lines.extend(
        ranked[start..]
            .iter()
            .take(MAX_COMPLETIONS)
            .map(|item| completion_line(item)),
    );
    let next = start + MAX_COMPLETIONS;
    if ranked.len() > next {
        lines.push(format!(
            "… {} more (call again with offset={next})",
            ranked.len() - next
        ));
    }
    Ok(render::bounded(&lines, context.settings.max_output_bytes))
}

/// The identifier characters just before the cursor.
fn typed_prefix(text: &str, line: usize, column: usize) -> String {
    let line = crate::lsp::position::line_at(text, line).unwrap_or("");
    let before: Vec<char> = line.chars().take(column).collect();
    let start = before
        .iter()
        .rposition(|c| !(c.is_alphanumeric() || *c == '_'))
        .map_or(0, |i| i + 1);
    before[start..].iter().collect()
}

fn completion_line(item: &Value) -> String {
    let label = item.get("label").and_then(Value::as_str).unwrap_or("?");
    let kind = item
        .get("kind")
        .and_then(Value::as_u64)
        .and_then(|kind| usize::try_from(kind).ok()?.checked_sub(1))
        .and_then(|index| COMPLETION_KINDS.get(index));
    let detail = item
        .get("detail")
        .and_then(Value::as_str)
        .map(|d| d.lines().next().unwrap_or_default());
    let mut line = label.to_owned();
    if let Some(kind) = kind {
        line.push_str(&format!("  {kind}"));
    }
    if let Some(detail) = detail.filter(|d| !d.is_empty()) {
        line.push_str(&format!("  {detail}"));
    }
    line
}

pub async fn signature_help(context: &Context, position: &Position) -> Result<String> {
    let target = match target_or_candidates(context, position).await? {
        Ok(target) => target,
        Err(candidates) => return Ok(candidates),
    };
    let request = target.request(
        "textDocument/signatureHelp",
        json!({"context": {"triggerKind": 1, "isRetrigger": false}}),
        Feature::SignatureHelp,
    );
    let reply = context.request(&target.server, request).await?;
    let signatures = reply
        .result
        .get("signatures")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if signatures.is_empty() {
        let mut lines = render::notes(&target.roots, &target.server.label(), &reply);
        lines.push(format!("no signature help at {}", target.describe()));
        return Ok(render::bounded(&lines, context.settings.max_output_bytes));
    }
    let active_signature = reply
        .result
        .get("activeSignature")
        .and_then(Value::as_u64)
        .unwrap_or(0) as usize;
    let mut lines = render::notes(&target.roots, &target.server.label(), &reply);
    lines.extend(signatures.iter().enumerate().map(|(index, signature)| {
        let active = signature
            .get("activeParameter")
            .or_else(|| reply.result.get("activeParameter"))
            .and_then(Value::as_u64);
        let marker = if index == active_signature {
            "> "
        } else {
            "  "
        };
        format!("{marker}{}", marked_signature(signature, active))
    }));
    Ok(render::bounded(&lines, context.settings.max_output_bytes))
}

/// The signature's label with the active parameter between « and ».
fn marked_signature(signature: &Value, active: Option<u64>) -> String {
    let label = signature
        .get("label")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let parameter = active
        .and_then(|active| {
            signature
                .get("parameters")?
                .as_array()?
                .get(usize::try_from(active).ok()?)
        })
        .and_then(|parameter| parameter.get("label"));
    let span = match parameter {
        Some(Value::String(text)) => {
            // Parameters are searched for after the name, which may contain them.
            let from = label.find('(').unwrap_or(0);
            label[from..]
                .find(text.as_str())
                .map(|start| (from + start, from + start + text.len()))
        }
        Some(Value::Array(offsets)) => {
            // Offsets are UTF-16 code units into the label.
            let units = |value: &Value| value.as_u64().map(|v| v as usize);
            match (
                offsets.first().and_then(units),
                offsets.get(1).and_then(units),
            ) {
                (Some(start), Some(end)) => {
                    Some((utf16_to_byte(label, start), utf16_to_byte(label, end)))
                }
                _ => None,
            }
        }
        _ => None,
    };
    match span {
        Some((start, end)) if start <= end && end <= label.len() => {
            format!(
                "{}«{}»{}",
                &label[..start],
                &label[start..end],
                &label[end..]
            )
        }
        _ => label.to_owned(),
    }
}

fn utf16_to_byte(text: &str, units: usize) -> usize {
    let mut counted = 0;
    for (byte, character) in text.char_indices() {
        if counted >= units {
            return byte;
        }
        counted += character.len_utf16();
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_the_active_parameter_by_text_or_offsets() {
        let by_text = json!({"label": "add(a, b)", "parameters": [{"label": "a"}, {"label": "b"}]});
        assert_eq!(marked_signature(&by_text, Some(1)), "add(a, «b»)");
        assert_eq!(marked_signature(&by_text, Some(0)), "add(«a», b)");
        let by_offsets = json!({"label": "f(é: int, x: str)", "parameters": [{"label": [2, 8]}, {"label": [10, 16]}]});
        assert_eq!(
            marked_signature(&by_offsets, Some(1)),
            "f(é: int, «x: str»)"
        );
        assert_eq!(marked_signature(&by_text, None), "add(a, b)");
    }

    #[test]
    fn reads_the_typed_prefix() {
        assert_eq!(typed_prefix("x = ad", 0, 6), "ad");
        assert_eq!(typed_prefix("obj.", 0, 4), "");
    }
}
