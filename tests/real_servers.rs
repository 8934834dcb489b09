//! The navigation tools against real language servers, with zero
//! configuration: Windlass finds pyright and clangd on PATH. Each test
//! skips, saying why, when its server is not installed; CI installs both.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::projects::{SHAPES_PY, real_project};
use common::*;
use serde_json::json;

/// 1-based code-point column of `word` in `line`.
fn column_of(line: &str, word: &str) -> usize {
    line[..line.find(word).unwrap()].chars().count() + 1
}

const MAIN_PY: &str = "\
from shapes import Shape, total

label = \"😀日本\"; naïve = total([Shape()])
";

#[test]
fn pyright_answers_every_navigation_tool() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let dir = project(&[("shapes.py", SHAPES_PY), ("main.py", MAIN_PY)]);
    let session = Session::start(&root_arg(dir.path()));
    let line = MAIN_PY.lines().nth(2).unwrap();

    let hover = session.ok(
        "hover",
        json!({"file": "main.py", "line": 3, "column": column_of(line, "total")}),
    );
    assert!(
        hover.contains("def total(shapes: list[Shape]) -> float"),
        "{hover}"
    );
    assert!(!hover.contains("```"), "hover text is unframed: {hover}");

    let definition = session.ok(
        "definition",
        json!({"file": "main.py", "line": 3, "symbol": "Shape"}),
    );
    assert_eq!(definition, "shapes.py:1:7  class Shape:");

    let references = session.ok(
        "find_references",
        json!({"file": "shapes.py", "line": 1, "column": 7}),
    );
    let shape_column = column_of(line, "Shape");
    assert!(references.contains("main.py (2)"), "{references}");
    assert!(
        references.contains(&format!("  3:{shape_column}  label = ")),
        "{references}"
    );
    assert!(
        references.contains("shapes.py (2)\n  1:7  class Shape:\n  6:24  def total"),
        "{references}"
    );

    let outline = session.ok("document_symbols", json!({"file": "shapes.py"}));
    assert!(
        outline.contains("class Shape 1-3\n  method area 2-3"),
        "{outline}"
    );
    assert!(outline.contains("function total 6-7"), "{outline}");

    let by_symbol = session.ok("definition", json!({"symbol": "total"}));
    assert_eq!(
        by_symbol,
        "shapes.py:6:5  def total(shapes: list[Shape]) -> float:"
    );

    let type_definition = session.ok(
        "type_definition",
        json!({"file": "main.py", "line": 3, "symbol": "naïve"}),
    );
    assert!(
        type_definition.ends_with("note: 1 result outside the workspace roots left out"),
        "the type is defined in pyright's bundled stubs, outside the roots: {type_definition}"
    );

    let status = session.ok("status", json!({}));
    assert!(
        status.contains("[python] pyright-langserver running ready"),
        "{status}"
    );
}

const MAIN_C: &str = "\
#include \"shapes.h\"

static int twice(int x) { return 2 * x; }

/* é日本 😀 */ int main(void) { return twice(area(2, 3)); }
";

#[test]
fn clangd_answers_with_utf8_columns_and_serves_headers() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let dir = project(&[
        ("shapes.h", "int area(int w, int h);\n"),
        ("main.c", MAIN_C),
        ("compile_flags.txt", "-xc\n-std=c11\n"),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let line = MAIN_C.lines().nth(4).unwrap();

    let definition = session.ok(
        "definition",
        json!({"file": "main.c", "line": 5, "column": column_of(line, "twice")}),
    );
    assert_eq!(
        definition,
        "main.c:3:12  static int twice(int x) { return 2 * x; }"
    );

    let hover = session.ok(
        "hover",
        json!({"file": "main.c", "line": 5, "symbol": "twice"}),
    );
    assert!(hover.contains("twice"), "{hover}");

    let references = session.ok(
        "find_references",
        json!({"file": "main.c", "line": 3, "symbol": "twice"}),
    );
    let call = column_of(line, "twice");
    assert!(
        references.contains("main.c (2)\n  3:12  static int twice"),
        "{references}"
    );
    assert!(
        references.contains(&format!("  5:{call}  /* é日本 😀 */")),
        "{references}"
    );

    let declaration = session.ok(
        "declaration",
        json!({"file": "main.c", "line": 5, "symbol": "area"}),
    );
    assert_eq!(declaration, "shapes.h:1:5  int area(int w, int h);");

    let header = session.ok("document_symbols", json!({"file": "shapes.h"}));
    assert!(header.contains("function area 1"), "{header}");

    let outline = session.ok("document_symbols", json!({"file": "main.c"}));
    assert!(
        outline.contains("function twice 3") && outline.contains("function main 5"),
        "{outline}"
    );

    let status = session.ok("status", json!({}));
    assert!(
        status.contains("[c,cpp] clangd running ready") && status.contains("utf-8"),
        "{status}"
    );
}

/// Ten edit cycles: each error names its cycle, so a stale answer from an
/// earlier cycle cannot pass for a fresh one.
fn edit_cycles(
    session: &Session,
    dir: &std::path::Path,
    file: &str,
    broken: impl Fn(usize) -> String,
    fixed: impl Fn(usize) -> String,
    error_for: impl Fn(usize) -> String,
) {
    for cycle in 0..10 {
        std::fs::write(dir.join(file), broken(cycle)).unwrap();
        let answer = session.ok("diagnostics", json!({"file": file}));
        assert!(
            answer.contains(&error_for(cycle)),
            "cycle {cycle}, broken: {answer}"
        );
        if cycle > 0 {
            assert!(
                !answer.contains(&error_for(cycle - 1)),
                "cycle {cycle}: stale error in {answer}"
            );
        }
        std::fs::write(dir.join(file), fixed(cycle)).unwrap();
        let answer = session.ok("diagnostics", json!({"file": file}));
        assert_eq!(
            answer,
            format!("{file}: no problems"),
            "cycle {cycle}, fixed"
        );
    }
}

#[test]
fn pyright_diagnostics_are_fresh_through_ten_edit_cycles() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let dir = project(&[("main.py", "value = 1\n")]);
    let session = Session::start(&root_arg(dir.path()));
    edit_cycles(
        &session,
        dir.path(),
        "main.py",
        |cycle| format!("value = 1\nprint(undefined_{cycle})\n"),
        |cycle| format!("value = {cycle}\nprint(value)\n"),
        |cycle| {
            format!(
                "2:7 error [Pyright reportUndefinedVariable] \"undefined_{cycle}\" is not defined"
            )
        },
    );
}

#[test]
fn clangd_diagnostics_are_fresh_through_ten_edit_cycles() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let dir = project(&[
        ("main.c", "int main(void) { return 0; }\n"),
        ("compile_flags.txt", "-xc\n"),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    edit_cycles(
        &session,
        dir.path(),
        "main.c",
        |cycle| format!("/* é 😀 */ int main(void) {{ return undefined_{cycle}; }}\n"),
        |cycle| format!("int main(void) {{ return {cycle}; }}\n"),
        |cycle| {
            format!(
                "1:35 error [clang undeclared_var_use] Use of undeclared identifier 'undefined_{cycle}'"
            )
        },
    );
    let status = session.ok("status", json!({}));
    assert!(status.contains("diagnostics by version"), "{status}");
}

/// An importer open while its import is edited again and again: every
/// answer must be the edit's own, and the importer's answer must follow
/// its import. Pyright is asked for its diagnostics; waited for instead
/// (`pull_diagnostics = false`), it published the edited file under the
/// edit's version more than once when a check of the old text was under
/// way. (That an importer's publications teach no second round is
/// unit-tested in `rounds.rs`.)
#[test]
fn pyright_edits_with_an_importer_open_stay_fresh() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let dir = project(&[
        ("pkg/__init__.py", ""),
        (
            "pkg/mathutil.py",
            "def add(a: int, b: int) -> int:\n    return a + b\n",
        ),
        (
            "pkg/app.py",
            "from pkg.mathutil import add\n\nprint(add(1, 2))\n",
        ),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let hover = session.ok(
        "hover",
        json!({"file": "pkg/app.py", "line": 3, "symbol": "add"}),
    );
    assert!(hover.contains("def add"), "{hover}");
    edit_cycles(
        &session,
        dir.path(),
        "pkg/mathutil.py",
        |cycle| format!("def add(a: int, b: int) -> int:\n    return a + undefined_{cycle}\n"),
        |cycle| format!("def add(a: int, b: int) -> int:\n    return a + b + {cycle}\n"),
        |cycle| {
            format!(
                "2:16 error [Pyright reportUndefinedVariable] \"undefined_{cycle}\" is not defined"
            )
        },
    );
    std::fs::write(
        dir.path().join("pkg/mathutil.py"),
        "def add(a: str, b: str) -> str:\n    return a + b\n",
    )
    .unwrap();
    let importer = session.ok("diagnostics", json!({"file": "pkg/app.py"}));
    assert!(importer.contains("pkg/app.py: 2 errors"), "{importer}");
    let status = session.ok("status", json!({}));
    let pyright = status.lines().find(|line| line.starts_with("[python] "));
    assert!(
        pyright.is_some_and(|line| line.contains("diagnostics by pull")),
        "{status}"
    );
}

/// pyright on gunicorn's sources (95,000 lines), a second published
/// project beside requests: a documented method by `Type.method`, a name
/// shared by methods and a function listed (its overflow pointing at
/// `search`), references across files, `search`'s exact match, and an
/// importer's diagnostics following a function renamed on disk, both ways.
#[test]
fn pyright_answers_on_gunicorn() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let Some(dir) = real_project("gunicorn-27.0.1") else {
        return skip("target/real-projects/gunicorn-27.0.1 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    assert_eq!(
        session.ok("hover", json!({"symbol": "Arbiter.murder_workers"})),
        "(method) def murder_workers(self: Self@Arbiter) -> None\nKill unused/idle workers"
    );
    let reload = session.ok("hover", json!({"symbol": "reload"}));
    assert!(
        reload.starts_with(
            "`reload` is ambiguous (8 matches); ask again with file and line:\n\
             gunicorn/arbiter.py:530:9  method reload\n"
        ),
        "{reload}"
    );
    let close = session.ok("hover", json!({"symbol": "close"}));
    assert!(
        close.contains("\ngunicorn/util.py:284:5  function close\n")
            && close.contains("method close")
            && close.contains(" more: `search` with query \"close\" lists every one, by file"),
        "{close}"
    );
    // On a machine running many servers at once, pyright may not be seen
    // to take in the files opened for the question within the patience,
    // and the answer says so first.
    let references =
        past_loading_warning(&session.ok("find_references", json!({"symbol": "is_ipv6"})));
    assert!(
        references.starts_with(
            "4 references in 4 files\ngunicorn/instrument/statsd.py (1)\n  \
             33:39  elif cfg.statsd_host and util.is_ipv6(cfg.statsd_host[0]):\n\
             gunicorn/sock.py (1)\n  169:17  if util.is_ipv6(addr[0]):\n"
        ),
        "{references}"
    );
    let search = session.ok("search", json!({"query": "close_graceful"}));
    assert!(
        search.contains("symbols (1)\n  gunicorn/util.py\n    function close_graceful 291:5\n"),
        "{search}"
    );
    let importer = json!({"file": "gunicorn/sock.py"});
    let renamed_away = "169:17 error [Pyright reportAttributeAccessIssue] \"is_ipv6\" is not a known attribute of module \"gunicorn.util\"";
    let before = session.ok("diagnostics", importer.clone());
    assert!(!before.contains(renamed_away), "{before}");
    let util = dir.path().join("gunicorn/util.py");
    let original = std::fs::read_to_string(&util).unwrap();
    std::fs::write(
        &util,
        original.replace("def is_ipv6(addr):", "def is_ip6(addr):"),
    )
    .unwrap();
    let broken = session.ok("diagnostics", importer.clone());
    assert!(broken.contains(renamed_away), "{broken}");
    std::fs::write(&util, &original).unwrap();
    assert_eq!(
        past_loading_warning(&session.ok("diagnostics", importer)),
        past_loading_warning(&before)
    );
}
