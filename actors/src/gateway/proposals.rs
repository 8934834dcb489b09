//! `code_actions` and `rename`: what the server proposes, as text. Nothing
//! is ever written; the agent applies what it wants with its own tools.

use super::address::Position;
use super::context::Context;
use super::navigation::target_or_candidates;
use super::render::{self, Sources};
use super::workspace_edit::workspace_edit_lines;
use crate::error::{Error, Result};
use crate::lsp::position::line_at;
use crate::lsp::protocol::Feature;
use crate::messages::language_server::ServerRequest;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeActionsArgs {
    pub file: String,
    pub start_line: u32,
    /// Default: start_line.
    pub end_line: Option<u32>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameArgs {
    #[serde(flatten)]
    pub position: Position,
    pub new_name: String,
}

pub async fn code_actions(context: &Context, args: &CodeActionsArgs) -> Result<String> {
    let (roots, path) = context.resolve(&args.file).await?;
    let document = context.snapshot(&path, &args.file)?;
    let server = context.route(&path).await?;
    let (first, last) = line_range(
        &document.text,
        args.start_line,
        args.end_line.unwrap_or(args.start_line),
    )?;
    let diagnostics = context.diagnostics(&server, document.clone()).await?;
    let in_range: Vec<Value> = diagnostics
        .items
        .iter()
        .flat_map(|items| items.iter())
        .filter(|item| {
            let line = item
                .pointer("/range/start/line")
                .and_then(Value::as_u64)
                .unwrap_or(u64::MAX) as usize;
            (first..=last).contains(&line)
        })
        .cloned()
        .collect();
    let last_line = line_at(&document.text, last).unwrap_or("");
    let end_character = diagnostics
        .encoding
        .encode_column(last_line, last_line.chars().count());
    let request = ServerRequest {
        method: "textDocument/codeAction",
        params: json!({
            "range": {"start": {"line": first, "character": 0}, "end": {"line": last, "character": end_character}},
            "context": {"diagnostics": in_range, "triggerKind": 1},
        }),
        document: Some(document),
        position: None,
        capability: Some(Feature::CodeActions),
    };
    let reply = context.request(&server, request).await?;
    let actions = reply.result.as_array().cloned().unwrap_or_default();
    let mut lines = render::notes(&roots, &server.label(), &reply);
    if actions.is_empty() {
        lines.push(format!(
            "no code actions for {}:{}-{}",
            args.file,
            first + 1,
            last + 1
        ));
        return Ok(render::bounded(&lines, context.settings.max_output_bytes));
    }
    let mut sources = Sources::new(&roots);
    for (index, action) in actions.iter().enumerate() {
        let action = resolved(context, &server, action).await;
        lines.extend(action_lines(
            &mut sources,
            index + 1,
            &action,
            reply.encoding,
        ));
    }
    lines.extend(sources.outside_note());
    Ok(render::bounded(&lines, context.settings.max_output_bytes))
}

/// 0-based first and last line, checked against the file.
fn line_range(text: &str, start: u32, end: u32) -> Result<(usize, usize)> {
    let count = text.lines().count().max(1);
    let first = (start as usize)
        .checked_sub(1)
        .ok_or_else(|| Error::InvalidArgument("start_line is 1-based".into()))?;
    let last = (end as usize)
        .checked_sub(1)
        .ok_or_else(|| Error::InvalidArgument("end_line is 1-based".into()))?;
    if first > last {
        return Err(Error::InvalidArgument(
            "end_line is before start_line".into(),
        ));
    }
    if last >= count {
        return Err(Error::InvalidArgument(format!(
            "line {} is past the end of the file ({count} lines)",
            last + 1
        )));
    }
    Ok((first, last))
}

/// An action without its edit is asked for it when the server announced
/// that it resolves actions; otherwise, or if that fails, the action is
/// shown as it came.
async fn resolved(
    context: &Context,
    server: &crate::messages::router::ServerHandle,
    action: &Value,
) -> Value {
    if action.get("edit").is_some() || action.get("data").is_none() {
        return action.clone();
    }
    let request = ServerRequest {
        method: "codeAction/resolve",
        params: action.clone(),
        document: None,
        position: None,
        capability: Some(Feature::CodeActionResolve),
    };
    match context.request(server, request).await {
        Ok(reply) if reply.result.is_object() => reply.result,
        _ => action.clone(),
    }
}

fn action_lines(
    sources: &mut Sources,
    number: usize,
    action: &Value,
    encoding: crate::lsp::position::PositionEncoding,
) -> Vec<String> {
    let title = action.get("title").and_then(Value::as_str).unwrap_or("?");
    let kind = action
        .get("kind")
        .and_then(Value::as_str)
        .map(|kind| format!(" ({kind})"))
        .unwrap_or_default();
    let mut lines = vec![format!("{number}. {title}{kind}")];
    match action.get("edit") {
        Some(edit) => lines.extend(
            workspace_edit_lines(sources, edit, encoding)
                .into_iter()
                .skip(1)
                .map(|line| format!("   {line}")),
        ),
        None => {
            let command = action
                .get("command")
                .and_then(|c| c.as_str().or_else(|| c.get("command")?.as_str()));
            lines.push(format!(
                "   runs command {}; no edit to show",
                command.unwrap_or("?")
            ));
        }
    }
    lines
}

pub async fn rename(context: &Context, args: &RenameArgs) -> Result<String> {
    if args.new_name.trim().is_empty() {
        return Err(Error::InvalidArgument("new_name must not be empty".into()));
    }
    let target = match target_or_candidates(context, &args.position).await? {
        Ok(target) => target,
        Err(candidates) => return Ok(candidates),
    };
    let request = target.request(
        "textDocument/rename",
        json!({"newName": args.new_name}),
        Feature::Rename,
    );
    let reply = context.request(&target.server, request).await?;
    let mut lines = render::notes(&target.roots, &target.server.label(), &reply);
    if reply.result.is_null() {
        lines.push(format!("nothing to rename at {}", target.describe()));
        return Ok(render::bounded(&lines, context.settings.max_output_bytes));
    }
    let mut sources = Sources::new(&target.roots);
    lines.extend(workspace_edit_lines(
        &mut sources,
        &reply.result,
        reply.encoding,
    ));
    lines.extend(sources.outside_note());
    Ok(render::bounded(&lines, context.settings.max_output_bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_line_ranges() {
        assert_eq!(line_range("a\nb\nc\n", 1, 3), Ok((0, 2)));
        assert!(line_range("a\nb\n", 0, 1).is_err());
        assert!(line_range("a\nb\n", 2, 1).is_err());
        assert_eq!(
            line_range("a\nb\n", 3, 3).unwrap_err().to_string(),
            "line 3 is past the end of the file (2 lines)"
        );
    }
}
