//! The `search` tool: workspace symbols from every running server, merged
//! and ranked, plus a text heatmap of the roots (which files match, how
//! often, between which lines) from ripgrep's own libraries.

use super::address;
use super::candidates;
use super::configured_files::{self, Included};
use super::context::Context;
use super::definitions::{self, Counted};
use super::indexed;
use super::navigation::offset;
use super::render::{self, Sources, failed_warning, unavailable_warning};
use super::source_files;
use super::symbols;
use super::words;
use super::workspace_names;
use crate::error::{Error, Result};
use crate::language::{ReferencesFrom, language_id};
use crate::listings::Listed;
use crate::lsp::position::PositionEncoding;
use crate::lsp::uri::uri_to_path;
use crate::messages::language_server::Problem;
use crate::sketches::{Needle, Sketches, Tally};
use crate::vocabulary::counted::counted;
use crate::vocabulary::root_set::RootSet;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::Searcher;
use lsp_types::SymbolKind;
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::PathBuf;
use std::sync::Mutex;

/// Symbols shown per query; the rest are counted.
const MAX_SYMBOLS: usize = 20;
/// Files shown in the heatmap per query; the rest are counted.
const MAX_FILES: usize = 20;
/// Files a server could not read that are named per query.
const MAX_PROBLEMS_NAMED: usize = 3;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Literal; all lower case = case-insensitive.
    pub query: Option<String>,
    pub queries: Option<Vec<String>>,
    // Symbols and files to skip, as each list's "more" line says (a
    // description here would cost every session its bytes).
    pub offset: Option<u32>,
}

/// A workspace symbol as found: name, kind, displayed path, line, column.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FoundSymbol {
    name: String,
    /// `None` for a definition found only by text.
    kind: Option<SymbolKind>,
    path: String,
    line: usize,
    column: usize,
    origin: Origin,
}

/// Where a symbol of the answer comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// A live server's workspace symbols.
    Server,
    /// The symbol index, standing in for a server.
    Index,
    /// A line that reads like its definition, which no server named.
    Text,
    /// A line that reads like its declaration (a C prototype), where
    /// nothing defines it.
    TextDeclaration,
}

/// One file's matches.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileHits {
    path: PathBuf,
    tally: Tally,
}

pub async fn search(context: &Context, args: &SearchArgs) -> Result<String> {
    let queries: Vec<String> = args
        .query
        .iter()
        .chain(args.queries.iter().flatten())
        .filter(|q| !q.is_empty())
        .cloned()
        .collect();
    if queries.is_empty() {
        return Err(Error::InvalidArgument("give `query` or `queries`".into()));
    }
    let roots = context.root_set().await?;
    // The text search may walk a kept listing of the files, which is only
    // as new as the last change the watcher has taken in.
    context.take_in_changes().await?;
    let mut lines = Vec::new();
    for query in &queries {
        if queries.len() > 1 {
            lines.push(format!("## {query}"));
        }
        // The text is read while the servers and the index are asked: on
        // a big tree either takes a good part of the answer's time.
        let text = {
            let roots = roots.clone();
            let query = query.clone();
            let sketches = context.shared.sketches.clone();
            tokio::task::spawn_blocking(move || {
                let started = std::time::Instant::now();
                heatmap(&roots, &query, &sketches).map(|hits| (hits, started.elapsed()))
            })
        };
        let started = std::time::Instant::now();
        let found = symbols(context, &roots, query).await?;
        let named = started.elapsed();
        let (hits, read) = text.await.map_err(|_| Error::ShuttingDown)??;
        let mut found = found;
        let unnamed = in_unnamed_files(&roots, query, &found.symbols, &hits).await;
        if !unnamed.is_empty() {
            found
                .warnings
                .push(definitions::only_by_text(unnamed.len()));
            found.symbols.extend(unnamed);
            found.symbols = rank(std::mem::take(&mut found.symbols), query);
        }
        tracing::debug!(
            query = %query,
            "search: names in {} ms, text in {} ms",
            named.as_millis(),
            read.as_millis()
        );
        let skip = offset(args.offset);
        lines.extend(found.warnings);
        lines.extend(unread_lines(&roots, &found.problems, &hits));
        lines.extend(outside_included_lines(&roots, &found.included_only, &hits));
        lines.extend(symbol_lines(query, found.symbols, skip));
        lines.extend(found.outside);
        lines.extend(heatmap_lines(&roots, &hits, skip));
    }
    Ok(render::bounded(&lines, context.settings.max_output_bytes))
}

/// The files of a server's languages the text search matched outside the
/// paths its configuration includes: it names no symbol in them (pyright
/// left out every `__init__` of requests' tests, which include only
/// `src/requests`). A few are named, the rest counted.
fn outside_included_lines(
    roots: &RootSet,
    included_only: &[(String, Vec<String>, Included)],
    hits: &[FileHits],
) -> Vec<String> {
    included_only
        .iter()
        .filter_map(|(label, languages, included)| {
            let outside: Vec<String> = hits
                .iter()
                .filter(|hit| {
                    language_id(&hit.path)
                        .is_some_and(|language| languages.iter().any(|served| served == language))
                        && !included.holds(&hit.path)
                })
                .map(|hit| roots.display(&hit.path))
                .collect();
            if outside.is_empty() {
                return None;
            }
            let more = match outside.len().saturating_sub(MAX_PROBLEMS_NAMED) {
                0 => String::new(),
                more => format!(" and {more} more"),
            };
            Some(format!(
                "warning: [{label}] names symbols only in the paths its configuration's `include` names, and the files open; the text matches in {} outside them: {}{more}",
                counted(outside.len(), "file"),
                outside
                    .iter()
                    .take(MAX_PROBLEMS_NAMED)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" ")
            ))
        })
        .collect()
}

/// What the servers said about files the text search matched: their
/// symbols from those files may be missing. A few are named, the rest
/// counted.
fn unread_lines(roots: &RootSet, problems: &[(String, Problem)], hits: &[FileHits]) -> Vec<String> {
    let relevant: Vec<&(String, Problem)> = problems
        .iter()
        .filter(|(_, problem)| {
            uri_to_path(&problem.uri).is_some_and(|path| hits.iter().any(|hit| hit.path == path))
        })
        .collect();
    let mut lines: Vec<String> = relevant
        .iter()
        .take(MAX_PROBLEMS_NAMED)
        .map(|(label, problem)| render::problem_line(roots, label, problem))
        .collect();
    if relevant.len() > MAX_PROBLEMS_NAMED {
        lines.push(format!(
            "warning: … and {} more matching files a server could not fully read",
            relevant.len() - MAX_PROBLEMS_NAMED
        ));
    }
    lines
}

/// Workspace symbols from every server, and what to say about them.
struct Found {
    symbols: Vec<FoundSymbol>,
    warnings: Vec<String>,
    /// Files each server (by label) said it could not fully read.
    problems: Vec<(String, Problem)>,
    /// The note on symbols left out as outside the roots.
    outside: Option<String>,
    /// The servers that name symbols only in the paths their project
    /// configuration includes (pyright's `include`), by label, with their
    /// languages and those paths.
    included_only: Vec<(String, Vec<String>, Included)>,
}

/// `workspace/symbol` on every server the workspace needs; a server that is
/// down or fails adds a warning instead of vanishing, and the symbol
/// index stands in for it when it can (`workspace_names.rs`). A query
/// written `Type.member` asks for the member and keeps those the server
/// places in that type: pyright and tsserver match names alone, and
/// found nothing for `Session.request`.
async fn symbols(context: &Context, roots: &RootSet, query: &str) -> Result<Found> {
    let member = symbols::qualifier(query).map_or(query, |(_, member)| member);
    let wanted = |name: &str, container: Option<&str>| {
        member == query || symbols::names_in(name, container, query)
    };
    let mut answers = workspace_names::ask(context, roots, member).await?;
    let mut warnings: Vec<String> = answers
        .unavailable
        .iter()
        .map(|name| unavailable_warning(name))
        .collect();
    warnings.append(&mut answers.warnings);
    let mut sources = Sources::new(roots);
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let mut included_only = Vec::new();
    for (server, reply) in std::mem::take(&mut answers.replies) {
        let label = server.label();
        if let ReferencesFrom::PyrightIncluded(tools) = server.spec.references_from {
            included_only.extend(roots.roots().iter().filter_map(|root| {
                let included = configured_files::pyright_included(&root.path, tools)?;
                Some((label.clone(), server.spec.languages.clone(), included))
            }));
        }
        let mut reply = match reply {
            Ok(reply) => reply,
            Err(crate::error::Error::Unsupported { .. }) => continue,
            Err(error) => {
                warnings.push(failed_warning(&error));
                tracing::debug!(server = %label, "workspace symbols failed");
                continue;
            }
        };
        let symbols = match symbols::workspace_symbols(&mut reply) {
            Ok(symbols) => symbols,
            Err(error) => {
                warnings.push(failed_warning(&error));
                continue;
            }
        };
        warnings.append(&mut reply.warnings);
        problems.extend(
            reply
                .problems
                .drain(..)
                .map(|problem| (label.clone(), problem)),
        );
        let mut outlines_left = MAX_OUTLINED_MEMBERS;
        for symbol in symbols {
            let unplaced_member = symbol.container.is_none()
                && member != query
                && symbols::names(&symbol.name, member);
            let placed = match wanted(&symbol.name, symbol.container.as_deref()) {
                true => true,
                false if unplaced_member && outlines_left > 0 => {
                    outlines_left -= 1;
                    held_in(context, &symbol.location, reply.encoding, query).await
                }
                false => false,
            };
            if !placed {
                continue;
            }
            let location = symbol.location;
            let own = words::own_name(&symbol.name);
            let Some(spot) =
                sources.spot_of_name(location.uri.as_str(), location.range, reply.encoding, own)
            else {
                continue;
            };
            found.push(FoundSymbol {
                name: symbol.name,
                kind: Some(symbol.kind),
                path: spot.path,
                line: spot.line,
                column: spot.column,
                origin: Origin::Server,
            });
        }
    }
    if let Some(note) = answers.index_note() {
        warnings.push(note);
        let indexed = answers
            .indexed()
            .filter(|indexed| wanted(&indexed.symbol.name, indexed.symbol.container.as_deref()));
        found.extend(indexed.map(|indexed| FoundSymbol {
            name: indexed.symbol.name.clone(),
            kind: Some(indexed::kind_of(indexed.symbol.kind)),
            path: roots.display(&indexed.path),
            line: indexed.symbol.line as usize + 1,
            column: indexed.symbol.column as usize + 1,
            origin: Origin::Index,
        }));
    }
    if !found
        .iter()
        .any(|symbol| words::own_name(&symbol.name) == member)
    {
        let by_text = by_text(context, roots, query, &found).await;
        if !by_text.is_empty() {
            warnings.push(definitions::only_by_text(by_text.len()));
        }
        found.extend(by_text);
    }
    warnings.dedup();
    Ok(Found {
        symbols: rank(found, member),
        warnings,
        problems,
        outside: sources.outside_note(),
        included_only,
    })
}

/// How many members named without a container one server's answer to a
/// `Type.member` query has placed by their file's outline.
const MAX_OUTLINED_MEMBERS: usize = 32;

/// Whether the member a server named alone, without a container (ty's
/// fields, typescript-language-server's members), at `location` is held
/// by the type `query` names, by its file's outline.
async fn held_in(
    context: &Context,
    location: &lsp_types::Location,
    encoding: PositionEncoding,
    query: &str,
) -> bool {
    let Some((_, member)) = symbols::qualifier(query) else {
        return false;
    };
    address::holder_in_outline(context, member, location, encoding)
        .await
        .is_some_and(|holder| symbols::names_in(member, Some(&holder), query))
}

/// The definitions of `query` found by text where no server named one
/// (code a server reads as unreachable, as pyright does a branch for
/// another platform; a file it could not parse or does not read), other
/// than the places `found` holds. Asked as `Type.member`, those of the
/// member that their file's outline places in `Type`, with the kind it
/// gives them.
async fn by_text(
    context: &Context,
    roots: &RootSet,
    query: &str,
    found: &[FoundSymbol],
) -> Vec<FoundSymbol> {
    let member = symbols::qualifier(query).map_or(query, |(_, member)| member);
    let (sketches, all, name) = (
        context.shared.sketches.clone(),
        roots.clone(),
        member.to_owned(),
    );
    let search = tokio::task::spawn_blocking(move || {
        definitions::find(&sketches, &all, &name, Counted::AlsoDeclarations)
    });
    let Ok(definitions) = search.await else {
        return Vec::new();
    };
    let placed = address::held_by_owner(context, definitions.iter().collect(), query).await;
    placed
        .into_iter()
        .map(|(definition, kind)| FoundSymbol {
            name: query.to_owned(),
            kind,
            path: roots.display(&definition.path),
            line: definition.line,
            column: definition.column,
            origin: match definitions::is_declaration(&definition.text) {
                true => Origin::TextDeclaration,
                false => Origin::Text,
            },
        })
        .filter(|text| {
            !found
                .iter()
                .any(|symbol| symbol.path == text.path && symbol.line == text.line)
        })
        .collect()
}

/// Files read at most for definitions no server named, the most
/// matching first.
const MAX_UNNAMED_FILES: usize = 32;

/// The definitions of `query` found by text in the files the text search
/// matched where the servers named it nowhere, though they named it
/// elsewhere in a file of the same language: a file a server does not read (gopls one that another
/// platform's build constraints select: uuid's `getHardwareInterface`
/// in `node_js.go` beside the one in `node_net.go`). A qualified query,
/// or one no server named at all (`by_text` searched everywhere), is
/// not looked for.
async fn in_unnamed_files(
    roots: &RootSet,
    query: &str,
    symbols: &[FoundSymbol],
    hits: &[FileHits],
) -> Vec<FoundSymbol> {
    let named = |symbol: &FoundSymbol| words::own_name(&symbol.name) == query;
    if symbols::qualifier(query).is_some() || !symbols.iter().any(named) {
        return Vec::new();
    }
    // Of the languages the servers named it in: not a build's output in
    // another (`dist/shapes.js` beside `src/shapes.ts`).
    let languages: Vec<&str> = symbols
        .iter()
        .filter(|symbol| named(symbol))
        .filter_map(|symbol| language_id(std::path::Path::new(&symbol.path)))
        .collect();
    let unnamed: Vec<PathBuf> = hits
        .iter()
        .filter(|hit| {
            let path = roots.display(&hit.path);
            language_id(&hit.path).is_some_and(|language| languages.contains(&language))
                && !symbols
                    .iter()
                    .any(|symbol| symbol.path == path && named(symbol))
        })
        .map(|hit| hit.path.clone())
        .take(MAX_UNNAMED_FILES)
        .collect();
    let name = query.to_owned();
    let read = tokio::task::spawn_blocking(move || definitions::in_files(&unnamed, &name));
    read.await
        .unwrap_or_default()
        .into_iter()
        .map(|definition| FoundSymbol {
            name: query.to_owned(),
            kind: None,
            path: roots.display(&definition.path),
            line: definition.line,
            column: definition.column,
            origin: Origin::Text,
        })
        .collect()
}

/// Exact names first, then names that start with the query, then the
/// rest, definitions before bindings within each; duplicates dropped: one name at one place is one symbol, however
/// each server spells it (svelteserver gives `createToastState()` where
/// TypeScript's gives `createToastState`). A macro's call is the place of
/// every method it generates, so names still tell those apart.
fn rank(mut found: Vec<FoundSymbol>, query: &str) -> Vec<FoundSymbol> {
    let lower = query.to_lowercase();
    found.sort_by_key(|symbol| {
        // gopls names a method `FlagSet.GetString`, intelephense
        // `Router::addGroup`: the member's own name is what was asked.
        let own = words::own_name(&symbol.name);
        let name = own.to_lowercase();
        let tier = if own == query {
            0
        } else if name == lower {
            1
        } else if name.starts_with(&lower) {
            2
        } else {
            3
        };
        // Of one name, what is defined (functions, types, methods) before
        // what is only bound (locals of tests named like it).
        let bound_only = symbol
            .kind
            .is_some_and(|kind| !candidates::is_definition_kind(kind));
        (
            tier,
            bound_only,
            own.len(),
            symbol.path.clone(),
            symbol.line,
        )
    });
    let mut places = std::collections::HashSet::new();
    found.retain(|symbol| {
        let name = words::own_name(&symbol.name)
            .trim_end_matches("()")
            .to_owned();
        places.insert((symbol.path.clone(), symbol.line, symbol.column, name))
    });
    found
}

/// The symbols from `skip` on, [`MAX_SYMBOLS`] of them, grouped by file;
/// a last line names the offset that shows the next ones.
fn symbol_lines(query: &str, symbols: Vec<FoundSymbol>, skip: usize) -> Vec<String> {
    if symbols.is_empty() {
        return vec![format!("symbols: none named like {query:?}")];
    }
    let total = symbols.len();
    let mut lines = vec![format!("symbols ({total})")];
    if skip > 0 {
        lines.push(format!("  … {} before", skip.min(total)));
    }
    let shown: Vec<FoundSymbol> = symbols.into_iter().skip(skip).take(MAX_SYMBOLS).collect();
    let after = total.saturating_sub(skip + shown.len());
    let mut paths: Vec<&str> = Vec::new();
    for symbol in &shown {
        if !paths.contains(&symbol.path.as_str()) {
            paths.push(&symbol.path);
        }
    }
    for path in paths {
        lines.push(format!("  {path}"));
        for symbol in shown.iter().filter(|symbol| symbol.path == path) {
            let (kind, source) = match (symbol.kind, symbol.origin) {
                (Some(kind), Origin::Index) => (render::symbol_kind(kind), " (index)"),
                (Some(kind), Origin::Text | Origin::TextDeclaration) => {
                    (render::symbol_kind(kind), " (text)")
                }
                (Some(kind), _) => (render::symbol_kind(kind), ""),
                (None, Origin::TextDeclaration) => ("declaration", " (text)"),
                (None, _) => ("definition", " (text)"),
            };
            lines.push(format!(
                "    {kind} {} {}:{}{source}",
                symbol.name, symbol.line, symbol.column
            ));
        }
    }
    if after > 0 {
        lines.push(format!(
            "  … {after} more symbols (call again with offset={})",
            skip + MAX_SYMBOLS
        ));
    }
    lines
}

/// Every file under the roots that matches, gitignore-aware and skipping
/// binary files, most matches first. The files are searched by a thread
/// per core.
fn heatmap(roots: &RootSet, query: &str, sketches: &Sketches) -> Result<Vec<FileHits>> {
    let matcher = RegexMatcherBuilder::new()
        .fixed_strings(true)
        .case_smart(true)
        .build(query)
        .map_err(|error| Error::InvalidArgument(format!("query {query:?}: {error}")))?;
    let needle = Needle::new(query);
    let hits = Mutex::new(Vec::new());
    sketches.load(roots);
    for root in roots.roots() {
        source_files::search_in_parallel(sketches.listings(), &root.path, |searcher, file| {
            let found = file_hits(searcher, &matcher, sketches, &needle, file);
            if let (Some(found), Ok(mut hits)) = (found, hits.lock()) {
                hits.push(found);
            }
        });
    }
    let mut hits = hits.into_inner().map_err(|_| Error::ShuttingDown)?;
    hits.sort_by(|a, b| {
        b.tally
            .matches
            .cmp(&a.tally.matches)
            .then_with(|| a.path.cmp(&b.path))
    });
    Ok(hits)
}

/// The matches of one file, if it has any.
fn file_hits(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    sketches: &Sketches,
    needle: &Needle,
    file: &Listed,
) -> Option<FileHits> {
    let tally = sketches.tally(searcher, matcher, file, needle).ok()?;
    (tally.matches > 0).then(|| FileHits {
        path: file.path.clone(),
        tally,
    })
}

/// The files from `skip` on, [`MAX_FILES`] of them; a last line names the
/// offset that shows the next ones.
fn heatmap_lines(roots: &RootSet, hits: &[FileHits], skip: usize) -> Vec<String> {
    if hits.is_empty() {
        return vec!["text: no matches".into()];
    }
    let total: u64 = hits.iter().map(|hit| hit.tally.matches).sum();
    let mut lines = vec![format!(
        "text ({} in {})",
        counted(total, "match"),
        counted(hits.len(), "file")
    )];
    if skip > 0 {
        lines.push(format!("  … {} before", skip.min(hits.len())));
    }
    for hit in hits.iter().skip(skip).take(MAX_FILES) {
        let span = if hit.tally.first_line == hit.tally.last_line {
            format!("line {}", hit.tally.first_line)
        } else {
            format!("lines {}-{}", hit.tally.first_line, hit.tally.last_line)
        };
        lines.push(format!(
            "  {}  {} × {span}",
            roots.display(&hit.path),
            hit.tally.matches
        ));
    }
    let after = hits.len().saturating_sub(skip + MAX_FILES);
    if after > 0 {
        lines.push(format!(
            "  … {after} more files (call again with offset={})",
            skip + MAX_FILES
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbol(name: &str, path: &str, line: usize) -> FoundSymbol {
        FoundSymbol {
            name: name.into(),
            kind: Some(SymbolKind::FUNCTION),
            path: path.into(),
            line,
            column: 1,
            origin: Origin::Server,
        }
    }

    #[test]
    fn ranks_exact_then_prefix_then_others_without_duplicates() {
        let found = vec![
            symbol("func_10", "a.py", 3),
            symbol("my_func_1", "a.py", 9),
            symbol("func_1", "b.py", 1),
            symbol("func_1()", "b.py", 1),
            symbol("Func_1", "c.py", 2),
        ];
        let names: Vec<(String, String)> = rank(found, "func_1")
            .into_iter()
            .map(|s| (s.name, s.path))
            .collect();
        let expected = [
            ("func_1", "b.py"),
            ("Func_1", "c.py"),
            ("func_10", "a.py"),
            ("my_func_1", "a.py"),
        ];
        assert_eq!(names, expected.map(|(n, p)| (n.to_owned(), p.to_owned())));
    }

    #[test]
    fn names_at_one_place_stay_apart() {
        // rust-analyzer places every method a macro generates at its call.
        let found = vec![
            symbol("pow", "int.rs", 496),
            symbol("checked_pow", "int.rs", 496),
        ];
        assert_eq!(rank(found, "pow").len(), 2);
    }

    #[test]
    fn a_members_own_name_is_an_exact_match() {
        let found = vec![
            symbol("GetStringSlice", "flag.go", 3),
            symbol("FlagSet.GetStringArray", "flag.go", 9),
            symbol("FlagSet.GetString", "string.go", 20),
        ];
        let first = rank(found, "GetString").remove(0);
        assert_eq!(first.name, "FlagSet.GetString");
    }

    #[test]
    fn every_more_line_names_the_offset_that_continues_it() {
        let found: Vec<FoundSymbol> = (0..45)
            .map(|n| symbol(&format!("name{n:02}"), "a.py", n + 1))
            .collect();
        let first = symbol_lines("name", found.clone(), 0);
        assert_eq!(
            first.last().unwrap(),
            "  … 25 more symbols (call again with offset=20)"
        );
        let second = symbol_lines("name", found.clone(), 20);
        assert_eq!(second[1], "  … 20 before");
        assert_eq!(
            second.last().unwrap(),
            "  … 5 more symbols (call again with offset=40)"
        );
        let last = symbol_lines("name", found, 40);
        assert_eq!(last.last().unwrap(), "    function name44 45:1");
    }

    #[test]
    fn hidden_directories_are_searched_but_not_version_controls() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".github/workflows")).unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".github/workflows/ci.yml"), "run: needle\n").unwrap();
        std::fs::write(dir.path().join(".git/config"), "needle\n").unwrap();
        let roots = RootSet::new(&[dir.path().to_path_buf()]).unwrap();
        let hits = heatmap(&roots, "needle", &Sketches::default()).unwrap();
        let lines = heatmap_lines(&roots, &hits, 0);
        assert_eq!(
            lines,
            vec![
                "text (1 match in 1 file)",
                "  .github/workflows/ci.yml  1 × line 1"
            ]
        );
    }

    #[test]
    fn maps_text_matches_per_file_skipping_ignored_and_binary_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "ignored.txt\n").unwrap();
        std::fs::write(dir.path().join("a.txt"), "needle\nx\nneedle needle\n").unwrap();
        std::fs::write(dir.path().join("ignored.txt"), "needle\n").unwrap();
        std::fs::write(dir.path().join("blob.bin"), b"needle\0\x01").unwrap();
        std::fs::write(dir.path().join("b.txt"), "NEEDLE\n").unwrap();
        // Written a while ago, so that their sketches are kept.
        let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        for name in ["a.txt", "ignored.txt", "blob.bin", "b.txt"] {
            let file = std::fs::File::options()
                .write(true)
                .open(dir.path().join(name));
            file.unwrap().set_modified(long_ago).unwrap();
        }
        let roots = RootSet::new(&[dir.path().to_path_buf()]).unwrap();
        let sketches = Sketches::default();
        let hits = heatmap(&roots, "needle", &sketches).unwrap();
        let lines = heatmap_lines(&roots, &hits, 0);
        assert_eq!(
            lines,
            vec![
                "text (4 matches in 2 files)",
                "  a.txt  3 × lines 1-3",
                "  b.txt  1 × line 1"
            ]
        );
        // Asked again, from the files' sketches, then from their words.
        assert_eq!(heatmap(&roots, "needle", &sketches).unwrap(), hits);
        assert_eq!(heatmap(&roots, "needle", &sketches).unwrap(), hits);
        let exact = heatmap(&roots, "NEEDLE", &sketches).unwrap();
        assert_eq!(exact.len(), 1, "an upper-case query is case-sensitive");
        assert!(heatmap(&roots, "haystack", &sketches).unwrap().is_empty());
    }
}
