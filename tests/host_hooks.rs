//! The hooks as the hosts beyond Claude Code and Gemini CLI run them,
//! each in the environment that host really gives: Codex's patches that
//! name several files, Copilot CLI running a Claude Code plugin's hooks,
//! an MCP server and hooks that see different variables finding one
//! daemon, and an MCP server started in its plugin's own directory.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;

/// The variables Codex 0.169 gives a stdio MCP server: these and no others.
fn codex_server_environment(world: &Daemon) -> Vec<String> {
    let path = std::env::var("PATH").unwrap();
    vec![
        "env".into(),
        "-i".into(),
        format!("HOME={}", world.home().display()),
        format!("PATH={path}"),
        "LANG=C.UTF-8".into(),
        "LOGNAME=agent".into(),
        "USER=agent".into(),
        "SHELL=/bin/bash".into(),
        "TERM=dumb".into(),
        "TMPDIR=/tmp".into(),
    ]
}

/// A session of `world`'s daemon started in `cwd` the way Codex starts a
/// plugin's MCP server, its language server mockls.
fn codex_session(world: &Daemon, cwd: &Path) -> Session {
    let through = codex_server_environment(world);
    let through: Vec<&str> = through.iter().map(String::as_str).collect();
    let client = Client {
        cwd: Some(cwd),
        through: &through,
        ..Client::default()
    };
    let session = world.session_as(&["--lsp".into(), mockls_lsp("python", "")], client);
    session.ok("status", json!({}));
    session
}

/// A hook run as Codex runs one: its whole environment, which has
/// variables the MCP server did not get (a runtime directory and, here,
/// a state directory of the user's own choosing).
fn codex_hook(world: &Daemon, args: &[&str], input: &Value) -> Output {
    let mut env = world.environment();
    env.push((
        "XDG_STATE_HOME".into(),
        world.dir.path().join("custom-state").display().to_string(),
    ));
    let output = hook_process(args, &input.to_string(), env);
    assert!(output.status.success(), "a hook always exits 0: {output:?}");
    output
}

/// Codex's hook input for `apply_patch` of `patch`, in `cwd`.
fn codex_patch(event: &str, cwd: &Path, patch: &str) -> Value {
    json!({
        "session_id": "019a-codex-session",
        "turn_id": "1",
        "cwd": cwd,
        "model": "gpt-5.5",
        "permission_mode": "workspace-write",
        "hook_event_name": event,
        "tool_name": "apply_patch",
        "tool_use_id": "call_1",
        "tool_input": {"command": patch},
        "transcript_path": null,
    })
}

#[test]
fn a_codex_patch_is_answered_for_every_file_it_wrote_from_the_one_daemon() {
    let world = Daemon::at_home();
    let dir = project(&[("main.py", "x = 1\n"), ("util.py", "y = 2\n")]);
    let root = dir.path().canonicalize().unwrap();
    let session = codex_session(&world, &root);
    let patch = "*** Begin Patch\n\
        *** Update File: main.py\n\
        @@\n\
        -x = 1\n\
        +x = ERROR\n\
        *** Add File: pkg/new.py\n\
        +z = ERROR\n\
        *** Delete File: util.py\n\
        *** End Patch\n";
    let before = codex_hook(
        &world,
        &["acquire", "--format", "codex", "--timeout", "0"],
        &codex_patch("PreToolUse", &root, patch),
    );
    assert_eq!(hook_answer(&before), None, "nobody else edits the files");
    std::fs::write(root.join("main.py"), "x = ERROR\n").unwrap();
    std::fs::create_dir_all(root.join("pkg")).unwrap();
    std::fs::write(root.join("pkg/new.py"), "z = ERROR\n").unwrap();
    std::fs::remove_file(root.join("util.py")).unwrap();
    let after = codex_hook(
        &world,
        &["release", "--format", "codex", "--grace", "0"],
        &codex_patch("PostToolUse", &root, patch),
    );
    let after = hook_answer(&after).expect("the patch's errors are told");
    assert_eq!(after["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    let told = after["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        told.contains("main.py after the edit: 1 error") && told.contains("new.py after the edit"),
        "every written file is answered: {told}"
    );
    assert!(
        !told.contains("util.py"),
        "a deleted file is let go: {told}"
    );
    drop(session);
}

#[test]
fn a_patch_takes_the_lease_on_every_file_and_other_hosts_wait_for_it() {
    let world = Daemon::at_home();
    let dir = project(&[("a.py", "a = 1\n"), ("b.py", "b = 2\n")]);
    let root = dir.path().canonicalize().unwrap();
    let patch = "*** Begin Patch\n*** Update File: a.py\n*** Update File: b.py\n*** End Patch\n";
    let acquire = |args: &[&str], input: Value| hook_answer(&world.hook(args, &input.to_string()));
    assert_eq!(
        acquire(
            &["acquire", "--format", "codex", "--timeout", "0"],
            codex_patch("PreToolUse", &root, patch),
        ),
        None
    );
    let claude_edit = |file: &str| {
        json!({
            "session_id": "claude-session",
            "cwd": root,
            "hook_event_name": "PreToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": root.join(file), "old_string": "b", "new_string": "c"},
        })
    };
    let refused = acquire(
        &["acquire", "--format", "claude", "--timeout", "0"],
        claude_edit("b.py"),
    )
    .expect("the second file of the patch is held too");
    let reason = refused["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("b.py is being edited by another agent (019a-codex-session in Codex)"),
        "{reason}"
    );
    world.hook(
        &["release", "--grace", "0"],
        &codex_patch("PostToolUse", &root, patch).to_string(),
    );
    assert_eq!(
        acquire(
            &["acquire", "--format", "claude", "--timeout", "0"],
            claude_edit("b.py"),
        ),
        None,
        "let go once the patch is done"
    );
}

#[test]
fn copilot_running_the_claude_plugin_hears_its_edits_errors_where_it_reads_them() {
    let world = Daemon::at_home();
    let dir = project(&[("main.py", "x = 1\n")]);
    let root = dir.path().canonicalize().unwrap();
    let session = world.session_as(
        &["--lsp".into(), mockls_lsp("python", "")],
        Client {
            cwd: Some(&root),
            env: &[("COPILOT_AGENT_SESSION_ID", "copilot-session-1")],
            ..Client::default()
        },
    );
    session.ok("status", json!({}));
    std::fs::write(root.join("main.py"), "x = ERROR\n").unwrap();
    // Copilot's Claude-format input: Claude's tool names, its own fields.
    let input = json!({
        "hook_event_name": "PostToolUse",
        "session_id": "copilot-session-1",
        "timestamp": "2026-11-26T07:12:35.789Z",
        "cwd": root,
        "tool_name": "Edit",
        "tool_input": {"path": root.join("main.py"), "old_str": "1", "new_str": "ERROR"},
        "tool_result": {"result_type": "success", "text_result_for_llm": "edited"},
    });
    let mut env = world.environment();
    env.push(("COPILOT_CLI".into(), "1".into()));
    let output = hook_process(&["release", "--format", "claude"], &input.to_string(), env);
    let told = hook_answer(&output).expect("the error is told");
    let context = told["additionalContext"].as_str().unwrap_or_default();
    assert!(
        context.contains("mockls: ERROR on line 1"),
        "Copilot reads the top-level field after a tool: {told}"
    );
    let listed = world_windlass(&world, &["list"]);
    assert!(listed.contains("copilot-session-1"), "{listed}");
}

#[test]
fn a_server_started_in_its_plugin_directory_serves_the_hosts_directory() {
    let world = Daemon::at_home();
    let dir = project(&[("main.py", "x = 1\n")]);
    let root = dir.path().canonicalize().unwrap();
    let plugin = project(&[
        (".codex-plugin/plugin.json", r#"{"name": "windlass"}"#),
        (".mcp.json", "{}"),
    ]);
    // The host works in the project and starts its plugin's MCP server in
    // the plugin's directory.
    let start_in_plugin = format!(
        "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:], cwd={:?}))",
        plugin.path().display().to_string()
    );
    let through = ["python3", "-c", &start_in_plugin];
    let session = world.session_as(
        &["--lsp".into(), mockls_lsp("python", "")],
        Client {
            cwd: Some(&root),
            through: &through,
            ..Client::default()
        },
    );
    let status = session.ok("status", json!({}));
    assert!(
        status.contains(&root.display().to_string()),
        "the project is the root: {status}"
    );
    let read = session.ok("read_file", json!({"file": "main.py"}));
    assert!(read.contains("x = 1"), "{read}");
}

/// `windlass ARGS` in `world`, its output as text.
fn world_windlass(world: &Daemon, args: &[&str]) -> String {
    let output = std::process::Command::new(windlass_binary())
        .args(args)
        .envs(world.environment())
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_hook_in_a_directory_outside_its_sessions_roots_brings_it_in() {
    let world = Daemon::at_home();
    let started_in = project(&[("other.py", "y = 1\n")]);
    let dir = project(&[("main.py", "x = 1\n")]);
    let root = dir.path().canonicalize().unwrap();
    let session = codex_session(&world, &started_in.path().canonicalize().unwrap());
    std::fs::write(root.join("main.py"), "x = ERROR\n").unwrap();
    let patch =
        "*** Begin Patch\n*** Update File: main.py\n@@\n-x = 1\n+x = ERROR\n*** End Patch\n";
    let told = hook_answer(&codex_hook(
        &world,
        &["release", "--format", "codex"],
        &codex_patch("PostToolUse", &root, patch),
    ))
    .expect("the file's error is told");
    let told = told["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(told.contains("mockls: ERROR on line 1"), "{told}");
    let status = session.ok("status", json!({}));
    assert!(
        status.contains(&root.display().to_string()),
        "the host's directory is a root: {status}"
    );
}
