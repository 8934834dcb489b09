//! A server that asks its client TypeScript questions (Vue's
//! `tsserver/request`) is answered through the session's server that
//! loads tsserver plugins, and answered `null`, never left waiting, when
//! there is none or it fails: mockls plays both, `--asks-tsserver` asking
//! every hover and `--answers-tsserver` answering as
//! typescript-language-server's `typescript.tsserverRequest` does.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;

const MAIN_PY: &str = "def run():\n    pass\nrun()\n";

/// A session with the asking server first and, if given, a TypeScript
/// server with these mockls flags after it, loading a plugin.
fn session_with(typescript: Option<&str>) -> (tempfile::TempDir, Session) {
    let dir = project(&[("main.py", MAIN_PY)]);
    let mockls = mockls_binary().display().to_string();
    let mut config = python_server("components", &mockls, "--asks-tsserver", "");
    if let Some(flags) = typescript {
        config.push_str(&python_server(
            "typescript",
            &mockls,
            flags,
            "initialization_options = { plugins = [{ name = \"components-plugin\" }] }",
        ));
    }
    let session = Session::start_with_user_config(&config, &root_arg(dir.path()));
    (dir, session)
}

fn hover(session: &Session) -> String {
    session.ok("hover", json!({"file": "main.py", "line": 3, "column": 1}))
}

#[test]
fn the_question_is_answered_by_the_typescript_server() {
    let (_dir, session) = session_with(Some("--answers-tsserver"));
    assert_eq!(hover(&session), "tsserver answered _vue:quickinfo");
}

#[test]
fn without_a_typescript_server_the_question_is_answered_null() {
    let (_dir, session) = session_with(None);
    assert_eq!(hover(&session), "no hover information at main.py:3:1");
}

#[test]
fn a_typescript_server_that_fails_or_crashes_leaves_no_one_waiting() {
    for flags in [
        "--answers-tsserver --fail-on workspace/executeCommand",
        "--answers-tsserver --crash-on workspace/executeCommand",
        "--without executeCommandProvider",
    ] {
        let (_dir, session) = session_with(Some(flags));
        assert_eq!(
            hover(&session),
            "no hover information at main.py:3:1",
            "{flags}"
        );
    }
}
