//! One daemon, many agents, against real servers: three sessions in one
//! workspace share one pyright process and each gets right answers,
//! including diagnostics of its own edits while the others ask too; a
//! session rooted in another directory is kept out of the first's files.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::projects::{SHAPES_MAIN_PY, SHAPES_PY};
use common::*;
use serde_json::json;

fn pyright_pid(session: &Session) -> String {
    let status = session.wait_for_status(|status| {
        status
            .lines()
            .any(|line| line.starts_with("[python]") && line.contains(" ready pid "))
    });
    let line = status
        .lines()
        .find(|line| line.starts_with("[python]"))
        .unwrap()
        .to_owned();
    let after = &line[line.find(" pid ").unwrap() + 5..];
    after.split_whitespace().next().unwrap().to_owned()
}

#[test]
fn three_sessions_share_one_pyright_and_each_gets_right_answers() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let daemon = Daemon::new();
    let dir = project(&[
        ("shapes.py", SHAPES_PY),
        ("main.py", SHAPES_MAIN_PY),
        ("one.py", "value: int = 1\n"),
        ("two.py", "value: int = 2\n"),
        ("three.py", "value: int = 3\n"),
    ]);
    let args = root_arg(dir.path());
    let sessions: Vec<Session> = (0..3).map(|_| daemon.session(&args)).collect();
    let pids: Vec<String> = sessions.iter().map(pyright_pid).collect();
    assert!(pids.iter().all(|pid| *pid == pids[0]), "{pids:?}");
    let status = sessions[2].ok("status", json!({}));
    assert!(status.contains("shared by 3 sessions"), "{status}");

    std::thread::scope(|scope| {
        for (n, session) in sessions.iter().enumerate() {
            let root = dir.path().to_path_buf();
            scope.spawn(move || {
                let hover = session.ok(
                    "hover",
                    json!({"file": "main.py", "line": 3, "symbol": "total"}),
                );
                assert!(
                    hover.contains("def total(shapes: list[Shape]) -> float"),
                    "{hover}"
                );
                let definition = session.ok(
                    "definition",
                    json!({"file": "main.py", "line": 3, "symbol": "Shape"}),
                );
                assert_eq!(definition, "shapes.py:1:7  class Shape:");
                let references = session.ok(
                    "find_references",
                    json!({"file": "shapes.py", "line": 6, "symbol": "total"}),
                );
                assert!(references.contains("main.py (2)"), "{references}");
                // Each session edits its own file and sees its own error.
                let file = ["one.py", "two.py", "three.py"][n];
                std::fs::write(root.join(file), "value: int = \"text\"\n").unwrap();
                let broken = session.ok("diagnostics", json!({"file": file}));
                assert!(broken.contains("error"), "{file}: {broken}");
                std::fs::write(root.join(file), "value: int = 4\n").unwrap();
                let fixed = session.ok("diagnostics", json!({"file": file}));
                assert_eq!(fixed, format!("{file}: no problems"));
            });
        }
    });
}

#[test]
fn a_shared_pyright_answers_each_session_only_about_its_own_roots() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let daemon = Daemon::new();
    let dir = project(&[
        ("app/shapes.py", SHAPES_PY),
        ("app/main.py", SHAPES_MAIN_PY),
        ("other/shapes.py", SHAPES_PY),
        ("other/use.py", "from shapes import total\n\ntotal([])\n"),
    ]);
    let app = daemon.session(&root_arg(&dir.path().join("app")));
    let other = daemon.session(&root_arg(&dir.path().join("other")));
    assert_eq!(pyright_pid(&app), pyright_pid(&other), "one pyright");
    other.ok(
        "hover",
        json!({"file": "use.py", "line": 3, "symbol": "total"}),
    );
    let search = app.ok("search", json!({"query": "total"}));
    assert!(search.contains("shapes.py"), "{search}");
    assert!(!search.contains("use.py"), "{search}");
    assert!(
        search.contains("1 result outside the workspace roots left out"),
        "pyright did answer with the other session's symbol: {search}"
    );
    let references = app.ok(
        "find_references",
        json!({"file": "shapes.py", "line": 6, "symbol": "total"}),
    );
    assert!(references.contains("main.py"), "{references}");
    assert!(!references.contains("use.py"), "{references}");
}
