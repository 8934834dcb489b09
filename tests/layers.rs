//! The import graph of `windlass-actors` runs one way: the wire (`lsp`)
//! at the bottom, then the vocabulary every layer shares, then the
//! actors' inboxes, then the actors. An import that runs back up, or two
//! actors that import each other however indirectly, fails here with the
//! line that does it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The modules below the actors, lowest first: each may import only the
/// ones before it (and the outside world).
const LAYERS: &[&[&str]] = &[
    &["error"],
    &["lsp"],
    &["language", "vocabulary"],
    &["settings", "store"],
    &["messages"],
];

/// The actors: each may import any layer above, and other actors only
/// without a cycle (a parent spawns its children; a child answers through
/// an inbox, which lives in `messages`).
const ACTORS: &[&str] = &[
    "gateway",
    "language_server",
    "monitor",
    "recorder",
    "roots",
    "router",
    "session",
    "supervisor",
    "watcher",
];

/// One import: the module importing, the module imported, and where.
struct Import {
    from: String,
    to: String,
    at: String,
}

#[test]
fn imports_run_one_way_and_actors_form_no_cycle() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("actors/src");
    let imports = imports_in(&source);
    let mut known: BTreeSet<&str> = ACTORS.iter().copied().collect();
    known.extend(LAYERS.iter().flat_map(|layer| layer.iter().copied()));
    let mut wrong = Vec::new();
    for import in &imports {
        if !known.contains(import.to.as_str()) || !known.contains(import.from.as_str()) {
            wrong.push(format!(
                "{}: `{}` → `{}`: a module this test does not place in a layer",
                import.at, import.from, import.to
            ));
            continue;
        }
        if rank(&import.to) > rank(&import.from) {
            wrong.push(format!(
                "{}: `{}` imports `{}`, a layer above it",
                import.at, import.from, import.to
            ));
        }
    }
    if let Some(cycle) = actor_cycle(&imports) {
        wrong.push(format!("actors import each other: {}", cycle.join("\n  ")));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A module's layer: its index in `LAYERS`, or one past them for actors.
fn rank(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
        .unwrap_or(LAYERS.len())
}

/// Every `crate::module` named in a file, by the top module it is in.
fn imports_in(source: &Path) -> Vec<Import> {
    let mut imports = Vec::new();
    for file in rust_files(source) {
        let relative = file.strip_prefix(source).unwrap_or(&file);
        let from = top_module(relative);
        if from == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            for to in named_modules(code) {
                if to != from {
                    imports.push(Import {
                        from: from.clone(),
                        to,
                        at: format!("{}:{}", relative.display(), number + 1),
                    });
                }
            }
        }
    }
    imports
}

/// `gateway` for `gateway/tools.rs`, `router` for `router.rs`.
fn top_module(relative: &Path) -> String {
    let first = relative
        .components()
        .next()
        .map(|component| component.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_owned()
}

/// The modules a line of code names as `crate::module`, each of a
/// grouped `use crate::{a::X, b}` too.
fn named_modules(code: &str) -> Vec<String> {
    let mut named = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let end = group.find('}').unwrap_or(group.len());
                named.extend(group[..end].split(',').filter_map(first_name));
                rest = &group[end..];
            }
            None => named.extend(first_name(rest)),
        }
    }
    named
}

/// The identifier a path starts with.
fn first_name(path: &str) -> Option<String> {
    let name: String = path
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

fn rust_files(directory: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// A chain of imports among actors that comes back to where it began,
/// each step with the line that makes it.
fn actor_cycle(imports: &[Import]) -> Option<Vec<String>> {
    let mut edges: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    for import in imports {
        if ACTORS.contains(&import.from.as_str()) && ACTORS.contains(&import.to.as_str()) {
            edges
                .entry(import.from.as_str())
                .or_default()
                .entry(import.to.as_str())
                .or_insert(import.at.as_str());
        }
    }
    for start in ACTORS {
        let mut path = vec![*start];
        if let Some(cycle) = search(&edges, &mut path, start) {
            return Some(cycle);
        }
    }
    None
}

/// Depth first from the last module of `path`, looking for `start`.
fn search<'a>(
    edges: &BTreeMap<&'a str, BTreeMap<&'a str, &'a str>>,
    path: &mut Vec<&'a str>,
    start: &str,
) -> Option<Vec<String>> {
    let last = *path.last()?;
    for (next, at) in edges.get(last).into_iter().flatten() {
        if *next == start {
            let mut steps: Vec<String> = path
                .windows(2)
                .map(|pair| format!("{} → {} ({})", pair[0], pair[1], edges[pair[0]][pair[1]]))
                .collect();
            steps.push(format!("{last} → {next} ({at})"));
            return Some(steps);
        }
        if !path.contains(next) {
            path.push(next);
            if let Some(cycle) = search(edges, path, start) {
                return Some(cycle);
            }
            path.pop();
        }
    }
    None
}

#[test]
fn grouped_and_nested_imports_are_read() {
    assert_eq!(
        named_modules("use crate::{roots::RootSet, lsp::uri};"),
        vec!["roots", "lsp"]
    );
    assert_eq!(
        named_modules("let x = crate::store::now_ms() + crate::lsp::f();"),
        vec!["store", "lsp"]
    );
    assert_eq!(top_module(Path::new("gateway/tools.rs")), "gateway");
    assert_eq!(top_module(Path::new("router.rs")), "router");
}
