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

/// A `diagnostics` call and the client's removal of the file's root, in
/// either order: the answer is the file's type error or a refusal, never
/// the "no problems" of a server that has just let the folder go.
#[test]
fn a_diagnostics_call_racing_the_removal_of_its_root_is_refused_or_fresh() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let dir = project(&[
        ("app/main.py", "def start() -> int:\n    return 1\n"),
        ("lib/bad.py", "def area() -> int:\n    return \"wide\"\n"),
    ]);
    let base = dir.path().canonicalize().unwrap();
    let (app, lib) = (base.join("app"), base.join("lib"));
    let session = start(&app, vec![app.clone(), lib.clone()]);
    let bad = lib.join("bad.py");
    let mut refused = [0, 0];
    for round in 0..12_u32 {
        session.set_roots(&[&app, &lib]);
        wait_for_roots(&session, 2);
        let first = session.ok("diagnostics", json!({"file": bad}));
        assert!(first.contains("reportReturnType"), "{first}");
        let call_first = round % 2 == 1;
        let racing = if call_first {
            // An edit the server has yet to check keeps the call waiting
            // while the root goes.
            let text = format!("def area() -> int:\n    return \"wide{round}\"\n");
            std::fs::write(&bad, text).unwrap();
            let call = session.call_async("diagnostics", json!({"file": bad}));
            std::thread::sleep(std::time::Duration::from_millis(u64::from(round) * 10));
            session.set_roots(&[&app]);
            outcome(wait(&call))
        } else {
            session.set_roots(&[&app]);
            session.call("diagnostics", json!({"file": bad}))
        };
        assert!(
            racing.is_error || racing.text.contains("reportReturnType"),
            "round {round} (call first: {call_first}): {}",
            racing.text
        );
        if racing.is_error {
            assert!(
                racing.text.ends_with("is outside the workspace roots"),
                "{}",
                racing.text
            );
            refused[usize::from(call_first)] += 1;
        }
    }
    eprintln!(
        "refused: {} of 6 after the change, {} of 6 before it",
        refused[0], refused[1]
    );
    assert_eq!(
        refused[0], 6,
        "a call sent after the change is judged by it"
    );
}
