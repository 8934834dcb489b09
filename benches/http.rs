//! MCP over HTTP against the stdio bridge, run by hand:
//!
//! ```sh
//! cargo build --release --workspace && cargo bench --bench http
//! ```
//!
//! Prints warm hovers through an HTTP session and through a bridge to
//! the same daemon and server (mockls), in alternating blocks so that
//! both see the same machine, with the ratio of their medians; then
//! `HTTP_BENCH_SESSIONS` (default 50) HTTP sessions asking mixed
//! questions of one shared pyright for `HTTP_BENCH_SECONDS` (default 30):
//! lost and mismatched answers, latency, and the daemon's memory.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/common/mod.rs"]
mod common;
mod memory;
mod percentiles;

use common::http::{Endpoint, HttpSession};
use common::projects::{SHAPES_MAIN_PY, SHAPES_PY, shapes_questions};
use common::*;
use memory::{Memory, mb, tree_memory};
use percentiles::{Percentiles, report};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

const HOVERS: usize = 2_000;

fn main() {
    let setting = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|value| value.parse().ok())
            .unwrap_or(default)
    };
    hover_over_http_and_bridge();
    if have("pyright-langserver") {
        let sessions = setting("HTTP_BENCH_SESSIONS", 50) as usize;
        sessions_on_one_pyright(sessions, setting("HTTP_BENCH_SECONDS", 30));
    } else {
        println!("pyright-langserver is not on PATH: the pyright run is skipped");
    }
}

/// A daemon whose every session, bridged or HTTP, gets `server` for
/// Python from the user's configuration, and whose HTTP sessions are
/// rooted in `root`.
fn endpoint(root: &Path, server: Option<&str>) -> Endpoint {
    let daemon = Daemon::new();
    let config = daemon.dir.path().join("config/windlass");
    std::fs::create_dir_all(&config).unwrap();
    let mut text = String::from("linger = 5\n");
    if let Some(command) = server {
        text.push_str(&python_server("python", command, "", ""));
    }
    std::fs::write(config.join("config.toml"), text).unwrap();
    let root = root.display().to_string();
    Endpoint::start_in(daemon, &["--http-root", &root])
}

fn hover_over_http_and_bridge() {
    let dir = project(&[("main.py", "class Shape:\n    pass\n\nshape = Shape()\n")]);
    let endpoint = endpoint(dir.path(), Some(&mockls_binary().display().to_string()));
    let mut http = HttpSession::start(&endpoint, Some(endpoint.token()));
    let mut args = root_arg(dir.path());
    args.extend(["--log-level".into(), "warn".into()]);
    let bridged = endpoint.daemon.session(&args);
    let question = json!({"file": "main.py", "line": 4, "column": 10});
    for _ in 0..100 {
        assert_eq!(http.call("hover", question.clone()).unwrap(), "Shape");
        assert_eq!(bridged.ok("hover", question.clone()), "Shape");
    }
    let (mut over_http, mut through_bridge) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        for _ in 0..HOVERS / 10 {
            let started = Instant::now();
            http.call("hover", question.clone()).unwrap();
            over_http.push(started.elapsed());
        }
        for _ in 0..HOVERS / 10 {
            let started = Instant::now();
            bridged.ok("hover", question.clone());
            through_bridge.push(started.elapsed());
        }
    }
    report("warm hover, stdio bridge + daemon", &through_bridge);
    report("warm hover, HTTP + daemon", &over_http);
    let (bridge, http) = (
        Percentiles::new(&through_bridge),
        Percentiles::new(&over_http),
    );
    println!(
        "{:<44} median {:>9.2}×  p90 {:>9.2}×",
        "  HTTP against the bridge",
        http.ms(0.5) / bridge.ms(0.5),
        http.ms(0.9) / bridge.ms(0.9)
    );
}

/// What one session saw in the timed run.
#[derive(Default)]
struct Tally {
    samples: Vec<Duration>,
    lost: usize,
    mismatched: usize,
}

fn sessions_on_one_pyright(count: usize, seconds: u64) {
    let dir = project(&[("shapes.py", SHAPES_PY), ("main.py", SHAPES_MAIN_PY)]);
    let questions = shapes_questions();
    let expected: Vec<String> = {
        let reference = Session::start(&root_arg(dir.path()));
        questions
            .iter()
            .map(|(tool, arguments)| reference.ok(tool, arguments.clone()))
            .collect()
    };
    let endpoint = endpoint(dir.path(), None);
    let token = endpoint.token();
    let started = Instant::now();
    let mut sessions: Vec<HttpSession> = (0..count)
        .map(|_| HttpSession::start(&endpoint, Some(token.clone())))
        .collect();
    let opened = started.elapsed();
    for session in &mut sessions {
        for (tool, arguments) in &questions {
            session.call(tool, arguments.clone()).unwrap();
        }
    }
    let at_rest = tree_memory(endpoint.pid());
    let daemon_at_rest = Memory::of(endpoint.pid());
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let tallies: Vec<Tally> = std::thread::scope(|scope| {
        let workers: Vec<_> = sessions
            .iter_mut()
            .enumerate()
            .map(|(n, session)| {
                let (questions, expected) = (&questions, &expected);
                scope.spawn(move || {
                    let mut tally = Tally::default();
                    let mut turn = n;
                    while Instant::now() < deadline {
                        let index = turn % questions.len();
                        turn += 1;
                        let (tool, arguments) = &questions[index];
                        let asked = Instant::now();
                        let answer = session.call(tool, arguments.clone());
                        tally.samples.push(asked.elapsed());
                        match answer {
                            Err(_) => tally.lost += 1,
                            Ok(text) if text != expected[index] => tally.mismatched += 1,
                            Ok(_) => {}
                        }
                    }
                    tally
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().unwrap())
            .collect()
    });
    let loaded = tree_memory(endpoint.pid());
    let daemon_loaded = Memory::of(endpoint.pid());
    let samples: Vec<Duration> = tallies
        .iter()
        .flat_map(|tally| tally.samples.iter().copied())
        .collect();
    let lost: usize = tallies.iter().map(|tally| tally.lost).sum();
    let mismatched: usize = tallies.iter().map(|tally| tally.mismatched).sum();
    println!("pyright: {count} HTTP sessions × mixed questions for {seconds} s");
    println!(
        "  {count} sessions opened in {:.0} ms",
        opened.as_secs_f64() * 1000.0
    );
    report("  every answer", &samples);
    let slowest = tallies
        .iter()
        .map(|tally| Percentiles::new(&tally.samples).ms(0.99))
        .fold(0.0, f64::max);
    println!("  the slowest session's p99 {slowest:.1} ms; lost {lost}, mismatched {mismatched}");
    println!(
        "  RSS: the daemon {:.1} MB at rest, {:.1} MB after; its servers {:.1} MB, {:.1} MB",
        mb(daemon_at_rest.rss),
        mb(daemon_loaded.rss),
        mb(at_rest.minus(daemon_at_rest).rss),
        mb(loaded.minus(daemon_loaded).rss)
    );
}
