//! The navigation tools end to end against mockls: the real binary, MCP
//! over stdio, answers checked to the line and column.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;

const LIB: &str = "\
class Shape:
    def area(self):
        return 0

def make_shape():
    return Shape()
";

const MAIN: &str = "\
from lib import Shape
# é日本 😀 then the name:
café = 1; s = Shape()
print(café)
";

fn session(flags: &str) -> (tempfile::TempDir, Session) {
    let dir = project(&[
        ("lib.py", LIB),
        ("main.py", MAIN),
        ("notes/readme.txt", "hello"),
    ]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", flags)]);
    let session = Session::start(&args);
    (dir, session)
}

#[test]
fn hover_definition_and_references_answer_with_exact_positions() {
    let (_dir, session) = session("");
    let hover = session.ok("hover", json!({"file": "main.py", "line": 3, "column": 16}));
    assert_eq!(hover, "Shape");

    let definition = session.ok(
        "definition",
        json!({"file": "main.py", "line": 3, "symbol": "Shape"}),
    );
    assert_eq!(definition, "lib.py:1:7  class Shape:");

    let references = session.ok(
        "find_references",
        json!({"file": "lib.py", "line": 1, "column": 7}),
    );
    assert!(
        references.starts_with("4 references in 2 files\n"),
        "{references}"
    );
    assert!(
        references.contains("lib.py (2)\n  1:7  class Shape:\n  6:12  return Shape()"),
        "{references}"
    );
    assert!(
        references
            .contains("main.py (2)\n  1:17  from lib import Shape\n  3:15  café = 1; s = Shape()"),
        "{references}"
    );
}

#[test]
fn non_ascii_columns_round_trip_through_every_encoding() {
    // A server naming an encoding the protocol does not have counts in
    // UTF-16, and so must Windlass.
    for encoding in ["utf-16", "utf-8", "utf-32", "utf-7"] {
        let (_dir, session) = session(&format!("--position-encoding {encoding}"));
        // `café` at column 1 and `Shape` after non-ASCII text on line 3.
        let hover = session.ok("hover", json!({"file": "main.py", "line": 4, "column": 7}));
        assert_eq!(hover, "café", "{encoding}");
        let references = session.ok(
            "find_references",
            json!({"file": "main.py", "line": 3, "symbol": "café"}),
        );
        assert!(
            references.contains("  3:1  café = 1; s = Shape()\n  4:7  print(café)"),
            "{encoding}: {references}"
        );
        let definition = session.ok(
            "definition",
            json!({"file": "main.py", "line": 3, "column": 16}),
        );
        assert_eq!(definition, "lib.py:1:7  class Shape:", "{encoding}");
    }
}

#[test]
fn symbol_alone_resolves_through_the_workspace() {
    let (_dir, session) = session("");
    let definition = session.ok("definition", json!({"symbol": "make_shape"}));
    assert_eq!(definition, "lib.py:5:5  def make_shape():");
    let hover = session.ok("hover", json!({"file": "lib.py", "symbol": "area"}));
    assert_eq!(hover, "area");
}

#[test]
fn ambiguous_symbols_list_candidates_instead_of_guessing() {
    let dir = project(&[
        ("a.py", "def run():\n    pass\n"),
        ("b.py", "def run():\n    pass\n"),
    ]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let session = Session::start(&args);
    let answer = session.ok("definition", json!({"symbol": "run"}));
    assert!(
        answer.starts_with("`run` is ambiguous (2 matches)"),
        "{answer}"
    );
    assert!(
        answer.contains("a.py:1:5  function run") && answer.contains("b.py:1:5  function run"),
        "{answer}"
    );
}

/// A server that names one symbol several times at one place (as
/// rust-analyzer names a macro's impls at its call) gives one candidate:
/// the name is answered, not listed as ambiguous with itself.
#[test]
fn a_symbol_named_several_times_at_one_place_is_one_candidate() {
    let dir = project(&[("a.py", "def run():\n    pass\n")]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "--repeat-symbols 3")]);
    let session = Session::start(&args);
    let answer = session.ok("definition", json!({"symbol": "run"}));
    assert_eq!(answer, "a.py:1:5  def run():");
}

/// A `close` method in each of two classes, served by mockls with `flags`.
fn closes_in_two_classes(flags: &str) -> (tempfile::TempDir, Session) {
    let dir = project(&[
        (
            "a.py",
            "class Logger:\n    def close(self):\n        pass\n",
        ),
        (
            "b.py",
            "class Pidfile:\n    def close(self):\n        pass\n",
        ),
    ]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", flags)]);
    let session = Session::start(&args);
    (dir, session)
}

/// A method asked for as `Type.method` of a server that answers no
/// workspace symbols (pylsp) is found by text and placed in its class by
/// the file's outline: the one in `Logger` is answered, the one of the
/// same name in another class is not a candidate.
#[test]
fn a_method_asked_with_its_class_is_found_by_text_when_the_server_names_none() {
    let (_dir, session) = closes_in_two_classes("--without workspaceSymbolProvider");
    // mockls's definitions are every one of the word, the asked file's
    // first: asked at b.py's `close`, b.py would lead.
    let answer = session.ok("definition", json!({"symbol": "Logger.close"}));
    assert!(
        answer.starts_with("a.py:2:9  def close(self):\n"),
        "{answer}"
    );
}

/// A server whose workspace symbols name only a module's own
/// definitions (jedi, or pyrefly while it checks the project) misses the
/// method, but its outline holds it in its class: the method is the
/// answer, not a list of one the model must ask again from.
#[test]
fn a_method_the_workspace_symbols_miss_but_the_outline_holds_is_answered() {
    let (_dir, session) = closes_in_two_classes("--top-level-symbols");
    let answer = session.ok("definition", json!({"symbol": "Pidfile.close"}));
    assert!(
        answer.starts_with("b.py:2:9  def close(self):\n"),
        "{answer}"
    );
    // Asked alone, the name is placed by no outline: both definitions
    // are the text's, and the servers' miss is said.
    let both = session.ok("definition", json!({"symbol": "close"}));
    assert_eq!(
        both,
        "`close` is ambiguous (2 matches); ask again with file and line:\n\
         a.py:2:9  (text) def close(self):\n\
         b.py:2:9  (text) def close(self):\n\
         note: 2 definitions were found only by text search; the servers did not report them"
    );
}

#[test]
fn document_symbols_outline_nests_and_limits_depth() {
    let (_dir, session) = session("");
    let outline = session.ok("document_symbols", json!({"file": "lib.py"}));
    assert_eq!(
        outline,
        "class Shape 1-3\n  method area 2-3\nfunction make_shape 5-6"
    );
    let shallow = session.ok("document_symbols", json!({"file": "lib.py", "depth": 1}));
    assert_eq!(
        shallow,
        "class Shape 1-3 (+1 nested)\nfunction make_shape 5-6"
    );
}

#[test]
fn declaration_type_definition_and_implementation_answer() {
    let dir = project(&[(
        "shapes.rs",
        "trait Draw {}\nstruct Dot;\nimpl Draw for Dot {}\nfn show(d: Dot) {}\n",
    )]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("rust", "")]);
    let session = Session::start(&args);
    let declaration = session.ok(
        "declaration",
        json!({"file": "shapes.rs", "line": 4, "symbol": "Dot"}),
    );
    assert_eq!(declaration, "shapes.rs:2:8  struct Dot;");
    let type_definition = session.ok(
        "type_definition",
        json!({"file": "shapes.rs", "line": 4, "symbol": "Dot"}),
    );
    assert_eq!(type_definition, "shapes.rs:2:8  struct Dot;");
    let implementation = session.ok(
        "implementation",
        json!({"file": "shapes.rs", "line": 1, "symbol": "Draw"}),
    );
    assert_eq!(implementation, "shapes.rs:3:6  impl Draw for Dot {}");
}

/// `read_file` reads a range of lines, numbered, and refuses what is not
/// a text file of the roots, or is gitignored unless asked for.
#[test]
fn read_file_reads_ranges_and_refuses_what_is_no_text_of_the_roots() {
    let (dir, session) = session("");
    assert_eq!(
        session.ok(
            "read_file",
            json!({"file": "main.py", "start": 2, "end": 3})
        ),
        "main.py: lines 2-3 of 4 lines\n2  # é日本 😀 then the name:\n3  café = 1; s = Shape()"
    );
    let whole = session.ok("read_file", json!({"file": "lib.py"}));
    let numbered: Vec<String> = LIB
        .lines()
        .enumerate()
        .map(|(index, line)| format!("{}  {line}", index + 1))
        .collect();
    assert_eq!(
        whole,
        format!("lib.py: lines 1-6 of 6 lines\n{}", numbered.join("\n"))
    );

    std::fs::write(dir.path().join("logo.png"), b"\x89PNG\r\n\x1a\nIHDR").unwrap();
    std::fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(dir.path().join("run.log"), "started\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "x").unwrap();
    let secret = outside.path().join("secret.txt").display().to_string();
    for (arguments, refusal) in [
        (
            json!({"file": "logo.png"}),
            "logo.png is a binary file (PNG image), not text",
        ),
        (
            json!({"file": "notes"}),
            "notes is a directory; list_directory lists it",
        ),
        (
            json!({"file": "run.log"}),
            "run.log is ignored by .gitignore; ask with include_ignored to read it",
        ),
        (json!({"file": secret}), "is outside the workspace roots"),
        (
            json!({"file": "gone.py"}),
            "gone.py: no such file or directory",
        ),
    ] {
        let error = session.err("read_file", arguments.clone());
        assert!(error.contains(refusal), "{arguments}: {error}");
    }
    assert_eq!(
        session.ok(
            "read_file",
            json!({"file": "run.log", "include_ignored": true})
        ),
        "run.log: lines 1-1 of 1 line\n1  started"
    );
}

#[test]
fn list_directory_shows_types_and_sizes() {
    let (_dir, session) = session("");
    let listing = session.ok("list_directory", json!({}));
    assert_eq!(
        listing,
        format!("lib.py  {} B\nmain.py  {} B\nnotes/", LIB.len(), MAIN.len())
    );
    let nested = session.ok("list_directory", json!({"path": "notes"}));
    assert_eq!(nested, "readme.txt  5 B");
}

#[test]
fn tools_are_listed_read_only_with_schemas() {
    let (_dir, session) = session("");
    let tools = session.request("tools/list", json!({}));
    let tools = tools["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    let expected = [
        "hover",
        "definition",
        "declaration",
        "type_definition",
        "implementation",
        "find_references",
        "document_symbols",
        "diagnostics",
        "search",
        "codebase_map",
        "call_hierarchy",
        "type_hierarchy",
        "code_actions",
        "rename",
        "completion",
        "signature_help",
        "list_directory",
        "read_file",
        "source",
        "impact",
        "check_edit",
        "status",
    ];
    for name in expected {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert_eq!(names.len(), expected.len(), "{names:?}");
    for tool in tools {
        assert_eq!(
            tool["annotations"]["readOnlyHint"], true,
            "{}",
            tool["name"]
        );
    }
    // Codex and Copilot CLI show a model no server instructions: a
    // line's base is said where the line is asked for.
    for tool in tools {
        for field in ["line", "column"] {
            if let Some(property) = tool["inputSchema"]["properties"].get(field) {
                let described = property["description"].as_str().unwrap_or_default();
                assert!(described.starts_with("1-based"), "{tool}");
            }
        }
    }
    // A host hands the model a tool's name, description and schema; its
    // `_meta` (the search hint) only steers the host's own tool search.
    let mut seen = tools.clone();
    for tool in &mut seen {
        let hint = tool["_meta"]["anthropic/searchHint"].as_str();
        assert!(hint.is_some_and(|hint| !hint.is_empty()), "{tool}");
        tool.as_object_mut().unwrap().remove("_meta");
    }
    let bytes = serde_json::to_string(&seen).unwrap().len();
    assert!(
        bytes < 8_000,
        "tools/list costs every session {bytes} bytes of context"
    );
}

#[test]
fn several_roots_prefix_paths_with_their_names() {
    let first = project(&[("app/main.py", "from util import helper\nhelper()\n")]);
    let second = project(&[("app/util.py", "def helper():\n    pass\n")]);
    let mut args = root_arg(&first.path().join("app"));
    args.extend(root_arg(&second.path().join("app")));
    args.extend(["--lsp".into(), mockls_lsp("python", "--workspace-folders")]);
    let session = Session::start(&args);
    let definition = session.ok(
        "definition",
        json!({"file": "app/main.py", "line": 2, "symbol": "helper"}),
    );
    assert_eq!(definition, "app-2/util.py:1:5  def helper():");
    let hover = session.ok(
        "hover",
        json!({"file": "app-2/util.py", "line": 1, "column": 5}),
    );
    assert_eq!(hover, "helper");
    let listing = session.ok("list_directory", json!({"path": "app-2"}));
    assert_eq!(listing, "util.py  23 B");
}

/// A file whose server cannot outline it is shown bare under a warning
/// that says why, never as a file without symbols.
#[test]
fn the_map_says_why_files_have_no_symbols() {
    let (_dir, session) = session("--fail-on textDocument/documentSymbol");
    let map = session.ok("codebase_map", json!({"include_symbols": true}));
    assert!(
        map.starts_with(
            "warning: no symbols of 2 files: [python] mockls: failing textDocument/documentSymbol"
        ),
        "{map}"
    );
    assert!(map.ends_with("\n  lib.py\n  main.py"), "{map}");
}
