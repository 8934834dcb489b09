//! The hosts' hooks, run by hand:
//!
//! ```sh
//! cargo build --release --workspace && cargo bench --bench hooks
//! ```
//!
//! Prints a hook process's own start-up cost (`acquire` with nothing to
//! do: process start, stdin, the store opened, the session looked up),
//! an uncontended `acquire` of a file, two agents' reads of one file at
//! once while a third edits it, and, with pyright, the loop an agent
//! runs: 200 edits in one daemon with the edited file's importer and more
//! files open and a second agent working, each edit's `release` (or
//! `diagnostics` tool) timed from the write next to pyright's own
//! publication of it.

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
const LOOP_EDITS: usize = 200;

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
    report(
        "two agents reading one file at once",
        &readers_at_once(&state, dir.path()),
    );
    drop(session);

    if !have("pyright-langserver") {
        println!("release after an edit: skipped, pyright-langserver is not on PATH");
        return;
    }
    release_after_edits();
}

/// The loop an agent runs, in one daemon: 200 edits of `pkg/mathutil.py`
/// alternating a type error and its fix, with its importer and five more
/// files open, while a second session edits a file of its own and asks
/// about others. Each edit is followed, in turn, by `release` (as the
/// host's PostToolUse runs it) or by the `diagnostics` tool; each is
/// timed from the write, next to when pyright published that edit's
/// diagnostics (the event store's `diagnostics` event, stamped as the
/// publication arrived).
fn release_after_edits() {
    let mut files: Vec<(String, String)> = vec![
        ("pkg/__init__.py".into(), String::new()),
        ("pkg/mathutil.py".into(), mathutil(1)),
        (
            "pkg/app.py".into(),
            "from pkg.mathutil import add\n\ntotal: int = add(1, 2)\n".into(),
        ),
        (
            "pkg/other.py".into(),
            "from pkg.app import total\n\nx = total\n".into(),
        ),
    ];
    for n in 0..5 {
        files.push((format!("pkg/open{n}.py"), format!("value{n}: int = {n}\n")));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let dir = project(&files);
    let daemon = Daemon::new();
    let session = daemon.session_as(
        &root_arg(dir.path()),
        Client {
            env: &[("CLAUDE_CODE_SESSION_ID", HOST)],
            ..Client::default()
        },
    );
    session.ok(
        "hover",
        json!({"file": "pkg/app.py", "line": 3, "symbol": "add"}),
    );
    session.ok(
        "hover",
        json!({"file": "pkg/other.py", "line": 3, "symbol": "total"}),
    );
    for n in 0..5 {
        session.ok("diagnostics", json!({"file": format!("pkg/open{n}.py")}));
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let other = second_agent(&daemon, dir.path(), stop.clone());
    let file = dir.path().join("pkg/mathutil.py");
    let input = json!({
        "session_id": HOST,
        "cwd": dir.path(),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": file},
    })
    .to_string();
    let mut edits = Vec::new();
    for n in 0..LOOP_EDITS {
        let written = epoch_ms();
        let started = Instant::now();
        std::fs::write(&file, mathutil(n)).unwrap();
        let by_hook = n % 2 == 0;
        let told = match by_hook {
            true => {
                let output = daemon.hook(&["release", "--format", "claude"], &input);
                String::from_utf8_lossy(&output.stdout).into_owned()
            }
            false => session.ok("diagnostics", json!({"file": "pkg/mathutil.py"})),
        };
        edits.push((written, started.elapsed(), by_hook));
        let broken = n % 4 < 2;
        assert!(
            !broken || by_hook || told.contains("str"),
            "edit {n}: {told}"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    other.join().unwrap();
    let published = publications(&daemon, "pkg/mathutil.py");
    let mut hook = Vec::new();
    let mut tool = Vec::new();
    let (mut hook_over, mut tool_over, mut publish) = (Vec::new(), Vec::new(), Vec::new());
    let mut unmatched = Vec::new();
    for (index, (written, took, by_hook)) in edits.iter().enumerate() {
        let next = edits.get(index + 1).map_or(i64::MAX, |edit| edit.0);
        let Some(at) = published
            .iter()
            .rev()
            .find(|at| **at >= *written && **at <= next)
        else {
            let after = published
                .iter()
                .find(|at| **at >= *written)
                .map(|at| at - written);
            unmatched.push(format!(
                "edit {index} ({}): answered after {took:?}, next publication {after:?} ms after the write",
                if *by_hook { "release" } else { "tool" }
            ));
            continue;
        };
        let server = Duration::from_millis(u64::try_from(at - written).unwrap_or(0));
        publish.push(server);
        let over = took.saturating_sub(server);
        match by_hook {
            true => (hook.push(*took), hook_over.push(over)),
            false => (tool.push(*took), tool_over.push(over)),
        };
    }
    for line in &unmatched {
        println!("no publication between this edit and the next: {line}");
    }
    report("pyright: edit written -> last publication", &publish);
    report("release: edit written -> hook exited", &hook);
    report("release: beyond pyright's publication", &hook_over);
    report("diagnostics tool: edit written -> answer", &tool);
    report("diagnostics tool: beyond the publication", &tool_over);
}

/// Two agents' `acquire` of a Read of one file, started together while a
/// third edits it: each run's time, both agents' together.
fn readers_at_once(state: &Path, root: &Path) -> Vec<Duration> {
    let file = root.join("shared.py");
    std::fs::write(&file, "x = 1\n").unwrap();
    let input = |agent: &str, tool: &str| {
        json!({
            "session_id": HOST,
            "agent_id": agent,
            "cwd": root,
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": {"file_path": file},
        })
        .to_string()
    };
    hook(
        state,
        &["acquire", "--format", "claude"],
        &input("editor", "Edit"),
    );
    let mut times = Vec::new();
    for _ in 0..RUNS / 2 {
        let readers: Vec<_> = ["reader-a", "reader-b"]
            .map(|agent| {
                let state = state.to_path_buf();
                let input = input(agent, "Read");
                std::thread::spawn(move || hook(&state, &["acquire", "--format", "claude"], &input))
            })
            .into_iter()
            .collect();
        for reader in readers {
            let (took, printed) = reader.join().unwrap();
            assert!(
                printed.contains("is being edited by another agent"),
                "{printed}"
            );
            times.push(took);
        }
    }
    times
}

/// `pkg/mathutil.py` for edit `n`: a type error on even pairs of edits.
fn mathutil(n: usize) -> String {
    match n % 4 < 2 {
        true => format!("def add(a: int, b: int) -> int:\n    return str(a + b + {n})\n"),
        false => format!("def add(a: int, b: int) -> int:\n    return a + b + {n}\n"),
    }
}

/// A second agent in the same daemon: it edits a file of its own and
/// asks about others until told to stop.
fn second_agent(
    daemon: &Daemon,
    root: &Path,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<()> {
    let session = daemon.session_as(
        &root_arg(root),
        Client {
            env: &[("CLAUDE_CODE_SESSION_ID", "bench-second-agent")],
            ..Client::default()
        },
    );
    let own = root.join("pkg/second.py");
    std::thread::spawn(move || {
        let mut n = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            std::fs::write(
                &own,
                format!("from pkg.app import total\n\ny: int = total + {n}\n"),
            )
            .unwrap();
            session.ok("diagnostics", json!({"file": "pkg/second.py"}));
            session.ok(
                "hover",
                json!({"file": "pkg/open0.py", "line": 1, "symbol": "value0"}),
            );
            std::thread::sleep(Duration::from_millis(200));
            n += 1;
        }
    })
}

/// When each publication of `file`'s diagnostics arrived, in milliseconds
/// since the epoch, from the daemon's event store.
fn publications(daemon: &Daemon, file: &str) -> Vec<i64> {
    let sql = format!(
        "SELECT at FROM events WHERE kind = 'diagnostics' AND detail LIKE '%{file}%' ORDER BY at"
    );
    let output = std::process::Command::new(windlass_binary())
        .args(["query", "--sql", &sql, "--format", "json"])
        .envs(daemon.environment())
        .output()
        .unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout).unwrap();
    rows.iter().filter_map(|row| row["at"].as_i64()).collect()
}

fn epoch_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    i64::try_from(since.as_millis()).unwrap()
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
