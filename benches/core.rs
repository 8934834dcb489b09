//! Core latency and footprint of Windlass against mockls, run by hand:
//!
//! ```sh
//! cargo build --release --workspace && cargo bench --bench core
//! ```
//!
//! Prints start-up to `tools/list`, warm hover through Windlass versus
//! straight to mockls, five concurrent 200 ms requests, and peak RSS.

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
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use windlass_actors::lsp::framing::{FrameDecoder, encode};

const HOVERS: usize = 2_000;
const STARTS: usize = 20;

const SOURCE: &str = "class Shape:\n    pass\n\nshape = Shape()\n";

fn main() {
    let dir = project(&[("main.py", SOURCE), ("lib.rs", "fn main() {}\n")]);
    startup("mockls", &dir, &[mockls_lsp("python", "")]);
    if have("pyright-langserver") {
        startup(
            "mockls + pyright",
            &dir,
            &[
                mockls_lsp("rust", ""),
                "python:pyright-langserver --stdio".into(),
            ],
        );
    }
    let through = hover_through_windlass(&dir);
    let direct = hover_direct(&dir);
    report("warm hover through windlass", &through);
    report("warm hover straight to mockls", &direct);
    concurrent(&dir);
    peak_rss(&dir);
}

fn args(dir: &tempfile::TempDir, servers: &[String]) -> Vec<String> {
    let mut args = root_arg(dir.path());
    args.extend(["--log-level".into(), "warn".into()]);
    for server in servers {
        args.extend(["--lsp".into(), server.clone()]);
    }
    args
}

fn startup(label: &str, dir: &tempfile::TempDir, servers: &[String]) {
    let mut samples = Vec::new();
    for _ in 0..STARTS {
        let started = Instant::now();
        let session = Session::start(&args(dir, servers));
        session.request("tools/list", json!({}));
        samples.push(started.elapsed());
    }
    report(&format!("start to tools/list ({label})"), &samples);
}

fn hover_through_windlass(dir: &tempfile::TempDir) -> Vec<Duration> {
    let session = Session::start(&args(dir, &[mockls_lsp("python", "")]));
    let arguments = json!({"file": "main.py", "line": 4, "column": 10});
    assert_eq!(session.ok("hover", arguments.clone()), "Shape");
    (0..HOVERS)
        .map(|_| {
            let started = Instant::now();
            session.ok("hover", arguments.clone());
            started.elapsed()
        })
        .collect()
}

/// The same hover sent by a bare LSP client, for Windlass's overhead.
fn hover_direct(dir: &tempfile::TempDir) -> Vec<Duration> {
    let mut child = Command::new(mockls_binary())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut decoder = FrameDecoder::new();
    let mut exchange = |message: Value, id: Option<i64>| {
        stdin
            .write_all(&encode(message.to_string().as_bytes()))
            .unwrap();
        stdin.flush().unwrap();
        let Some(id) = id else { return };
        let mut buffer = [0u8; 8192];
        loop {
            while let Ok(Some(body)) = decoder.next_body() {
                let reply: Value = serde_json::from_slice(&body).unwrap();
                if reply["id"] == id {
                    return;
                }
            }
            let read = stdout.read(&mut buffer).unwrap();
            decoder.push(&buffer[..read]);
        }
    };
    let uri = format!(
        "file://{}/main.py",
        dir.path().canonicalize().unwrap().display()
    );
    exchange(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}),
        Some(0),
    );
    exchange(
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        None,
    );
    let document = json!({"uri": uri, "languageId": "python", "version": 1, "text": SOURCE});
    exchange(
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": document}}),
        None,
    );
    let samples = (1..=HOVERS as i64)
        .map(|id| {
            let params = json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": 9}});
            let started = Instant::now();
            exchange(json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": params}), Some(id));
            started.elapsed()
        })
        .collect();
    let _ = child.kill();
    let _ = child.wait();
    samples
}

fn concurrent(dir: &tempfile::TempDir) {
    let session = Session::start(&args(dir, &[mockls_lsp("python", "--response-delay 200")]));
    let arguments = json!({"file": "main.py", "line": 4, "column": 10});
    session.ok("hover", arguments.clone());
    let mut samples = Vec::new();
    for _ in 0..10 {
        let started = Instant::now();
        let pending: Vec<_> = (0..5)
            .map(|_| session.call_async("hover", arguments.clone()))
            .collect();
        for receiver in &pending {
            assert_eq!(outcome(wait(receiver)).text, "Shape");
        }
        samples.push(started.elapsed());
    }
    report("five concurrent 200 ms hovers (wall)", &samples);
}

fn peak_rss(dir: &tempfile::TempDir) {
    let session = Session::start(&args(
        dir,
        &[mockls_lsp("python", ""), mockls_lsp("rust", "")],
    ));
    for _ in 0..200 {
        session.ok("hover", json!({"file": "main.py", "line": 4, "column": 10}));
        session.ok("hover", json!({"file": "lib.rs", "line": 1, "column": 4}));
    }
    session.ok("status", json!({}));
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", session.pid())).unwrap_or_default();
    let peak = status
        .lines()
        .find(|line| line.starts_with("VmHWM"))
        .unwrap_or("VmHWM: unknown");
    println!(
        "{:<44} {}",
        "peak RSS, two servers, 400 hovers",
        peak.trim_start_matches("VmHWM:").trim()
    );
}
