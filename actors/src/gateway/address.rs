//! Addressing shared by every position tool: `file` plus `line` and
//! `column`, `file` plus `line` and `symbol`, or `symbol` alone (or with
//! `file`), resolved to one position in one document, or to a short list of
//! candidates when a symbol name is ambiguous.

use super::candidates::{self, Candidate, ambiguous, is_definition_kind};
use super::context::Context;
use super::definitions;
use super::render::{self, Sources, Spot, unavailable_warning};
use super::symbols::{self, Found};
use crate::error::{Error, Result};
use crate::lsp::position::{PositionEncoding, line_at};
use crate::lsp::protocol::Feature;
use crate::lsp::uri::uri_to_path;
use crate::messages::language_server::{Problem, ServerRequest, position_params};
use crate::messages::router::ServerHandle;
use crate::vocabulary::documents::{DocumentSnapshot, TextPosition};
use crate::vocabulary::root_set::RootSet;
use lsp_types::TextDocumentPositionParams;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tokio::task::JoinSet;

/// Where in the code a question is about. The fields carry no schema
/// descriptions: the server's instructions explain addressing once
/// instead of in every tool of `tools/list`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Position {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub symbol: Option<String>,
}

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
        word_at(line, self.position.column)
    }
}

pub enum Resolved {
    Target(Box<Target>),
    /// The symbol named several things; the text lists them.
    Ambiguous(String),
}

pub async fn resolve(context: &Context, position: &Position) -> Result<Resolved> {
    let symbol = position
        .symbol
        .as_deref()
        .map(str::trim)
        .filter(|symbol| !symbol.is_empty());
    match (&position.file, position.line, position.column, symbol) {
        (Some(file), Some(line), Some(column), _) => at_column(context, file, line, column).await,
        (Some(file), Some(line), None, Some(symbol)) => on_line(context, file, line, symbol).await,
        (Some(_), Some(_), None, None) => Err(Error::InvalidArgument(
            "give `column` or `symbol` with `line`".into(),
        )),
        (Some(file), None, _, Some(symbol)) => in_file(context, file, symbol).await,
        (None, _, _, Some(symbol)) => in_workspace(context, symbol).await,
        (Some(_), None, _, None) => Err(Error::InvalidArgument(
            "give `line` and `column`, `line` and `symbol`, or `symbol`".into(),
        )),
        (None, _, _, None) => Err(Error::InvalidArgument(
            "give `file` with `line` and `column`, or a `symbol`".into(),
        )),
    }
}

/// The opened document and its server, before a position is chosen.
struct Opened {
    roots: Arc<RootSet>,
    server: ServerHandle,
    document: DocumentSnapshot,
}

impl Opened {
    async fn new(context: &Context, file: &str) -> Result<Self> {
        let (roots, path) = context.resolve(file).await?;
        let document = context.snapshot(&path, file)?;
        let server = context.route(&path).await?;
        Ok(Self {
            roots,
            server,
            document,
        })
    }

    fn line(&self, line: u32) -> Result<(usize, &str)> {
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

    fn at(self, line: usize, column: usize) -> Resolved {
        Resolved::Target(Box::new(Target {
            roots: self.roots,
            server: self.server,
            document: self.document,
            position: TextPosition { line, column },
        }))
    }
}

async fn at_column(context: &Context, file: &str, line: u32, column: u32) -> Result<Resolved> {
    let opened = Opened::new(context, file).await?;
    let (index, _) = opened.line(line)?;
    let column = (column as usize)
        .checked_sub(1)
        .ok_or_else(|| Error::InvalidArgument("column is 1-based".into()))?;
    Ok(opened.at(index, column))
}

pub(super) async fn on_line(
    context: &Context,
    file: &str,
    line: u32,
    symbol: &str,
) -> Result<Resolved> {
    let opened = Opened::new(context, file).await?;
    let (index, text) = opened.line(line)?;
    let column = find_word(text, symbol, 0).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "`{symbol}` does not occur on line {line} of {file}"
        ))
    })?;
    Ok(opened.at(index, column))
}

async fn in_file(context: &Context, file: &str, symbol: &str) -> Result<Resolved> {
    let opened = Opened::new(context, file).await?;
    let mut reply = context
        .document_symbols(&opened.server, opened.document.clone())
        .await?;
    let symbols = symbols::document_symbols(&mut reply)?;
    let mut sources = Sources::new(&opened.roots);
    let mut found = Vec::new();
    let uri = opened.document.uri.clone();
    for named in symbols::flatten(&symbols) {
        if named.name == symbol
            && let Some(spot) = sources.spot(&uri, named.selection_range, reply.encoding)
        {
            found.push(Candidate {
                spot,
                kind: Some(named.kind),
            });
        }
    }
    let found = candidates::merge(context, symbol, found).await;
    match found.len() {
        0 => Err(Error::InvalidArgument(format!(
            "no symbol named `{symbol}` in {file}"
        ))),
        1 => {
            let spot = &found[0].spot;
            let (index, text) = opened.line(u32::try_from(spot.line).unwrap_or(u32::MAX))?;
            let column = find_word(text, symbol, spot.column - 1).unwrap_or(spot.column - 1);
            Ok(opened.at(index, column))
        }
        _ => Ok(ambiguous(symbol, found, Vec::new())),
    }
}

/// A symbol named alone: the servers' workspace symbols, cross-checked
/// against definitions found by text. When they disagree (a server that
/// could not parse a file, or sees only part of the project) every
/// candidate is listed rather than one guessed.
async fn in_workspace(context: &Context, symbol: &str) -> Result<Resolved> {
    let roots = context.root_set().await?;
    let found_by_text = {
        let roots = roots.clone();
        let symbol = symbol.to_owned();
        tokio::task::spawn_blocking(move || definitions::find(&roots, &symbol))
    };
    let symbols = workspace_symbols(context, symbol).await?;
    let found_by_text = found_by_text.await.map_err(|_| Error::ShuttingDown)?;
    let mut sources = Sources::new(&roots);
    let mut found = Vec::new();
    for (named, encoding) in symbols.symbols {
        // Servers may give the whole declaration's range; the name is
        // pointed at, as in every other answer.
        let Found {
            name,
            kind,
            location,
        } = named;
        if name == symbol
            && let Some(spot) =
                sources.spot_of_name(location.uri.as_str(), location.range, encoding, symbol)
        {
            found.push(Candidate {
                spot,
                kind: Some(kind),
            });
        }
    }
    found.sort_by_key(|candidate| !candidate.kind.is_some_and(is_definition_kind));
    let missed: Vec<Candidate> = found_by_text
        .iter()
        .filter(|definition| {
            let path = roots.display(&definition.path);
            !found.iter().any(|candidate| {
                candidate.spot.path == path && candidate.spot.line == definition.line
            })
        })
        .map(|definition| Candidate {
            spot: Spot {
                path: roots.display(&definition.path),
                line: definition.line,
                column: find_word(&definition.text, symbol, 0).map_or(1, |column| column + 1),
                source: Some(definition.text.clone()),
            },
            kind: None,
        })
        .collect();
    // Definitions the servers missed forbid picking one; the rest of what
    // the servers said is shown only with a list.
    let disagree = !missed.is_empty();
    let mut notes = missed_notes(&roots, &symbols.problems, &missed);
    notes.extend(
        symbols
            .unavailable
            .iter()
            .map(|name| unavailable_warning(name)),
    );
    notes.extend(symbols.warnings);
    notes.dedup();
    found.extend(missed);
    let found = candidates::merge(context, symbol, found).await;
    // A definition found only by text that a server's candidate leads to
    // is merged with it, and no longer stands against picking it.
    let disagree = disagree && found.iter().any(|candidate| candidate.kind.is_none());
    match found.len() {
        0 => Err(Error::InvalidArgument(
            std::iter::once(format!("no symbol named `{symbol}` found in the workspace"))
                .chain(notes)
                .collect::<Vec<_>>()
                .join("\n"),
        )),
        1 if !disagree => {
            let spot = &found[0].spot;
            let file = spot.path.clone();
            on_line(
                context,
                &file,
                u32::try_from(spot.line).unwrap_or(u32::MAX),
                symbol,
            )
            .await
        }
        _ => Ok(ambiguous(symbol, found, notes)),
    }
}

/// Why the servers missed definitions the text search found: what they
/// said about those files, or that their index is partial.
fn missed_notes(
    roots: &RootSet,
    problems: &[(String, Problem)],
    missed: &[Candidate],
) -> Vec<String> {
    if missed.is_empty() {
        return Vec::new();
    }
    let mut notes = vec![format!(
        "note: {} found only by text search; the servers did not report {}",
        match missed.len() {
            1 => "1 definition was".to_owned(),
            count => format!("{count} definitions were"),
        },
        if missed.len() == 1 { "it" } else { "them" }
    )];
    for (label, problem) in problems {
        let shown = uri_to_path(&problem.uri).map(|path| roots.display(&path));
        if missed
            .iter()
            .any(|candidate| shown.as_deref() == Some(candidate.spot.path.as_str()))
        {
            notes.push(render::problem_line(roots, label, problem));
        }
    }
    notes
}

/// What every running server answered to one `workspace/symbol`.
struct WorkspaceAnswer {
    /// Each symbol with the encoding of its server's positions.
    symbols: Vec<(Found, PositionEncoding)>,
    /// Files each server (by label) said it could not fully read.
    problems: Vec<(String, Problem)>,
    /// Servers the roots need that could not be asked.
    unavailable: Vec<String>,
    /// What the servers said about how complete their answers are.
    warnings: Vec<String>,
}

/// `workspace/symbol` on every running server at once.
async fn workspace_symbols(context: &Context, query: &str) -> Result<WorkspaceAnswer> {
    let servers = context.workspace_servers().await?;
    let mut requests = JoinSet::new();
    for server in servers.running {
        let context = context.clone();
        let query = query.to_owned();
        requests.spawn(async move {
            let reply = context.workspace_symbols(&server, &query).await;
            (server.label(), reply)
        });
    }
    let mut answer = WorkspaceAnswer {
        symbols: Vec::new(),
        problems: Vec::new(),
        unavailable: servers.unavailable,
        warnings: Vec::new(),
    };
    while let Some(joined) = requests.join_next().await {
        let Ok((label, Ok(mut reply))) = joined else {
            continue;
        };
        let Ok(found) = symbols::workspace_symbols(&mut reply) else {
            continue;
        };
        answer
            .symbols
            .extend(found.into_iter().map(|found| (found, reply.encoding)));
        answer.problems.extend(
            reply
                .problems
                .into_iter()
                .map(|problem| (label.clone(), problem)),
        );
        answer.warnings.extend(reply.warnings);
    }
    Ok(answer)
}

fn is_identifier_char(character: char) -> bool {
    character.is_alphanumeric() || character == '_' || character == '$'
}

/// The code-point column of `word` as a whole identifier on `line`, at or
/// after column `from`; failing that, of `word` after a `$` sigil, as a
/// shell, PHP or SCSS variable is written where it is used (`$SCRIPT_DIR`
/// for `SCRIPT_DIR`). In JavaScript `$` is part of a name, so a whole
/// identifier comes first.
pub fn find_word(line: &str, word: &str, from: usize) -> Option<usize> {
    let characters: Vec<char> = line.chars().collect();
    let wanted: Vec<char> = word.chars().collect();
    if wanted.is_empty() {
        return None;
    }
    let last = characters.len().checked_sub(wanted.len())?;
    let found = |after_sigil: bool| {
        (from..=last).find(|&start| {
            let end = start + wanted.len();
            let before = start.checked_sub(1).map(|index| characters[index]);
            characters[start..end] == wanted[..]
                && (before.is_none_or(|before| !is_identifier_char(before))
                    || !is_identifier_char(wanted[0])
                    || (after_sigil && before == Some('$')))
                && characters
                    .get(end)
                    .is_none_or(|next| !is_identifier_char(*next))
        })
    };
    found(false).or_else(|| found(true))
}

/// The identifier that covers code-point column `column`.
pub fn word_at(line: &str, column: usize) -> Option<String> {
    let characters: Vec<char> = line.chars().collect();
    if !characters
        .get(column)
        .copied()
        .is_some_and(is_identifier_char)
    {
        return None;
    }
    let start = (0..column)
        .rev()
        .take_while(|&i| is_identifier_char(characters[i]))
        .last()
        .unwrap_or(column);
    let end = (column..characters.len())
        .take_while(|&i| is_identifier_char(characters[i]))
        .last()
        .unwrap_or(column);
    Some(characters[start..=end].iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_whole_words_only() {
        assert_eq!(find_word("let foobar = foo(1);", "foo", 0), Some(13));
        assert_eq!(find_word("é = café + café2", "café", 0), Some(4));
        assert_eq!(find_word("x.café", "café", 0), Some(2));
        assert_eq!(find_word("afoo", "foo", 0), None);
        assert_eq!(find_word("foo foo", "foo", 1), Some(4));
        assert_eq!(find_word("", "foo", 0), None);
        assert_eq!(find_word("cd \"$SCRIPT_DIR/..\"", "SCRIPT_DIR", 0), Some(5));
        assert_eq!(find_word("const $foo = foo;", "foo", 0), Some(13));
    }

    #[test]
    fn finds_the_word_under_a_column() {
        assert_eq!(word_at("    return café_x + 1", 12), Some("café_x".into()));
        assert_eq!(word_at("a + b", 1), None);
        assert_eq!(word_at("ab", 5), None);
    }
}
