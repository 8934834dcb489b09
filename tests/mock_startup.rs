//! What a user sees when a server cannot start or stops: a command that
//! is not installed, a binary on PATH that is only a shim, a server that
//! dies at start with a backtrace after the line that says why, a root
//! that does not exist, and a server killed while idle, whose next call
//! waits for the restart instead of failing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use std::path::Path;

/// Writes an executable shell script.
#[cfg(unix)]
fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// No message a user sees speaks of Windlass's insides.
fn speaks_plainly(text: &str) {
    for word in ["actor", "panicked", "Actor"] {
        assert!(!text.contains(word), "internal wording in: {text}");
    }
}

#[test]
fn a_command_that_is_not_installed_says_so() {
    let dir = project(&[("main.go", "package main\n")]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), "go:windlass-no-such-server".into()]);
    let session = Session::start(&args);
    let error = session.err("hover", json!({"file": "main.go", "line": 1, "column": 1}));
    assert_eq!(
        error,
        "[go] `windlass-no-such-server` is not installed or not on PATH"
    );
    speaks_plainly(&error);
}

#[cfg(unix)]
#[test]
fn a_zero_config_binary_that_is_only_a_shim_is_never_started() {
    let bin = tempfile::tempdir().unwrap();
    let marker = bin.path().join("started");
    script(
        &bin.path().join("rust-analyzer"),
        &format!(
            "echo started >> {}\n\
             echo \"error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.\" >&2\n\
             echo '' >&2\necho 'Stack backtrace:' >&2\necho '   0: <unknown>' >&2\nexit 1",
            marker.display()
        ),
    );
    let dir = project(&[("main.rs", "fn main() {}\n")]);
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let session = Session::start_with_env(&root_arg(dir.path()), &[("PATH", &path)]);
    let error = session.err("hover", json!({"file": "main.rs", "line": 1, "column": 4}));
    assert_eq!(
        error,
        "[rust] `rust-analyzer` is on PATH but does not run (`rust-analyzer --version` failed: \
         error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.); \
         install it fully or configure another server"
    );
    speaks_plainly(&error);
    let again = session.err("hover", json!({"file": "main.rs", "line": 1, "column": 4}));
    assert_eq!(again, error);
    let status = session.ok("status", json!({}));
    assert!(status.contains("[rust] rust-analyzer unusable"), "{status}");
    let runs = std::fs::read_to_string(&marker).unwrap_or_default();
    assert_eq!(runs.lines().count(), 1, "checked once, never crash-looped");
}

#[cfg(unix)]
#[test]
fn a_server_that_dies_at_start_is_reported_by_the_line_that_says_why() {
    let bin = tempfile::tempdir().unwrap();
    let server = bin.path().join("broken-server");
    script(
        &server,
        "echo 'error: no toolchain configured for this project' >&2\n\
         i=0; while [ $i -lt 40 ]; do echo \"  $i: <unknown>\" >&2; i=$((i+1)); done\nexit 1",
    );
    let dir = project(&[("main.py", "x = 1\n")]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), format!("python:{}", server.display())]);
    let session = Session::start(&args);
    let status = session.wait_for_status(|status| status.contains(" failed"));
    assert!(
        status.contains(
            "last error: [python] server exited: error: no toolchain configured for this project"
        ),
        "{status}"
    );
    assert!(
        status.contains("    error: no toolchain configured for this project"),
        "the first lines of stderr are kept: {status}"
    );
    speaks_plainly(&status);
}

#[test]
fn a_root_that_does_not_exist_is_named() {
    let state = tempfile::tempdir().unwrap();
    let output = run_windlass(state.path(), &["-r", "/windlass-no-such-root"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("root /windlass-no-such-root: No such file or directory"),
        "{stderr}"
    );
    speaks_plainly(&stderr);
}

#[cfg(unix)]
#[test]
fn a_server_killed_while_idle_is_waited_for_not_reported_dead() {
    let dir = project(&[("main.py", "class Shape:\n    pass\n\nshape = Shape()\n")]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let session = Session::start(&args);
    let hover = json!({"file": "main.py", "line": 4, "column": 10});
    assert_eq!(session.ok("hover", hover.clone()), "Shape");
    for round in 1..=3 {
        let pid = server_pid(&session);
        let killed = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        assert_eq!(
            session.ok("hover", hover.clone()),
            "Shape",
            "round {round}: the call waits for the restart"
        );
        assert_ne!(server_pid(&session), pid);
    }
}

/// The pid `status` gives for the python server.
fn server_pid(session: &Session) -> u32 {
    let status = session.wait_for_status(|status| {
        status
            .lines()
            .any(|line| line.starts_with("[python]") && line.contains(" pid "))
    });
    let line = status
        .lines()
        .find(|line| line.starts_with("[python]"))
        .unwrap();
    line.split(" pid ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|pid| pid.parse().ok())
        .unwrap()
}

/// A project's data files (JSON here) are no reason to start their server
/// beside the code's: it starts when the first question needs it, and
/// then answers.
#[test]
fn a_data_languages_server_starts_when_a_question_needs_it() {
    let dir = project(&[
        ("main.py", "def run():\n    pass\n"),
        ("settings.json", "{\"a\": 1}\n"),
    ]);
    let mut args = root_arg(dir.path());
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", "--source code"),
        "--lsp".into(),
        mockls_lsp("json", "--source data"),
    ]);
    let session = Session::start(&args);
    assert_eq!(
        session.ok("hover", json!({"file": "main.py", "line": 1, "column": 5})),
        "run"
    );
    let status = session.ok("status", json!({}));
    let started = |status: &str| status.matches("pid ").count();
    assert_eq!(started(&status), 1, "only the code's server: {status}");
    assert_eq!(
        session.ok("diagnostics", json!({"file": "settings.json"})),
        "settings.json: no problems"
    );
    let status = session.ok("status", json!({}));
    assert_eq!(started(&status), 2, "the data's server too: {status}");
}
