//! The symbol index as a real server fills it: a process whose
//! typescript-language-server's background pass went over a project,
//! then a new process on the same state whose server for TypeScript
//! never answers workspace symbols, so that `search` shows what the
//! index holds. Both run with a `PATH` of that server alone (and node),
//! so that no other server of the machine's answers for TypeScript.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use std::time::{Duration, Instant};

const TSCONFIG: &str = r#"{"compilerOptions": {"strict": true}, "include": ["src"]}"#;
const SHAPES: &str = "export function area(side: number): number {\n  return side * side\n}\n";
const MAIN: &str =
    "import { area } from './shapes'\n\nexport const total = [1, 2].map((side) => area(side))\n";
/// What a build left beside the sources: no project of the tsconfig's.
const COMPILED: &str =
    "export function area(side) {\n  return side * side\n}\nexport function compiledOnly() {}\n";
const SCRIPT: &str = "function buildAll() {}\n";

/// The symbols part of a `search` answer, before its text heatmap.
fn names(answer: &str) -> &str {
    answer.split("\ntext (").next().unwrap_or(answer)
}

/// The index holds the names of the tsconfig's files as the server
/// outlined them, without a function passed to a call, and no name of the
/// files beside the project (compiled output, a build script), which the
/// pass never opened: each would have cost tsserver a project of its own.
#[test]
fn typescript_index_holds_the_names_of_the_projects_files_only() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let dir = project(&[
        ("tsconfig.json", TSCONFIG),
        ("src/shapes.ts", SHAPES),
        ("src/main.ts", MAIN),
        ("dist/shapes.js", COMPILED),
        ("scripts/build.js", SCRIPT),
    ]);
    let bin = tempfile::tempdir().unwrap();
    for command in ["node", "typescript-language-server"] {
        let found = which(command).unwrap();
        std::os::unix::fs::symlink(found, bin.path().join(command)).unwrap();
    }
    let state = tempfile::tempdir().unwrap();
    let state_home = state.path().display().to_string();
    let path = bin.path().display().to_string();
    let env = [
        ("PATH", path.as_str()),
        ("XDG_STATE_HOME", state_home.as_str()),
    ];
    let session = Session::start_with_env(&root_arg(dir.path()), &env);
    let hover = session.ok(
        "hover",
        json!({"file": "src/main.ts", "line": 3, "symbol": "area"}),
    );
    assert!(hover.contains("area(side: number): number"), "{hover}");
    let deadline = Instant::now() + WATCHDOG;
    loop {
        let status = session.ok("status", json!({}));
        if status.contains("[typescript] 4 files, every root read") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the pass never went over the root:\n{status}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    drop(session);

    let mut args = root_arg(dir.path());
    args.extend([
        "--lsp".into(),
        mockls_lsp(
            "typescript",
            "--hang-on workspace/symbol --indexing-delay 600000",
        ),
        "--request-timeout".into(),
        "2".into(),
    ]);
    let session = Session::start_with_env(&args, &env);
    let area = session.ok("search", json!({"query": "area"}));
    assert!(
        names(&area).contains("  src/shapes.ts\n    function area 1:17 (index)"),
        "{area}"
    );
    assert!(!names(&area).contains("dist/"), "{area}");
    for (query, file) in [("compiledOnly", "dist/shapes.js"), ("buildAll", "scripts/")] {
        let answer = session.ok("search", json!({"query": query}));
        assert!(
            !names(&answer).lines().any(|line| line.ends_with("(index)")),
            "{answer}"
        );
        // The text search still finds it, and its definition, marked so.
        assert!(answer.contains(file), "{answer}");
        assert!(
            names(&answer).contains(&format!("definition {query} ")),
            "{answer}"
        );
    }
    let map = session.ok("search", json!({"query": "map"}));
    assert!(!names(&map).contains("callback"), "{map}");
}
