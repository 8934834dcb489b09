//! Core latency and footprint of Windlass against mockls, run by hand:
//!
//! ```sh
//! cargo build --release --workspace && cargo bench --bench core
//! ```
//!
//! Prints start-up to `tools/list`, warm hover through Windlass beside an
//! MCP ping through it and the same hover straight to mockls, five concurrent 200 ms requests, and peak RSS.

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
    hover_side_by_side(&dir);
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

/// Warm hovers through Windlass, MCP pings through the same session, and
/// the same hover sent straight to mockls by a bare LSP client, taken in
/// turn so that the machine's noise falls on all three alike. The ping
/// and the direct hover together are what any MCP server relaying LSP
/// must spend; the rest is Windlass's own.
fn hover_side_by_side(dir: &tempfile::TempDir) {
    let session = Session::start(&args(dir, &[mockls_lsp("python", "")]));
    let arguments = json!({"file": "main.py", "line": 4, "column": 10});
    assert_eq!(session.ok("hover", arguments.clone()), "Shape");
    let mut direct = DirectClient::start(dir);
    let (mut through, mut pings, mut straight) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..HOVERS {
        let started = Instant::now();
        session.ok("hover", arguments.clone());
        through.push(started.elapsed());
        let started = Instant::now();
        session.request("ping", json!({}));
        pings.push(started.elapsed());
        straight.push(direct.hover());
    }
    report("warm hover through windlass", &through);
    report("MCP ping through windlass", &pings);
    report("warm hover straight to mockls", &straight);
    let median = |samples: &[Duration]| Percentiles::new(samples).ms(0.5);
    println!(
        "{:<44} {:.2}x",
        "hover / (ping + direct hover), medians",
        median(&through) / (median(&pings) + median(&straight))
    );
}

/// A bare LSP client of mockls with `main.py` open.
struct DirectClient {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::process::ChildStdout,
    decoder: FrameDecoder,
    uri: String,
    next_id: i64,
}

impl DirectClient {
    fn start(dir: &tempfile::TempDir) -> Self {
        let mut child = Command::new(mockls_binary())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let uri = format!(
            "file://{}/main.py",
            dir.path().canonicalize().unwrap().display()
        );
        let mut client = Self {
            stdin: child.stdin.take().unwrap(),
            stdout: child.stdout.take().unwrap(),
            child,
            decoder: FrameDecoder::new(),
            uri,
            next_id: 1,
        };
        client.exchange(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}),
            Some(0),
        );
        client.exchange(
            json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
            None,
        );
        let document =
            json!({"uri": client.uri, "languageId": "python", "version": 1, "text": SOURCE});
        client.exchange(
            json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": document}}),
            None,
        );
        client
    }

    fn hover(&mut self) -> Duration {
        let id = self.next_id;
        self.next_id += 1;
        let params =
            json!({"textDocument": {"uri": self.uri}, "position": {"line": 3, "character": 9}});
        let started = Instant::now();
        self.exchange(
            json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": params}),
            Some(id),
        );
        started.elapsed()
    }

    /// Sends `message`; with an id, waits for the answer to it.
    fn exchange(&mut self, message: Value, id: Option<i64>) {
        self.stdin
            .write_all(&encode(message.to_string().as_bytes()))
            .unwrap();
        self.stdin.flush().unwrap();
        let Some(id) = id else { return };
        let mut buffer = [0u8; 8192];
        loop {
            while let Ok(Some(body)) = self.decoder.next_body() {
                let reply: Value = serde_json::from_slice(&body).unwrap();
                if reply["id"] == id {
                    return;
                }
            }
            let read = self.stdout.read(&mut buffer).unwrap();
            self.decoder.push(&buffer[..read]);
        }
    }
}

impl Drop for DirectClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
