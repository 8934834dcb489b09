//! Configuration end to end: project files, trust, and layering.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;

fn project_with_config() -> tempfile::TempDir {
    let config = format!(
        "request_timeout = 7\n[server.mockpy]\ncommand = \"{}\"\nlanguages = [\"python\"]\n",
        mockls_binary().display()
    );
    project(&[
        ("main.py", "def run():\n    pass\n"),
        (".windlass.toml", &config),
    ])
}

#[test]
fn an_untrusted_project_file_cannot_run_commands_until_trusted() {
    let dir = project_with_config();
    let untrusted = Session::start(&root_arg(dir.path()));
    let status = untrusted.ok("status", json!({}));
    assert!(
        status.contains("is not trusted; they are ignored"),
        "{status}"
    );
    assert!(!status.contains("mockls"), "{status}");
    drop(untrusted);

    let state = tempfile::tempdir().unwrap();
    let file = dir.path().join(".windlass.toml");
    let trusted = run_windlass(state.path(), &["trust", file.to_str().unwrap()]);
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    let session = Session::start_with_state(state, &root_arg(dir.path()));
    assert_eq!(
        session.ok("hover", json!({"file": "main.py", "line": 1, "column": 5})),
        "run"
    );
    let status = session.ok("status", json!({}));
    assert!(
        status.contains("[mockpy]") && !status.contains("not trusted"),
        "{status}"
    );
}

#[test]
fn a_changed_project_file_must_be_trusted_again() {
    let dir = project_with_config();
    let state = tempfile::tempdir().unwrap();
    let file = dir.path().join(".windlass.toml");
    assert!(
        run_windlass(state.path(), &["trust", file.to_str().unwrap()])
            .status
            .success()
    );
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("args = [\"--hang-on\", \"textDocument/hover\"]\n");
    std::fs::write(&file, text).unwrap();
    let session = Session::start_with_state(state, &root_arg(dir.path()));
    let status = session.ok("status", json!({}));
    assert!(status.contains("is not trusted"), "{status}");
}

#[test]
fn flags_beat_files_and_lsp_flags_keep_file_settings() {
    let dir = project(&[("main.py", "def run():\n    pass\n")]);
    let config = dir.path().join("extra.toml");
    std::fs::write(
        &config,
        "request_timeout = 60\n[server.python.settings]\nx = 1\n",
    )
    .unwrap();
    let mut args = root_arg(dir.path());
    args.extend([
        "--config".into(),
        config.display().to_string(),
        "--request-timeout".into(),
        "2".into(),
    ]);
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", "--hang-on textDocument/hover"),
    ]);
    let session = Session::start(&args);
    let error = session.err("hover", json!({"file": "main.py", "line": 1, "column": 5}));
    assert_eq!(error, "[python] textDocument/hover timed out after 2 s");
}

#[test]
fn a_bad_config_file_is_a_clear_startup_error() {
    let dir = project(&[("bad.toml", "idle_timout = 3\n")]);
    let state = tempfile::tempdir().unwrap();
    let output = run_windlass(
        state.path(),
        &[
            "-r",
            dir.path().to_str().unwrap(),
            "--config",
            dir.path().join("bad.toml").to_str().unwrap(),
        ],
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bad.toml") && stderr.contains("idle_timout"),
        "{stderr}"
    );
    assert!(
        output.stdout.is_empty(),
        "nothing but MCP ever goes to stdout"
    );
}

#[test]
fn a_missing_root_is_one_line_on_stderr_even_with_backtraces_on() {
    let state = tempfile::tempdir().unwrap();
    let missing = state.path().join("no-such-project");
    let output = std::process::Command::new(windlass_binary())
        .args(["-r", missing.to_str().unwrap()])
        .env("XDG_STATE_HOME", state.path().join("state"))
        .env("XDG_CONFIG_HOME", state.path().join("config"))
        .env("WINDLASS_RUNTIME_DIR", state.path().join("run"))
        .env("RUST_BACKTRACE", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr,
        format!(
            "windlass: root {}: No such file or directory (os error 2)\n",
            missing.display()
        )
    );
    assert!(output.stdout.is_empty());
}
