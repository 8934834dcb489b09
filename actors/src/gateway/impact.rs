//! The `impact` tool: what a change to a symbol reaches. Its references,
//! each placed in the function, method or type that holds it; then the
//! references of those holders, and so on up to `depth`; grouped by
//! level, file and holder, with test files marked. One call instead of a
//! dozen `find_references`.

use super::address::Position;
use super::context::Context;
use super::navigation::{self, target_or_candidates};
use super::render::{self, Sources};
use super::symbols::{self, Symbol};
use super::target::Target;
use crate::error::Result;
use crate::lsp::position::PositionEncoding;
use crate::lsp::protocol::Feature;
use crate::lsp::uri::uri_to_path;
use crate::vocabulary::counted::counted;
use crate::vocabulary::documents::{DocumentSnapshot, TextPosition};
use crate::vocabulary::root_set::RootSet;
use lsp_types::request::{References, Request};
use lsp_types::{
    PartialResultParams, ReferenceContext, ReferenceParams, SymbolKind, WorkDoneProgressParams,
};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImpactArgs {
    #[serde(flatten)]
    pub position: Position,
    /// Default 2.
    pub depth: Option<u32>,
    pub offset: Option<u32>,
}

const DEFAULT_DEPTH: u32 = 2;
const MAX_DEPTH: u32 = 4;
/// How many holders of one level are followed to the next: past this the
/// answer says how many were not.
const MAX_FOLLOWED: usize = 40;

/// A symbol that holds references: where it is and how it is named.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Holder {
    path: PathBuf,
    /// `kind Outer.name first-last`.
    title: String,
    /// Its name's position, to ask for its own references.
    at: (usize, usize),
}

/// One file's text and symbols, read once per call.
struct FileSymbols {
    document: DocumentSnapshot,
    symbols: Vec<Symbol>,
    encoding: PositionEncoding,
}

/// One level's references: by file, by holder (`None`: outside any
/// symbol), their 1-based lines.
type Level = BTreeMap<String, BTreeMap<Option<Holder>, Vec<usize>>>;

pub async fn impact(context: &Context, args: &ImpactArgs) -> Result<String> {
    let target = match target_or_candidates(context, &args.position).await? {
        Ok(target) => target,
        Err(candidates) => return Ok(candidates),
    };
    let depth = args.depth.unwrap_or(DEFAULT_DEPTH).clamp(1, MAX_DEPTH);
    let what = target
        .word()
        .map(|word| format!("`{word}` at "))
        .unwrap_or_default();
    let described = format!("{what}{}", target.describe());
    let roots = target.roots.clone();
    let mut walk = Walk {
        context,
        roots: &roots,
        files: HashMap::new(),
        sources: Sources::new(&roots),
        followed: HashSet::new(),
        head: Vec::new(),
    };
    // The symbol's own references inside it (recursion) lead nowhere new.
    let own_file = roots.display(&target.document.path);
    if let Some(own) = walk
        .holder_at(&target.document.path, &own_file, target.position)
        .await
    {
        walk.followed.insert(own);
    }
    let mut body = Vec::new();
    let mut frontier = vec![target];
    let (mut total, mut files, mut tests) = (0, HashSet::new(), HashSet::new());
    for level in 1..=depth {
        let (found, count) = walk.level(&frontier, level).await?;
        if found.is_empty() {
            if level == 1 {
                walk.head.push(format!("nothing refers to {described}"));
            }
            break;
        }
        total += count;
        files.extend(found.keys().cloned());
        tests.extend(found.keys().filter(|path| is_test_file(path)).cloned());
        let holders: Vec<Holder> = found
            .values()
            .flat_map(BTreeMap::keys)
            .flatten()
            .cloned()
            .collect();
        body.push(format!(
            "depth {level}: {} in {}, in {}",
            counted(count, "reference"),
            counted(found.len(), "file"),
            counted(holders.len(), "symbol")
        ));
        body.extend(level_lines(&found));
        if level == depth {
            break;
        }
        frontier = walk.next(holders, level).await;
        if frontier.is_empty() {
            break;
        }
    }
    let mut head = walk.head;
    if total > 0 {
        let tests = match tests.len() {
            0 => String::new(),
            count => format!(", {} of them tests", counted(count, "file")),
        };
        head.insert(
            0,
            format!(
                "impact of {described}: {} in {}{tests}",
                counted(total, "reference"),
                counted(files.len(), "file")
            ),
        );
    }
    head.extend(walk.sources.outside_note());
    Ok(render::paged(
        &head,
        &body,
        navigation::offset(args.offset),
        context.settings.max_output_bytes,
    ))
}

/// One call's walk through references: the files read, the holders
/// followed, and what the answer must say about itself.
struct Walk<'a> {
    context: &'a Context,
    roots: &'a Arc<RootSet>,
    files: HashMap<PathBuf, Option<FileSymbols>>,
    sources: Sources<'a>,
    followed: HashSet<Holder>,
    head: Vec<String>,
}

impl Walk<'_> {
    /// The references of every symbol of `frontier`, by file and holder,
    /// and how many. A failure at the first level is the answer's; later,
    /// a warning.
    async fn level(&mut self, frontier: &[Target], level: u32) -> Result<(Level, usize)> {
        let mut found: Level = BTreeMap::new();
        let mut count = 0;
        for asked in frontier {
            let uses = match reference_uses(self.context, asked, &mut self.sources).await {
                Ok((notes, uses)) => {
                    for note in notes {
                        if !self.head.contains(&note) {
                            self.head.push(note);
                        }
                    }
                    uses
                }
                Err(error) if level == 1 => return Err(error),
                Err(error) => {
                    let asked = asked.describe();
                    self.head
                        .push(format!("warning: references of {asked} failed: {error}"));
                    continue;
                }
            };
            for (path, position) in uses {
                let display = self.roots.display(&path);
                let holder = self.holder_at(&path, &display, position).await;
                found
                    .entry(display)
                    .or_default()
                    .entry(holder)
                    .or_default()
                    .push(position.line + 1);
                count += 1;
            }
        }
        Ok((found, count))
    }

    /// The holders of one level not followed yet, as positions to ask
    /// their references at; at most [`MAX_FOLLOWED`].
    async fn next(&mut self, holders: Vec<Holder>, level: u32) -> Vec<Target> {
        let next: Vec<Holder> = holders
            .into_iter()
            .filter(|holder| !self.followed.contains(holder))
            .collect();
        if next.len() > MAX_FOLLOWED {
            self.head.push(format!(
                "note: depth {} follows {MAX_FOLLOWED} of the {} symbols of depth {level}",
                level + 1,
                next.len()
            ));
        }
        let mut frontier = Vec::new();
        for holder in next.into_iter().take(MAX_FOLLOWED) {
            if let Some(asked) = self.target_of(&holder).await {
                frontier.push(asked);
            }
            self.followed.insert(holder);
        }
        frontier
    }

    /// The symbol that holds `position` of `path`: the innermost function,
    /// method, constructor or type around it, else the innermost top-level
    /// symbol (a module's variable); `None` outside every symbol.
    async fn holder_at(
        &mut self,
        path: &Path,
        display: &str,
        position: TextPosition,
    ) -> Option<Holder> {
        if !self.files.contains_key(path) {
            let read = read_symbols(self.context, path, display).await;
            self.files.insert(path.to_path_buf(), read);
        }
        let file = self.files.get(path)?.as_ref()?;
        holder_in(file, path, position)
    }

    /// A holder as a position to ask its references at.
    async fn target_of(&self, holder: &Holder) -> Option<Target> {
        let file = self.files.get(&holder.path)?.as_ref()?;
        let server = self.context.route(&holder.path).await.ok()?;
        Some(Target {
            roots: self.roots.clone(),
            server,
            document: file.document.clone(),
            position: TextPosition {
                line: holder.at.0,
                column: holder.at.1,
            },
        })
    }
}

/// The references of `target`, its declaration left out, as paths and
/// positions in code points; with what the answer says about itself.
async fn reference_uses(
    context: &Context,
    target: &Target,
    sources: &mut Sources<'_>,
) -> Result<(Vec<String>, Vec<(PathBuf, TextPosition)>)> {
    let params = ReferenceParams {
        text_document_position: target.position_params()?,
        context: ReferenceContext {
            include_declaration: false,
        },
        work_done_progress_params: WorkDoneProgressParams::default(),
        partial_result_params: PartialResultParams::default(),
    };
    let request = target.request(References::METHOD, &params, Feature::References)?;
    let mut reply = context.request(&target.server, request).await?;
    let notes = render::notes(&target.roots, &reply);
    let locations = render::locations(&mut reply, Feature::References)?;
    let uses = locations
        .into_iter()
        .filter_map(|location| {
            let spot = sources.spot(location.uri.as_str(), location.range, reply.encoding)?;
            let path = uri_to_path(location.uri.as_str())?;
            Some((
                path,
                TextPosition {
                    line: spot.line - 1,
                    column: spot.column - 1,
                },
            ))
        })
        .collect();
    Ok((notes, uses))
}

/// The holder of `position` in one file's symbols.
fn holder_in(file: &FileSymbols, path: &Path, position: TextPosition) -> Option<Holder> {
    let at = (position.line, position.column);
    let chain = symbols::around(&file.symbols, &file.document.text, file.encoding, at);
    let holder_index = chain
        .iter()
        .rposition(|symbol| HOLDING_KINDS.contains(&symbol.kind))
        .or_else(|| (!chain.is_empty()).then_some(0))?;
    let symbol = chain[holder_index];
    let name: Vec<&str> = chain[..=holder_index]
        .iter()
        .filter(|symbol| HOLDING_KINDS.contains(&symbol.kind) || symbol.kind == SymbolKind::MODULE)
        .map(|symbol| symbol.name.as_str())
        .collect();
    let name = match name.is_empty() {
        true => symbol.name.clone(),
        false => name.join("."),
    };
    let (first, last) = (symbol.range.start.line + 1, symbol.range.end.line + 1);
    let span = match last > first {
        true => format!("{first}-{last}"),
        false => first.to_string(),
    };
    let at = symbols::point(
        &file.document.text,
        symbol.selection_range.start,
        file.encoding,
    );
    Some(Holder {
        path: path.to_path_buf(),
        title: format!("{} {name} {span}", render::symbol_kind(symbol.kind)),
        at,
    })
}

/// Kinds of symbol whose references are worth following.
const HOLDING_KINDS: [SymbolKind; 8] = [
    SymbolKind::FUNCTION,
    SymbolKind::METHOD,
    SymbolKind::CONSTRUCTOR,
    SymbolKind::CLASS,
    SymbolKind::INTERFACE,
    SymbolKind::STRUCT,
    SymbolKind::ENUM,
    SymbolKind::PROPERTY,
];

async fn read_symbols(context: &Context, path: &Path, display: &str) -> Option<FileSymbols> {
    let document = context.snapshot(path, display).ok()?;
    let server = context.route(path).await.ok()?;
    let mut reply = context
        .document_symbols(&server, document.clone())
        .await
        .ok()?;
    let symbols = symbols::document_symbols(&mut reply, &document.text).ok()?;
    Some(FileSymbols {
        document,
        symbols,
        encoding: reply.encoding,
    })
}

/// One level's lines: each file (marked when it is a test), each holder
/// with the lines its references are on.
fn level_lines(level: &Level) -> Vec<String> {
    let mut lines = Vec::new();
    for (path, holders) in level {
        let mark = if is_test_file(path) { " (test)" } else { "" };
        lines.push(format!("  {path}{mark}"));
        for (holder, on) in holders {
            let title = holder
                .as_ref()
                .map_or("(top level)", |holder| holder.title.as_str());
            let on: Vec<String> = on.iter().map(usize::to_string).collect();
            let which = if on.len() == 1 { "line" } else { "lines" };
            lines.push(format!("    {title}: {which} {}", on.join(", ")));
        }
    }
    lines
}

/// Whether a path is a test's, by the conventions of the common test
/// runners: a `test`/`tests`/`__tests__`/`spec` folder, `test_*`,
/// `*_test.*`, `*.test.*`, `*.spec.*`, `*Test.java`.
fn is_test_file(path: &str) -> bool {
    let mut parts = path.split('/').collect::<Vec<_>>();
    let Some(name) = parts.pop() else {
        return false;
    };
    let folder = parts
        .iter()
        .any(|part| matches!(*part, "test" | "tests" | "__tests__" | "spec" | "testing"));
    let stem = name.split('.').next().unwrap_or(name);
    folder
        || name.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("Test")
        || stem.ends_with("Tests")
        || name.contains(".test.")
        || name.contains(".spec.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_are_known_by_the_runners_conventions() {
        for path in [
            "tests/test_api.py",
            "src/test_utils.py",
            "pkg/parse_test.go",
            "src/parse.test.ts",
            "src/parse.spec.js",
            "app/__tests__/x.js",
            "src/test/java/ParserTest.java",
        ] {
            assert!(is_test_file(path), "{path}");
        }
        for path in ["src/requests/api.py", "src/contest.py", "latest/x.rs"] {
            assert!(!is_test_file(path), "{path}");
        }
    }

    #[test]
    fn a_level_lists_files_then_holders_with_their_lines() {
        let holder = |title: &str| {
            Some(Holder {
                path: PathBuf::from("/r/a.py"),
                title: title.into(),
                at: (0, 0),
            })
        };
        let mut level: Level = BTreeMap::new();
        level
            .entry("a.py".into())
            .or_default()
            .insert(holder("function run 3-9"), vec![5, 7]);
        level
            .entry("tests/test_a.py".into())
            .or_default()
            .insert(None, vec![2]);
        assert_eq!(
            level_lines(&level),
            vec![
                "  a.py",
                "    function run 3-9: lines 5, 7",
                "  tests/test_a.py (test)",
                "    (top level): line 2",
            ]
        );
    }
}
