//! Answers an agent can trust, against real servers: fresh after a file
//! another depends on changes on disk, never answered before the server
//! has loaded its project, and saying so when the server's view is
//! partial. Each test skips, saying why, when its server is missing (and
//! fails instead under `CI=true`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::projects::{big_typescript_project, c_project_with_database};
use common::*;
use serde_json::json;

const UTIL_PY: &str = "def helper(a: int) -> int:\n    return a\n";
const UTIL_PY_TWO: &str = "def helper(a: int, b: int) -> int:\n    return a + b\n";
const MAIN_PY: &str = "from util import helper\n\nresult = helper(1)\n";

#[test]
fn pyright_diagnostics_and_hover_follow_a_callee_edited_on_disk() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let dir = project(&[("util.py", UTIL_PY), ("main.py", MAIN_PY)]);
    let session = Session::start(&root_arg(dir.path()));
    let hover = json!({"file": "main.py", "line": 3, "symbol": "helper"});
    for round in 0..3 {
        assert_eq!(
            session.ok("diagnostics", json!({"file": "main.py"})),
            "main.py: no problems",
            "round {round}"
        );
        assert_eq!(
            session.ok("hover", hover.clone()),
            "(function) def helper(a: int) -> int"
        );
        std::fs::write(dir.path().join("util.py"), UTIL_PY_TWO).unwrap();
        let broken = session.ok("diagnostics", json!({"file": "main.py"}));
        assert_eq!(
            broken,
            "main.py: 1 error\n  3:10 error [Pyright reportCallIssue] Argument missing for parameter \"b\"",
            "round {round}"
        );
        let changed = session.ok("hover", hover.clone());
        assert!(changed.contains("b: int"), "round {round}: {changed}");
        std::fs::write(dir.path().join("util.py"), UTIL_PY).unwrap();
    }
}

const SHAPES_H: &str = "int area(int w, int h);\n";
const SHAPES_H_ONE: &str = "int area(int w);\n";
const MAIN_C: &str = "#include \"shapes.h\"\n\nint main(void) { return area(2, 3); }\n";

#[test]
fn clangd_diagnostics_and_hover_follow_a_header_edited_on_disk() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let dir = project(&[
        ("shapes.h", SHAPES_H),
        ("main.c", MAIN_C),
        ("compile_flags.txt", "-xc\n"),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let hover = json!({"file": "main.c", "line": 3, "symbol": "area"});
    for round in 0..3 {
        assert_eq!(
            session.ok("diagnostics", json!({"file": "main.c"})),
            "main.c: no problems",
            "round {round}"
        );
        assert!(
            session
                .ok("hover", hover.clone())
                .contains("int area(int w, int h)")
        );
        std::fs::write(dir.path().join("shapes.h"), SHAPES_H_ONE).unwrap();
        let broken = session.ok("diagnostics", json!({"file": "main.c"}));
        assert!(
            broken.starts_with("main.c: 1 error\n  3:33 error [clang typecheck_call_too_many_args_one] Too many arguments"),
            "round {round}: {broken}"
        );
        let changed = session.ok("hover", hover.clone());
        assert!(
            changed.contains("int area(int w)"),
            "round {round}: {changed}"
        );
        std::fs::write(dir.path().join("shapes.h"), SHAPES_H).unwrap();
    }
}

#[test]
fn typescript_first_answers_of_a_fresh_session_wait_for_the_project() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let dir = big_typescript_project(400);
    let session = Session::start(&root_arg(dir.path()));
    let first_status = session.ok("status", json!({}));
    assert!(
        !first_status.contains("typescript-language-server running ready"),
        "not ready before the project has loaded: {first_status}"
    );
    let hover = session.ok(
        "hover",
        json!({"file": "src/main.ts", "line": 5, "symbol": "f399"}),
    );
    assert_eq!(hover, "(alias) f399(x: number): number\nimport f399");
    assert_eq!(
        session.ok("diagnostics", json!({"file": "src/main.ts"})),
        "src/main.ts: 1 hint\n  4:9 hint [typescript 6133] 'unused' is declared but its value is never read."
    );
    let outline = session.ok("document_symbols", json!({"file": "src/m7.ts", "depth": 1}));
    let names: Vec<&str> = outline
        .lines()
        .take(4)
        .map(|line| line.split_whitespace().nth(1).unwrap_or_default())
        .collect();
    assert_eq!(
        names,
        vec!["f7", "I7_0", "g7_0", "I7_1"],
        "line order: {outline}"
    );
}

#[test]
fn typescript_symbol_alone_without_a_tsconfig_lists_every_definition() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let dir = project(&[
        (
            "a/view.ts",
            "export function render(): string {\n  return \"a\";\n}\n",
        ),
        (
            "b/view.ts",
            "export function render(): string {\n  return \"b\";\n}\n",
        ),
        (
            "c/view.ts",
            "export function render(): string {\n  return \"c\";\n}\n",
        ),
        (
            "main.ts",
            "import { render } from \"./a/view\";\nrender();\n",
        ),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let answer = session.ok("definition", json!({"symbol": "render"}));
    assert!(
        answer.starts_with("`render` is ambiguous (3 matches); ask again with file and line:"),
        "{answer}"
    );
    for file in ["a/view.ts:1:17", "b/view.ts:1:17", "c/view.ts:1:17"] {
        assert!(answer.contains(file), "{file} missing: {answer}");
    }
    assert!(
        answer.contains("warning: [typescript] has no tsconfig.json or jsconfig.json"),
        "{answer}"
    );
}

#[test]
fn clangd_symbol_lookup_works_as_the_first_call() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let dir = c_project_with_database(1);
    let session = Session::start(&root_arg(dir.path()));
    let references = session.ok("find_references", json!({"symbol": "area"}));
    assert!(
        references.starts_with("4 references in 4 files"),
        "{references}"
    );
    assert!(!references.contains("warning"), "{references}");
}

#[test]
fn clangd_without_a_compilation_database_says_its_answers_may_be_partial() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let dir = project(&[
        ("shapes.h", SHAPES_H),
        ("main.c", MAIN_C),
        (
            "other.c",
            "#include \"shapes.h\"\nint twice(void) { return 2 * area(1, 1); }\n",
        ),
        ("compile_flags.txt", "-xc\n"),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let references = session.ok(
        "find_references",
        json!({"file": "shapes.h", "line": 1, "symbol": "area"}),
    );
    assert!(
        references.starts_with(
            "warning: [c,cpp] has no compile_commands.json, so it knows only the files it has opened"
        ),
        "{references}"
    );
    let rename = session.ok(
        "rename",
        json!({"file": "shapes.h", "line": 1, "symbol": "area", "new_name": "surface"}),
    );
    assert!(
        rename.starts_with("warning: [c,cpp] has no compile_commands.json"),
        "{rename}"
    );
    let hover = session.ok(
        "hover",
        json!({"file": "main.c", "line": 3, "symbol": "area"}),
    );
    assert!(!hover.contains("warning"), "hover needs no index: {hover}");
}

#[test]
fn clangd_diagnostics_behind_a_missing_include_say_the_rest_is_unchecked() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let dir = project(&[
        ("shapes.h", SHAPES_H),
        ("main.c", MAIN_C),
        ("compile_flags.txt", "-xc\n"),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    assert_eq!(
        session.ok("diagnostics", json!({"file": "main.c"})),
        "main.c: no problems"
    );
    // The call's error, after the include that is not found, is not
    // reported: clang stops at a missing include.
    let broken =
        "#include \"gone.h\"\n#include \"shapes.h\"\n\nint main(void) { return area(2); }\n";
    std::fs::write(dir.path().join("main.c"), broken).unwrap();
    let answer = session.ok("diagnostics", json!({"file": "main.c"}));
    assert!(answer.contains("'gone.h' file not found"), "{answer}");
    assert!(
        !answer.contains("too few arguments"),
        "clang went on: {answer}"
    );
    assert!(
        answer.contains(
            "warning: [c,cpp] the error at main.c:1 is fatal: the server checks nothing after it, so problems past it are not reported"
        ),
        "{answer}"
    );
}

#[test]
fn clangd_references_name_uses_in_branches_the_build_leaves_out() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let header = "#ifndef SHAPES_H\n#define SHAPES_H\n#define SHAPES_API extern\n\
                  #ifdef SHAPES_STATIC\n#define SHAPES_STATIC_API SHAPES_API\n#endif\n\
                  SHAPES_API int area(int w, int h);\n#endif\n";
    let dir = project(&[
        ("shapes.h", header),
        ("main.c", MAIN_C),
        ("compile_flags.txt", "-xc\n"),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let references = session.ok(
        "find_references",
        json!({"file": "shapes.h", "line": 3, "symbol": "SHAPES_API"}),
    );
    assert!(
        references.contains(
            "note: by text, `SHAPES_API` also appears inside `#if` branches, which the server compiles only where the build takes them: shapes.h:5"
        ),
        "{references}"
    );
    assert!(references.contains("7:1"), "{references}");
}

#[test]
fn one_clangd_serves_c_and_headers_when_configured_for_c() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let dir = project(&[
        ("shapes.h", SHAPES_H),
        ("main.c", MAIN_C),
        ("compile_flags.txt", "-xc\n"),
    ]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), "c:clangd".into()]);
    let session = Session::start(&args);
    let header = session.ok(
        "hover",
        json!({"file": "shapes.h", "line": 1, "symbol": "area"}),
    );
    assert!(header.contains("int area(int w, int h)"), "{header}");
    session.ok(
        "hover",
        json!({"file": "main.c", "line": 3, "symbol": "area"}),
    );
    let status = session.ok("status", json!({}));
    assert_eq!(status.matches("clangd").count(), 1, "{status}");
    assert!(status.contains("[c] (c,cpp) clangd running"), "{status}");
}

const DEPLOY_SH: &str = "\
#!/usr/bin/env bash
deploy_all() {
  echo deploying \"$@\"
}

deploy_all web db

case \"$1\" in
  start) echo starting ;;
  stop) echo stopping ;;&
esac
";

#[test]
fn bash_language_server_parse_failures_reach_the_caller() {
    if !have("bash-language-server") {
        return skip("bash-language-server is not on PATH");
    }
    let dir = project(&[("deploy.sh", DEPLOY_SH)]);
    let session = Session::start(&root_arg(dir.path()));
    let answer = session.ok("definition", json!({"symbol": "deploy_all"}));
    assert!(answer.contains("deploy.sh:2:1"), "{answer}");
    assert!(
        answer.contains("warning: [shell] reported:")
            && answer.contains("Error while parsing deploy.sh"),
        "the server's parse error reaches the caller: {answer}"
    );
    let outline = session.ok("document_symbols", json!({"file": "deploy.sh"}));
    assert!(
        outline.contains("Error while parsing deploy.sh: syntax error"),
        "{outline}"
    );
}

#[test]
fn pyright_shows_nothing_through_a_link_to_outside_the_roots() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let outside = project(&[(
        "secret.py",
        "def secret_function() -> int:\n    return 42\n",
    )]);
    let dir = project(&[("main.py", "def visible() -> int:\n    return 1\n")]);
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path().join("secret.py"), dir.path().join("leak.py"))
        .unwrap();
    let session = Session::start(&root_arg(dir.path()));
    let map = session.ok("codebase_map", json!({"include_symbols": true}));
    assert!(map.contains("main.py: function visible"), "{map}");
    assert!(!map.contains("secret_function"), "{map}");
    let search = session.ok("search", json!({"query": "secret_function"}));
    assert!(!search.contains("leak.py"), "{search}");
    assert!(!search.contains("secret.py"), "{search}");
}

#[cfg(unix)]
#[test]
fn pyright_killed_while_idle_is_waited_for() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let dir = project(&[("util.py", UTIL_PY), ("main.py", MAIN_PY)]);
    let session = Session::start(&root_arg(dir.path()));
    let hover = json!({"file": "main.py", "line": 3, "symbol": "helper"});
    assert_eq!(
        session.ok("hover", hover.clone()),
        "(function) def helper(a: int) -> int"
    );
    let status = session.ok("status", json!({}));
    let pid = status
        .lines()
        .find(|line| line.starts_with("[python]"))
        .and_then(|line| line.split(" pid ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_owned();
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(
        session.ok("hover", hover),
        "(function) def helper(a: int) -> int",
        "the call after the kill waits for the restart"
    );
}

#[test]
fn typescript_diagnostics_and_hover_follow_a_module_edited_on_disk() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let util = "export function helper(a: number): number {\n  return a;\n}\n";
    let util_two = "export function helper(a: number, b: number): number {\n  return a + b;\n}\n";
    let dir = project(&[
        (
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true}}\n",
        ),
        ("util.ts", util),
        (
            "main.ts",
            "import { helper } from \"./util\";\n\nexport const result = helper(1);\n",
        ),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let hover = json!({"file": "main.ts", "line": 3, "symbol": "helper"});
    for round in 0..3 {
        assert_eq!(
            session.ok("diagnostics", json!({"file": "main.ts"})),
            "main.ts: no problems",
            "round {round}"
        );
        assert!(
            session
                .ok("hover", hover.clone())
                .contains("helper(a: number): number"),
            "round {round}"
        );
        std::fs::write(dir.path().join("util.ts"), util_two).unwrap();
        let broken = session.ok("diagnostics", json!({"file": "main.ts"}));
        assert!(
            broken.starts_with(
                "main.ts: 1 error\n  3:23 error [typescript 2554] Expected 2 arguments, but got 1."
            ),
            "round {round}: {broken}"
        );
        let changed = session.ok("hover", hover.clone());
        assert!(
            changed.contains("helper(a: number, b: number)"),
            "round {round}: {changed}"
        );
        std::fs::write(dir.path().join("util.ts"), util).unwrap();
    }
}
