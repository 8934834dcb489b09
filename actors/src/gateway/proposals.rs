//! `code_actions` and `rename`: what the server proposes, as text. Nothing
//! is ever written; the agent applies what it wants with its own tools.

use super::address::Position;
use super::context::Context;
use super::navigation::target_or_candidates;
use super::render::{self, Sources};
use super::target::Target;
use super::workspace_edit::workspace_edit_lines;
use crate::error::{Error, Result};
use crate::lsp::position::line_at;
use crate::lsp::protocol::Feature;
use crate::messages::language_server::{Reply, ServerRequest, document_identifier, read_each};
use lsp_types::request::{CodeActionRequest, CodeActionResolveRequest, Rename, Request};
use lsp_types::{
    CodeAction, CodeActionContext, CodeActionOrCommand, CodeActionParams, CodeActionTriggerKind,
    Diagnostic, PartialResultParams, Range, RenameParams, WorkDoneProgressParams, WorkspaceEdit,
};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeActionsArgs {
    pub file: String,
    pub start_line: u32,
    // Default start_line; left out of the schema, where every byte is paid.
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
    let (in_range, _) = read_each::<Diagnostic>(diagnostics.items.as_deref().unwrap_or_default());
    let in_range = in_range
        .into_iter()
        .filter(|item| (first..=last).contains(&(item.range.start.line as usize)))
        .collect();
    let last_line = line_at(&document.text, last).unwrap_or("");
    let end_character = diagnostics
        .encoding
        .encode_column(last_line, last_line.chars().count());
    let params = CodeActionParams {
        text_document: document_identifier(&document)?,
        range: Range::new(
            lsp_types::Position::new(line_number(first), 0),
            lsp_types::Position::new(line_number(last), end_character),
        ),
        context: CodeActionContext {
            diagnostics: in_range,
            only: None,
            trigger_kind: Some(CodeActionTriggerKind::INVOKED),
        },
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    let request = ServerRequest::new(CodeActionRequest::METHOD, &params, Feature::CodeActions)?
        .about(document, None);
    let mut reply = context.request(&server, request).await?;
    let actions: Vec<CodeActionOrCommand> = reply.read_list(Feature::CodeActions)?;
    let mut lines = render::notes(&roots, &reply);
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
    for (index, action) in actions.into_iter().enumerate() {
        let action = match action {
            CodeActionOrCommand::CodeAction(action) => {
                CodeActionOrCommand::CodeAction(resolved(context, &server, action).await)
            }
            command => command,
        };
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

/// A 0-based line as LSP positions count it.
fn line_number(line: usize) -> u32 {
    u32::try_from(line).unwrap_or(u32::MAX)
}

/// The server's rename of the symbol at a position, as it proposed it.
pub struct RenameProposal {
    pub target: Target,
    pub reply: Reply,
    pub edit: Option<WorkspaceEdit>,
}

/// Asks the server to rename the symbol at `position` to `new_name`; the
/// candidates instead, when the position names no one symbol.
pub async fn proposed_rename(
    context: &Context,
    position: &Position,
    new_name: &str,
) -> Result<std::result::Result<RenameProposal, String>> {
    if new_name.trim().is_empty() {
        return Err(Error::InvalidArgument("new_name must not be empty".into()));
    }
    let target = match target_or_candidates(context, position).await? {
        Ok(target) => target,
        Err(candidates) => return Ok(Err(candidates)),
    };
    let params = RenameParams {
        text_document_position: target.position_params()?,
        new_name: new_name.to_owned(),
        work_done_progress_params: WorkDoneProgressParams::default(),
    };
    let request = target.request(Rename::METHOD, &params, Feature::Rename)?;
    let reply = context.request(&target.server, request).await?;
    let edit = reply.read(Feature::Rename)?;
    Ok(Ok(RenameProposal {
        target,
        reply,
        edit,
    }))
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
    action: CodeAction,
) -> CodeAction {
    if action.edit.is_some() || action.data.is_none() {
        return action;
    }
    let Ok(request) = ServerRequest::new(
        CodeActionResolveRequest::METHOD,
        &action,
        Feature::CodeActionResolve,
    ) else {
        return action;
    };
    let resolution = context.request(server, request).await;
    match resolution.and_then(|reply| reply.read(Feature::CodeActionResolve)) {
        Ok(resolved) => resolved,
        Err(_) => action,
    }
}

fn action_lines(
    sources: &mut Sources,
    number: usize,
    action: &CodeActionOrCommand,
    encoding: crate::lsp::position::PositionEncoding,
) -> Vec<String> {
    let (title, kind, edit, command) = match action {
        CodeActionOrCommand::Command(command) => (&command.title, None, None, Some(command)),
        CodeActionOrCommand::CodeAction(action) => (
            &action.title,
            action.kind.as_ref(),
            action.edit.as_ref(),
            action.command.as_ref(),
        ),
    };
    let kind = kind
        .map(|kind| format!(" ({})", kind.as_str()))
        .unwrap_or_default();
    let mut lines = vec![format!("{number}. {title}{kind}")];
    match edit {
        Some(edit) => lines.extend(
            workspace_edit_lines(sources, edit, encoding)
                .into_iter()
                .skip(1)
                .map(|line| format!("   {line}")),
        ),
        None => lines.push(format!(
            "   runs command {}; no edit to show",
            command.map_or("?", |command| command.command.as_str())
        )),
    }
    lines
}

pub async fn rename(context: &Context, args: &RenameArgs) -> Result<String> {
    let RenameProposal {
        target,
        reply,
        edit,
    } = match proposed_rename(context, &args.position, &args.new_name).await? {
        Ok(proposal) => proposal,
        Err(candidates) => return Ok(candidates),
    };
    let mut lines = render::notes(&target.roots, &reply);
    let Some(edit) = edit else {
        lines.push(format!("nothing to rename at {}", target.describe()));
        return Ok(render::bounded(&lines, context.settings.max_output_bytes));
    };
    let mut sources = Sources::new(&target.roots);
    lines.extend(workspace_edit_lines(&mut sources, &edit, reply.encoding));
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
