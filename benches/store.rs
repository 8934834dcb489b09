//! The event store, run by hand:
//!
//! ```sh
//! cargo build --release --workspace && cargo bench --bench store
//! ```
//!
//! Prints the events per second the Recorder writes (its actor, channel,
//! writer thread and SQLite, as a serving process runs them), what
//! recording adds to a warm tool call (the same hover against a session
//! whose store cannot be opened, which records nothing), and how long a
//! query for one session's events of one kind takes among 1,000,000.

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
use percentiles::{Percentiles, report};
use ractor::Actor;
use rusqlite::params;
use serde_json::json;
use std::time::{Duration, Instant};
use windlass_actors::messages::recorder::RecorderMsg;
use windlass_actors::recorder::{self, Recorder};
use windlass_actors::store::{self, events};
use windlass_actors::vocabulary::events::EventKind;

const EVENTS: usize = 200_000;
/// Events a throughput sender lets be unwritten at once: half the
/// writer's queue.
const IN_FLIGHT: usize = 50_000;
const HOVERS: usize = 2_000;
const STORED: usize = 1_000_000;
const SESSIONS: usize = 100;
const KINDS: [&str; 5] = [
    "tool_call",
    "server_state",
    "diagnostics",
    "roots_changed",
    "session_start",
];

fn main() {
    recorder_throughput();
    recording_cost();
    query_among_a_million();
}

/// Events sent to a Recorder as fast as one sender can, until all are in
/// the store. The sender holds back while more than [`IN_FLIGHT`] are
/// unwritten: the writer's queue is bounded and drops what overflows it,
/// so a sender far ahead would measure drops, not writes.
fn recorder_throughput() {
    let dir = tempfile::tempdir().unwrap();
    let path = store::database_path(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let took = runtime.block_on(async {
        let store = recorder::Arguments {
            path: Some(path.clone()),
            limit: None,
        };
        let (recorder, handle) = Actor::spawn(None, Recorder, store).await.unwrap();
        let reader = store::open(&path).unwrap();
        let written = || -> usize {
            let count: i64 = reader
                .query_row("SELECT count(*) FROM events", [], |row| row.get(0))
                .unwrap();
            usize::try_from(count).unwrap()
        };
        let started = Instant::now();
        for n in 0..EVENTS {
            if n % 10_000 == 0 {
                while n.saturating_sub(written()) > IN_FLIGHT {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
            let mut event =
                events::Event::now(EventKind::ToolCall, Some("benchmk1".parse().unwrap()));
            event.tool = Some("hover".into());
            event.duration_us = Some(150);
            event.bytes = Some(42);
            event.ok = Some(true);
            event.detail = json!({"file": "main.py", "line": n % 500, "symbol": "greet"});
            recorder.send_message(RecorderMsg::Event(event)).unwrap();
        }
        recorder.drain().unwrap();
        handle.await.unwrap();
        started.elapsed()
    });
    let connection = store::open(&path).unwrap();
    let written: i64 = connection
        .query_row("SELECT count(*) FROM events", [], |row| row.get(0))
        .unwrap();
    assert_eq!(written, EVENTS as i64);
    println!(
        "Recorder: {EVENTS} events written in {:.0} ms: {:.0} events/s",
        took.as_secs_f64() * 1000.0,
        EVENTS as f64 / took.as_secs_f64()
    );
}

/// Warm hovers in a recording session and in one whose store cannot be
/// opened, in alternating blocks.
fn recording_cost() {
    let dir = project(&[("main.py", "class Shape:\n    pass\n\nshape = Shape()\n")]);
    let mut args = root_arg(dir.path());
    args.extend([
        "--log-level".into(),
        "warn".into(),
        "--lsp".into(),
        mockls_lsp("python", ""),
    ]);
    let recording = Session::start(&args);
    let unrecorded_state = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(unrecorded_state.path().join("state/windlass/windlass.db")).unwrap();
    let unrecorded = Session::start_with_state(unrecorded_state, &args);
    unrecorded.wait_for_status(|status| status.contains("not recorded so far"));
    let question = json!({"file": "main.py", "line": 4, "column": 10});
    for session in [&recording, &unrecorded] {
        for _ in 0..100 {
            session.ok("hover", question.clone());
        }
    }
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        for (session, samples) in [(&recording, &mut with), (&unrecorded, &mut without)] {
            for _ in 0..HOVERS / 10 {
                let started = Instant::now();
                session.ok("hover", question.clone());
                samples.push(started.elapsed());
            }
        }
    }
    report("warm hover, recorded", &with);
    report("warm hover, not recorded", &without);
    let (with, without) = (Percentiles::new(&with), Percentiles::new(&without));
    println!(
        "{:<44} median {:>+9.3} ms",
        "  recording adds",
        with.ms(0.5) - without.ms(0.5)
    );
}

/// A store of a million events over a hundred sessions and five kinds;
/// the newest hundred of one session's one kind, as `query` asks.
fn query_among_a_million() {
    let dir = tempfile::tempdir().unwrap();
    let path = store::database_path(dir.path());
    let mut connection = store::open(&path).unwrap();
    let transaction = connection.transaction().unwrap();
    {
        let mut insert = transaction
            .prepare(
                "INSERT INTO events (at, session, kind, tool, duration_us, bytes, ok, detail)
                 VALUES (?1, ?2, ?3, 'hover', 150, 42, 1, '{\"file\":\"main.py\"}')",
            )
            .unwrap();
        for n in 0..STORED {
            insert
                .execute(params![
                    1_700_000_000_000i64 + n as i64,
                    format!("s{:07}", n % SESSIONS),
                    KINDS[n / SESSIONS % KINDS.len()],
                ])
                .unwrap();
        }
    }
    transaction.commit().unwrap();
    drop(connection);
    let connection = store::open_read_only(&path).unwrap();
    let filter = events::Filter {
        session: Some("s0000042".parse().unwrap()),
        kind: Some(EventKind::ToolCall),
        limit: 100,
        ..events::Filter::default()
    };
    let mut samples = Vec::new();
    for _ in 0..50 {
        let started = Instant::now();
        let found = events::query(&connection, &filter).unwrap();
        samples.push(started.elapsed());
        assert_eq!(found.len(), 100);
    }
    report("query: one session, one kind, of 1,000,000", &samples);
    let all = events::Filter {
        limit: usize::MAX,
        ..filter
    };
    let started = Instant::now();
    let found = events::query(&connection, &all).unwrap();
    let took: Duration = started.elapsed();
    println!(
        "query: all {} of them, unlimited             {:.3} ms",
        found.len(),
        took.as_secs_f64() * 1000.0
    );
}
