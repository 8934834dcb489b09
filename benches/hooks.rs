//! The hosts' hooks, run by hand:
//!
//! ```sh
//! cargo build --release --workspace && cargo bench --bench hooks
//! ```
//!
//! Prints a hook process's own start-up cost (`acquire` with nothing to
//! do: process start, stdin, the store opened, the session looked up),
//! an uncontended `acquire` of a file, and, with pyright, how long after
//! an edit is written `release` exits with its diagnostics, next to how
//! long the `diagnostics` tool takes to give the same answer.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/common/mod.rs"]
mod common;
mod percentiles;

use common::*;
use percentiles::report;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

const HOST: &str = "bench-host-session";
const RUNS: usize = 200;
const EDITS: usize = 20;

fn main() {
    let dir = project(&[("main.py", "x = 1\n")]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let session = Session::start_with_env(&args, &[("CLAUDE_CODE_SESSION_ID", HOST)]);
    session.ok("status", json!({}));
    std::thread::sleep(Duration::from_millis(300));
    let state = session.state.path().join("state");

    let nothing: Vec<Duration> = (0..RUNS)
        .map(|_| hook(&state, &["acquire", "--format", "claude"], "{}").0)
        .collect();
    report("hook start-up (acquire with nothing to do)", &nothing);

    let acquired: Vec<Duration> = (0..RUNS)
        .map(|n| {
            let file = dir.path().join(format!("file{n}.py"));
            let input = json!({
                "session_id": HOST,
                "cwd": dir.path(),
                "hook_event_name": "PreToolUse",
                "tool_name": "Edit",
                "tool_input": {"file_path": file},
            });
            hook(
                &state,
                &["acquire", "--format", "claude"],
                &input.to_string(),
            )
            .0
        })
        .collect();
    report("acquire, uncontended", &acquired);
    drop(session);

    if !have("pyright-langserver") {
        println!("release after an edit: skipped, pyright-langserver is not on PATH");
        return;
    }
    release_after_edits();
}

/// Edits alternating between a type error and its fix: the time from the
/// write to `release`'s exit, and from the write to the `diagnostics`
/// tool's answer, in alternation.
fn release_after_edits() {
    let dir = project(&[
        (
            "shapes.py",
            "class Shape:\n    def area(self) -> float:\n        return 1.0\n",
        ),
        (
            "main.py",
            "from shapes import Shape\n\ntotal: float = Shape().area()\n",
        ),
    ]);
    let session =
        Session::start_with_env(&root_arg(dir.path()), &[("CLAUDE_CODE_SESSION_ID", HOST)]);
    session.ok("diagnostics", json!({"file": "main.py"}));
    let state = session.state.path().join("state");
    let file = dir.path().join("main.py");
    let text = |n: usize| match n % 2 {
        0 => format!("from shapes import Shape\n\ntotal: float = Shape().perimeter{n}()\n"),
        _ => "from shapes import Shape\n\ntotal: float = Shape().area()\n".to_owned(),
    };
    let input = json!({
        "session_id": HOST,
        "cwd": dir.path(),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": file},
    })
    .to_string();
    let mut by_hook = Vec::new();
    let mut by_tool = Vec::new();
    for n in 0..EDITS * 2 {
        let started = Instant::now();
        std::fs::write(&file, text(n)).unwrap();
        if n % 4 < 2 {
            let (took, printed) =
                hook_from(&state, &["release", "--format", "claude"], &input, started);
            assert!(n % 2 == 1 || printed.contains("perimeter"), "{printed}");
            by_hook.push(took);
        } else {
            let answer = session.ok("diagnostics", json!({"file": "main.py"}));
            by_tool.push(started.elapsed());
            assert!(n % 2 == 1 || answer.contains("perimeter"), "{answer}");
        }
    }
    report("release: edit written -> hook exited", &by_hook);
    report("diagnostics tool: edit written -> answer", &by_tool);
}

/// Runs a hook with `input` on stdin: how long it took and what it printed.
fn hook(state: &Path, args: &[&str], input: &str) -> (Duration, String) {
    hook_from(state, args, input, Instant::now())
}

fn hook_from(state: &Path, args: &[&str], input: &str, started: Instant) -> (Duration, String) {
    let output = run_hook(state, args, input);
    (
        started.elapsed(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}
