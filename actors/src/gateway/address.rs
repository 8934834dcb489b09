//! Addressing shared by every position tool: `file` plus `line` and
//! `column`, `file` plus `line` and `symbol`, or `symbol` alone (or with
//! `file`), resolved to one position in one document (`target.rs`), or to
//! a short list of candidates when a symbol name is ambiguous
//! (`candidates.rs`). A symbol named without a line is looked up here: in
//! its file's outline, or in every server's workspace symbols
//! cross-checked against definitions found by text.

use super::candidates::{self, Candidate, ambiguous, is_definition_kind};
use super::context::Context;
use super::definitions::{self, Counted};
use super::indexing;
use super::render::{self, Sources, Spot, failed_warning, unavailable_warning};
use super::same_line::{at_name, on_line};
use super::symbols::{self, Found};
use super::target::{Opened, Resolved, at_column};
use super::words::{self, find_word};
use super::workspace_names;
use crate::error::{Error, Result};
use crate::language::Role;
use crate::lsp::position::{PositionEncoding, line_at};
use crate::lsp::uri::uri_to_path;
use crate::messages::language_server::Problem;
use crate::vocabulary::root_set::RootSet;
use lsp_types::SymbolKind;
use schemars::JsonSchema;
use serde::Deserialize;

/// Where in the code a question is about. Only `line` and `column` are
/// described: Codex and Copilot CLI do not show a model the server's
/// instructions, which explain addressing, and a line's base is what a
/// model cannot guess; each description repeats in every position tool
/// of `tools/list`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Position {
    pub file: Option<String>,
    /// 1-based.
    pub line: Option<u32>,
    /// 1-based.
    pub column: Option<u32>,
    pub symbol: Option<String>,
}

/// The position `position` names, or the candidates it may mean.
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

async fn in_file(context: &Context, file: &str, symbol: &str) -> Result<Resolved> {
    let opened = Opened::new(context, file).await?;
    let mut reply = context
        .document_symbols(&opened.server, opened.document.clone())
        .await?;
    let symbols = symbols::document_symbols(&mut reply, &opened.document.text)?;
    let mut sources = Sources::new(&opened.roots);
    let mut found = Vec::new();
    let uri = opened.document.uri.clone();
    for (named, holder) in symbols::flatten_with_holders(&symbols) {
        let container = holder.map(|holder| holder.name.as_str());
        if symbols::names_in(&named.name, container, symbol)
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
            let own = words::own_name(symbol);
            let column = find_word(text, own, spot.column - 1).unwrap_or(spot.column - 1);
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
    // A server that names a member alone finds it by that name only, and
    // the text says nothing of `Type.`.
    let query = symbols::qualifier(symbol).map_or(symbol, |(_, member)| member);
    // As in `search`: the files' listing is as new as the changes taken in.
    context.take_in_changes().await?;
    let found_by_text = {
        let roots = roots.clone();
        let query = query.to_owned();
        let sketches = context.shared.sketches.clone();
        tokio::task::spawn_blocking(move || {
            definitions::find(&sketches, &roots, &query, Counted::Definitions)
        })
    };
    let symbols = workspace_symbols(context, query).await?;
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
            mut container,
        } = named;
        if container.is_none() && asks_member(&name, symbol) {
            container = holder_in_outline(context, &name, &location, encoding).await;
        }
        // One place is one candidate: rust-analyzer names a method once
        // for each type a macro implements it for, every one at the
        // macro's call, and two servers that read one file (the Svelte
        // server and TypeScript's) both name what it defines.
        if symbols::names_in(&name, container.as_deref(), symbol)
            && let Some(spot) = sources.spot_of_name(
                location.uri.as_str(),
                location.range,
                encoding,
                words::own_name(&name),
            )
            && !found
                .iter()
                .any(|candidate: &Candidate| candidate.spot == spot)
        {
            found.push(Candidate {
                spot,
                kind: Some(kind),
            });
        }
    }
    // A macro that implements a method for many types has each named at
    // the macro's call: the lines that read as a definition of the name
    // come first, so that the declarations are among those listed.
    let defined_by_text: Vec<(String, usize)> = found_by_text
        .iter()
        .map(|definition| (roots.display(&definition.path), definition.line))
        .collect();
    found.sort_by_key(|candidate| {
        let place = (candidate.spot.path.clone(), candidate.spot.line);
        (
            !candidate.kind.is_some_and(is_definition_kind),
            !defined_by_text.contains(&place),
        )
    });
    let (missed, unasked): (Vec<&definitions::TextDefinition>, Vec<_>) = found_by_text
        .iter()
        .filter(|definition| {
            let path = roots.display(&definition.path);
            !found.iter().any(|candidate| {
                candidate.spot.path == path && candidate.spot.line == definition.line
            })
        })
        .partition(|definition| {
            symbols
                .languages
                .iter()
                .any(|language| language == definition.language)
        });
    let missed = held_by_owner(context, missed, symbol).await;
    let unasked = held_by_owner(context, unasked, symbol).await;
    let by_text =
        |(definition, kind): (&definitions::TextDefinition, Option<SymbolKind>)| Candidate {
            spot: Spot {
                path: roots.display(&definition.path),
                line: definition.line,
                column: definition.column,
                source: Some(definition.text.clone()),
            },
            kind,
        };
    // Definitions the servers missed forbid picking one; the rest of what
    // the servers said is shown only with a list. One in a language no
    // server can be asked about by name (the CSS servers answer no
    // workspace symbols) was not missed, and may be picked; listed, it
    // is explained as the missed ones are. One its file's outline holds
    // where the text found it was not missed: the server knows it.
    let disagree = missed.iter().any(|(_, kind)| kind.is_none());
    found.extend(missed.into_iter().chain(unasked).map(by_text));
    let found = candidates::merge(context, symbol, found).await;
    // Counted once merged: a body found by text that a server's
    // declaration leads to is no longer found only by text.
    let only_text: Vec<&Candidate> = found
        .iter()
        .filter(|candidate| candidate.kind.is_none())
        .collect();
    let mut notes = missed_notes(&roots, &symbols.problems, &only_text);
    notes.extend(
        symbols
            .unavailable
            .iter()
            .map(|name| unavailable_warning(name)),
    );
    notes.extend(symbols.warnings);
    notes.dedup();
    // A definition found only by text that a server's candidate leads to
    // is merged with it, and no longer stands against picking it.
    let disagree = disagree && found.iter().any(|candidate| candidate.kind.is_none());
    match found.len() {
        0 => Err(Error::InvalidArgument(
            std::iter::once(format!("no symbol named `{symbol}` found in the workspace"))
                .chain(nameless_note(&symbols.nameless))
                .chain(notes)
                .collect::<Vec<_>>()
                .join("\n"),
        )),
        1 if !disagree => {
            let spot = &found[0].spot;
            let file = spot.path.clone();
            at_name(
                context,
                &file,
                u32::try_from(spot.line).unwrap_or(u32::MAX),
                spot.column,
                symbol,
            )
            .await
        }
        _ => Ok(ambiguous(symbol, found, notes)),
    }
}

/// The note on languages whose servers cannot be asked for a name at all
/// (the YAML, HTML and CSS servers): a name in their files is found with
/// `file`.
fn nameless_note(languages: &[String]) -> Option<String> {
    let (last, others) = languages.split_last()?;
    let named = match others {
        [] => last.clone(),
        _ => format!("{} and {last}", others.join(", ")),
    };
    Some(format!(
        "note: the servers of {named} files answer no names asked alone; \
         for a name in such a file, give its `file` (and `line`)"
    ))
}

/// Whether `symbol` is asked as `Type.member` of a member the server
/// named `found`.
fn asks_member(found: &str, symbol: &str) -> bool {
    symbols::qualifier(symbol).is_some_and(|(_, member)| symbols::names(found, member))
}

/// The name of the symbol that holds `name` at `location` in its file's
/// outline: typescript-language-server names a method alone and gives no
/// container, so `Immer.produce` is told from another `produce` there.
pub(super) async fn holder_in_outline(
    context: &Context,
    name: &str,
    location: &lsp_types::Location,
    encoding: PositionEncoding,
) -> Option<String> {
    let path = uri_to_path(location.uri.as_str())?;
    let outlined = outlined_at(context, &path, name, |text| {
        symbols::point(text, location.range.start, encoding)
    })
    .await?;
    outlined.holder
}

/// The definitions found by text of a member asked for as `Type.member`
/// that their file's outline places in `Type`, each with the kind the
/// outline gives it: a server that names no symbols (pylsp) or only a
/// module's own (jedi), or one whose workspace symbols are partial while
/// it checks the project (pyrefly), still outlines a file. Asked for a
/// name alone, every definition is kept, with no kind.
pub(super) async fn held_by_owner<'a>(
    context: &Context,
    definitions: Vec<&'a definitions::TextDefinition>,
    symbol: &str,
) -> Vec<(&'a definitions::TextDefinition, Option<SymbolKind>)> {
    let Some((_, member)) = symbols::qualifier(symbol) else {
        return definitions.into_iter().map(|found| (found, None)).collect();
    };
    let mut kept = Vec::new();
    for definition in definitions {
        let line = definition.line.saturating_sub(1);
        let outlined = outlined_at(context, &definition.path, member, |text| {
            let column = line_at(text, line).and_then(|text| find_word(text, member, 0));
            (line, column.unwrap_or(0))
        })
        .await;
        if let Some(outlined) = outlined
            && symbols::names_in(member, outlined.holder.as_deref(), symbol)
        {
            kept.push((definition, Some(outlined.kind)));
        }
    }
    kept
}

/// What a file's outline says of a name at one point.
struct Outlined {
    /// The kind of the innermost symbol of that name there.
    kind: SymbolKind,
    /// The name of the symbol holding it, if any.
    holder: Option<String>,
}

/// The innermost symbol named `name` at the point `at` picks in the text
/// of the file at `path`, by its outline, and what holds it.
async fn outlined_at(
    context: &Context,
    path: &std::path::Path,
    name: &str,
    at: impl FnOnce(&str) -> (usize, usize),
) -> Option<Outlined> {
    let document = context.snapshot(path, &path.display().to_string()).ok()?;
    let server = context.route(path).await.ok()?;
    let mut reply = context
        .document_symbols(&server, document.clone())
        .await
        .ok()?;
    let outline = symbols::document_symbols(&mut reply, &document.text).ok()?;
    let at = at(&document.text);
    let around = symbols::around(&outline, &document.text, reply.encoding, at);
    let member = around
        .iter()
        .rposition(|symbol| symbols::names(name, &symbol.name))?;
    Some(Outlined {
        kind: around.get(member)?.kind,
        holder: member
            .checked_sub(1)
            .and_then(|holder| around.get(holder))
            .map(|holder| holder.name.clone()),
    })
}

/// Why the servers missed definitions the text search found: what they
/// said about those files, or that their index is partial.
fn missed_notes(
    roots: &RootSet,
    problems: &[(String, Problem)],
    missed: &[&Candidate],
) -> Vec<String> {
    if missed.is_empty() {
        return Vec::new();
    }
    let mut notes = vec![definitions::only_by_text(missed.len())];
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
    /// The languages of the servers that answered.
    languages: Vec<String>,
    /// Files each server (by label) said it could not fully read.
    problems: Vec<(String, Problem)>,
    /// Servers the roots need that could not be asked.
    unavailable: Vec<String>,
    /// What the servers said about how complete their answers are.
    warnings: Vec<String>,
    /// The languages whose servers answer no workspace symbols at all.
    nameless: Vec<String>,
}

/// `workspace/symbol` on every running server at once, the symbol index
/// standing in for those that cannot answer (`workspace_names.rs`).
async fn workspace_symbols(context: &Context, query: &str) -> Result<WorkspaceAnswer> {
    let roots = context.root_set().await?;
    let mut answers = workspace_names::ask(context, &roots, query).await?;
    let mut answer = WorkspaceAnswer {
        symbols: Vec::new(),
        languages: answers.indexed_languages(),
        problems: Vec::new(),
        unavailable: std::mem::take(&mut answers.unavailable),
        warnings: std::mem::take(&mut answers.warnings),
        nameless: Vec::new(),
    };
    for (server, reply) in std::mem::take(&mut answers.replies) {
        let spec = &server.spec;
        let mut reply = match reply {
            Ok(reply) => reply,
            // A linter answers names for no language; its language server does.
            Err(Error::Unsupported { .. }) => {
                if spec.duties.role == Role::Language {
                    answer.nameless.extend(spec.languages.iter().cloned());
                }
                continue;
            }
            Err(error) => {
                answer.warnings.push(failed_warning(&error));
                continue;
            }
        };
        let found = match symbols::workspace_symbols(&mut reply) {
            Ok(found) => found,
            Err(error) => {
                answer.warnings.push(failed_warning(&error));
                continue;
            }
        };
        answer.languages.extend(spec.languages.iter().cloned());
        answer
            .symbols
            .extend(found.into_iter().map(|found| (found, reply.encoding)));
        answer.problems.extend(
            reply
                .problems
                .into_iter()
                .map(|problem| (server.label(), problem)),
        );
        answer.warnings.extend(reply.warnings);
    }
    if let Some(note) = answers.index_note() {
        answer.warnings.push(note);
        answer.symbols.extend(
            answers
                .indexed()
                .filter_map(indexing::as_found)
                .map(|found| (found, PositionEncoding::Utf32)),
        );
    }
    answer.nameless.sort();
    answer.nameless.dedup();
    Ok(answer)
}
