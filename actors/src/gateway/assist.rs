//! `completion` and `signature_help` at a position.

use super::address::Position;
use super::context::Context;
use super::navigation::{offset, target_or_candidates};
use super::render;
use crate::error::Result;
use crate::lsp::protocol::Feature;
use crate::messages::language_server::read_each;
use lsp_types::request::{Completion, Request, SignatureHelpRequest};
use lsp_types::{
    CompletionContext, CompletionItem, CompletionItemKind, CompletionParams, CompletionTriggerKind,
    OneOf, ParameterLabel, PartialResultParams, SignatureHelp, SignatureHelpContext,
    SignatureHelpParams, SignatureHelpTriggerKind, SignatureInformation, WorkDoneProgressParams,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// At most this many completion items are shown.
const MAX_COMPLETIONS: usize = 50;

/// Each `CompletionItemKind` by the name answers show.
const COMPLETION_KINDS: [(CompletionItemKind, &str); 25] = [
    (CompletionItemKind::TEXT, "text"),
    (CompletionItemKind::METHOD, "method"),
    (CompletionItemKind::FUNCTION, "function"),
    (CompletionItemKind::CONSTRUCTOR, "constructor"),
    (CompletionItemKind::FIELD, "field"),
    (CompletionItemKind::VARIABLE, "variable"),
    (CompletionItemKind::CLASS, "class"),
    (CompletionItemKind::INTERFACE, "interface"),
    (CompletionItemKind::MODULE, "module"),
    (CompletionItemKind::PROPERTY, "property"),
    (CompletionItemKind::UNIT, "unit"),
    (CompletionItemKind::VALUE, "value"),
    (CompletionItemKind::ENUM, "enum"),
    (CompletionItemKind::KEYWORD, "keyword"),
    (CompletionItemKind::SNIPPET, "snippet"),
    (CompletionItemKind::COLOR, "color"),
    (CompletionItemKind::FILE, "file"),
    (CompletionItemKind::REFERENCE, "reference"),
    (CompletionItemKind::FOLDER, "folder"),
    (CompletionItemKind::ENUM_MEMBER, "enum-member"),
    (CompletionItemKind::CONSTANT, "constant"),
    (CompletionItemKind::STRUCT, "struct"),
    (CompletionItemKind::EVENT, "event"),
    (CompletionItemKind::OPERATOR, "operator"),
    (CompletionItemKind::TYPE_PARAMETER, "type-parameter"),
];

/// The items of a `CompletionList`, before each is read.
#[derive(Deserialize)]
struct Listed {
    items: Vec<Value>,
}

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
    let params = CompletionParams {
        text_document_position: target.position_params()?,
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
        context: Some(CompletionContext {
            trigger_kind: CompletionTriggerKind::INVOKED,
            trigger_character: None,
        }),
    };
    let request = target.request(Completion::METHOD, &params, Feature::Completion)?;
    let mut reply = context.request(&target.server, request).await?;
    // Items listed bare or in a `CompletionList` are read one by one alike.
    let listed: Option<OneOf<Vec<Value>, Listed>> = reply.read(Feature::Completion)?;
    let values = match listed {
        Some(OneOf::Left(items) | OneOf::Right(Listed { items })) => items,
        None => Vec::new(),
    };
    let (items, unreadable) = read_each::<CompletionItem>(&values);
    reply.note_unreadable(Feature::Completion, unreadable);
    let mut lines = render::notes(&target.roots, &reply);
    if items.is_empty() {
        lines.push(format!("no completions at {}", target.describe()));
        return Ok(render::bounded(&lines, context.settings.max_output_bytes));
    }
    let prefix = typed_prefix(
        &target.document.text,
        target.position.line,
        target.position.column,
    );
    let mut ranked: Vec<&CompletionItem> = items.iter().collect();
    ranked.sort_by_key(|item| {
        let sort = item.sort_text.as_deref().unwrap_or(&item.label);
        (!item.label.starts_with(prefix.as_str()), sort.to_owned())
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

fn completion_line(item: &CompletionItem) -> String {
    let kind = item.kind.and_then(|kind| {
        COMPLETION_KINDS
            .iter()
            .find(|(known, _)| *known == kind)
            .map(|(_, name)| name)
    });
    let detail = item
        .detail
        .as_deref()
        .map(|d| d.lines().next().unwrap_or_default());
    let mut line = item.label.clone();
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
    let params = SignatureHelpParams {
        context: Some(SignatureHelpContext {
            trigger_kind: SignatureHelpTriggerKind::INVOKED,
            trigger_character: None,
            is_retrigger: false,
            active_signature_help: None,
        }),
        text_document_position_params: target.position_params()?,
        work_done_progress_params: WorkDoneProgressParams::default(),
    };
    let request = target.request(
        SignatureHelpRequest::METHOD,
        &params,
        Feature::SignatureHelp,
    )?;
    let reply = context.request(&target.server, request).await?;
    let help: Option<SignatureHelp> = reply.read(Feature::SignatureHelp)?;
    let mut lines = render::notes(&target.roots, &reply);
    let Some(help) = help.filter(|help| !help.signatures.is_empty()) else {
        lines.push(format!("no signature help at {}", target.describe()));
        return Ok(render::bounded(&lines, context.settings.max_output_bytes));
    };
    let active_signature = help.active_signature.unwrap_or(0) as usize;
    lines.extend(
        help.signatures
            .iter()
            .enumerate()
            .map(|(index, signature)| {
                let active = signature.active_parameter.or(help.active_parameter);
                let marker = if index == active_signature {
                    "> "
                } else {
                    "  "
                };
                format!("{marker}{}", marked_signature(signature, active))
            }),
    );
    Ok(render::bounded(&lines, context.settings.max_output_bytes))
}

/// The signature's label with the active parameter between « and ».
fn marked_signature(signature: &SignatureInformation, active: Option<u32>) -> String {
    let label = signature.label.as_str();
    let parameter = active.and_then(|active| {
        signature
            .parameters
            .as_ref()?
            .get(usize::try_from(active).ok()?)
    });
    let span = match parameter.map(|parameter| &parameter.label) {
        Some(ParameterLabel::Simple(text)) => {
            // Parameters are searched for after the name, which may contain them.
            let from = label.find('(').unwrap_or(0);
            label[from..]
                .find(text.as_str())
                .map(|start| (from + start, from + start + text.len()))
        }
        // Offsets are UTF-16 code units into the label.
        Some(ParameterLabel::LabelOffsets([start, end])) => Some((
            utf16_to_byte(label, *start as usize),
            utf16_to_byte(label, *end as usize),
        )),
        None => None,
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
    use serde_json::json;

    #[test]
    fn marks_the_active_parameter_by_text_or_offsets() {
        let read = |signature| SignatureInformation::deserialize(signature).unwrap();
        let by_text =
            read(json!({"label": "add(a, b)", "parameters": [{"label": "a"}, {"label": "b"}]}));
        assert_eq!(marked_signature(&by_text, Some(1)), "add(a, «b»)");
        assert_eq!(marked_signature(&by_text, Some(0)), "add(«a», b)");
        let by_offsets = read(
            json!({"label": "f(é: int, x: str)", "parameters": [{"label": [2, 8]}, {"label": [10, 16]}]}),
        );
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
