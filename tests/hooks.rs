//! The hosts' hooks end to end: `release`, `acquire` and `sync-roots` run
//! as the hosts run them (a process per tool use, the host's JSON on
//! stdin) against live sessions of the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const HOST_SESSION: &str = "5f1c2a9e-host-session";

/// A standalone session for Claude Code session `host` on `dir`, its
/// server mockls (one error per line containing ERROR).
fn start(dir: &Path, host: &str) -> Session {
    let mut args = root_arg(dir);
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let session = Session::start_with_env(&args, &[("CLAUDE_CODE_SESSION_ID", host)]);
    // A host runs hooks for a session that has long been recorded.
    wait_until("the session is recorded", || {
        let listed = run_windlass(session.state.path(), &["list"]);
        String::from_utf8_lossy(&listed.stdout).contains(host)
    });
    session
}

/// Runs `windlass ARGS` as a host runs a hook, with the session's state.
fn hook(session: &Session, args: &[&str], stdin: &str) -> Output {
    hook_in(&session.state.path().join("state"), args, stdin)
}

fn hook_in(state: &Path, args: &[&str], stdin: &str) -> Output {
    let output = run_hook(state, args, stdin);
    assert!(output.status.success(), "a hook always exits 0: {output:?}");
    output
}

fn context(answer: &Value) -> &str {
    answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
}

/// Claude Code's PostToolUse input for an edit of `file`.
fn post_tool_use(host: &str, cwd: &Path, file: &Path) -> String {
    json!({
        "session_id": host,
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": file, "old_string": "a", "new_string": "b"},
        "tool_response": {"filePath": file, "success": true},
        "tool_use_id": "toolu_01",
        "duration_ms": 12,
        "a_field_from_a_later_version": {"ignored": true},
    })
    .to_string()
}

/// Claude Code's PreToolUse input for `tool` on `file`, by `agent` of
/// session `host`.
fn pre_tool_use(host: &str, agent: Option<&str>, tool: &str, file: &Path) -> String {
    let mut input = json!({
        "session_id": host,
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": file.parent().unwrap(),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {"file_path": file},
        "tool_use_id": "toolu_02",
    });
    if let Some(agent) = agent {
        input["agent_id"] = json!(agent);
        input["agent_type"] = json!("general-purpose");
    }
    input.to_string()
}

#[test]
fn release_tells_of_new_errors_then_of_their_fix_and_nothing_for_a_clean_file() {
    let dir = project(&[("main.py", "def greet():\n    pass\n")]);
    let session = start(dir.path(), HOST_SESSION);
    session.ok("diagnostics", json!({"file": "main.py"}));
    let file = dir.path().join("main.py");
    let release = |format: &str| {
        hook(
            &session,
            &["release", "--format", format],
            &post_tool_use(HOST_SESSION, dir.path(), &file),
        )
    };

    std::fs::write(&file, "def greet():\n    ERROR here\n").unwrap();
    let broken = hook_answer(&release("claude")).expect("the new error is told");
    assert_eq!(broken["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    let told = context(&broken);
    assert!(told.contains("1 error"), "{told}");
    assert!(told.contains("2:5 error"), "the error's line: {told}");
    assert!(told.contains("mockls: ERROR on line 2"), "{told}");

    std::fs::write(&file, "def greet():\n    pass\n").unwrap();
    let fixed = hook_answer(&release("claude")).expect("the fix is told");
    assert_eq!(
        context(&fixed),
        format!("fixed: no errors left in {}", file.display())
    );
    assert_eq!(hook_answer(&release("claude")), None, "clean stays quiet");

    // Gemini's AfterTool gets its own event name.
    std::fs::write(&file, "ERROR one\nERROR two\n").unwrap();
    let gemini = json!({
        "session_id": HOST_SESSION,
        "transcript_path": "/nonexistent/t.json",
        "cwd": dir.path(),
        "hook_event_name": "AfterTool",
        "timestamp": "2026-11-22T10:00:00Z",
        "tool_name": "write_file",
        "tool_input": {"file_path": file, "content": "ERROR one\nERROR two\n"},
        "tool_response": {"llmContent": "ok"},
    });
    let output = hook(
        &session,
        &["release", "--format", "gemini"],
        &gemini.to_string(),
    );
    let told = hook_answer(&output).unwrap();
    assert_eq!(told["hookSpecificOutput"]["hookEventName"], "AfterTool");
    assert!(context(&told).contains("2 errors"), "{told}");

    // A later edit is told what it changed, not everything again.
    std::fs::write(&file, "ERROR one\nERROR two\nERROR three\n").unwrap();
    let changed = hook_answer(&release("claude")).unwrap();
    let text = context(&changed);
    assert!(
        text.contains("1 new error; 3 errors in all, 2 of them reported before"),
        "{text}"
    );
    assert!(
        text.contains("3:1 error") && !text.contains("2:1 error"),
        "{text}"
    );
    assert_eq!(hook_answer(&release("claude")), None, "no change, no words");

    let runs = stdout_of_query(&session, "hook");
    assert_eq!(runs.len(), 6, "each run is recorded: {runs:?}");
    assert!(runs.iter().all(|run| run["ok"] == true), "{runs:?}");
}

/// Events of `kind` in the session's store.
fn stdout_of_query(session: &Session, kind: &str) -> Vec<Value> {
    let output = run_windlass(
        session.state.path(),
        &["query", "--kind", kind, "--format", "json"],
    );
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice::<Value>(&output.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_batch_gets_one_answer_for_every_file_it_edited() {
    let dir = project(&[
        ("a.py", "ERROR a\n"),
        ("b.py", "ERROR b\n"),
        ("c.py", "fine\n"),
    ]);
    let session = start(dir.path(), HOST_SESSION);
    let path = |name: &str| dir.path().join(name);
    let batch = json!({
        "session_id": HOST_SESSION,
        "cwd": dir.path(),
        "hook_event_name": "PostToolBatch",
        "tool_calls": [
            {"tool_name": "Edit", "tool_input": {"file_path": path("a.py")}, "tool_response": {}},
            {"tool_name": "Read", "tool_input": {"file_path": path("c.py")}, "tool_response": {}},
            {"tool_name": "Write", "tool_input": {"file_path": path("b.py")}, "tool_response": {}},
        ],
    });
    let output = hook(
        &session,
        &["release", "--format", "claude"],
        &batch.to_string(),
    );
    let told =
        hook_answer(&output).unwrap_or_else(|| panic!("{:?}", stdout_of_query(&session, "error")));
    assert_eq!(told["hookSpecificOutput"]["hookEventName"], "PostToolBatch");
    let text = context(&told);
    assert!(text.contains("a.py after the edit: 1 error"), "{text}");
    assert!(text.contains("b.py after the edit: 1 error"), "{text}");
    assert!(!text.contains("c.py"), "a read is not an edit: {text}");
}

#[test]
fn a_hook_without_a_session_with_garbage_or_with_a_dead_server_exits_0_silently() {
    let dir = project(&[("main.py", "ERROR\n")]);
    let state = tempfile::tempdir().unwrap();
    let file = dir.path().join("main.py");
    for stdin in [
        post_tool_use("nobody", dir.path(), &file),
        "{not json at all".to_owned(),
        String::new(),
        "[1, 2, 3]".to_owned(),
    ] {
        for args in [
            &["release", "--format", "claude"][..],
            &["acquire", "--format", "gemini", "--timeout", "0"],
            &["sync-roots"],
        ] {
            let output = hook_in(state.path(), args, &stdin);
            assert!(
                output.stdout.is_empty(),
                "{args:?} with {stdin:?}: {output:?}"
            );
        }
    }
    // A session whose process was killed is no session.
    let mut session = start(dir.path(), HOST_SESSION);
    session.ok("diagnostics", json!({"file": "main.py"}));
    Command::new("kill")
        .args(["-9", &session.pid().to_string()])
        .status()
        .unwrap();
    session.wait_exit();
    let output = hook(
        &session,
        &["release", "--format", "claude"],
        &post_tool_use(HOST_SESSION, dir.path(), &file),
    );
    assert!(output.stdout.is_empty(), "{output:?}");
    let errors = stdout_of_query(&session, "error");
    assert!(
        errors.iter().any(|error| error["detail"]["error"]
            == "no live windlass session for this host session or directory"),
        "what went wrong is recorded: {errors:?}"
    );
}

#[test]
fn four_agents_contending_for_one_file_take_it_one_at_a_time() {
    let dir = project(&[("shared.py", "x = 1\n")]);
    let session = start(dir.path(), HOST_SESSION);
    session.ok("status", json!({}));
    let file = dir.path().join("shared.py");
    let state = session.state.path().join("state");
    let acquire = |agent: &str, timeout: &str| {
        let state = state.clone();
        let input = pre_tool_use(HOST_SESSION, Some(agent), "Edit", &file);
        let timeout = timeout.to_owned();
        std::thread::spawn(move || {
            let output = hook_in(
                &state,
                &["acquire", "--format", "claude", "--timeout", &timeout],
                &input,
            );
            (hook_answer(&output), std::time::Instant::now())
        })
    };
    // When the release began: no waiting agent can be let in before.
    let release = |agent: &str| {
        let began = std::time::Instant::now();
        let input = json!({
            "session_id": HOST_SESSION,
            "agent_id": agent,
            "cwd": dir.path(),
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": file},
        });
        hook_in(&state, &["release", "--grace", "0"], &input.to_string());
        began
    };
    let (first, _) = acquire("agent-a", "0").join().unwrap();
    assert_eq!(first, None, "a free file is granted silently");
    let b = acquire("agent-b", "60");
    let c = acquire("agent-c", "60");
    let d = acquire("agent-d", "1");
    let (denied, _) = d.join().unwrap();
    let denied = denied.expect("the agent that waited too long is denied");
    let output = &denied["hookSpecificOutput"];
    assert_eq!(output["permissionDecision"], "deny");
    let reason = output["permissionDecisionReason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("{HOST_SESSION}:agent-a")),
        "{reason}"
    );
    assert!(reason.contains("since "), "{reason}");
    // B and C have waited at least as long as D; a's release lets one
    // in, whose release lets the other.
    let released_a = release("agent-a");
    let holder = wait_for_holder(&state, "agent-a");
    let other = if holder.ends_with("agent-b") {
        "agent-c"
    } else {
        "agent-b"
    };
    let released_second = release(holder.rsplit(':').next().unwrap());
    let (b_answer, b_at) = b.join().unwrap();
    let (c_answer, c_at) = c.join().unwrap();
    assert_eq!((b_answer, c_answer), (None, None), "both were granted");
    let (first_at, second_at) = match other {
        "agent-c" => (b_at, c_at),
        _ => (c_at, b_at),
    };
    assert!(
        first_at >= released_a,
        "none before the first holder let go"
    );
    assert!(second_at >= released_second, "one at a time");
    let denials = stdout_of_query(&session, "lock_denied");
    assert_eq!(denials.len(), 1, "{denials:?}");
    let acquired = stdout_of_query(&session, "lock_acquired");
    assert_eq!(acquired.len(), 3);
    let waited: Vec<&Value> = acquired
        .iter()
        .filter(|event| !event["detail"]["waited_on"].is_null())
        .collect();
    assert_eq!(waited.len(), 2, "B and C each waited: {acquired:?}");
}

/// Reads take nothing and never wait, even of a file being edited: they
/// are told who edits it. An editor whose edit never reached its
/// PostToolUse (the host rejected it) lets go once it moves on.
#[test]
fn reads_never_wait_and_an_editor_moving_on_lets_go() {
    let dir = project(&[
        (
            "shared.py",
            "x = 1
",
        ),
        (
            "other.py", "y = 2
",
        ),
    ]);
    let session = start(dir.path(), HOST_SESSION);
    session.ok("status", json!({}));
    let shared = dir.path().join("shared.py");
    let other = dir.path().join("other.py");
    let state = session.state.path().join("state");
    let run = |agent: &str, tool: &str, file: &Path| {
        hook_answer(&hook_in(
            &state,
            &["acquire", "--format", "claude", "--timeout", "0"],
            &pre_tool_use(HOST_SESSION, Some(agent), tool, file),
        ))
    };
    assert_eq!(run("reader-1", "Read", &shared), None, "nobody edits it");
    assert_eq!(
        run("reader-2", "Read", &shared),
        None,
        "two readers at once"
    );
    assert_eq!(run("editor", "Edit", &shared), None, "readers hold nothing");
    let readers: Vec<_> = ["reader-1", "reader-2"]
        .map(|reader| {
            let state = state.clone();
            let input = pre_tool_use(HOST_SESSION, Some(reader), "Read", &shared);
            std::thread::spawn(move || {
                hook_answer(&hook_in(&state, &["acquire", "--format", "claude"], &input))
            })
        })
        .into_iter()
        .collect();
    for reader in readers {
        let told = reader.join().unwrap().expect("told of the editor");
        let told = context(&told);
        assert!(
            told.contains(&format!(
                "being edited by another agent ({HOST_SESSION}:editor in Claude Code) for "
            )),
            "{told}"
        );
    }
    let refused = run("reader-1", "Edit", &shared).expect("one editor at a time");
    let reason = refused["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("is being edited by another agent"),
        "{reason}"
    );
    // The editor's edit was rejected by its host: no PostToolUse. It goes
    // on to another file, and its lease on the first is let go.
    wait_until("the editor moves on", || {
        run("editor", "Edit", &other);
        run("reader-1", "Edit", &shared).is_none()
    });
    let moved = stdout_of_query(&session, "lock_released");
    assert!(
        moved
            .iter()
            .any(|event| event["detail"]["moved_on_to"] == json!(other.display().to_string())),
        "{moved:?}"
    );
}

/// A host runs hooks from a session's first moments: the first prompt's
/// `sync-roots` comes before its transcript exists, and an edit's
/// `release` may come before the session's row would have reached the
/// store with the next batch of events. Neither may fail.
#[test]
fn hooks_in_a_sessions_first_moments_find_it_and_fail_for_nothing() {
    let dir = project(&[("main.py", "x = 1\n")]);
    let daemon = Daemon::new();
    let host = "first-moments-host";
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let session = daemon.session_as(
        &args,
        Client {
            env: &[("CLAUDE_CODE_SESSION_ID", host)],
            ..Client::default()
        },
    );
    let prompt = json!({
        "session_id": host,
        "cwd": dir.path(),
        "hook_event_name": "UserPromptSubmit",
        "transcript_path": dir.path().join("written-after-the-first-prompt.jsonl"),
        "prompt": "fix the bug",
    });
    let synced = daemon.hook(&["sync-roots", "--format", "claude"], &prompt.to_string());
    assert!(synced.stdout.is_empty(), "{synced:?}");
    let file = dir.path().join("main.py");
    std::fs::write(&file, "x = 1  # ERROR\n").unwrap();
    let released = daemon.hook(
        &["release", "--format", "claude"],
        &post_tool_use(host, dir.path(), &file),
    );
    let told = hook_answer(&released).expect("the new error is told");
    assert!(context(&told).contains("mockls: ERROR on line 1"), "{told}");
    let runs = Command::new(windlass_binary())
        .args(["query", "--kind", "hook", "--format", "json"])
        .envs(daemon.environment())
        .output()
        .unwrap();
    let runs: Vec<Value> = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs.iter().all(|run| run["ok"] == true), "{runs:?}");
    let status = Command::new(windlass_binary())
        .args(["status", host])
        .envs(daemon.environment())
        .output()
        .unwrap();
    let status = String::from_utf8(status.stdout).unwrap();
    assert!(
        status.contains("[python]"),
        "the host's id names the session: {status}"
    );
    drop(session);
}

/// Gemini CLI gives its extension's MCP server no session id; its hooks
/// carry one, and the session they find by directory takes it, so that
/// the host's id names the session as Claude Code's does.
#[test]
fn a_gemini_session_is_known_by_the_id_its_hooks_carry() {
    let dir = project(&[("main.py", "x = 1\n")]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let session = Session::start(&args);
    wait_until("the session is recorded", || {
        let listed = run_windlass(session.state.path(), &["list"]);
        String::from_utf8_lossy(&listed.stdout).contains(&dir.path().display().to_string())
    });
    let file = dir.path().join("main.py");
    let after_tool = json!({
        "session_id": "gemini-7d2e",
        "cwd": dir.path(),
        "hook_event_name": "AfterTool",
        "timestamp": "2026-11-23T10:00:00Z",
        "tool_name": "replace",
        "tool_input": {"file_path": file, "old_string": "1", "new_string": "2"},
    });
    hook(
        &session,
        &["release", "--format", "gemini"],
        &after_tool.to_string(),
    );
    let found = run_windlass(
        session.state.path(),
        &["query", "--session", "gemini-7d2e", "--kind", "hook"],
    );
    assert!(found.status.success(), "{found:?}");
    assert!(
        String::from_utf8_lossy(&found.stdout).contains("release"),
        "{found:?}"
    );
}

/// The owner holding `shared.py` once it is no longer `previous`.
fn wait_for_holder(state: &Path, previous: &str) -> String {
    let mut holder = String::new();
    wait_until("another agent takes the lease", || {
        let output = Command::new(windlass_binary())
            .args(["query", "--sql", "SELECT owner FROM file_locks"])
            .env("XDG_STATE_HOME", state)
            .output()
            .unwrap();
        holder = String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        !holder.is_empty() && !holder.ends_with(previous)
    });
    holder
}

#[test]
fn a_holder_whose_session_was_killed_holds_nothing() {
    let dir = project(&[("main.py", "x = 1\n")]);
    let holder = start(dir.path(), "holder-host");
    holder.ok("status", json!({}));
    let file = dir.path().join("main.py");
    let state = holder.state.path().join("state");
    let take = |host: &str| {
        hook_in(
            &state,
            &["acquire", "--format", "claude", "--timeout", "0"],
            &pre_tool_use(host, None, "Edit", &file),
        )
    };
    assert_eq!(hook_answer(&take("holder-host")), None);
    let refused = hook_answer(&take("other-host")).expect("held");
    assert_eq!(refused["hookSpecificOutput"]["permissionDecision"], "deny");
    Command::new("kill")
        .args(["-9", &holder.pid().to_string()])
        .status()
        .unwrap();
    wait_until("the holder's process is gone", || {
        hook_answer(&take("other-host")).is_none()
    });
}

#[test]
fn an_edit_of_a_file_changed_since_it_was_read_is_warned_of() {
    let dir = project(&[("main.py", "x = 1\n")]);
    let session = start(dir.path(), HOST_SESSION);
    session.ok("status", json!({}));
    let file = dir.path().join("main.py");
    let state = session.state.path().join("state");
    let run = |tool: &str| {
        hook_answer(&hook_in(
            &state,
            &["acquire", "--format", "claude", "--timeout", "0"],
            &pre_tool_use(HOST_SESSION, None, tool, &file),
        ))
    };
    assert_eq!(run("Read"), None);
    assert_eq!(run("Edit"), None, "unchanged since the read");
    let read_at = std::fs::metadata(&file).unwrap().modified().unwrap();
    wait_until("another tool's write changes the file's mtime", || {
        std::fs::write(&file, "x = 2\n").unwrap();
        std::fs::metadata(&file).unwrap().modified().unwrap() != read_at
    });
    let warned = run("Edit").expect("warned");
    assert!(context(&warned).contains("changed on disk"), "{warned}");
    assert!(
        warned["hookSpecificOutput"]
            .get("permissionDecision")
            .is_none()
    );
}

#[test]
fn directory_added_makes_the_directory_part_of_the_session() {
    let dir = project(&[("main.py", "x = 1\n")]);
    let extra = project(&[("lib.py", "def far_away_helper():\n    pass\n")]);
    let session = start(dir.path(), HOST_SESSION);
    let before = session.call("search", json!({"query": "far_away_helper"}));
    assert!(!before.text.contains("lib.py"), "{}", before.text);
    let input = json!({
        "session_id": HOST_SESSION,
        "cwd": dir.path(),
        "hook_event_name": "DirectoryAdded",
        "directory": extra.path(),
        "source": "slash_command",
    });
    let output = hook(
        &session,
        &["sync-roots", "--format", "claude"],
        &input.to_string(),
    );
    assert!(output.stdout.is_empty(), "{output:?}");
    let found = session.ok("search", json!({"query": "far_away_helper"}));
    assert!(found.contains("lib.py"), "{found}");
}

#[test]
fn a_transcript_is_read_on_from_where_the_last_run_stopped() {
    let dir = project(&[("main.py", "x = 1\n")]);
    let extra = project(&[("lib.py", "def transcript_helper():\n    pass\n")]);
    let session = start(dir.path(), HOST_SESSION);
    let transcripts = tempfile::tempdir().unwrap();
    let transcript = transcripts.path().join("t.jsonl");
    let entry = |text: String| {
        format!(
            "{}\n",
            json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}})
        )
    };
    std::fs::write(&transcript, entry("hello".into())).unwrap();
    let prompt = json!({
        "session_id": HOST_SESSION,
        "cwd": dir.path(),
        "hook_event_name": "UserPromptSubmit",
        "transcript_path": transcript,
        "prompt": "go on",
    })
    .to_string();
    hook(&session, &["sync-roots"], &prompt);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    file.write_all(
        entry(format!(
            "Added {} as a working directory.",
            extra.path().display()
        ))
        .as_bytes(),
    )
    .unwrap();
    hook(&session, &["sync-roots"], &prompt);
    let found = session.ok("search", json!({"query": "transcript_helper"}));
    assert!(found.contains("lib.py"), "{found}");
    file.write_all(
        entry(format!(
            "Removed directory {} from workspace",
            extra.path().display()
        ))
        .as_bytes(),
    )
    .unwrap();
    hook(&session, &["sync-roots"], &prompt);
    let gone = session.call("search", json!({"query": "transcript_helper"}));
    assert!(!gone.text.contains("lib.py"), "{}", gone.text);
}

#[test]
fn pyright_type_errors_reach_the_agent_through_the_daemon_and_so_does_their_fix() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let dir = project(&[
        (
            "shapes.py",
            "class Shape:\n    def area(self) -> float:\n        return 1.0\n",
        ),
        (
            "main.py",
            "from shapes import Shape\n\ntotal: float = Shape().area()\n",
        ),
    ]);
    let daemon = Daemon::new();
    let host = "pyright-host-session";
    let session = daemon.session_as(
        &root_arg(dir.path()),
        Client {
            env: &[("CLAUDE_CODE_SESSION_ID", host)],
            ..Client::default()
        },
    );
    let clean = session.ok("diagnostics", json!({"file": "main.py"}));
    assert!(clean.contains("no problems"), "{clean}");
    let file = dir.path().join("main.py");
    let release = || {
        hook_answer(&daemon.hook(
            &["release", "--format", "claude"],
            &post_tool_use(host, dir.path(), &file),
        ))
    };
    std::fs::write(
        &file,
        "from shapes import Shape\n\ntotal: float = Shape().perimeter()\n",
    )
    .unwrap();
    let told = release().expect("the type error is told");
    let text = context(&told);
    assert!(text.contains("3:"), "the error's line: {text}");
    assert!(text.contains("error"), "{text}");
    assert!(text.contains("perimeter"), "{text}");
    std::fs::write(
        &file,
        "from shapes import Shape\n\ntotal: float = Shape().area()\n",
    )
    .unwrap();
    let fixed = release().expect("the fix is told");
    assert_eq!(
        context(&fixed),
        format!("fixed: no errors left in {}", file.display())
    );
}

/// A rename in `edited` that breaks `importer` (never opened), written
/// between the hooks as a host writes it: the importer's new error is
/// told with the edit, its fix with the edit that renames back, and a
/// body changed without changing what it gives is told nothing.
fn an_edit_breaks_and_fixes_a_closed_importer(
    files: &[(&str, &str)],
    edited: &str,
    importer: &str,
    rename: (&str, &str),
    body: (&str, &str),
) {
    let dir = project(files);
    let daemon = Daemon::new();
    let host = "effect-host-session";
    let session = daemon.session_as(
        &root_arg(dir.path()),
        Client {
            env: &[("CLAUDE_CODE_SESSION_ID", host)],
            ..Client::default()
        },
    );
    let clean = session.ok("diagnostics", json!({"file": edited}));
    assert!(clean.contains("no problems"), "{clean}");
    let file = dir.path().join(edited);
    let edit = |from: &str, to: &str| {
        let before = daemon.hook(
            &["acquire", "--format", "claude"],
            &pre_tool_use(host, None, "Edit", &file),
        );
        assert_eq!(hook_answer(&before), None, "nothing to say before");
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, text.replace(from, to)).unwrap();
        let input = json!({
            "session_id": host,
            "cwd": dir.path(),
            "hook_event_name": "PostToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": file, "old_string": from, "new_string": to},
        });
        hook_answer(&daemon.hook(&["release", "--format", "claude"], &input.to_string()))
    };
    let logs = || walk_files(daemon.dir.path(), ".log");

    let told = edit(rename.0, rename.1)
        .unwrap_or_else(|| panic!("the broken importer is not told; logs: {}", logs()));
    let text = context(&told);
    let importer = dir.path().join(importer).display().to_string();
    assert!(
        text.contains(&format!(
            "{importer} (not edited) after the edit of {}: 1 new error",
            file.display()
        )),
        "{text}"
    );
    let old_name = rename.0.split_whitespace().last().unwrap();
    assert!(text.contains(old_name), "the error names it: {text}");
    assert!(!text.contains("notes."), "{text}");

    let fixed =
        edit(rename.1, rename.0).unwrap_or_else(|| panic!("the fix is not told; logs: {}", logs()));
    assert_eq!(
        context(&fixed),
        format!(
            "fixed: no errors left in {importer} (not edited) after the edit of {}",
            file.display()
        )
    );
    assert_eq!(edit(body.0, body.1), None);
}

#[test]
fn pyright_an_edit_that_breaks_a_closed_importer_is_told_with_the_edit_and_so_is_its_fix() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    an_edit_breaks_and_fixes_a_closed_importer(
        &[
            (
                "shapes.py",
                "class Shape:\n    def area(self) -> float:\n        return 1.0\n",
            ),
            (
                "main.py",
                "from shapes import Shape\n\ntotal: float = Shape().area()\n",
            ),
            ("notes.py", "# nothing here uses shapes\nx = 1\n"),
        ],
        "shapes.py",
        "main.py",
        ("def area", "def surface"),
        ("return 1.0", "return 2.0"),
    );
}

#[test]
fn typescript_an_edit_that_breaks_a_closed_importer_is_told_with_the_edit_and_so_is_its_fix() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    an_edit_breaks_and_fixes_a_closed_importer(
        &[
            (
                "tsconfig.json",
                r#"{"compilerOptions": {"strict": true, "noEmit": true}}"#,
            ),
            (
                "shapes.ts",
                "export function area(side: number): number {\n  return side * side;\n}\n",
            ),
            (
                "main.ts",
                "import { area } from \"./shapes\";\n\nexport const total: number = area(2);\n",
            ),
            (
                "notes.ts",
                "// nothing here uses shapes\nexport const x = 1;\n",
            ),
        ],
        "shapes.ts",
        "main.ts",
        ("function area", "function surface"),
        ("side * side", "side * side + 0"),
    );
}

/// Every file under `dir` whose name ends with `ending`, each with its text.
fn walk_files(dir: &Path, ending: &str) -> String {
    let mut shown = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(ending) {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                shown.push_str(&format!("\n== {}\n{text}", path.display()));
            }
        }
    }
    shown
}

#[test]
fn a_hook_whose_daemon_was_killed_exits_0_silently() {
    let dir = project(&[("main.py", "ERROR\n")]);
    let daemon = Daemon::new();
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let mut session = daemon.session_as(
        &args,
        Client {
            env: &[("CLAUDE_CODE_SESSION_ID", HOST_SESSION)],
            ..Client::default()
        },
    );
    let status = session.ok("status", json!({}));
    // The bridge first, or it would start a new daemon and attach again.
    Command::new("kill")
        .args(["-9", &session.pid().to_string()])
        .status()
        .unwrap();
    session.wait_exit();
    let daemon_pid = status
        .split("daemon pid ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no daemon pid in {status}"))
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .to_owned();
    Command::new("kill")
        .args(["-9", &daemon_pid])
        .status()
        .unwrap();
    let file = dir.path().join("main.py");
    let state = daemon.dir.path().join("state");
    wait_until("the daemon is gone", || {
        !Path::new(&format!("/proc/{daemon_pid}")).exists()
    });
    let output = hook_in(
        &state,
        &["release", "--format", "claude"],
        &post_tool_use(HOST_SESSION, dir.path(), &file),
    );
    assert!(output.stdout.is_empty(), "{output:?}");
}

#[test]
fn a_bridge_killed_mid_call_frees_its_sessions_leases_and_its_share_of_the_servers() {
    let dir = project(&[("main.py", "x = 1\n")]);
    let daemon = Daemon::new();
    let mut args = root_arg(dir.path());
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", "--hang-on textDocument/hover"),
    ]);
    let mut holder = daemon.session_as(
        &args,
        Client {
            env: &[("CLAUDE_CODE_SESSION_ID", "bridge-host")],
            ..Client::default()
        },
    );
    holder.ok("status", json!({}));
    let state = daemon.dir.path().join("state");
    let file = dir.path().join("main.py");
    let take = |host: &str| {
        hook_answer(&hook_in(
            &state,
            &["acquire", "--format", "claude", "--timeout", "0"],
            &pre_tool_use(host, None, "Edit", &file),
        ))
    };
    wait_until("the holder's session is recorded", || {
        let listed = run_windlass(daemon.dir.path(), &["list"]);
        String::from_utf8_lossy(&listed.stdout).contains("bridge-host")
    });
    assert_eq!(take("bridge-host"), None);
    assert!(take("other-host").is_some(), "held while the bridge lives");
    // Another agent's session shares the server.
    let other = daemon.session(&args);
    let shared = || {
        other
            .ok("status", json!({}))
            .contains(" shared by 2 sessions")
    };
    wait_until("the server is shared by both sessions", shared);
    // Killed in the middle of a call that will never be answered.
    let _hanging = holder.call_async("hover", json!({"file": "main.py", "line": 1, "column": 1}));
    Command::new("kill")
        .args(["-9", &holder.pid().to_string()])
        .status()
        .unwrap();
    holder.wait_exit();
    wait_until("the daemon ends the session and the lease is free", || {
        take("other-host").is_none()
    });
    wait_until("the killed session's share of the server is let go", || {
        !shared()
    });
    assert!(other.ok("status", json!({})).contains("[python]"));
}

#[test]
fn monitor_shows_the_leases_hooks_take_and_let_go() {
    let dir = project(&[("main.py", "x = 1\n")]);
    let session = start(dir.path(), HOST_SESSION);
    let listed = run_windlass(session.state.path(), &["list"]);
    let listed = String::from_utf8(listed.stdout).unwrap();
    let id = listed.split_whitespace().next().unwrap().to_owned();
    let state = session.state.path().join("state");
    let mut monitor = Command::new(windlass_binary())
        .args(["monitor", &id, "--json"])
        .env("XDG_STATE_HOME", &state)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let received = lines_of(monitor.stdout.take().unwrap());
    let file = dir.path().join("main.py");
    let mut kinds = Vec::new();
    // The monitor shows what is written after it starts: leases are
    // taken and let go until it has shown both.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !(kinds.contains(&"lock_acquired".to_owned())
        && kinds.contains(&"lock_released".to_owned()))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "monitor showed only {kinds:?}"
        );
        hook_in(
            &state,
            &["acquire", "--format", "claude", "--timeout", "0"],
            &pre_tool_use(HOST_SESSION, None, "Edit", &file),
        );
        hook_in(
            &state,
            &["release", "--grace", "0"],
            &post_tool_use(HOST_SESSION, dir.path(), &file),
        );
        while let Ok(line) = received.recv_timeout(std::time::Duration::from_millis(700)) {
            let event: Value = serde_json::from_str(&line).unwrap();
            // Its own events, and its server's (which name no session).
            let its_server = event["session"].is_null() && event["server"] == "python";
            assert!(event["session"] == id.as_str() || its_server, "{event}");
            kinds.push(event["kind"].as_str().unwrap().to_owned());
        }
    }
    let _ = monitor.kill();
    let _ = monitor.wait();
}
