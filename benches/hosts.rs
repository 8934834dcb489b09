//! The real agent loop, run by hand:
//!
//! ```sh
//! cargo bench --bench hosts            # HOST_EDITS=40 edits in each host
//! HOST_SWITCH=1 HOSTS=claude cargo bench --bench hosts
//! ```
//!
//! With `HOST_SWITCH`, the project holds a copy of requests beside the
//! edited package, and every Python file is deleted and written again
//! (a branch switch; `SWITCH_TREE=1` removes the folders too) just before
//! the first edit.
//!
//! In each of the six hosts (Claude Code, Gemini CLI, Codex, Copilot CLI,
//! OpenCode, Qwen Code), with Windlass installed as a user installs it and
//! a scripted model on loopback in the host's own API (`HOSTS=codex,qwen`
//! picks some), the model opens
//! `pkg/app.py` (which imports `pkg/mathutil.py`) and `pkg/shapes.py`
//! through `hover`, then edits `pkg/mathutil.py` HOST_EDITS times,
//! alternating a type error and its fix. For each edit it prints how long
//! the model waited for its next request after the host finished the edit,
//! next to pyright's own publication of the edit's diagnostics and the
//! `release` hook's run, both read from Windlass's event store, and how
//! many edits' results came with their outcome (the error, or "fixed").
//!
//! An edit ends at the edited file's mtime, read as the next request
//! arrives: the kernel's record of the host's write, after which
//! everything the agent waits for (the PostToolUse or AfterTool hooks,
//! the host building its next request) is counted. The hook events of
//! `--include-hook-events` carry no time, and the time their lines are
//! read from the host's stdout is the host's flushing, not its work.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

mod checkout;
#[path = "../tests/common/mod.rs"]
mod common;
mod percentiles;
mod store_events;

use common::host::{Host, Installed};
use common::model::{Model, Step};
use common::projects::{real_projects, write};
use percentiles::report;
use rusqlite::Connection;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};
use store_events::{diagnostics_events, epoch_millis, last_publication};

const RETURN: &str = "    return a + b";

fn main() {
    let edits: usize = std::env::var("HOST_EDITS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(40);
    let wanted = std::env::var("HOSTS").unwrap_or_default();
    let rows: Vec<Row> = [
        Host::Claude,
        Host::Gemini,
        Host::Codex,
        Host::Copilot,
        Host::Opencode,
        Host::Qwen,
    ]
    .into_iter()
    .filter(|host| wanted.is_empty() || wanted.split(',').any(|name| name == host.name()))
    .filter_map(|host| run(host, edits))
    .collect();
    println!();
    for row in rows {
        let host = row.host.name();
        report(
            &format!("{host}: edit -> next model request"),
            &row.next_request,
        );
        report(
            &format!("{host}: edit -> pyright publishes it"),
            &row.publish,
        );
        report(
            &format!("{host}: release hook ends - publication"),
            &row.overhead,
        );
        let worst = row.overhead.iter().max().copied().unwrap_or_default();
        println!("{host}: worst edit's overhead {} ms", worst.as_millis());
        report(&format!("{host}: release hook runs"), &row.hook);
    }
}

/// One host's samples.
struct Row {
    host: Host,
    next_request: Vec<Duration>,
    publish: Vec<Duration>,
    /// From the publication to the end of the hook that answered with it.
    overhead: Vec<Duration>,
    hook: Vec<Duration>,
}

/// The scripted run of `edits` edits in `host`; `None` when it is not
/// installed.
fn run(host: Host, edits: usize) -> Option<Row> {
    let switch = std::env::var("HOST_SWITCH").is_ok();
    let dir = match switch {
        true => {
            let Some(dir) = real_projects(&[("requests-2.34.2", "requests")]) else {
                println!(
                    "{}: skipped: target/real-projects/requests-2.34.2 is missing (.ci/run unpacks it)",
                    host.name()
                );
                return None;
            };
            dir
        }
        false => tempfile::tempdir().unwrap(),
    };
    for (file, text) in [
        ("pkg/__init__.py", ""),
        (
            "pkg/mathutil.py",
            "def add(a: int, b: int) -> int:\n    return a + b\n",
        ),
        (
            "pkg/app.py",
            "from pkg.mathutil import add\n\ntotal: int = add(1, 2)\n",
        ),
        (
            "pkg/shapes.py",
            "class Square:\n    def area(self, side: float) -> float:\n        return side * side\n",
        ),
    ] {
        write(dir.path(), file, text);
    }
    let root = dir.path().canonicalize().unwrap();
    let installed = Installed::new(host, &[&root])?;
    let mathutil = root.join("pkg/mathutil.py");
    let model = Model::start(host.api(), host.name());
    let prepared = host.prepare_edits(&[&mathutil]);
    let first_edit = prepared.len() + host.load("hover").len() + 2;
    model.script(prepared);
    model.script(host.load("hover"));
    model.script([
        Step::mcp(
            "hover",
            json!({"file": "pkg/app.py", "line": 3, "symbol": "add"}),
        ),
        Step::mcp(
            "hover",
            json!({"file": "pkg/shapes.py", "line": 2, "symbol": "area"}),
        ),
    ]);
    let mut steps: Vec<Step> = (0..edits).map(|n| edit(&mathutil, n)).collect();
    if switch && !steps.is_empty() {
        let first = steps.remove(0);
        let tree = root.clone();
        let whole_tree = std::env::var("SWITCH_TREE").is_ok();
        steps.insert(
            0,
            first.after(move || {
                let files = checkout::switch_branch(&tree, whole_tree);
                println!("switched: {files} Python files deleted and written again");
            }),
        );
    }
    model.script(steps);
    model.script([Step::text("Done.")]);
    let started = Instant::now();
    installed
        .start(&root, &model, &[])
        .finish_within(Duration::from_secs(60) + Duration::from_secs(5) * edits as u32);
    println!(
        "{}: {edits} edits in {:.1} s",
        host.name(),
        started.elapsed().as_secs_f64()
    );
    let store = installed
        .daemon
        .home()
        .join(".local/state/windlass/windlass.db");
    let ended = model.edits_ended();
    let told = (0..edits)
        .filter(|n| {
            let told = told_outcome(&model, first_edit + n, n % 2 == 0);
            if !told {
                let result = model.result(first_edit + n);
                println!(
                    "{}: edit {n} was not told its outcome; its result: {:?}",
                    host.name(),
                    result.map(|result| (result.text, result.context))
                );
            }
            told
        })
        .count();
    println!(
        "{}: the model was told each edit's outcome after {told} of {edits} edits",
        host.name()
    );
    let hooks = hook_runs(&store, ended.len());
    let hook_ends: Vec<i64> = hooks.iter().map(|(end, _)| *end).collect();
    let published = publications(&store, &mathutil, &ended, &hook_ends);
    Some(Row {
        host,
        next_request: model.edit_latencies(),
        publish: published.iter().map(|(publish, _)| *publish).collect(),
        overhead: published.iter().map(|(_, overhead)| *overhead).collect(),
        hook: hooks.into_iter().map(|(_, took)| took).collect(),
    })
}

/// Edit `n`: even ones break the return type (each differently, so that
/// no host sees the same call twice in a row), odd ones fix it.
fn edit(file: &Path, n: usize) -> Step {
    let broken = format!("    return str(a + b)  # edit {n}");
    let previous = format!("    return str(a + b)  # edit {}", n.saturating_sub(1));
    match n % 2 {
        0 => Step::edit(file, RETURN, &broken),
        _ => Step::edit(file, &previous, RETURN),
    }
}

/// Whether the result of the edit made at `turn` came with its outcome:
/// the error (`broke`), or that the errors are fixed.
fn told_outcome(model: &Model, turn: usize, broke: bool) -> bool {
    let context = model
        .result(turn)
        .map(|result| result.context)
        .unwrap_or_default();
    match broke {
        true => context.contains(r#"is not assignable to return type "int""#),
        false => context.contains("fixed: no errors left in"),
    }
}

/// For each edit (ended at `ended[n]`, even ones breaking the file), from
/// the write to pyright's publication for `file` that the edit's `release`
/// hook (ended at `hook_ends[n]`) answered with, and from that publication
/// to the hook's end. The publication is the last one with the
/// edit's outcome (errors or none) before the hook ended, as the language
/// server's actor recorded it. The first one can be of a half-written
/// file: a host that writes in place is seen truncated, then written.
/// The store's writer commits within 100 ms of an event; the daemon
/// outlives the host, so the last ones are waited for.
fn publications(
    store: &Path,
    file: &Path,
    ended: &[SystemTime],
    hook_ends: &[i64],
) -> Vec<(Duration, Duration)> {
    let uri = format!("file://{}", file.display());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let published = diagnostics_events(store, &uri);
        let found: Vec<(Duration, Duration)> = ended
            .iter()
            .enumerate()
            .filter_map(|(n, end)| {
                let written = epoch_millis(*end);
                let answered = *hook_ends.get(n)?;
                let at = last_publication(&published, written, answered, n % 2 == 0)?;
                Some((
                    Duration::from_millis((at - written) as u64),
                    Duration::from_millis((answered - at) as u64),
                ))
            })
            .collect();
        if found.len() == ended.len() || Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// When each `release` hook ended (ms since the epoch) and how long it
/// ran, as it recorded itself; waits until `edits` are there (hooks write
/// their own events).
fn hook_runs(store: &Path, edits: usize) -> Vec<(i64, Duration)> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let connection = Connection::open(store).unwrap();
        let mut statement = connection
            .prepare("SELECT at, duration_us FROM events WHERE kind = 'hook' AND tool = 'release' ORDER BY id")
            .unwrap();
        let runs: Vec<(i64, Duration)> = statement
            .query_map([], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?)))
            .unwrap()
            .map(|row| {
                let (at, micros) = row.unwrap();
                (at, Duration::from_micros(micros as u64))
            })
            .collect();
        if runs.len() >= edits || Instant::now() > deadline {
            return runs;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
