//! Faults end to end: servers that crash, hang, fail, send garbage, and
//! agents that send bad input. Windlass must answer every call with a
//! clear result or error, stay alive, and recover.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::Path;

const MAIN: &str = "class Shape:\n    pass\n\nshape = Shape()\n";

fn start(dir: &Path, flags: &str, extra: &[&str]) -> Session {
    let mut args = root_arg(dir);
    args.extend(["--lsp".into(), mockls_lsp("python", flags)]);
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    Session::start(&args)
}

fn hover_shape(session: &Session) -> common::ToolOutcome {
    session.call("hover", json!({"file": "main.py", "line": 4, "column": 10}))
}

fn methods(record: &[(String, Value)], direction: &str) -> Vec<String> {
    record
        .iter()
        .filter(|(dir, _)| dir == direction)
        .filter_map(|(_, message)| message["method"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_crash_fails_the_request_in_flight_then_the_server_restarts_with_its_documents() {
    let dir = project(&[("main.py", MAIN)]);
    let record = record_path(dir.path());
    let session = start(
        dir.path(),
        &format!("--drop-after 3 --record {}", record.display()),
        &[],
    );
    for _ in 0..3 {
        assert_eq!(hover_shape(&session).text, "Shape");
    }
    let crashed = hover_shape(&session);
    assert!(crashed.is_error, "{}", crashed.text);
    assert!(
        crashed.text.starts_with("[python] server exited"),
        "{}",
        crashed.text
    );
    let again = hover_shape(&session);
    assert!(!again.is_error, "{}", again.text);
    assert_eq!(again.text, "Shape");

    let received = methods(&recorded(&record), "in");
    let second_start = received.iter().rposition(|m| m == "initialized").unwrap();
    assert_eq!(
        received.iter().filter(|m| *m == "initialize").count(),
        2,
        "{received:?}"
    );
    let after: Vec<&str> = received[second_start + 1..]
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(
        after,
        vec!["textDocument/didOpen", "textDocument/hover"],
        "the restarted server gets the open document back"
    );
    session.wait_for_status(|status| status.contains("restarts 1"));
}

#[test]
fn a_restart_storm_ends_in_failed_with_the_servers_last_words() {
    let dir = project(&[("main.py", MAIN)]);
    let session = start(dir.path(), "--crash-on initialize", &[]);
    let status = session.wait_for_status(|status| status.contains(" failed"));
    assert!(
        status.contains("mockls: crashing on initialize as asked"),
        "{status}"
    );
    let refused = hover_shape(&session);
    assert!(refused.is_error);
    assert!(
        refused
            .text
            .starts_with("[python] failed after repeated crashes"),
        "{}",
        refused.text
    );
}

#[test]
fn a_hanging_request_times_out_with_attribution_while_everything_else_answers() {
    let dir = project(&[("main.py", MAIN)]);
    let record = record_path(dir.path());
    let flags = format!("--hang-on textDocument/hover --record {}", record.display());
    let session = start(dir.path(), &flags, &["--request-timeout", "3"]);
    let hanging = session.call_async("hover", json!({"file": "main.py", "line": 4, "column": 10}));
    assert!(session.request("ping", json!({})).get("result").is_some());
    assert_eq!(
        session.ok(
            "definition",
            json!({"file": "main.py", "line": 4, "column": 10})
        ),
        "main.py:1:7  class Shape:"
    );
    assert!(
        hanging.try_recv().is_err(),
        "the hover cannot have finished before the definition"
    );
    let timed_out = outcome(wait(&hanging));
    assert!(timed_out.is_error);
    assert_eq!(
        timed_out.text,
        "[python] textDocument/hover timed out after 3 s"
    );
    wait_until("the abandoned request is cancelled at the server", || {
        methods(&recorded(&record), "in").contains(&"$/cancelRequest".to_owned())
    });
}

/// A name asked alone while the server's workspace symbols time out (a
/// cold pyright on gunicorn's 95,000 lines took longer than 30 s on a
/// loaded machine): the answer says so, rather than only that no symbol
/// has the name.
#[test]
fn a_name_asked_while_workspace_symbols_time_out_says_the_answer_may_be_incomplete() {
    let dir = project(&[("main.py", MAIN)]);
    let session = start(
        dir.path(),
        "--hang-on workspace/symbol",
        &["--request-timeout", "2"],
    );
    let warning =
        "warning: [python] workspace/symbol timed out after 2 s; results may be incomplete";
    let missing = session.err("hover", json!({"symbol": "Missing"}));
    assert!(
        missing.starts_with("no symbol named `Missing` found in the workspace\n")
            && missing.contains(warning),
        "{missing}"
    );
    // A definition found by text still answers.
    assert_eq!(
        session.ok("definition", json!({"symbol": "Shape"})),
        "main.py:1:7  class Shape:"
    );
}

#[test]
fn a_slow_language_never_delays_another() {
    let dir = project(&[("main.py", MAIN), ("lib.rs", "fn main() {}\n")]);
    let mut args = root_arg(dir.path());
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", "--hang-on textDocument/hover"),
    ]);
    args.extend(["--lsp".into(), mockls_lsp("rust", "")]);
    let session = Session::start(&args);
    let slow = session.call_async("hover", json!({"file": "main.py", "line": 4, "column": 10}));
    assert_eq!(
        session.ok("hover", json!({"file": "lib.rs", "line": 1, "column": 4})),
        "main"
    );
    assert!(
        slow.try_recv().is_err(),
        "python's hover is still pending while rust answered"
    );
}

#[test]
fn five_concurrent_hovers_are_in_flight_at_the_server_together() {
    let dir = project(&[("main.py", MAIN)]);
    let record = record_path(dir.path());
    let session = start(
        dir.path(),
        &format!("--response-delay 200 --record {}", record.display()),
        &[],
    );
    // Five positions in `Shape`: five questions, none the same.
    let pending: Vec<_> = (9..14)
        .map(|column| {
            session.call_async(
                "hover",
                json!({"file": "main.py", "line": 4, "column": column}),
            )
        })
        .collect();
    for receiver in &pending {
        assert_eq!(outcome(wait(receiver)).text, "Shape");
    }
    let record = recorded(&record);
    let hover_ids: Vec<Value> = record
        .iter()
        .filter(|(dir, message)| dir == "in" && message["method"] == "textDocument/hover")
        .map(|(_, message)| message["id"].clone())
        .collect();
    assert_eq!(hover_ids.len(), 5);
    let last_request = record
        .iter()
        .rposition(|(dir, m)| dir == "in" && m["method"] == "textDocument/hover")
        .unwrap();
    let first_response = record
        .iter()
        .position(|(dir, m)| dir == "out" && hover_ids.contains(&m["id"]))
        .unwrap();
    assert!(
        last_request < first_response,
        "all five requests reached mockls before it answered any"
    );
}

#[test]
fn a_failing_method_reports_the_servers_error() {
    let dir = project(&[("main.py", MAIN)]);
    let session = start(dir.path(), "--fail-on textDocument/definition", &[]);
    let failed = session.err(
        "definition",
        json!({"file": "main.py", "line": 4, "column": 10}),
    );
    assert_eq!(
        failed,
        "[python] mockls: failing textDocument/definition as asked (code -32603)"
    );
    assert_eq!(hover_shape(&session).text, "Shape");
}

#[test]
fn malformed_and_misframed_responses_fail_their_request_at_once() {
    let dir = project(&[("main.py", MAIN)]);
    let flags = "--malformed-on textDocument/hover --wrong-length-on textDocument/definition";
    let session = start(dir.path(), flags, &["--request-timeout", "60"]);
    let malformed = hover_shape(&session);
    assert!(
        malformed
            .text
            .starts_with("[python] sent a malformed response"),
        "{}",
        malformed.text
    );
    let misframed = session.err(
        "definition",
        json!({"file": "main.py", "line": 4, "column": 10}),
    );
    assert!(
        misframed.starts_with("[python] sent a malformed response"),
        "{misframed}"
    );
    let outline = session.ok("document_symbols", json!({"file": "main.py"}));
    assert_eq!(outline, "class Shape 1-2", "the stream resynchronised");
}

#[test]
fn unknown_ids_invalid_utf8_and_slow_writes_are_survived() {
    let dir = project(&[("main.py", MAIN)]);
    let flags =
        "--unknown-id-on textDocument/hover --invalid-utf8-on textDocument/definition --slow-write";
    let session = start(dir.path(), flags, &[]);
    assert_eq!(hover_shape(&session).text, "Shape");
    let hover = session.call(
        "definition",
        json!({"file": "main.py", "line": 4, "column": 10}),
    );
    assert!(
        !hover.is_error || hover.text.contains("malformed"),
        "{}",
        hover.text
    );
}

#[test]
fn an_oversize_response_is_refused_and_its_request_fails_at_once() {
    let dir = project(&[("main.py", MAIN)]);
    let flags = "--huge-on textDocument/hover --huge-bytes 70000000";
    let session = start(dir.path(), flags, &["--request-timeout", "120"]);
    let refused = hover_shape(&session);
    assert!(refused.is_error, "{}", refused.text);
    assert!(
        refused
            .text
            .starts_with("[python] sent a malformed response: a message of 70000"),
        "{}",
        refused.text
    );
    assert!(
        refused.text.contains("limit, was refused"),
        "{}",
        refused.text
    );
    assert_eq!(
        session.ok(
            "definition",
            json!({"file": "main.py", "line": 4, "column": 10})
        ),
        "main.py:1:7  class Shape:"
    );
}

#[test]
fn locations_outside_the_roots_are_left_out_and_counted() {
    let dir = project(&[("main.py", MAIN)]);
    let session = start(dir.path(), "--outside-uri", &[]);
    let definition = session.ok(
        "definition",
        json!({"file": "main.py", "line": 4, "column": 10}),
    );
    assert_eq!(
        definition,
        "no definition found for `Shape` at main.py:4:10\nnote: 1 result outside the workspace roots left out"
    );
}

#[test]
fn bad_input_gets_a_clear_error_and_windlass_stays_up() {
    let dir = project(&[
        ("main.py", MAIN),
        ("data.xyz", "x"),
        ("notes.txt", "plain words\n"),
    ]);
    std::fs::write(
        dir.path().parent().unwrap().join("windlass-outside.py"),
        "x = 1\n",
    )
    .unwrap();
    let mut session = start(dir.path(), "", &[]);
    let cases = [
        (
            "hover",
            json!({"file": "main.py", "line": 1, "colum": 2}),
            "colum",
        ),
        (
            "hover",
            json!({"file": "main.py", "line": "one", "column": 2}),
            "invalid type: string \"one\", expected u32",
        ),
        (
            "hover",
            json!({"file": "missing.py", "line": 1, "column": 1}),
            "missing.py: no such file or directory",
        ),
        (
            "hover",
            json!({"file": "data.xyz", "line": 1, "column": 1}),
            "no language server configured for data.xyz (unknown language)",
        ),
        (
            "hover",
            json!({"file": "notes.txt", "line": 1, "column": 1}),
            "no language server configured for language `plaintext`",
        ),
        (
            "hover",
            json!({"file": "../windlass-outside.py", "line": 1, "column": 1}),
            "../windlass-outside.py is outside the workspace roots",
        ),
        (
            "hover",
            json!({"file": "/etc/passwd", "line": 1, "column": 1}),
            "/etc/passwd is outside the workspace roots",
        ),
        (
            "hover",
            json!({"file": "main.py", "line": 99, "column": 1}),
            "line 99 is past the end of the file (4 lines)",
        ),
        (
            "hover",
            json!({"file": "main.py", "line": 1}),
            "give `column` or `symbol` with `line`",
        ),
        (
            "hover",
            json!({"file": "main.py", "line": 1, "symbol": "nothere"}),
            "`nothere` does not occur on line 1 of main.py",
        ),
        (
            "list_directory",
            json!({"path": ".."}),
            ".. is outside the workspace roots",
        ),
    ];
    for (tool, arguments, expected) in cases {
        let error = session.err(tool, arguments.clone());
        assert!(error.contains(expected), "{tool} {arguments}: {error}");
    }
    assert!(session.alive());
    assert_eq!(hover_shape(&session).text, "Shape");
}

#[test]
fn edits_on_disk_are_synced_and_idle_documents_closed() {
    let dir = project(&[("main.py", MAIN)]);
    let record = record_path(dir.path());
    let session = start(
        dir.path(),
        &format!("--record {}", record.display()),
        &["--idle-timeout", "1"],
    );
    assert_eq!(hover_shape(&session).text, "Shape");
    std::fs::write(
        dir.path().join("main.py"),
        "class Circle:\n    pass\n\nshape = Circle()\n",
    )
    .unwrap();
    assert_eq!(hover_shape(&session).text, "Circle");
    let changes: Vec<Value> = recorded(&record)
        .into_iter()
        .filter(|(dir, m)| dir == "in" && m["method"] == "textDocument/didChange")
        .map(|(_, m)| m["params"].clone())
        .collect();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0]["textDocument"]["version"], 2);
    assert!(
        changes[0]["contentChanges"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Circle")
    );
    wait_until("the idle document is closed", || {
        methods(&recorded(&record), "in").contains(&"textDocument/didClose".to_owned())
    });
}

#[test]
fn workspace_configuration_is_answered_from_settings() {
    let dir = project(&[("main.py", MAIN)]);
    let record = record_path(dir.path());
    let config = dir.path().join("windlass-test.toml");
    std::fs::write(
        &config,
        "[server.python.settings.mockls]\nlevel = \"strict\"\n",
    )
    .unwrap();
    let flags = format!("--send-configuration-request --record {}", record.display());
    let session = start(dir.path(), &flags, &["--config", config.to_str().unwrap()]);
    assert_eq!(hover_shape(&session).text, "Shape");
    let answer = || {
        recorded_answer(&record, "workspace/configuration").map(|answer| answer["result"].clone())
    };
    wait_until("mockls has the configuration answer", || answer().is_some());
    assert_eq!(answer(), Some(json!([{"level": "strict"}])));
}

/// Starts a session, ends it with `end`, and checks that Windlass exits
/// cleanly and takes its language server with it.
fn session_end_stops_servers(end: impl FnOnce(&Session)) {
    let dir = project(&[("main.py", MAIN)]);
    let mut session = start(dir.path(), "", &[]);
    let status = session.wait_for_status(|status| status.contains("running ready"));
    let pid: u32 = status
        .split(" pid ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    end(&session);
    assert_eq!(session.wait_exit(), Some(0));
    wait_until("the language server process is gone", || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.is_empty() || stat.contains(") Z ")
    });
}

#[test]
fn closing_stdin_ends_the_session_and_its_servers() {
    session_end_stops_servers(Session::close_stdin);
}

#[cfg(unix)]
#[test]
fn sigterm_ends_the_session_and_its_servers() {
    session_end_stops_servers(|session| {
        let killed = std::process::Command::new("kill")
            .args(["-TERM", &session.pid().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
    });
}

/// pyright works on one references request at a time: the next ends the
/// one in progress, and once the client has cancelled one, every later
/// one fails ("this._token.cancel is not a function"). Agents asking
/// together are answered one after the other, each with its references.
#[test]
fn references_asked_together_take_turns_at_a_server_that_drops_the_one_before() {
    let source = "class Shape:\n    pass\n\nshape = Shape()\nother = Shape()\nlast = shape\n";
    let dir = project(&[("main.py", source)]);
    let session = start(
        dir.path(),
        "--references-one-at-a-time --response-delay 300",
        &[],
    );
    let asked: Vec<_> = [(1, "Shape"), (4, "shape"), (5, "other"), (6, "last")]
        .into_iter()
        .map(|(line, symbol)| {
            let arguments = json!({"file": "main.py", "line": line, "symbol": symbol});
            (symbol, session.call_async("find_references", arguments))
        })
        .collect();
    for (symbol, answer) in asked {
        let answer = outcome(wait(&answer));
        assert!(!answer.is_error, "{symbol}: {}", answer.text);
        assert!(answer.text.contains("main.py"), "{symbol}: {}", answer.text);
    }
}

/// A references request that times out at such a server is left to
/// finish, not cancelled: the next one still gets the server's answer
/// (here, a time-out again) rather than its broken state's error.
#[test]
fn a_timed_out_references_request_is_not_cancelled_at_a_server_that_breaks_on_it() {
    let dir = project(&[("main.py", MAIN)]);
    let record = record_path(dir.path());
    let flags = format!(
        "--references-one-at-a-time --response-delay 1500 --record {}",
        record.display()
    );
    let session = start(dir.path(), &flags, &["--request-timeout", "1"]);
    let references = json!({"file": "main.py", "line": 1, "symbol": "Shape"});
    for _ in 0..2 {
        let answer = session.err("find_references", references.clone());
        assert!(answer.contains("timed out"), "{answer}");
    }
    assert!(
        !methods(&recorded(&record), "in").contains(&"$/cancelRequest".to_owned()),
        "a references request was cancelled"
    );
}
