//! The symbol index against pyright's own workspace symbols, run by hand:
//!
//! ```sh
//! cargo build --release -p windlass -p mockls && cargo bench --bench index
//! ```
//!
//! On gunicorn (from `target/real-projects`, as `.ci/run` unpacks it) and
//! a synthetic tree of `INDEX_BENCH_FILES` Python modules (default 2,000),
//! zero-config (pyright and whatever else is on PATH), each in a state
//! directory of its own: the first `search` ever (a cold pyright, an
//! empty index: the server's own time), warm searches (the live server),
//! how long the background pass takes to go over the tree, then, in a new
//! process on the same state directory (a restart), the first `search`
//! (pyright cold again: answered from the index) and warm ones. Each
//! answer is checked for the name asked; those that lack it are counted.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/common/mod.rs"]
mod common;

use common::projects::{big_python_project, real_project};
use common::*;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// Searches timed per warm figure.
const WARM_SEARCHES: usize = 5;
/// The longest a pass is waited for.
const PASS_LIMIT: Duration = Duration::from_secs(3_600);

fn main() {
    if !have("pyright-langserver") {
        println!("pyright-langserver is not on PATH: nothing to measure");
        return;
    }
    println!(
        "| tree | files | first search ever | warm | pass over the tree | first search after a restart | warm after |"
    );
    println!("|---|---|---|---|---|---|---|");
    match real_project("gunicorn-27.0.1") {
        Some(copy) => measure("gunicorn 27.0.1", copy.path(), "reload", "method reload"),
        None => println!("gunicorn is not unpacked in target/real-projects: run .ci/run first"),
    }
    let files = std::env::var("INDEX_BENCH_FILES")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(2_000);
    let tree = big_python_project(files, 2);
    let last = files - 1;
    measure(
        &format!("synthetic, {files} modules"),
        tree.path(),
        &format!("C{last}_1"),
        &format!("class C{last}_1"),
    );
}

fn measure(name: &str, root: &Path, query: &str, expected: &str) {
    let files = walkdir_count(root);
    let mut session = Session::start_with_state(tempfile::tempdir().unwrap(), &root_arg(root));
    let index = session.state.path().join("state/windlass/index.db");
    let (first, answer) = timed(|| session.ok("search", json!({"query": query})));
    let first = match answer.contains(expected) {
        true => ms(first),
        false => format!("{} (not found: {})", ms(first), first_warning(&answer)),
    };
    let warm = warm_searches(&session, query, expected);
    let started = Instant::now();
    let passed = wait_for_pass(&index);
    let pass = started.elapsed();
    let state = std::mem::replace(&mut session.state, tempfile::tempdir().unwrap());
    drop(session);
    let session = Session::start_with_state(state, &root_arg(root));
    let (restart, answer) = timed(|| session.ok("search", json!({"query": query})));
    let from_index = match (answer.contains(expected), answer.contains(" (index)")) {
        (false, _) => format!(" (not found: {})", first_warning(&answer)),
        (true, true) => " (index)".to_owned(),
        (true, false) => " (live)".to_owned(),
    };
    let warm_after = warm_searches(&session, query, expected);
    let pass = match passed {
        true => format!("{} s", pass.as_secs()),
        false => format!("not done in {} s", PASS_LIMIT.as_secs()),
    };
    println!(
        "| {name} | {files} | {first} | {warm} | {pass} | {}{from_index} | {warm_after} |",
        ms(restart),
    );
}

/// The median of a few searches in a row, and how many of them did not
/// name the symbol (a server that timed out, before the index covers it).
fn warm_searches(session: &Session, query: &str, expected: &str) -> String {
    let mut times = Vec::new();
    let mut missed = 0;
    for _ in 0..WARM_SEARCHES {
        let (took, answer) = timed(|| session.ok("search", json!({"query": query})));
        times.push(took);
        if !answer.contains(expected) {
            missed += 1;
        }
    }
    times.sort();
    let median = ms(times[times.len() / 2]);
    match missed {
        0 => median,
        _ => format!("{median} ({missed} of {WARM_SEARCHES} not found)"),
    }
}

/// Waits until the index records a pass of the python server.
fn wait_for_pass(index: &Path) -> bool {
    let deadline = Instant::now() + PASS_LIMIT;
    while Instant::now() < deadline {
        let passes: i64 = rusqlite::Connection::open(index)
            .and_then(|db| {
                db.query_row(
                    "SELECT count(*) FROM passes WHERE server = 'python'",
                    [],
                    |row| row.get(0),
                )
            })
            .unwrap_or(0);
        if passes > 0 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    false
}

/// The answer's first warning, or its first line.
fn first_warning(answer: &str) -> &str {
    answer
        .lines()
        .find(|line| line.contains("timed out"))
        .or_else(|| answer.lines().next())
        .unwrap_or_default()
}

fn timed<T>(work: impl FnOnce() -> T) -> (Duration, T) {
    let started = Instant::now();
    let result = work();
    (started.elapsed(), result)
}

fn ms(duration: Duration) -> String {
    format!("{} ms", duration.as_millis())
}

fn walkdir_count(root: &Path) -> usize {
    let mut count = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(directory) = stack.pop() {
        for entry in std::fs::read_dir(&directory).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                count += 1;
            }
        }
    }
    count
}
