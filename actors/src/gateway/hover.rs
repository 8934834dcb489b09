//! The `hover` tool: the server's hover text at a position. Where a
//! server gives none on a declaration's own name (bash-language-server),
//! the declaration's doc comment and signature are shown from the text.

use super::address::Position;
use super::context::Context;
use super::navigation::target_or_candidates;
use super::render;
use super::source;
use crate::error::Result;
use crate::lsp::protocol::Feature;
use lsp_types::request::{HoverRequest, Request};
use lsp_types::{Hover, HoverParams, WorkDoneProgressParams};

pub async fn hover(context: &Context, position: &Position) -> Result<String> {
    let target = match target_or_candidates(context, position).await? {
        Ok(target) => target,
        Err(candidates) => return Ok(candidates),
    };
    let params = HoverParams {
        text_document_position_params: target.position_params()?,
        work_done_progress_params: WorkDoneProgressParams::default(),
    };
    let request = target.request(HoverRequest::METHOD, &params, Feature::Hover)?;
    let reply = context.request(&target.server, request).await?;
    let hover: Option<Hover> = reply.read(Feature::Hover)?;
    let text = hover.as_ref().map(render::hover_text).unwrap_or_default();
    let mut lines = render::notes(&target.roots, &reply);
    if !text.is_empty() {
        lines.push(text);
    } else if let Some(declared) = source::declared_here(context, &target).await {
        let what = target.word().unwrap_or_default();
        lines.push(format!(
            "no hover from the server at {}, the declaration of `{what}`; from the text:",
            target.describe()
        ));
        lines.extend(declared);
    } else {
        lines.push(format!("no hover information at {}", target.describe()));
    }
    Ok(render::bounded(&lines, context.settings.max_output_bytes))
}
