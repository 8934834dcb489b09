//! Roots added while real servers run: pyright takes the new folder as a
//! change, typescript-language-server is restarted with it; either way
//! answers in and across the new root are right, and a file created there
//! afterwards is found. Each test skips, saying why, when its server is
//! missing (and fails instead under `CI=true`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use std::path::{Path, PathBuf};

fn start(cwd: &Path, roots: Vec<PathBuf>) -> Session {
    let client = Client {
        cwd: Some(cwd),
        roots: Some(roots),
        ..Client::default()
    };
    Session::start_as(&[], &client)
}

fn wait_for_roots(session: &Session, count: usize) {
    session.wait_for_status(|status| {
        status.lines().filter(|l| l.starts_with("root ")).count() == count
    });
}

#[test]
fn pyright_answers_in_a_root_added_after_start() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let dir = project(&[
        (
            "app/main.py",
            "def start() -> int:\n    return 1\n\nstart()\n",
        ),
        (
            "lib/shapes.py",
            "def area(w: int, h: int) -> int:\n    return w * h\n",
        ),
        (
            "lib/use.py",
            "from shapes import area\n\nprint(area(2, 3))\n",
        ),
    ]);
    let base = dir.path().canonicalize().unwrap();
    let (app, lib) = (base.join("app"), base.join("lib"));
    let session = start(&app, vec![app.clone()]);
    assert_eq!(
        session.ok("definition", json!({"symbol": "start"})),
        "main.py:1:5  def start() -> int:"
    );

    session.set_roots(&[&app, &lib]);
    wait_for_roots(&session, 2);
    assert_eq!(
        session.ok(
            "definition",
            json!({"file": "lib/use.py", "line": 3, "symbol": "area"})
        ),
        "lib/shapes.py:1:5  def area(w: int, h: int) -> int:"
    );
    let references = session.ok(
        "find_references",
        json!({"file": "lib/shapes.py", "line": 1, "symbol": "area"}),
    );
    assert!(
        references.starts_with("3 references in 2 files"),
        "{references}"
    );
    assert!(references.contains("lib/use.py (2)"), "{references}");

    std::fs::write(
        lib.join("fresh.py"),
        "def freshly_made_helper() -> int:\n    return 2\n",
    )
    .unwrap();
    let deadline = std::time::Instant::now() + WATCHDOG;
    loop {
        let search = session.ok("search", json!({"query": "freshly_made_helper"}));
        if search.contains("lib/fresh.py\n    function freshly_made_helper 1:5") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{search}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

#[test]
fn typescript_answers_across_a_root_added_after_start() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let config = "{\"compilerOptions\": {\"strict\": true}}\n";
    let dir = project(&[
        ("app/tsconfig.json", config),
        (
            "app/main.ts",
            "import { area } from \"../lib/shapes\";\n\nexport const size = area(2, 3);\n",
        ),
        ("lib/tsconfig.json", config),
        (
            "lib/shapes.ts",
            "export function area(w: number, h: number): number {\n  return w * h;\n}\n",
        ),
    ]);
    let base = dir.path().canonicalize().unwrap();
    let (app, lib) = (base.join("app"), base.join("lib"));
    let session = start(&app, vec![app.clone()]);
    let outside = session.ok(
        "definition",
        json!({"file": "main.ts", "line": 3, "symbol": "area"}),
    );
    assert!(
        outside.ends_with("note: 1 result outside the workspace roots left out"),
        "lib is not a root yet: {outside}"
    );

    session.set_roots(&[&app, &lib]);
    wait_for_roots(&session, 2);
    assert_eq!(
        session.ok(
            "definition",
            json!({"file": "app/main.ts", "line": 3, "symbol": "area"})
        ),
        "lib/shapes.ts:1:17  export function area(w: number, h: number): number {"
    );
    let references = session.ok(
        "find_references",
        json!({"file": "lib/shapes.ts", "line": 1, "symbol": "area"}),
    );
    assert!(references.contains("app/main.ts (2)"), "{references}");
    assert!(references.contains("lib/shapes.ts (1)"), "{references}");
}
