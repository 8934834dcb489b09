//! Fuzzing for a fixed budget, run by hand (not in CI):
//!
//! ```sh
//! cargo build --release --workspace && FUZZ_CASES=20000 cargo bench --bench fuzz
//! ```
//!
//! Property-based, with proptest: the framing decoder fed arbitrary byte
//! streams in arbitrary chunks, the message classifier arbitrary bodies,
//! the position converter arbitrary lines and columns, and every tool of
//! the real binary arbitrary arguments over MCP. Each must return, never
//! panic; the binary must answer every call and stay up. Failing inputs
//! are kept in `benches/fuzz-regressions/` and tried first on every run.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
use serde_json::{Value, json};
use std::time::Instant;
use windlass_actors::lsp::framing::{self, FrameDecoder, MAX_BODY_BYTES};
use windlass_actors::lsp::message;
use windlass_actors::lsp::position::PositionEncoding;

fn main() {
    let cases: u32 = std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(10_000);
    run("framing", cases, framing_never_panics);
    run("message classification", cases, classification_never_panics);
    run("position conversion", cases, positions_round_trip);
    tool_arguments(cases / 10);
}

fn runner(cases: u32, name: &str) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(Box::leak(
            format!("benches/fuzz-regressions/{}.txt", name.replace(' ', "-")).into_boxed_str(),
        )))),
        ..Config::default()
    })
}

fn run(name: &str, cases: u32, test: fn(&mut TestRunner)) {
    let started = Instant::now();
    let mut runner = runner(cases, name);
    test(&mut runner);
    println!(
        "{name:<28} {cases} cases, no failure, {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Streams mixing well-framed bodies, broken headers and noise.
fn stream() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let piece = prop_oneof![
        any::<Vec<u8>>().prop_map(|body| framing::encode(&body)),
        "[{}\\[\\]\"\\\\a-z0-9:, ]{0,64}".prop_map(|json| framing::encode(json.as_bytes())),
        "(Content-Length|content-type|X): ?[0-9a-z]{0,12}\r\n(\r\n)?".prop_map(String::into_bytes),
        any::<Vec<u8>>(),
    ];
    prop::collection::vec(piece, 0..12)
}

fn framing_never_panics(runner: &mut TestRunner) {
    let strategy = (stream(), 1usize..64);
    runner
        .run(&strategy, |(pieces, chunk)| {
            let bytes: Vec<u8> = pieces.concat();
            let mut decoder = FrameDecoder::new();
            for part in bytes.chunks(chunk) {
                decoder.push(part);
                while let Some(next) = decoder.next_body().transpose() {
                    if let Ok(body) = next {
                        prop_assert!(body.len() <= MAX_BODY_BYTES);
                    }
                }
            }
            Ok(())
        })
        .unwrap();
}

fn classification_never_panics(runner: &mut TestRunner) {
    let strategy = prop_oneof![
        any::<Vec<u8>>(),
        "\\{(\"(id|method|result|error|params|jsonrpc)\": ?(null|-?[0-9]{1,20}|\"[a-z/$]{0,12}\"|\\{\\}|\\[\\]),? ?){0,5}\\}"
            .prop_map(String::into_bytes),
    ];
    runner
        .run(&strategy, |body| {
            let _classified = message::parse(&body);
            Ok(())
        })
        .unwrap();
}

fn positions_round_trip(runner: &mut TestRunner) {
    let strategy = (any::<String>(), 0usize..200, "[a-zA-Z0-9-]{0,8}");
    runner
        .run(&strategy, |(line, column, name)| {
            let encodings = [
                PositionEncoding::Utf8,
                PositionEncoding::Utf16,
                PositionEncoding::Utf32,
                PositionEncoding::from_lsp_name(&name),
            ];
            for encoding in encodings {
                let encoded = encoding.encode_column(&line, column);
                prop_assert_eq!(encoding.decode_column(&line, encoded), column);
            }
            let known = ["utf-8", "utf8", "utf-32", "utf32"];
            if !known.contains(&name.to_ascii_lowercase().as_str()) {
                prop_assert_eq!(
                    PositionEncoding::from_lsp_name(&name),
                    PositionEncoding::Utf16
                );
            }
            Ok(())
        })
        .unwrap();
}

/// Arbitrary JSON, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|number| json!(number)),
        ".{0,40}".prop_map(Value::from),
        "(main\\.py|\\.\\./\\.\\./etc/passwd|/etc/passwd|file:///etc/passwd|Shape|shape|[a-z]{1,8})"
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,10}", inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// Every tool of a real session, called with arguments built from its
/// schema's property names and arbitrary values, or arbitrary JSON.
fn tool_arguments(cases: u32) {
    let started = Instant::now();
    let dir = project(&[("main.py", "class Shape:\n    pass\n\nshape = Shape()\n")]);
    let mut args = root_arg(dir.path());
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", ""),
        "--log-level".into(),
        "error".into(),
    ]);
    let session = Session::start(&args);
    let listed = session.request("tools/list", json!({}));
    let tools: Vec<(String, Vec<String>)> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| {
            let properties = tool["inputSchema"]["properties"]
                .as_object()
                .map(|properties| properties.keys().cloned().collect())
                .unwrap_or_default();
            (tool["name"].as_str().unwrap().to_owned(), properties)
        })
        .collect();
    let names: Vec<String> = tools.iter().flat_map(|(_, names)| names.clone()).collect();
    let strategy = (
        0..tools.len(),
        prop::collection::vec((prop::sample::select(names), json_value()), 0..5),
        prop::option::of(json_value()),
    );
    let mut runner = runner(cases, "tool arguments");
    runner
        .run(&strategy, |(tool, fields, raw)| {
            let arguments = match raw {
                Some(raw) => raw,
                None => Value::Object(fields.into_iter().collect()),
            };
            let name = &tools[tool].0;
            let response =
                session.request("tools/call", json!({"name": name, "arguments": arguments}));
            prop_assert!(
                response.get("result").is_some() || response.get("error").is_some(),
                "{name} {arguments}: {response}"
            );
            Ok(())
        })
        .unwrap();
    assert!(session.ok("status", json!({})).contains("[python]"));
    println!(
        "{:<28} {cases} calls over {} tools, every one answered, {:.1} s",
        "tool arguments (MCP)",
        tools.len(),
        started.elapsed().as_secs_f64()
    );
}
