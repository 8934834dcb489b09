//! The chaos suite: every fault a server can commit, injected through
//! mockls's flags into the real `windlass` binary, each held to the same
//! contract (`../shared/SPEC.md` §7): the request the fault hits either
//! gets its answer or fails with an error that names the server and the
//! fault (never the request timeout, which is set far away); a second
//! server in the same session answers throughout; `status` still answers
//! and names the faulty server; the project's files are untouched.
//!
//! Each case prints one `chaos:` line (fault, outcome, time to the
//! outcome) for docs/reliability.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use std::path::Path;
use std::time::Instant;

const MAIN: &str = "class Shape:\n    pass\n\nshape = Shape()\n";
const OTHER: &str = "int shape_area(void);\n";
/// Far past any fault's own outcome: an answer or error after this long
/// would be the timeout's, not the fault's.
const REQUEST_TIMEOUT: &str = "120";

/// How a faulty request must end.
enum Outcome {
    /// Answered, the answer containing this.
    Answer(&'static str),
    /// Failed at once with an error containing each of these.
    Error(&'static [&'static str]),
}

/// One fault: mockls's flags for the faulty server, and the outcome of a
/// hover on `Shape` in `main.py`.
fn chaos(name: &str, flags: &str, outcome: Outcome) {
    let dir = project(&[("main.py", MAIN), ("other.c", OTHER)]);
    let before = snapshot(dir.path());
    let mut args = root_arg(dir.path());
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", flags),
        "--lsp".into(),
        mockls_lsp("c", ""),
        "--request-timeout".into(),
        REQUEST_TIMEOUT.into(),
    ]);
    let session = Session::start(&args);
    let started = Instant::now();
    let hover = session.call("hover", json!({"file": "main.py", "line": 4, "column": 10}));
    let took = started.elapsed();
    let observed = match &outcome {
        Outcome::Answer(expected) => {
            assert!(
                !hover.is_error && hover.text.contains(expected),
                "{name}: {}",
                hover.text
            );
            format!(
                "answered ({})",
                hover.text.lines().next().unwrap_or_default()
            )
        }
        Outcome::Error(words) => {
            assert!(
                hover.is_error,
                "{name}: expected an error, got {}",
                hover.text
            );
            assert!(
                !hover.text.contains("timed out"),
                "{name}: the timeout, not the fault: {}",
                hover.text
            );
            for word in *words {
                assert!(
                    hover.text.contains(word),
                    "{name}: {word:?} in {}",
                    hover.text
                );
            }
            format!("failed: {}", hover.text.lines().next().unwrap_or_default())
        }
    };
    let healthy = session.ok(
        "hover",
        json!({"file": "other.c", "line": 1, "symbol": "shape_area"}),
    );
    assert!(
        healthy.contains("shape_area"),
        "{name}: the other server: {healthy}"
    );
    let status = session.ok("status", json!({}));
    assert!(status.contains("[python]"), "{name}: {status}");
    assert_eq!(snapshot(dir.path()), before, "{name}: nothing is written");
    eprintln!(
        "chaos: {name} | {observed} | {:.0} ms",
        took.as_secs_f64() * 1000.0
    );
}

/// Every file under `dir` with its content.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| entry.path().is_file())
        .map(|entry| {
            (
                entry.file_name().to_string_lossy().into_owned(),
                std::fs::read(entry.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

const HOVER: &str = "textDocument/hover";

#[test]
fn a_crash_on_the_request() {
    chaos(
        "crash on the request",
        &format!("--crash-on {HOVER}"),
        Outcome::Error(&["[python]", "exited"]),
    );
}

#[test]
fn a_response_without_content_length() {
    chaos(
        "no Content-Length",
        &format!("--fault missing-length:{HOVER}"),
        Outcome::Answer("Shape"),
    );
}

#[test]
fn a_non_numeric_content_length() {
    chaos(
        "non-numeric Content-Length",
        &format!("--fault non-numeric-length:{HOVER}"),
        Outcome::Answer("Shape"),
    );
}

#[test]
fn an_oversize_content_length() {
    chaos(
        "oversize Content-Length",
        &format!("--fault oversize-length:{HOVER}"),
        Outcome::Error(&["[python]"]),
    );
}

#[test]
fn a_truncated_body_then_exit() {
    chaos(
        "truncated body, then exit",
        &format!("--fault truncated:{HOVER}"),
        Outcome::Error(&["[python]", "exited"]),
    );
}

#[test]
fn a_garbage_line_before_the_response() {
    chaos(
        "garbage line before a response",
        &format!("--fault garbage-line:{HOVER}"),
        Outcome::Answer("Shape"),
    );
}

#[test]
fn invalid_json() {
    chaos(
        "invalid JSON",
        &format!("--malformed-on {HOVER}"),
        Outcome::Error(&["[python]", "malformed"]),
    );
}

#[test]
fn invalid_utf8() {
    chaos(
        "invalid UTF-8 in a result",
        &format!("--invalid-utf8-on {HOVER}"),
        Outcome::Answer("bad \u{fffd}\u{fffd} bytes"),
    );
}

#[test]
fn slow_byte_by_byte_writes() {
    chaos(
        "byte-by-byte writes",
        "--slow-write",
        Outcome::Answer("Shape"),
    );
}

#[test]
fn a_response_with_an_unknown_id() {
    chaos(
        "unknown id",
        &format!("--unknown-id-on {HOVER}"),
        Outcome::Answer("Shape"),
    );
}

#[test]
fn a_response_sent_twice() {
    chaos(
        "duplicate id",
        &format!("--fault duplicate-id:{HOVER}"),
        Outcome::Answer("Shape"),
    );
}

#[test]
fn an_error_with_a_null_id() {
    chaos(
        "null id",
        &format!("--fault null-id:{HOVER}"),
        Outcome::Answer("Shape"),
    );
}

#[test]
fn a_server_request_windlass_does_not_know() {
    chaos(
        "unknown server request",
        &format!("--fault unknown-request:{HOVER}"),
        Outcome::Answer("Shape"),
    );
}

#[test]
fn content_modified_is_asked_again() {
    chaos(
        "ContentModified once",
        &format!("--fault content-modified:{HOVER}"),
        Outcome::Answer("Shape"),
    );
}

#[test]
fn server_cancelled_is_asked_again() {
    chaos(
        "ServerCancelled once",
        &format!("--fault server-cancelled:{HOVER}"),
        Outcome::Answer("Shape"),
    );
}

#[test]
fn content_modified_for_ever_ends_in_its_error() {
    chaos(
        "ContentModified every time",
        &format!("--fault content-modified-always:{HOVER}"),
        Outcome::Error(&["[python]", "code -32801"]),
    );
}

#[test]
fn a_failing_method() {
    chaos(
        "an error answer",
        &format!("--fail-on {HOVER}"),
        Outcome::Error(&["[python]", "failing"]),
    );
}

/// A session whose python server is mockls with `flags`, recording.
fn recording(dir: &Path, flags: &str) -> (Session, std::path::PathBuf) {
    let record = record_path(dir);
    let mut args = root_arg(dir);
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", &format!("{flags} --record {}", record.display())),
    ]);
    (Session::start(&args), record)
}

#[test]
fn an_unknown_server_request_is_answered_method_not_found() {
    let dir = project(&[("main.py", MAIN)]);
    let (session, record) = recording(dir.path(), &format!("--fault unknown-request:{HOVER}"));
    session.ok("hover", json!({"file": "main.py", "line": 4, "column": 10}));
    let answer = recorded(&record)
        .into_iter()
        .find(|(direction, message)| direction == "in" && message["id"] == "mockls-unknown")
        .map(|(_, message)| message)
        .expect("the unknown request is answered");
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
}

#[test]
fn content_modified_sends_the_request_again_and_gives_up_after_three_retries() {
    let dir = project(&[("main.py", MAIN)]);
    let hovers = |record: &Path| {
        recorded(record)
            .iter()
            .filter(|(direction, message)| direction == "in" && message["method"] == HOVER)
            .count()
    };
    let (once, record) = recording(dir.path(), &format!("--fault content-modified:{HOVER}"));
    once.ok("hover", json!({"file": "main.py", "line": 4, "column": 10}));
    assert_eq!(hovers(&record), 2, "asked again once");
    drop(once);
    let dir = project(&[("main.py", MAIN)]);
    let (always, record) = recording(
        dir.path(),
        &format!("--fault content-modified-always:{HOVER}"),
    );
    always.err("hover", json!({"file": "main.py", "line": 4, "column": 10}));
    assert_eq!(hovers(&record), 4, "the first ask and three more");
}

#[test]
fn symbols_nested_five_hundred_deep_are_refused_without_overflow() {
    let dir = project(&[("main.py", MAIN)]);
    let (session, _) = recording(dir.path(), "--nested-symbols 500");
    let outline = session.call("document_symbols", json!({"file": "main.py"}));
    eprintln!(
        "chaos: 500-level nested symbols | {} | -",
        outline.text.lines().next().unwrap_or_default()
    );
    // Refused, saying why, rather than read into a stack overflow.
    assert!(outline.is_error, "{}", outline.text);
    assert!(
        outline.text.starts_with("[python]") && outline.text.contains("more than 128 levels deep"),
        "{}",
        outline.text
    );
    assert_eq!(
        session.ok("hover", json!({"file": "main.py", "line": 4, "column": 10})),
        "Shape"
    );
}
