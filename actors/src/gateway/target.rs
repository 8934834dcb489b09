//! One position in one document, resolved for its server: the [`Target`]
//! every position tool asks about, or the candidates a name may mean
//! ([`Resolved`]). A file opened at a line and column is resolved here;
//! at a symbol on a line, in `same_line.rs`; a symbol named alone goes
//! through `address.rs` first, which asks the servers where it is.

use super::context::Context;
use super::words::word_at;
use crate::error::{Error, Result};
use crate::lsp::position::line_at;
use crate::lsp::protocol::Feature;
use crate::messages::language_server::{ServerRequest, position_params};
use crate::messages::router::ServerHandle;
use crate::vocabulary::documents::{DocumentSnapshot, TextPosition};
use crate::vocabulary::root_set::RootSet;
use lsp_types::TextDocumentPositionParams;
use serde::Serialize;
use std::sync::Arc;

/// One resolved position, with everything needed to ask its server.
pub struct Target {
    pub roots: Arc<RootSet>,
    pub server: ServerHandle,
    pub document: DocumentSnapshot,
    pub position: TextPosition,
}

impl Target {
    /// A request about this position, with `params` of the LSP type
    /// `method` takes.
    pub fn request(
        &self,
        method: &'static str,
        params: &impl Serialize,
        capability: Feature,
    ) -> Result<ServerRequest> {
        let request = ServerRequest::new(method, params, capability)?;
        Ok(request.about(self.document.clone(), Some(self.position)))
    }

    /// The document and position as LSP params give them.
    pub fn position_params(&self) -> Result<TextDocumentPositionParams> {
        position_params(&self.document, self.position)
    }

    /// `path:line:column` of the position, for messages.
    pub fn describe(&self) -> String {
        let path = self.roots.display(&self.document.path);
        format!(
            "{path}:{}:{}",
            self.position.line + 1,
            self.position.column + 1
        )
    }

    /// The identifier under the position, if any.
    pub fn word(&self) -> Option<String> {
        let line = line_at(&self.document.text, self.position.line)?;
        word_at(line, self.position.column, &self.document.language_id)
    }
}

pub enum Resolved {
    Target(Box<Target>),
    /// The symbol named several things; the text lists them.
    Ambiguous(String),
}

/// The opened document and its server, before a position is chosen.
#[derive(Clone)]
pub(super) struct Opened {
    pub(super) roots: Arc<RootSet>,
    pub(super) server: ServerHandle,
    pub(super) document: DocumentSnapshot,
}

impl Opened {
    pub(super) async fn new(context: &Context, file: &str) -> Result<Self> {
        let (roots, path) = context.resolve(file).await?;
        let document = context.snapshot(&path, file)?;
        let server = context.route(&path).await?;
        Ok(Self {
            roots,
            server,
            document,
        })
    }

    /// The 0-based index and text of 1-based line `line`.
    pub(super) fn line(&self, line: u32) -> Result<(usize, &str)> {
        let index = (line as usize)
            .checked_sub(1)
            .ok_or_else(|| Error::InvalidArgument("line is 1-based".into()))?;
        let text = line_at(&self.document.text, index).ok_or_else(|| {
            let count = self.document.text.lines().count();
            Error::InvalidArgument(format!(
                "line {line} is past the end of the file ({count} lines)"
            ))
        })?;
        Ok((index, text))
    }

    pub(super) fn at(self, line: usize, column: usize) -> Resolved {
        Resolved::Target(Box::new(Target {
            roots: self.roots,
            server: self.server,
            document: self.document,
            position: TextPosition { line, column },
        }))
    }

    /// The position at 0-based `line` and `column`, leaving this one to
    /// be asked again.
    pub(super) fn target(&self, line: usize, column: usize) -> Target {
        Target {
            roots: self.roots.clone(),
            server: self.server.clone(),
            document: self.document.clone(),
            position: TextPosition { line, column },
        }
    }
}

/// The position at 1-based `line` and `column` of `file`.
pub(super) async fn at_column(
    context: &Context,
    file: &str,
    line: u32,
    column: u32,
) -> Result<Resolved> {
    let opened = Opened::new(context, file).await?;
    let (index, _) = opened.line(line)?;
    let column = (column as usize)
        .checked_sub(1)
        .ok_or_else(|| Error::InvalidArgument("column is 1-based".into()))?;
    Ok(opened.at(index, column))
}
