//! The navigation tools: the go-to family, references and the document
//! outline. Each resolves its address, sends one request and
//! renders the answer.

use super::address::{self, Position};
use super::configured_files::{self, Included};
use super::context::Context;
use super::goto::{DEFINITION, Goto};
use super::render::{self, Sources, Spot};
use super::symbols::{self, Symbol};
use super::target::{Resolved, Target};
use super::unresolved_code::{self, Unresolved};
use super::{bodies, definitions, text_uses};
use crate::error::Result;
use crate::language::{self, ReferencesFrom};
use crate::lsp::position::last_line;
use crate::lsp::protocol::Feature;
use crate::messages::language_server::Reply;
use crate::vocabulary::counted::counted;
use lsp_types::request::{References, Request};
use lsp_types::{PartialResultParams, ReferenceContext, ReferenceParams, WorkDoneProgressParams};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::HashSet;

/// Above this size, references are listed as bare positions, so that a
/// heavily used symbol is still listed completely.
const REFERENCES_WITH_SOURCE_BYTES: usize = 8 * 1024;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReferencesArgs {
    #[serde(flatten)]
    pub position: Position,
    // Default true; left out of the schema, where every byte is paid.
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

pub async fn goto(context: &Context, position: &Position, goto: Goto) -> Result<String> {
    let target = match target_or_candidates(context, position).await? {
        Ok(target) => target,
        Err(candidates) => return Ok(candidates),
    };
    let mut reply = context
        .request(&target.server, goto.request(&target)?)
        .await?;
    let (mut spots, outside) = spots(&target, &mut reply, goto.feature)?;
    let mut lines = render::notes(&target.roots, &reply);
    if goto.feature == DEFINITION.feature {
        let answered: Vec<&str> = spots
            .iter()
            .filter_map(|spot| spot.source.as_deref())
            .collect();
        let found = bodies::instead_of(context, &target, &answered).await;
        if !found.is_empty() {
            lines.push(bodies::note(&target));
            spots = found
                .into_iter()
                .map(|definition| Spot {
                    path: target.roots.display(&definition.path),
                    line: definition.line,
                    column: definition.column,
                    source: Some(definition.text),
                })
                .collect();
        }
    }
    if spots.is_empty() {
        let what = target
            .word()
            .map(|word| format!("`{word}` at "))
            .unwrap_or_default();
        lines.extend(unresolved_here(&target));
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
    let params = ReferenceParams {
        text_document_position: target.position_params()?,
        context: ReferenceContext {
            include_declaration: args.include_declaration.unwrap_or(true),
        },
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    let request = target.request(References::METHOD, &params, Feature::References)?;
    let mut reply = context.request(&target.server, request).await?;
    let (spots, outside) = spots(&target, &mut reply, Feature::References)?;
    let mut head = render::notes(&target.roots, &reply);
    // The files a configuration includes are read, and need no looking
    // at again: only those it leaves out.
    let mut included = None;
    let reason = match target.server.spec.references_from {
        ReferencesFrom::OpenFiles => Some(text_uses::Reason::OpenFilesOnly),
        ReferencesFrom::NamedFiles => Some(text_uses::Reason::NamedFilesOnly),
        ReferencesFrom::PageScripts => Some(text_uses::Reason::PageScriptsOnly),
        ReferencesFrom::PyrightIncluded(tools) => {
            included = target
                .roots
                .root_of(&target.document.path)
                .and_then(|root| configured_files::pyright_included(&root.path, tools));
            included
                .is_some()
                .then_some(text_uses::Reason::ConfiguredFilesOnly)
        }
        ReferencesFrom::Project => reply
            .background_index
            .then_some(text_uses::Reason::BackgroundIndex),
    };
    let own_languages = target.server.spec.languages.clone();
    let mut unlisted = match reason {
        Some(reason) => {
            let read = included.as_ref();
            unlisted_by_text(context, &target, &spots, own_languages, reason, read).await
        }
        None => None,
    }
    .into_iter()
    .collect::<Vec<_>>();
    unlisted.extend(in_unresolved_code(context, &target, &spots).await);
    for language in unread_importers(context, &target).await {
        let reason = text_uses::Reason::Unread(language);
        let languages = vec![language.to_owned()];
        unlisted.extend(unlisted_by_text(context, &target, &spots, languages, reason, None).await);
    }
    if spots.is_empty() {
        head.push(format!("no references found for {}", target.describe()));
        head.extend(outside);
        head.extend(unlisted);
        return Ok(render::bounded(&head, context.settings.max_output_bytes));
    }
    let files = spots
        .iter()
        .map(|spot| &spot.path)
        .collect::<std::collections::HashSet<_>>()
        .len();
    head.push(format!(
        "{} in {}",
        counted(spots.len(), "reference"),
        counted(files, "file")
    ));
    head.extend(outside);
    head.extend(unlisted);
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

/// The languages in the workspace whose files import the server's
/// modules but which it does not read (Svelte components, for
/// typescript-language-server): its references cannot include them.
async fn unread_importers(context: &Context, target: &Target) -> Vec<&'static str> {
    let spec = &target.server.spec;
    let importers: Vec<&'static str> = language::importers_of(&spec.languages)
        .into_iter()
        .filter(|language| !spec.serves(language))
        .collect();
    if importers.is_empty() {
        return importers;
    }
    // A language has a server in the workspace when the roots hold its
    // files; none is started, or missing, for a language they do not.
    let Ok(servers) = context.workspace_servers().await else {
        return Vec::new();
    };
    importers
        .into_iter()
        .filter(|language| {
            servers
                .running
                .iter()
                .any(|server| server.spec.serves(language))
        })
        .collect()
}

/// The note on files of `languages` that name the target's word by text
/// but hold none of the references listed, if any do: asked only where
/// the server's references can lack a file, for `reason` (a server that
/// reads the files it is asked about, such as pyright, would only be told
/// of other things of the same name). Files the server is known to read
/// (`read`) are left out of what is said.
async fn unlisted_by_text(
    context: &Context,
    target: &Target,
    spots: &[Spot],
    languages: Vec<String>,
    reason: text_uses::Reason,
    read: Option<&Included>,
) -> Option<String> {
    let word = target.word()?;
    let mut listed: HashSet<String> = spots.iter().map(|spot| spot.path.clone()).collect();
    if reason != text_uses::Reason::PageScriptsOnly {
        listed.insert(target.roots.display(&target.document.path));
    }
    let roots = target.roots.clone();
    let other_definitions = definitions::Matchers::new(&word, definitions::Counted::Definitions)
        .filter(|matchers| {
            spots.iter().any(|spot| {
                let line = spot.source.as_deref().unwrap_or_default();
                matchers.defines(&target.document.language_id, line)
            })
        });
    let search = {
        let word = word.clone();
        let sketches = context.shared.sketches.clone();
        tokio::task::spawn_blocking(move || {
            text_uses::unlisted(
                &sketches,
                &roots,
                &word,
                &languages,
                &listed,
                other_definitions.as_ref(),
                text_uses::SEARCH_BUDGET,
            )
        })
    };
    let mut found = search.await.ok()?;
    if let Some(read) = read {
        found.files.retain(|(path, _)| !read.holds(path));
    }
    found.note(&target.roots, &word, reason)
}

/// A warning when the target stands in code its server does not resolve
/// (a use inside a Rust test macro's body finds no definition), with the
/// question that finds it there: by name.
fn unresolved_here(target: &Target) -> Option<String> {
    let unresolved = Unresolved::of(&target.document.language_id)?;
    if !unresolved.holds_line(&target.document.text, target.position.line) {
        return None;
    }
    let by_name = target
        .word()
        .map(|word| format!("; ask for `{word}` by name (`symbol` alone)"))
        .unwrap_or_default();
    Some(format!(
        "warning: [{}] line {} is {}{by_name}",
        target.server.label(),
        target.position.line + 1,
        unresolved.one_line_is()
    ))
}

/// The note on the lines of code the target's server does not resolve
/// (Rust's macro bodies, C's preprocessor branches) that name the
/// target's word and are not among the references listed, if any do.
async fn in_unresolved_code(context: &Context, target: &Target, spots: &[Spot]) -> Option<String> {
    let unresolved = Unresolved::of(&target.document.language_id)?;
    let word = target.word()?;
    let listed: HashSet<(String, usize)> = spots
        .iter()
        .map(|spot| (spot.path.clone(), spot.line))
        .collect();
    let (sketches, roots) = (context.shared.sketches.clone(), target.roots.clone());
    let search = {
        let word = word.clone();
        tokio::task::spawn_blocking(move || {
            unresolved_code::unlisted_uses(
                &sketches,
                &roots,
                unresolved,
                &word,
                &listed,
                text_uses::SEARCH_BUDGET,
            )
        })
    };
    let found = search.await.ok()?;
    unresolved_code::note(&target.roots, unresolved, &word, &found)
}

/// The spots of a location answer, and the note on those left out as
/// outside the roots.
fn spots(
    target: &Target,
    reply: &mut Reply,
    feature: Feature,
) -> Result<(Vec<Spot>, Option<String>)> {
    let locations = render::locations(reply, feature)?;
    let mut sources = Sources::new(&target.roots);
    let word = target.word();
    let spots = locations
        .into_iter()
        .filter_map(|location| {
            let (uri, range) = (location.uri.as_str(), location.range);
            match &word {
                Some(word) => sources.spot_of_declared(uri, range, reply.encoding, word),
                None => sources.spot(uri, range, reply.encoding),
            }
        })
        .collect();
    Ok((spots, sources.outside_note()))
}

pub fn offset(given: Option<u32>) -> usize {
    given.map_or(0, |offset| offset as usize)
}

pub async fn document_symbols(context: &Context, args: &OutlineArgs) -> Result<String> {
    let (roots, path) = context.resolve(&args.file).await?;
    let document = context.snapshot(&path, &args.file)?;
    let server = context.route(&path).await?;
    let mut reply = context.document_symbols(&server, document.clone()).await?;
    let symbols = symbols::document_symbols(&mut reply, &document.text)?;
    let depth = args.depth.unwrap_or(3).max(1) as usize;
    let mut body = Vec::new();
    outline(&symbols, 0, depth, &mut body);
    let mut head = render::notes(&roots, &reply);
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

/// `kind name first-last` per symbol in line order, whatever order the
/// server sent them in, indented by nesting, down to `depth` levels; the
/// deepest level shown says how many children it hides.
fn outline(symbols: &[Symbol], level: usize, depth: usize, lines: &mut Vec<String>) {
    let mut ordered: Vec<&Symbol> = symbols.iter().collect();
    ordered.sort_by_key(|symbol| (symbol.range.start.line, symbol.range.start.character));
    for symbol in ordered {
        let kind = render::symbol_kind(symbol.kind);
        let (start, end) = (symbol.range.start.line + 1, last_line(&symbol.range) + 1);
        let span = match end > start {
            true => format!(" {start}-{end}"),
            false => format!(" {start}"),
        };
        let hidden = match symbol.children.len() {
            count if count > 0 && level + 1 >= depth => format!(" (+{count} nested)"),
            _ => String::new(),
        };
        lines.push(format!(
            "{}{kind} {}{span}{hidden}",
            "  ".repeat(level),
            symbol.name
        ));
        if level + 1 < depth {
            outline(&symbol.children, level + 1, depth, lines);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::symbols::DocumentItem;
    use serde_json::{Value, json};

    fn range(line: u32, character: u32, end: u32) -> Value {
        json!({"start": {"line": line, "character": character}, "end": {"line": end, "character": 1}})
    }

    /// A `DocumentSymbol` spanning lines `line` to `end`.
    fn nested(
        name: &str,
        kind: u32,
        (line, character, end): (u32, u32, u32),
        children: Value,
    ) -> Value {
        let range = range(line, character, end);
        json!({"name": name, "kind": kind, "range": range, "selectionRange": range, "children": children})
    }

    fn read(symbols: Value) -> Vec<Symbol> {
        let items: Vec<DocumentItem> = serde_json::from_value(symbols).unwrap();
        items.into_iter().map(Symbol::from).collect()
    }

    #[test]
    fn outlines_come_in_line_order_whatever_the_server_sent() {
        let symbols = read(json!([
            nested("zeta", 12, (1, 0, 1), json!([])),
            nested(
                "Alpha",
                5,
                (4, 0, 8),
                json!([
                    nested("z", 6, (7, 2, 7), json!([])),
                    nested("a", 6, (5, 2, 5), json!([])),
                ])
            ),
            nested("beta", 12, (0, 0, 0), json!([])),
        ]));
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
        let symbols = read(json!([
            nested("Shape", 5, (0, 0, 9), json!([
                nested("area", 6, (2, 0, 4), json!([nested("inner", 13, (3, 0, 3), json!([]))])),
            ])),
            {"name": "main", "kind": 12, "location": {"uri": "file:///x", "range": range(11, 0, 11)}},
        ]));
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
