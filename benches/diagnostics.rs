//! Post-edit diagnostics latency per mockls profile, run by hand:
//!
//! ```sh
//! cargo build --release --workspace && cargo bench --bench diagnostics
//! ```
//!
//! Each iteration edits a file on disk and asks for its diagnostics. It
//! reports edit → answer, and answer − the server's last publication
//! (read from mockls's `--record` file, same clock), with the adaptive
//! settle and with the settle forced to a fixed 2 s as the baseline.

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
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const PROFILES: &[(&str, &str)] = &[
    (
        "process (no version, no progress)",
        "--diagnostics-delay 50",
    ),
    ("version", "--diagnostics-delay 50 --publish-version"),
    ("progress", "--diagnostics-delay 50 --progress-on-change"),
    (
        "version, two rounds",
        "--diagnostics-delay 50 --publish-version --multi-round-diagnostics",
    ),
];

fn main() {
    for (label, flags) in PROFILES {
        run(label, flags, None, 40);
    }
    for (label, flags) in PROFILES {
        run(label, flags, Some(2_000), 8);
    }
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1000.0
}

fn run(label: &str, flags: &str, fixed_settle_ms: Option<u64>, iterations: usize) {
    let dir = project(&[("main.py", "v = 1\n")]);
    let record = record_path(dir.path());
    let mut args = root_arg(dir.path());
    args.extend(["--log-level".into(), "warn".into()]);
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", &format!("{flags} --record {}", record.display())),
    ]);
    if let Some(settle) = fixed_settle_ms {
        args.extend(["--diagnostics-settle-ms".into(), settle.to_string()]);
    }
    let session = Session::start(&args);
    session.ok("diagnostics", json!({"file": "main.py"}));
    let mut edit_to_answer = Vec::new();
    let mut after_publish = Vec::new();
    for iteration in 0..iterations {
        let text = if iteration % 2 == 0 {
            "v = 1  # ERROR\n".to_owned()
        } else {
            format!("v = {iteration}\n")
        };
        std::fs::write(dir.path().join("main.py"), text).unwrap();
        let started = Instant::now();
        let answer = session.ok("diagnostics", json!({"file": "main.py"}));
        let answered_at = now_ms();
        edit_to_answer.push(started.elapsed());
        assert_eq!(answer.contains("ERROR"), iteration % 2 == 0, "{answer}");
        let last_publish = recorded_publications(&record)
            .into_iter()
            .filter(|t| *t <= answered_at)
            .fold(0.0, f64::max);
        after_publish.push(Duration::from_secs_f64(
            (answered_at - last_publish).max(0.0) / 1000.0,
        ));
    }
    let settle = fixed_settle_ms.map_or("adaptive settle".to_owned(), |ms| {
        format!("fixed {ms} ms settle")
    });
    report(
        &format!("{label}, {settle}: edit → answer"),
        &edit_to_answer,
    );
    report(
        &format!("{label}, {settle}: answer − last publish"),
        &after_publish,
    );
}

fn recorded_publications(record: &std::path::Path) -> Vec<f64> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|entry| {
            entry["dir"] == "out" && entry["message"]["method"] == "textDocument/publishDiagnostics"
        })
        .filter_map(|entry| entry["t"].as_f64())
        .collect()
}
