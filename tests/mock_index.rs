//! The symbol index, against mockls: `search` takes a server's names from
//! the index when the server cannot answer (it hangs on workspace
//! symbols, is slow at them, or is still loading after a restart), never
//! from a file changed on disk since the index read it, and the index
//! outlives the process that made it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use std::path::Path;
use std::process::Command;

const SHAPES: &str = "class Shape:\n    def area(self):\n        return 0\n";
const FIGURES: &str = "class Figure:\n    def area(self):\n        return 0\n";
const MAIN: &str = "def main():\n    pass\n";

/// A session whose python server never answers workspace symbols:
/// `search` waits 2 s for it, then takes its names from the index.
fn start(dir: &Path, state: tempfile::TempDir, flags: &str) -> Session {
    let mut args = root_arg(dir);
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", &format!("--hang-on workspace/symbol {flags}")),
        "--request-timeout".into(),
        "2".into(),
    ]);
    Session::start_with_state(state, &args)
}

fn search(session: &Session, query: &str) -> String {
    session.ok("search", json!({"query": query}))
}

/// Searches, now and then, until the answer lists `file` with `symbol`
/// from the index.
fn wait_for_indexed(session: &Session, query: &str, file: &str, symbol: &str) {
    let listed = format!("  {file}\n    {symbol} (index)");
    let mut last = String::new();
    let deadline = std::time::Instant::now() + WATCHDOG;
    while !last.contains(&listed) {
        assert!(
            std::time::Instant::now() < deadline,
            "the index never listed {listed:?}; last answer:\n{last}"
        );
        last = search(session, query);
        // The pass reads only while the server has nothing else to do.
        std::thread::sleep(std::time::Duration::from_millis(1_500));
    }
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// Edited, renamed, deleted, and changed by a branch switch: each time,
/// the index's answer leaves out what the file no longer says at once,
/// and has what it says once read again.
#[test]
fn the_index_never_answers_from_a_file_changed_since_it_was_read() {
    let dir = project(&[("shapes.py", SHAPES), ("main.py", MAIN)]);
    let session = start(dir.path(), tempfile::tempdir().unwrap(), "");
    wait_for_indexed(&session, "Shape", "shapes.py", "class Shape 1:7");
    let status = session.ok("status", json!({}));
    assert!(
        status.contains("\nsymbol index: [python] 2 files, every root read"),
        "{status}"
    );
    let answer = search(&session, "Shape");
    // Asked and not answered within half a second, or not asked at all
    // because its last search timed out.
    assert!(
        (answer.contains("warning: [python] has not answered in 0.5 s")
            || answer.contains(
                "note: [python] did not answer workspace symbols within 2 s the last time"
            ))
            && answer.contains(
                "note: so the names of [python] marked (index) are from Windlass's index of 2 files"
            ),
        "{answer}"
    );

    std::fs::write(dir.path().join("shapes.py"), FIGURES).unwrap();
    let answer = search(&session, "Shape");
    assert!(!answer.contains("class Shape"), "edited:\n{answer}");
    let status = session.ok("status", json!({}));
    assert!(
        status.contains("; 1 file changed since read, to read again")
            || status.ends_with("symbol index: [python] 2 files, every root read"),
        "read again already, or not yet:\n{status}"
    );
    wait_for_indexed(&session, "Figure", "shapes.py", "class Figure 1:7");

    std::fs::rename(dir.path().join("shapes.py"), dir.path().join("forms.py")).unwrap();
    let answer = search(&session, "Figure");
    assert!(!answer.contains("shapes.py"), "renamed:\n{answer}");
    wait_for_indexed(&session, "Figure", "forms.py", "class Figure 1:7");

    std::fs::remove_file(dir.path().join("forms.py")).unwrap();
    let answer = search(&session, "Figure");
    assert!(!answer.contains("class Figure"), "deleted:\n{answer}");

    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-q", "-m", "main"]);
    git(dir.path(), &["checkout", "-q", "-b", "other"]);
    std::fs::write(
        dir.path().join("main.py"),
        "def on_other_branch():\n    pass\n",
    )
    .unwrap();
    git(dir.path(), &["commit", "-q", "-am", "other"]);
    wait_for_indexed(
        &session,
        "on_other",
        "main.py",
        "function on_other_branch 1:5",
    );
    git(dir.path(), &["checkout", "-q", "main"]);
    let answer = search(&session, "on_other");
    assert!(
        !answer.contains("on_other_branch 1:5"),
        "switched back:\n{answer}"
    );
    wait_for_indexed(&session, "main", "main.py", "function main 1:5");
}

/// A new process on the same state directory answers from the index the
/// last one made, while its server is still loading, without waiting on
/// the server.
#[test]
fn a_restart_keeps_the_index() {
    let dir = project(&[("shapes.py", SHAPES), ("main.py", MAIN)]);
    let mut session = start(dir.path(), tempfile::tempdir().unwrap(), "");
    wait_for_indexed(&session, "Shape", "shapes.py", "class Shape 1:7");
    let state = std::mem::replace(&mut session.state, tempfile::tempdir().unwrap());
    drop(session);

    let session = start(dir.path(), state, "--indexing-delay 600000");
    let answer = search(&session, "area");
    // Which of the two it says depends on whether the server was started
    // within the half second.
    let loading = "warning: [python] is still loading\n";
    let starting = "warning: the servers are still starting after 0.5 s";
    assert!(
        (answer.contains(loading) || answer.contains(starting))
            && answer.contains("  shapes.py\n    method area 2:9 (index)"),
        "{answer}"
    );
}

/// `codebase_map` lists a file's top-level symbols from the index while
/// the index holds the outline of the file's text now: after a restart,
/// with a server that never answers outlines, the map still has them,
/// and a file changed while no Windlass ran is listed without the names
/// it no longer has, under a warning that its server did not answer.
#[test]
fn the_map_lists_symbols_from_the_index_never_from_a_changed_file() {
    let dir = project(&[("shapes.py", SHAPES), ("main.py", MAIN)]);
    let mut session = start(dir.path(), tempfile::tempdir().unwrap(), "");
    wait_until("both files are indexed", || {
        session
            .ok("status", json!({}))
            .contains("symbol index: [python] 2 files, every root read")
    });
    let state = std::mem::replace(&mut session.state, tempfile::tempdir().unwrap());
    drop(session);
    std::fs::write(dir.path().join("main.py"), "def start():\n    pass\n").unwrap();

    let session = start(dir.path(), state, "--hang-on textDocument/documentSymbol");
    let map = session.ok("codebase_map", json!({"include_symbols": true}));
    assert_eq!(
        map,
        "warning: no symbols of 1 file: [python] textDocument/documentSymbol timed out after 2 s\n\
         ./\n  main.py\n  shapes.py: class Shape"
    );
}

/// A TypeScript file outside every project is indexed with no names (its
/// server would give it a project of its own); once the `tsconfig.json`
/// takes it in, it is read again, though the file itself is unchanged.
#[test]
fn a_script_a_changed_tsconfig_takes_in_is_read_again() {
    let dir = project(&[
        ("tsconfig.json", r#"{"include": ["a.ts"]}"#),
        ("a.ts", SHAPES),
        ("b.ts", FIGURES),
    ]);
    let mut args = root_arg(dir.path());
    args.extend([
        "--lsp".into(),
        mockls_lsp("typescript", "--hang-on workspace/symbol"),
        "--request-timeout".into(),
        "2".into(),
    ]);
    let session = Session::start(&args);
    wait_for_indexed(&session, "Shape", "a.ts", "class Shape 1:7");
    let status = session.ok("status", json!({}));
    assert!(
        status.contains("symbol index: [typescript] 2 files, every root read"),
        "{status}"
    );
    let answer = search(&session, "Figure");
    assert!(!answer.contains("class Figure"), "{answer}");

    std::fs::write(
        dir.path().join("tsconfig.json"),
        r#"{"include": ["a.ts", "b.ts"]}"#,
    )
    .unwrap();
    wait_for_indexed(&session, "Figure", "b.ts", "class Figure 1:7");
}

/// Two sessions of one daemon share a pass over their root: each reads
/// the files the other has not taken. The index says it has been over
/// every file only once both have read theirs, not when the one that
/// found every file taken is done; until then `search` waits for the
/// server rather than answer from a part of the root's names.
#[test]
fn a_pass_over_files_another_has_taken_waits_for_them() {
    let files: Vec<(String, String)> = (1..=6)
        .map(|n| {
            (
                format!("shape_{n}.py"),
                format!("class Shape{n}:\n    pass\n"),
            )
        })
        .collect();
    let named: Vec<(&str, &str)> = files
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_str()))
        .collect();
    let dir = project(&named);
    let mut args = root_arg(dir.path());
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", "--response-delay 1000"),
    ]);
    let daemon = Daemon::new();
    let first = daemon.session(&args);
    let second = daemon.session(&args);
    let deadline = std::time::Instant::now() + WATCHDOG;
    let status = loop {
        let status = second.ok("status", json!({}));
        if status.contains(", every root read") {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the pass never ended:\n{status}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert!(
        status.contains("\nsymbol index: [python] 6 files, every root read"),
        "{status}"
    );
    drop(first);
}

/// A server whose workspace symbols come later than half a second is
/// not asked again for a while: the index answers for it at once.
#[test]
fn a_server_slow_at_workspace_symbols_is_not_waited_on() {
    let dir = project(&[("shapes.py", SHAPES), ("main.py", MAIN)]);
    let mut args = root_arg(dir.path());
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", "--response-delay 1000"),
    ]);
    let session = Session::start_with_state(tempfile::tempdir().unwrap(), &args);
    wait_for_indexed(&session, "Shape", "shapes.py", "class Shape 1:7");
    let answer = search(&session, "area");
    // Its last answer took a second, or the one it is working on has
    // taken more than half a second so far.
    assert!(
        (answer.contains("note: [python] took 1.")
            && answer.contains(" s to answer workspace symbols the last time\n")
            || answer.contains("note: [python] has been working on workspace symbols for"))
            && answer.contains("  shapes.py\n    method area 2:9 (index)"),
        "{answer}"
    );
}

/// A name asked alone that only a server's workspace symbols can find (a
/// YAML key reads as no definition to the text search) is found in the
/// index while that server cannot answer.
#[test]
fn a_name_asked_alone_is_found_in_the_index_while_the_server_cannot_answer() {
    let dir = project(&[("conf.yaml", "class Widget:\n  size: 1\n")]);
    let mut args = root_arg(dir.path());
    args.extend([
        "--lsp".into(),
        mockls_lsp("yaml", "--hang-on workspace/symbol"),
        "--request-timeout".into(),
        "2".into(),
    ]);
    let session = Session::start(&args);
    wait_for_indexed(&session, "Widget", "conf.yaml", "class Widget 1:7");
    let answer = session.ok("definition", json!({"symbol": "Widget"}));
    assert_eq!(answer, "conf.yaml:1:7  class Widget:");
}
