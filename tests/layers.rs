//! The import graph of `windlass-actors` runs one way: the wire (`lsp`)
//! and what the system says of processes at the bottom, then the
//! vocabulary every layer shares, the language table, a session's
//! settings, the store and detection, then the actors' inboxes, then the
//! actors. Three rules, each failing here with the line that breaks it:
//! no import runs back up a layer; no chain of imports comes back to
//! where it began, between modules or between files; and an actor
//! imports another actor only to spawn it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The modules below the actors, lowest first: each may import only the
/// ones before it (and the outside world).
const LAYERS: &[&[&str]] = &[
    &["error"],
    &["lsp", "process"],
    &["vocabulary"],
    &["language"],
    &[
        "settings", "store", "listings", "sketches", "detect", "tsconfig",
    ],
    &["messages"],
];

/// The actors: each may import any layer above, and another actor only
/// as `SPAWNS` allows.
const ACTORS: &[&str] = &[
    "gateway",
    "language_server",
    "monitor",
    "recorder",
    "roots",
    "router",
    "session",
    "supervisor",
    "symbol_index",
    "watcher",
];

/// Parent and child, as the supervision tree in `docs/architecture.md`
/// draws it: the only actors that import another, and only its actor
/// type and its `Arguments`, to spawn it. Everything else between actors
/// goes through their inboxes in `messages`.
const SPAWNS: &[(&str, &str)] = &[
    ("supervisor", "language_server"),
    ("supervisor", "monitor"),
    ("supervisor", "router"),
    ("supervisor", "session"),
    ("supervisor", "symbol_index"),
    ("supervisor", "watcher"),
    ("session", "gateway"),
    ("session", "roots"),
];

/// One path a file names from another file of the crate.
struct Import {
    /// The importing file, relative to `actors/src`.
    from: PathBuf,
    /// The file that defines what the path names.
    to: PathBuf,
    /// The path from the crate root: `gateway::render::Spot`.
    path: Vec<String>,
    /// `file:line` of the path.
    at: String,
}

/// What imports what, and the first line that does: importer, imported,
/// where.
type Graph = BTreeMap<String, BTreeMap<String, String>>;

#[test]
fn imports_run_one_way() {
    let mut known: BTreeSet<&str> = ACTORS.iter().copied().collect();
    known.extend(LAYERS.iter().flat_map(|layer| layer.iter().copied()));
    let mut wrong = Vec::new();
    for import in between_modules(&actors_imports()) {
        let (from, to) = (top_module(&import.from), top_module(&import.to));
        if !known.contains(to.as_str()) || !known.contains(from.as_str()) {
            wrong.push(format!(
                "{}: `{from}` → `{to}`: a module this test does not place in a layer",
                import.at
            ));
        } else if rank(&to) > rank(&from) {
            wrong.push(format!(
                "{}: `{from}` imports `{to}`, a layer above it",
                import.at
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn no_chain_of_imports_comes_back_around() {
    let imports = actors_imports();
    let mut modules = Graph::new();
    for import in between_modules(&imports) {
        add_edge(
            &mut modules,
            top_module(&import.from),
            top_module(&import.to),
            &import.at,
        );
    }
    let mut files = Graph::new();
    for import in &imports {
        let (from, to) = (import.from.display(), import.to.display());
        add_edge(&mut files, from.to_string(), to.to_string(), &import.at);
    }
    let mut wrong = Vec::new();
    if let Some(cycle) = cycle(&modules) {
        wrong.push(format!(
            "modules import each other:\n  {}",
            cycle.join("\n  ")
        ));
    }
    if let Some(cycle) = cycle(&files) {
        wrong.push(format!(
            "files import each other:\n  {}",
            cycle.join("\n  ")
        ));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn actors_import_each_other_only_to_spawn() {
    let mut wrong = Vec::new();
    for import in between_modules(&actors_imports()) {
        let (from, to) = (top_module(&import.from), top_module(&import.to));
        if !ACTORS.contains(&from.as_str()) || !ACTORS.contains(&to.as_str()) {
            continue;
        }
        let item = import.path.get(1).map_or("", String::as_str);
        let spawns = SPAWNS.contains(&(from.as_str(), to.as_str()));
        if !spawns || (item != actor_type(&to) && item != "Arguments") {
            wrong.push(format!(
                "{}: `{from}` imports `{}` of the actor `{to}`: an actor imports another only \
                 to spawn its child (its actor type and `Arguments`); the rest goes through \
                 `messages` or a module below the actors",
                import.at,
                import.path.join("::")
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every import of every file of `actors/src`.
fn actors_imports() -> Vec<Import> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("actors/src");
    let files = rust_files(&source);
    files
        .iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(source.join(file)).unwrap();
            imports_of(file, &text, &files)
        })
        .collect()
}

/// The imports from one top module into another; `lib.rs` only declares
/// the modules, so its imports are no layer's.
fn between_modules(imports: &[Import]) -> impl Iterator<Item = &Import> {
    imports.iter().filter(|import| {
        let from = top_module(&import.from);
        from != "lib" && from != top_module(&import.to)
    })
}

/// Every path a file names through `crate::`, `super::`, `self::` or a
/// module it declares, resolved to the file that defines it. In the
/// file's inline module (its tests, which come last) `super` is the file
/// itself.
fn imports_of(file: &Path, text: &str, files: &BTreeSet<PathBuf>) -> Vec<Import> {
    let code = without_comments(text);
    let module = module_of(file);
    let mut roots = vec!["crate".to_owned(), "super".to_owned(), "self".to_owned()];
    roots.extend(declared_modules(&code));
    let inline = inline_module(&code);
    let mut imports = Vec::new();
    for start in path_starts(&code, &roots) {
        let mut within = module.clone();
        if let Some((begins, name)) = &inline
            && start >= *begins
        {
            within.push(name.clone());
        }
        for path in use_tree(&code[start..]) {
            let path = from_root(&path, &within);
            let to = file_of(&path, files);
            if to != file {
                imports.push(Import {
                    from: file.to_path_buf(),
                    to,
                    path,
                    at: format!(
                        "{}:{}",
                        file.display(),
                        code[..start].matches('\n').count() + 1
                    ),
                });
            }
        }
    }
    imports
}

/// A file's code with its comments blanked, each line where it was.
fn without_comments(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect();
    lines.join("\n")
}

/// The modules a file declares in files of their own (`mod tools;`).
fn declared_modules(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|line| {
            let (visibility, name) = line.trim().strip_suffix(';')?.rsplit_once("mod ")?;
            let visibility = visibility.trim();
            (visibility.is_empty() || visibility.starts_with("pub")).then(|| name.to_owned())
        })
        .collect()
}

/// Where a file's inline module (`mod tests {`) begins, and its name.
fn inline_module(code: &str) -> Option<(usize, String)> {
    let mut offset = 0;
    for line in code.lines() {
        let declared = line.trim().strip_suffix('{').map(str::trim);
        let name = declared.and_then(|declared| declared.strip_prefix("mod "));
        if let Some(name) = name.or_else(|| declared?.strip_prefix("pub mod ")) {
            return Some((offset, name.trim().to_owned()));
        }
        offset += line.len() + 1;
    }
    None
}

/// Where the paths that begin with one of `roots` start: a root followed
/// by `::`, and not itself the tail of a longer path.
fn path_starts(code: &str, roots: &[String]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let name = identifier(&code[at..]);
        if name.is_empty() {
            at += code[at..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let after_path = code[..at].ends_with(':');
        let begins_path = code[at + name.len()..].starts_with("::");
        if !after_path && begins_path && roots.iter().any(|root| root == name) {
            starts.push(at);
        }
        at += name.len();
    }
    starts
}

/// The paths the use tree (or plain path) at the start of `code` names,
/// each from its first segment: `a::{b, c::{d, self}}` names `a::b`,
/// `a::c::d` and `a::c::self`.
fn use_tree(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    read_tree(code, &mut 0, Vec::new(), &mut paths);
    paths
}

/// Reads one use tree from `at`, adding each path it names after `path`
/// to `paths`; `at` ends past the tree.
fn read_tree(code: &str, at: &mut usize, mut path: Vec<String>, paths: &mut Vec<Vec<String>>) {
    let prefix = path.len();
    loop {
        *at += whitespace(&code[*at..]);
        if code[*at..].starts_with('{') {
            *at += 1;
            loop {
                read_tree(code, at, path.clone(), paths);
                *at += whitespace(&code[*at..]);
                let separator = code[*at..].chars().next();
                *at += separator.map_or(0, char::len_utf8);
                if separator != Some(',') {
                    return;
                }
            }
        }
        let name = identifier(&code[*at..]);
        if name.is_empty() {
            break;
        }
        *at += name.len();
        path.push(name.to_owned());
        if !code[*at..].starts_with("::") {
            break;
        }
        *at += 2;
    }
    if path.len() > prefix {
        paths.push(path);
    }
}

/// The identifier `code` starts with, empty if none.
fn identifier(code: &str) -> &str {
    let end = code
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(code.len());
    &code[..end]
}

/// How many bytes of whitespace `code` starts with.
fn whitespace(code: &str) -> usize {
    code.len() - code.trim_start().len()
}

/// `path` from the crate root, as named in `module`.
fn from_root(path: &[String], module: &[String]) -> Vec<String> {
    let mut resolved = module.to_vec();
    for segment in path {
        match segment.as_str() {
            "crate" => resolved.clear(),
            "super" => drop(resolved.pop()),
            "self" | "*" => {}
            name => resolved.push(name.to_owned()),
        }
    }
    resolved
}

/// The file that defines what `path` names: the longest start of it that
/// is a module with a file of its own.
fn file_of(path: &[String], files: &BTreeSet<PathBuf>) -> PathBuf {
    (1..=path.len())
        .rev()
        .flat_map(|length| {
            let module = path[..length].join("/");
            [format!("{module}.rs"), format!("{module}/mod.rs")]
        })
        .map(PathBuf::from)
        .find(|candidate| files.contains(candidate))
        .unwrap_or_else(|| PathBuf::from("lib.rs"))
}

/// `gateway::tools` for `gateway/tools.rs`, `gateway` for
/// `gateway/mod.rs`, the crate root for `lib.rs`.
fn module_of(file: &Path) -> Vec<String> {
    let mut module: Vec<String> = file
        .with_extension("")
        .components()
        .map(|component| component.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
        module.pop();
    }
    module
}

/// `gateway` for `gateway/tools.rs`, `router` for `router.rs`.
fn top_module(file: &Path) -> String {
    module_of(file)
        .into_iter()
        .next()
        .unwrap_or_else(|| "lib".to_owned())
}

/// `LanguageServer` for `language_server`.
fn actor_type(module: &str) -> String {
    module
        .split('_')
        .map(|word| {
            let mut letters = word.chars();
            letters
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + letters.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// A module's layer: its index in `LAYERS`, or one past them for actors.
fn rank(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
        .unwrap_or(LAYERS.len())
}

/// The `.rs` files under `directory`, relative to it.
fn rust_files(directory: &Path) -> BTreeSet<PathBuf> {
    let mut files = BTreeSet::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                files.insert(path.strip_prefix(directory).unwrap().to_path_buf());
            }
        }
    }
    files
}

/// Notes that `from` imports `to`, keeping the first line that does.
fn add_edge(graph: &mut Graph, from: String, to: String, at: &str) {
    graph
        .entry(from)
        .or_default()
        .entry(to)
        .or_insert_with(|| at.to_owned());
}

/// A chain of imports that comes back to where it began, each step with
/// the line that makes it. Depth first, with the chain so far on a stack;
/// a node is done once everything it leads to is, so each is walked once.
fn cycle(graph: &Graph) -> Option<Vec<String>> {
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|start| walk(graph, start, &mut Vec::new(), &mut done))
}

/// Walks on from `node`, which `chain` led to.
fn walk<'a>(
    graph: &'a Graph,
    node: &'a str,
    chain: &mut Vec<&'a str>,
    done: &mut BTreeSet<&'a str>,
) -> Option<Vec<String>> {
    if done.contains(node) {
        return None;
    }
    if let Some(begins) = chain.iter().position(|seen| *seen == node) {
        let mut around = chain[begins..].to_vec();
        around.push(node);
        let steps = around
            .windows(2)
            .map(|step| format!("{} → {} ({})", step[0], step[1], graph[step[0]][step[1]]));
        return Some(steps.collect());
    }
    chain.push(node);
    for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
        if let Some(cycle) = walk(graph, next, chain, done) {
            return Some(cycle);
        }
    }
    chain.pop();
    done.insert(node);
    None
}

/// `a::b` as its segments.
fn path(text: &str) -> Vec<String> {
    text.split("::").map(str::to_owned).collect()
}

#[test]
fn grouped_and_nested_imports_are_read() {
    assert_eq!(
        use_tree("crate::{roots::RootSet, lsp::{uri, position::X}};"),
        [
            "crate::roots::RootSet",
            "crate::lsp::uri",
            "crate::lsp::position::X"
        ]
        .map(path)
    );
    assert_eq!(
        use_tree("crate::gateway::{\n    self,\n    Gateway,\n};"),
        ["crate::gateway::self", "crate::gateway::Gateway"].map(path)
    );
    assert_eq!(use_tree("super::*;"), [path("super")]);
    assert_eq!(
        use_tree("crate::store::now_ms() + 1"),
        [path("crate::store::now_ms")]
    );
    let code = "use super::a; let x = crate::b::c() + lsp::d; writer::e(); a::writer::g";
    let roots = ["crate", "super", "writer"].map(str::to_owned);
    let starts: Vec<&str> = path_starts(code, &roots)
        .into_iter()
        .map(|start| &code[start..start + 5])
        .collect();
    assert_eq!(starts, ["super", "crate", "write"]);
}

#[test]
fn paths_resolve_to_the_file_that_defines_them() {
    let files: BTreeSet<PathBuf> = ["lib.rs", "gateway/mod.rs", "gateway/render.rs", "router.rs"]
        .into_iter()
        .map(PathBuf::from)
        .collect();
    let tools = module_of(Path::new("gateway/tools.rs"));
    assert_eq!(tools, path("gateway::tools"));
    assert_eq!(module_of(Path::new("gateway/mod.rs")), path("gateway"));
    assert!(module_of(Path::new("lib.rs")).is_empty());
    let spot = from_root(&path("super::render::Spot"), &tools);
    assert_eq!(spot, path("gateway::render::Spot"));
    assert_eq!(file_of(&spot, &files), Path::new("gateway/render.rs"));
    let gateway = from_root(&path("crate::gateway::self"), &tools);
    assert_eq!(file_of(&gateway, &files), Path::new("gateway/mod.rs"));
    assert_eq!(file_of(&path("Result"), &files), Path::new("lib.rs"));
    assert_eq!(top_module(Path::new("gateway/tools.rs")), "gateway");
    assert_eq!(top_module(Path::new("router.rs")), "router");
    assert_eq!(actor_type("language_server"), "LanguageServer");
}

#[test]
fn a_files_own_modules_and_tests_are_read() {
    let files: BTreeSet<PathBuf> = ["recorder/mod.rs", "recorder/writer.rs", "store/mod.rs"]
        .into_iter()
        .map(PathBuf::from)
        .collect();
    let text = "//! The Recorder: see crate::router.\n\
                mod writer;\n\
                use writer::Writer;\n\
                use crate::store::{\n    self,\n};\n\
                #[cfg(test)]\n\
                mod tests {\n    use super::*;\n}\n";
    let imports = imports_of(Path::new("recorder/mod.rs"), text, &files);
    let found: Vec<(String, &str)> = imports
        .iter()
        .map(|import| (import.to.display().to_string(), import.at.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("recorder/writer.rs".to_owned(), "recorder/mod.rs:3"),
            ("store/mod.rs".to_owned(), "recorder/mod.rs:4"),
        ]
    );
}

#[test]
fn a_chain_that_comes_back_is_found_with_its_lines() {
    let mut graph = Graph::new();
    add_edge(&mut graph, "a".into(), "b".into(), "a.rs:1");
    add_edge(&mut graph, "b".into(), "c".into(), "b.rs:2");
    add_edge(&mut graph, "a".into(), "c".into(), "a.rs:3");
    assert_eq!(cycle(&graph), None);
    add_edge(&mut graph, "c".into(), "a".into(), "c.rs:4");
    assert_eq!(
        cycle(&graph).unwrap(),
        ["a → b (a.rs:1)", "b → c (b.rs:2)", "c → a (c.rs:4)"]
    );
}
