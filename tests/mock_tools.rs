//! The rest of the tool surface end to end against mockls: search,
//! codebase_map, hierarchies, code actions, rename, completion and
//! signature help, and refusals read from capabilities.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use windlass_actors::gateway::{Needs, TOOL_NEEDS};
use windlass_actors::lsp::protocol::Feature;

const SHAPES: &str = "\
class Shape:
    pass

class Circle(Shape):
    pass

def area(s, scale):
    return measure(s)

def measure(s):
    return 1

def report():
    area(Circle(), 2)
    area(Shape(), 3)
";

const MAIN: &str = "\
from shapes import area
total = area(s, 1)  # ERROR here
sc = measure(
";

fn session(flags: &str) -> (tempfile::TempDir, Session) {
    let dir = project(&[
        ("shapes.py", SHAPES),
        ("main.py", MAIN),
        ("docs/notes.md", "area of a Shape\n"),
        ("target/ignored.py", "def area():\n    pass\n"),
        (".gitignore", "target/\n"),
    ]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", flags)]);
    let session = Session::start(&args);
    (dir, session)
}

#[test]
fn search_merges_symbols_and_maps_text() {
    let (_dir, session) = session("");
    let answer = session.ok("search", json!({"query": "area"}));
    assert_eq!(
        answer,
        "symbols (1)\n  shapes.py\n    function area 7:5\ntext (6 matches in 3 files)\n  shapes.py  3 × lines 7-15\n  main.py  2 × lines 1-2\n  docs/notes.md  1 × line 1"
    );
    let several = session.ok(
        "search",
        json!({"queries": ["measure", "nothing_like_this"]}),
    );
    assert!(
        several.starts_with("## measure\nsymbols (1)\n  shapes.py\n    function measure 10:5\n"),
        "{several}"
    );
    assert!(
        several.contains(
            "## nothing_like_this\nsymbols: none named like \"nothing_like_this\"\ntext: no matches"
        ),
        "{several}"
    );
}

#[test]
fn search_warns_when_a_needed_server_is_down() {
    let dir = project(&[
        ("a.py", "def alpha():\n    pass\n"),
        ("b.rs", "fn beta() {}\n"),
    ]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    args.extend(["--lsp".into(), mockls_lsp("rust", "--crash-on initialize")]);
    let session = Session::start(&args);
    session.wait_for_status(|status| status.contains("[rust]") && status.contains(" failed"));
    let answer = session.ok("search", json!({"query": "alpha"}));
    assert!(
        answer.starts_with("warning: [rust] unavailable, results may be incomplete\nsymbols (1)"),
        "{answer}"
    );
}

/// The text part of an answer to `search`.
fn text_found(session: &Session, query: &str) -> String {
    let answer = session.ok("search", json!({"query": query}));
    answer
        .split_once("\ntext")
        .map_or(answer.clone(), |(_, text)| format!("text{text}"))
}

/// The files the text search reads are listed once and the listing kept
/// while the watcher sees every change: a file that comes, is renamed,
/// goes, is made in a new directory or moved in from outside, or an
/// ignore file that changes what is searched, is in the very next
/// answer. Each change follows two searches, the second of which reads
/// the kept listing.
#[test]
fn search_text_follows_files_that_come_and_go() {
    let (dir, session) = session("");
    let root = dir.path();
    let outside = tempfile::tempdir().unwrap();
    let searched = |expected: &str| {
        for _ in 0..2 {
            assert_eq!(text_found(&session, "quokka"), expected);
        }
    };
    searched("text: no matches");
    std::fs::write(root.join("a.py"), "quokka = 1\n").unwrap();
    searched("text (1 match in 1 file)\n  a.py  1 × line 1");
    std::fs::write(root.join("b.py"), "quokka\nquokka\n").unwrap();
    searched("text (3 matches in 2 files)\n  b.py  2 × lines 1-2\n  a.py  1 × line 1");
    std::fs::rename(root.join("b.py"), root.join("c.py")).unwrap();
    searched("text (3 matches in 2 files)\n  c.py  2 × lines 1-2\n  a.py  1 × line 1");
    std::fs::remove_file(root.join("c.py")).unwrap();
    searched("text (1 match in 1 file)\n  a.py  1 × line 1");
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    std::fs::write(root.join("sub/deeper/d.py"), "quokka\n").unwrap();
    searched("text (2 matches in 2 files)\n  a.py  1 × line 1\n  sub/deeper/d.py  1 × line 1");
    std::fs::create_dir(outside.path().join("moved")).unwrap();
    std::fs::write(outside.path().join("moved/e.py"), "quokka quokka\n").unwrap();
    std::fs::rename(outside.path().join("moved"), root.join("moved")).unwrap();
    searched(
        "text (4 matches in 3 files)\n  moved/e.py  2 × line 1\n  a.py  1 × line 1\n  sub/deeper/d.py  1 × line 1",
    );
    std::fs::write(root.join(".gitignore"), "target/\nsub/\n").unwrap();
    searched("text (3 matches in 2 files)\n  moved/e.py  2 × line 1\n  a.py  1 × line 1");
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(root.join("a.py"), "nothing\n").unwrap();
    searched(
        "text (3 matches in 2 files)\n  moved/e.py  2 × line 1\n  sub/deeper/d.py  1 × line 1",
    );
}

/// A server that says it is loading, then answers slowly: `search` holds
/// its question until it is ready, but waits no longer in all than one
/// request may take, and says the server timed out beside the text found.
#[test]
fn search_waits_for_a_loading_server_no_longer_than_one_request() {
    let dir = project(&[("shapes.py", SHAPES)]);
    let mut args = root_arg(dir.path());
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", "--indexing-delay 60000 --response-delay 1500"),
        "--request-timeout".into(),
        "2".into(),
    ]);
    let session = Session::start(&args);
    let answer = session.ok("search", json!({"query": "measure"}));
    assert!(
        answer.contains("[python] workspace/symbol timed out after 2 s")
            && answer.contains("shapes.py  2 × lines 8-10"),
        "{answer}"
    );
}

/// Writes `text` to `path` with a modification time a minute old, as a
/// file long settled has, so that the searches sketch it.
fn write_settled(path: &std::path::Path, text: &str) {
    std::fs::write(path, text).unwrap();
    let minute_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(minute_ago)
        .unwrap();
}

/// A file searched often enough to be counted from what the searches
/// remember of it, without a look at the disk, is read again once the
/// watcher sees it change, even when the change keeps its length and
/// its modification time.
#[test]
fn search_text_follows_a_settled_file_changed_in_place() {
    let (dir, session) = session("");
    let file = dir.path().join("zoo.py");
    write_settled(&file, "quokka = 1\n");
    for _ in 0..4 {
        assert_eq!(
            text_found(&session, "quokka"),
            "text (1 match in 1 file)\n  zoo.py  1 × line 1"
        );
    }
    write_settled(&file, "wombat = 1\n");
    assert_eq!(text_found(&session, "quokka"), "text: no matches");
    assert_eq!(
        text_found(&session, "wombat"),
        "text (1 match in 1 file)\n  zoo.py  1 × line 1"
    );
}

#[test]
fn codebase_map_shows_the_tree_with_symbols_within_budget() {
    let (_dir, session) = session("");
    let plain = session.ok("codebase_map", json!({}));
    assert_eq!(plain, "./\n  docs/\n    notes.md\n  main.py\n  shapes.py");
    assert!(
        !plain.contains("ignored.py"),
        "gitignored files are left out: {plain}"
    );
    let with_symbols = session.ok("codebase_map", json!({"include_symbols": true}));
    assert!(with_symbols.contains("  shapes.py: class Shape, class Circle, function area, function measure, function report"), "{with_symbols}");
    assert!(
        with_symbols.contains("    notes.md\n"),
        "files without a server are listed plainly: {with_symbols}"
    );
    let trimmed = session.ok("codebase_map", json!({"budget": 2}));
    assert_eq!(
        trimmed,
        "./\n  docs/\n… 3 more lines (call again with offset=2, or lower max_depth)"
    );
    let sub = session.ok("codebase_map", json!({"path": "docs", "max_depth": 1}));
    assert_eq!(sub, "docs/\n  notes.md");
}

#[test]
fn call_hierarchy_lists_callers_and_callees() {
    let (_dir, session) = session("");
    let callers = session.ok(
        "call_hierarchy",
        json!({"file": "shapes.py", "line": 7, "symbol": "area", "direction": "incoming"}),
    );
    assert_eq!(
        callers,
        "callers of area (1)\nshapes.py\n  function report 13:5 — calls at 14:5, 15:5"
    );
    let callees = session.ok(
        "call_hierarchy",
        json!({"symbol": "area", "direction": "outgoing"}),
    );
    assert_eq!(
        callees,
        "callees of area (1)\nshapes.py\n  function measure 10:5 — calls at 8:12"
    );
}

#[test]
fn type_hierarchy_lists_supertypes_and_subtypes() {
    let (_dir, session) = session("");
    let up = session.ok(
        "type_hierarchy",
        json!({"file": "shapes.py", "line": 4, "symbol": "Circle", "direction": "supertypes"}),
    );
    assert_eq!(up, "supertypes of Circle (1)\nshapes.py\n  class Shape 1:7");
    let down = session.ok(
        "type_hierarchy",
        json!({"symbol": "Shape", "direction": "subtypes"}),
    );
    assert_eq!(down, "subtypes of Shape (1)\nshapes.py\n  class Circle 4:7");
}

#[test]
fn code_actions_send_the_ranges_diagnostics_and_write_nothing() {
    let (dir, session) = session("");
    let before = std::fs::read(dir.path().join("main.py")).unwrap();
    let actions = session.ok(
        "code_actions",
        json!({"file": "main.py", "start_line": 1, "end_line": 2}),
    );
    assert_eq!(
        actions,
        "1. Replace ERROR on line 2 with FIXED (1 diagnostics in context) (quickfix)\n   main.py (1)\n     2:23-2:28  \"ERROR\" → \"FIXED\""
    );
    let none = session.ok("code_actions", json!({"file": "main.py", "start_line": 1}));
    assert_eq!(none, "no code actions for main.py:1-1");
    assert_eq!(std::fs::read(dir.path().join("main.py")).unwrap(), before);
}

#[test]
fn rename_proposes_edits_in_every_file_and_writes_nothing() {
    let (dir, session) = session("");
    let snapshot = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
    let (shapes, main) = (snapshot("shapes.py"), snapshot("main.py"));
    let answer = session.ok(
        "rename",
        json!({"file": "shapes.py", "line": 7, "symbol": "area", "new_name": "surface"}),
    );
    assert!(
        answer.starts_with("6 edits in 3 files (proposed, not applied)\n"),
        "{answer}"
    );
    assert!(
        answer.contains(
            "shapes.py (3)\n  7:5-7:9  \"area\" → \"surface\"\n  14:5-14:9  \"area\" → \"surface\""
        ),
        "{answer}"
    );
    assert!(
        answer.contains(
            "main.py (2)\n  1:20-1:24  \"area\" → \"surface\"\n  2:9-2:13  \"area\" → \"surface\""
        ),
        "{answer}"
    );
    assert_eq!(
        (snapshot("shapes.py"), snapshot("main.py")),
        (shapes, main),
        "the workspace is byte-identical"
    );
}

#[test]
fn completion_and_signature_help_at_the_cursor() {
    let (_dir, session) = session("");
    let completions = session.ok(
        "completion",
        json!({"file": "main.py", "line": 3, "column": 8}),
    );
    assert_eq!(
        completions.lines().next(),
        Some("measure  function"),
        "{completions}"
    );
    let signature = session.ok(
        "signature_help",
        json!({"file": "main.py", "line": 2, "column": 17}),
    );
    assert_eq!(signature, "> area(s, «scale»)");
}

/// A server that announces none of the capabilities the gateway's table
/// of tools names refuses, without being asked, every tool the table
/// says needs one, naming the capability: the table is what the gateway
/// does.
#[test]
fn missing_capabilities_are_refused_without_asking() {
    let needed: Vec<(&str, Feature)> = TOOL_NEEDS
        .iter()
        .filter_map(|(tool, needs)| match needs {
            Needs::Capability(feature) => Some((*tool, *feature)),
            Needs::NoServer | Needs::AnyServer => None,
        })
        .collect();
    let without: Vec<String> = needed
        .iter()
        .map(|(_, feature)| format!("--without {}", feature.key()))
        .collect();
    let (_dir, session) = session(&without.join(" "));
    for (tool, feature) in needed {
        assert_eq!(
            session.err(tool, arguments_at_area(tool)),
            format!("[python] does not support {}", feature.name()),
            "{tool}"
        );
    }
}

/// `tool`'s arguments about `area`, declared on line 7 of shapes.py.
fn arguments_at_area(tool: &str) -> serde_json::Value {
    let mut arguments = json!({"file": "shapes.py", "line": 7, "symbol": "area"});
    match tool {
        "document_symbols" => arguments = json!({"file": "shapes.py"}),
        "code_actions" => arguments = json!({"file": "shapes.py", "start_line": 7}),
        "call_hierarchy" => arguments["direction"] = json!("incoming"),
        "type_hierarchy" => arguments["direction"] = json!("supertypes"),
        "rename" => arguments["new_name"] = json!("size"),
        _ => {}
    }
    arguments
}
