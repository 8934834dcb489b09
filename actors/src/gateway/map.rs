//! The `codebase_map` tool: the file tree of a root or directory, to a
//! depth, optionally with each file's top-level symbols, trimmed to a
//! budget of lines with a marker saying what was left out. Symbols are
//! asked for only on the page shown, and taken from the symbol index
//! where it holds the outline of a file's text now; a file shown without
//! them because its server failed is counted in a warning.

use super::context::Context;
use super::navigation::offset;
use super::render;
use super::symbols::{DocumentItem, Symbol};
use super::{indexed, indexing};
use crate::error::{Error, Result};
use crate::language;
use crate::lsp::protocol::Feature;
use crate::vocabulary::root_set::RootSet;
use lsp_types::{OneOf, SymbolKind};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tokio::task::JoinSet;

/// Symbol requests in flight at once while mapping.
const PARALLEL_SYMBOL_REQUESTS: usize = 8;
/// Top-level symbols listed per file.
const SYMBOLS_PER_FILE: usize = 12;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MapArgs {
    pub path: Option<String>,
    /// Default 3.
    pub max_depth: Option<u32>,
    pub include_symbols: Option<bool>,
    /// Max lines (default 200).
    pub budget: Option<u32>,
    pub offset: Option<u32>,
}

/// One entry of the tree: its depth below the mapped directory.
struct Node {
    path: PathBuf,
    depth: usize,
    is_dir: bool,
}

pub async fn codebase_map(context: &Context, args: &MapArgs) -> Result<String> {
    let roots = context.root_set().await?;
    let starts: Vec<PathBuf> = match &args.path {
        Some(given) => vec![roots.resolve(given)?],
        None => roots.roots().iter().map(|root| root.path.clone()).collect(),
    };
    if let Some(start) = starts.iter().find(|start| !start.is_dir()) {
        return Err(Error::InvalidArgument(format!(
            "{} is not a directory",
            roots.display(start)
        )));
    }
    let max_depth = args.max_depth.unwrap_or(3).max(1) as usize;
    let budget = args.budget.unwrap_or(200).max(1) as usize;
    let offset = offset(args.offset);
    let mut trees = Vec::new();
    for start in starts {
        let nodes = {
            let start = start.clone();
            tokio::task::spawn_blocking(move || walk(&start, max_depth))
                .await
                .map_err(|_| Error::ShuttingDown)?
        };
        trees.push((start, nodes));
    }
    let symbols = match args.include_symbols.unwrap_or(false) {
        true => {
            let shown = shown_files(&trees, offset, budget);
            symbols_by_file(context, &roots, shown).await
        }
        false => Symbols::default(),
    };
    let mut lines = Vec::new();
    for (start, nodes) in &trees {
        lines.push(format!("{}/", roots.display(start)));
        lines.extend(tree_lines(nodes, &symbols.by_file));
    }
    Ok(page(
        &symbols.warnings(),
        lines,
        offset,
        budget,
        context.settings.max_output_bytes,
    ))
}

/// The top-level symbols of the files shown, and why a file that has a
/// server has none shown.
#[derive(Default)]
struct Symbols {
    by_file: HashMap<PathBuf, Vec<String>>,
    /// Each error of a file's server, with how many files it left bare.
    failed: Vec<(String, usize)>,
}

impl Symbols {
    /// Notes why a file has no symbols shown; a file of a language no
    /// server is configured for (plain text) has none to show.
    fn note_failure(&mut self, error: &Error) {
        if matches!(error, Error::NoServer(_)) {
            return;
        }
        let error = error.to_string();
        match self.failed.iter_mut().find(|(seen, _)| *seen == error) {
            Some((_, files)) => *files += 1,
            None => self.failed.push((error, 1)),
        }
    }

    /// One line per error: a file shown bare is not a file without symbols.
    fn warnings(&self) -> Vec<String> {
        self.failed
            .iter()
            .map(|(error, files)| {
                let files = match files {
                    1 => "1 file".to_owned(),
                    many => format!("{many} files"),
                };
                format!("warning: no symbols of {files}: {error}")
            })
            .collect()
    }
}

/// The files whose lines the page from `offset` shows: a tree is a line
/// for its start and one per node, and the symbols of a file on another
/// page are not asked for.
fn shown_files(trees: &[(PathBuf, Vec<Node>)], offset: usize, budget: usize) -> Vec<PathBuf> {
    let end = offset.saturating_add(budget);
    let mut line = 0;
    let mut shown = Vec::new();
    for (_, nodes) in trees {
        line += 1;
        for node in nodes {
            if (offset..end).contains(&line) && !node.is_dir {
                shown.push(node.path.clone());
            }
            line += 1;
        }
    }
    shown
}

/// The tree under `start`, gitignore-aware, directories before files.
fn walk(start: &Path, max_depth: usize) -> Vec<Node> {
    let walker = ignore::WalkBuilder::new(start)
        .max_depth(Some(max_depth))
        .require_git(false)
        .sort_by_file_path(|a, b| {
            let dir = |path: &Path| !path.is_dir();
            (dir(a), a).cmp(&(dir(b), b))
        })
        .build();
    walker
        .filter_map(std::result::Result::ok)
        .filter(|entry| entry.depth() > 0)
        .map(|entry| Node {
            is_dir: entry.file_type().is_some_and(|kind| kind.is_dir()),
            depth: entry.depth(),
            path: entry.into_path(),
        })
        .collect()
}

/// Top-level symbols of every file among `shown` that has a server: from
/// the symbol index where it holds the file's outline of its text now,
/// else from the file's server, a few requests at a time (which keeps the
/// outline in the index). Files whose server is missing or fails are
/// listed plainly and counted in a warning with the server's error;
/// links that resolve outside the roots are listed plainly too: no
/// server is asked about what lies outside.
async fn symbols_by_file(context: &Context, roots: &RootSet, shown: Vec<PathBuf>) -> Symbols {
    let files: Vec<PathBuf> = shown
        .into_iter()
        .filter(|path| language::language_id(path).is_some())
        .filter(|path| {
            path.canonicalize()
                .is_ok_and(|real| roots.root_of(&real).is_some())
        })
        .collect();
    let mut found = Symbols {
        by_file: indexed_top_level(context, files.clone()).await,
        failed: Vec::new(),
    };
    let unknown: Vec<PathBuf> = files
        .into_iter()
        .filter(|path| !found.by_file.contains_key(path))
        .collect();
    // A new request as each one ends, not a batch at a time: one slow
    // outline holds up no others. Each file is looked up in the index
    // again first: another session's map may have outlined it since.
    let mut waiting = unknown.into_iter();
    let mut requests = JoinSet::new();
    loop {
        while requests.len() < PARALLEL_SYMBOL_REQUESTS {
            let Some(path) = waiting.next() else { break };
            let context = context.clone();
            requests.spawn(async move {
                let indexed = indexed_top_level(&context, vec![path.clone()]).await;
                let names = match indexed.into_values().next() {
                    Some(names) => Ok(names),
                    None => file_symbols(&context, &path).await,
                };
                (path, names)
            });
        }
        match requests.join_next().await {
            Some(Ok((path, Ok(names)))) => {
                found.by_file.insert(path, names);
            }
            Some(Ok((_, Err(error)))) => found.note_failure(&error),
            Some(Err(_)) => {}
            None => break,
        }
    }
    found
}

/// The top-level symbols of those of `files` whose outline of their text
/// now the index holds, as the map lists them.
async fn indexed_top_level(
    context: &Context,
    files: Vec<PathBuf>,
) -> HashMap<PathBuf, Vec<String>> {
    indexing::top_level(context, files)
        .await
        .into_iter()
        .map(|(path, symbols)| {
            let names = symbols
                .into_iter()
                .map(|symbol| described(indexed::kind_of(symbol.kind), &symbol.name))
                .collect();
            (path, names)
        })
        .collect()
}

/// A symbol as the map lists it: its kind, then its name.
fn described(kind: SymbolKind, name: &str) -> String {
    format!("{} {name}", render::symbol_kind(kind))
}

async fn file_symbols(context: &Context, path: &Path) -> Result<Vec<String>> {
    let display = path.display().to_string();
    let document = context.snapshot(path, &display)?;
    // Routed after the read: routing hands every change seen on to the
    // servers, so one that outlines from its own view of the disk
    // (tsserver, unopened) has taken in at least this text.
    let server = context.route(path).await?;
    let mut reply = context
        .document_symbols_in_passing(&server, document)
        .await?;
    let items: Vec<DocumentItem> = reply.read_list(Feature::DocumentSymbols)?;
    Ok(items
        .into_iter()
        .filter(is_top_level)
        .map(Symbol::from)
        .map(|symbol| described(symbol.kind, &symbol.name))
        .collect())
}

/// Whether a symbol is not inside another: a flat symbol says so by
/// naming no container.
fn is_top_level(item: &DocumentItem) -> bool {
    match item {
        OneOf::Left(_) => true,
        OneOf::Right(flat) => flat.container_name.as_deref().is_none_or(str::is_empty),
    }
}

fn tree_lines(nodes: &[Node], symbols: &HashMap<PathBuf, Vec<String>>) -> Vec<String> {
    let mut lines = Vec::new();
    for node in nodes {
        let name = node
            .path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let indent = "  ".repeat(node.depth);
        if node.is_dir {
            lines.push(format!("{indent}{name}/"));
            continue;
        }
        match symbols.get(&node.path).filter(|names| !names.is_empty()) {
            Some(names) => {
                let mut shown = names
                    .iter()
                    .take(SYMBOLS_PER_FILE)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ");
                if names.len() > SYMBOLS_PER_FILE {
                    shown.push_str(&format!(", … {} more", names.len() - SYMBOLS_PER_FILE));
                }
                lines.push(format!("{indent}{name}: {shown}"));
            }
            None => lines.push(format!("{indent}{name}")),
        }
    }
    lines
}

/// Shows `budget` lines from line `offset` on and says how to get the rest.
fn page(
    head: &[String],
    lines: Vec<String>,
    offset: usize,
    budget: usize,
    max_bytes: usize,
) -> String {
    let end = offset.saturating_add(budget).min(lines.len());
    let left_out = lines.len() - end;
    let mut body = lines;
    body.truncate(end);
    if left_out > 0 {
        body.push(format!(
            "… {left_out} more lines (call again with offset={end}, or lower max_depth)"
        ));
    }
    render::paged(head, &body, offset, max_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::root_set::RootSet;

    #[test]
    fn walks_directories_first_to_a_depth() {
        let dir = tempfile::tempdir().unwrap();
        for path in ["b.txt", "a/x.py", "a/deep/y.py", "a/deep/deeper/z.py"] {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, "").unwrap();
        }
        let roots = RootSet::new(&[dir.path().to_path_buf()]).unwrap();
        let nodes = walk(&roots.first_directory(), 3);
        assert_eq!(
            tree_lines(&nodes, &HashMap::new()),
            vec![
                "  a/",
                "    deep/",
                "      deeper/",
                "      y.py",
                "    x.py",
                "  b.txt"
            ]
        );
    }

    #[test]
    fn only_the_files_on_the_page_are_shown() {
        let node = |path: &str, is_dir: bool| Node {
            path: PathBuf::from(path),
            depth: 1,
            is_dir,
        };
        let trees = vec![
            (
                PathBuf::from("/a"),
                vec![
                    node("/a/d", true),
                    node("/a/d/x.py", false),
                    node("/a/y.py", false),
                ],
            ),
            (PathBuf::from("/b"), vec![node("/b/z.py", false)]),
        ];
        let paths = |shown: Vec<PathBuf>| -> Vec<String> {
            shown
                .iter()
                .map(|path| path.display().to_string())
                .collect()
        };
        assert_eq!(paths(shown_files(&trees, 0, 3)), ["/a/d/x.py"]);
        assert_eq!(paths(shown_files(&trees, 3, 3)), ["/a/y.py", "/b/z.py"]);
        assert!(shown_files(&trees, 6, 3).is_empty());
    }

    #[test]
    fn pages_by_the_budget_with_a_marker() {
        let lines: Vec<String> = (0..10).map(|n| n.to_string()).collect();
        assert_eq!(
            page(&[], lines.clone(), 0, 3, 10_000),
            "0\n1\n2\n… 7 more lines (call again with offset=3, or lower max_depth)"
        );
        assert_eq!(
            page(&[], lines, 8, 3, 10_000),
            "… 8 lines before (from offset=8)\n8\n9"
        );
    }
}
