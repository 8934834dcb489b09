//! The event store, end to end: sessions of the real `windlass` binary
//! record their tool calls, and `list` and `query` read them back.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

const GREET: &str = "def greet():\n    pass\n\ngreet()\n";

fn start(dir: &Path) -> Session {
    let mut args = root_arg(dir);
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    Session::start(&args)
}

/// Runs `windlass ARGS` against the session's state directory.
fn windlass(session: &Session, args: &[&str]) -> std::process::Output {
    Command::new(windlass_binary())
        .args(args)
        .env("XDG_STATE_HOME", session.state.path().join("state"))
        .env_remove("WINDLASS_STATE_DIR")
        .output()
        .unwrap()
}

fn stdout_of(session: &Session, args: &[&str]) -> String {
    let output = windlass(session, args);
    assert!(output.status.success(), "windlass {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// A hover on `greet`, the call these tests record.
fn hover_greet(session: &Session) -> String {
    session.ok(
        "hover",
        json!({"file": "main.py", "line": 1, "symbol": "greet"}),
    )
}

/// The id `list` shows for the only session recorded.
fn only_session_id(session: &Session) -> String {
    let mut listed = String::new();
    wait_until("the session is recorded", || {
        listed = stdout_of(session, &["list"]);
        listed.contains("alive")
    });
    listed.split_whitespace().next().unwrap().to_owned()
}

fn tool_calls(session: &Session, id: &str) -> Vec<Value> {
    let json = stdout_of(
        session,
        &[
            "query",
            "--session",
            &id[..4],
            "--kind",
            "tool_call",
            "--format",
            "json",
        ],
    );
    serde_json::from_str::<Value>(&json)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_sessions_tool_calls_are_recorded_and_queried_back() {
    let dir = project(&[("main.py", GREET)]);
    let session = start(dir.path());
    let hover = session.ok(
        "hover",
        json!({"file": "main.py", "line": 1, "symbol": "greet"}),
    );
    let outline = session.ok("document_symbols", json!({"file": "main.py"}));
    let refused = session.err(
        "hover",
        json!({"file": "/etc/passwd", "line": 1, "column": 1}),
    );
    let id = only_session_id(&session);
    assert_eq!(id.len(), 8, "{id}");

    let mut calls = Vec::new();
    wait_until("the three calls are recorded", || {
        calls = tool_calls(&session, &id);
        calls.len() == 3
    });
    let expected = [
        ("hover", &hover, true),
        ("document_symbols", &outline, true),
        ("hover", &refused, false),
    ];
    for (call, (tool, text, ok)) in calls.iter().zip(expected) {
        assert_eq!(call["session"], id.as_str());
        assert_eq!(call["tool"], tool, "{call}");
        assert_eq!(call["ok"], ok, "{call}");
        assert_eq!(call["bytes"], text.len(), "{call}");
        assert!(call["duration_us"].as_i64().unwrap() > 0, "{call}");
    }
    assert_eq!(calls[0]["detail"]["symbol"], "greet");
    assert_eq!(calls[2]["detail"]["file"], "/etc/passwd");
    assert_eq!(
        calls[2]["error"],
        refused.as_str(),
        "what the client was told"
    );
    assert!(calls[0].get("error").is_none(), "{}", calls[0]);

    let table = stdout_of(
        &session,
        &["query", "--session", &id, "--search", "document_symbols"],
    );
    assert_eq!(table.lines().count(), 1, "{table}");
    assert!(table.contains("tool_call  document_symbols"), "{table}");

    let failed = stdout_of(
        &session,
        &["query", "--session", &id, "--search", "outside"],
    );
    assert!(
        failed.contains(&format!("failed: {}", refused.trim())),
        "a failure is found by and shows its reason: {failed}"
    );
}

#[test]
fn sql_is_read_only() {
    let dir = project(&[("main.py", GREET)]);
    let session = start(dir.path());
    only_session_id(&session);
    let insert = windlass(
        &session,
        &[
            "query",
            "--sql",
            "INSERT INTO events (at, kind, detail) VALUES (0, 'forged', 'null')",
        ],
    );
    assert!(!insert.status.success());
    let error = String::from_utf8_lossy(&insert.stderr);
    assert!(error.contains("readonly"), "{error}");
    let count = stdout_of(
        &session,
        &[
            "query",
            "--sql",
            "SELECT count(*) AS forged FROM events WHERE kind = 'forged'",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        serde_json::from_str::<Value>(&count).unwrap(),
        json!([{"forged": 0}])
    );
}

/// The text search's filters made in a session that ends before their
/// next save are written as the process stops: the next one starts from
/// them.
#[test]
fn the_filters_of_a_session_that_ends_at_once_are_kept() {
    let dir = project(&[("main.py", GREET)]);
    // A file written a moment ago is read again at every search, and has
    // no filter.
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(dir.path().join("main.py"))
        .and_then(|file| file.set_modified(hour_ago))
        .unwrap();
    let mut session = start(dir.path());
    session.ok("search", json!({"query": "greet"}));
    session.close_stdin();
    session.wait_exit();
    let kept = session.state.path().join("state/windlass/sketches.db");
    let files: i64 = rusqlite::Connection::open(&kept)
        .unwrap()
        .query_row("SELECT count(*) FROM sketches", [], |row| row.get(0))
        .unwrap();
    assert_eq!(files, 1, "{}", kept.display());
}

#[test]
fn a_session_that_ends_or_is_killed_is_listed_dead() {
    let dir = project(&[("main.py", GREET)]);
    let mut ended = start(dir.path());
    let id = only_session_id(&ended);
    ended.close_stdin();
    ended.wait_exit();
    let listed = stdout_of(&ended, &["list"]);
    assert!(listed.starts_with(&format!("{id}  dead")), "{listed}");

    let killed = start(dir.path());
    let id = only_session_id(&killed);
    killed.ok(
        "hover",
        json!({"file": "main.py", "line": 1, "symbol": "greet"}),
    );
    wait_until("the call is recorded", || {
        tool_calls(&killed, &id).len() == 1
    });
    // The kill lands in the middle of a burst of calls, some recorded,
    // some in a batch not yet written, some not answered at all.
    let burst: Vec<_> = (0..200)
        .map(|_| {
            killed.call_async(
                "hover",
                json!({"file": "main.py", "line": 1, "symbol": "greet"}),
            )
        })
        .collect();
    // Killed once the burst is being answered, so its first calls are in
    // the Recorder and later ones are not.
    wait(&burst[0]);
    Command::new("kill")
        .args(["-9", &killed.pid().to_string()])
        .status()
        .unwrap();
    drop(burst);
    wait_until("the session is listed dead", || {
        stdout_of(&killed, &["list"]).starts_with(&format!("{id}  dead"))
    });
    let integrity = stdout_of(&killed, &["query", "--sql", "PRAGMA integrity_check"]);
    assert_eq!(integrity, "integrity_check\nok\n");
    let recorded = tool_calls(&killed, &id);
    assert!(
        !recorded.is_empty() && recorded.len() <= 201,
        "what was written before the kill is kept: {}",
        recorded.len()
    );
    assert!(recorded.iter().all(|call| call["tool"] == "hover"));
}

#[test]
fn a_standalone_session_answers_status_and_monitor_on_its_own_socket() {
    let dir = project(&[("main.py", GREET)]);
    let mut session = start(dir.path());
    let id = only_session_id(&session);
    let mut status = String::new();
    wait_until("status shows the session's server", || {
        status = stdout_of(&session, &["status", &id[..5]]);
        status.contains("mockls") && status.contains("ready")
    });
    assert!(
        status.contains(&dir.path().display().to_string()),
        "{status}"
    );

    let mut monitor = Command::new(windlass_binary())
        .args(["monitor", &id, "--json", "--kind", "tool_call"])
        .env("XDG_STATE_HOME", session.state.path().join("state"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let received = lines_of(monitor.stdout.take().unwrap());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let event: Value = loop {
        session.ok(
            "hover",
            json!({"file": "main.py", "line": 1, "symbol": "greet"}),
        );
        if let Ok(line) = received.recv_timeout(std::time::Duration::from_millis(200)) {
            break serde_json::from_str(&line).unwrap();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "monitor never subscribed"
        );
    };
    assert_eq!(event["session"], id.as_str(), "{event}");
    assert_eq!(event["tool"], "hover");

    // The socket neither attaches sessions nor stops its process.
    let socket: String = stdout_of(
        &session,
        &[
            "query",
            "--sql",
            &format!("SELECT socket FROM sessions WHERE id = '{id}'"),
        ],
    )
    .lines()
    .nth(1)
    .unwrap()
    .to_owned();
    let refusal = ask_socket(Path::new(&socket), r#"{"protocol": 1, "stop": null}"#);
    assert!(refusal.contains("standalone session's socket"), "{refusal}");
    assert!(session.alive());

    session.close_stdin();
    session.wait_exit();
    let _ = monitor.wait();
    assert!(
        !Path::new(&socket).exists(),
        "the socket goes with its session"
    );
    let gone = windlass(&session, &["status", &id]);
    assert!(!gone.status.success());
}

/// One request line to a control socket, and its answer.
fn ask_socket(socket: &Path, request: &str) -> String {
    use std::io::{BufRead, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(socket).unwrap();
    writeln!(stream, "{request}").unwrap();
    let mut answer = String::new();
    std::io::BufReader::new(stream)
        .read_line(&mut answer)
        .unwrap();
    answer
}

#[test]
fn a_store_that_cannot_be_opened_is_reported_the_session_serves_on_and_records_once_it_can() {
    let dir = project(&[("main.py", GREET)]);
    let state = tempfile::tempdir().unwrap();
    // A directory where the database file should be.
    let blocker = state.path().join("state/windlass/windlass.db");
    std::fs::create_dir_all(&blocker).unwrap();
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let session = Session::start_with_state(state, &args);
    let hover = || hover_greet(&session);
    assert!(hover().contains("greet"));
    let status = session.wait_for_status(|status| status.contains("not recorded so far"));
    assert!(status.contains("cannot be opened"), "{status}");
    // The way cleared, the writer opens the store on its next try.
    std::fs::remove_dir(&blocker).unwrap();
    let mut lost = Vec::new();
    wait_until("calls are recorded again", || {
        hover();
        let errors = windlass(&session, &["query", "--kind", "error", "--format", "json"]);
        lost = serde_json::from_slice::<Value>(&errors.stdout)
            .ok()
            .and_then(|errors| errors.as_array().cloned())
            .unwrap_or_default();
        !lost.is_empty()
    });
    let said = lost[0]["detail"]["error"].as_str().unwrap().to_owned();
    assert!(
        said.contains("events were not recorded while the store failed"),
        "{said}"
    );
    assert!(!tool_calls(&session, &only_session_id(&session)).is_empty());
    let status = session.ok("status", json!({}));
    assert!(!status.contains("not recorded"), "{status}");
}

#[test]
fn a_damaged_store_is_set_aside_and_a_new_one_records_from_the_start() {
    let dir = project(&[("main.py", GREET)]);
    let state = tempfile::tempdir().unwrap();
    let database = state.path().join("state/windlass/windlass.db");
    std::fs::create_dir_all(database.parent().unwrap()).unwrap();
    let garbage = "this is not a database\n".repeat(400);
    std::fs::write(&database, &garbage).unwrap();
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let session = Session::start_with_state(state, &args);
    let hover = session.ok(
        "hover",
        json!({"file": "main.py", "line": 1, "symbol": "greet"}),
    );
    assert!(hover.contains("greet"), "{hover}");
    let mut said = String::new();
    wait_until("the new store says where the old one went", || {
        let errors = windlass(&session, &["query", "--kind", "error", "--format", "json"]);
        said = serde_json::from_slice::<Value>(&errors.stdout)
            .ok()
            .and_then(|errors| errors[0]["detail"]["error"].as_str().map(str::to_owned))
            .unwrap_or_default();
        !said.is_empty()
    });
    assert!(said.contains("could not be read"), "{said}");
    let aside = std::fs::read_dir(database.parent().unwrap())
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.to_string_lossy().contains("windlass.db.damaged-"))
        .expect("the damaged store is kept");
    assert!(said.contains(&aside.display().to_string()), "{said}");
    assert_eq!(std::fs::read_to_string(&aside).unwrap(), garbage);
    wait_until("the hover is recorded in the new store", || {
        !tool_calls(&session, &only_session_id(&session)).is_empty()
    });
    let status = session.ok("status", json!({}));
    assert!(!status.contains("not recorded"), "{status}");
}

/// Runs windlass with the file-size signal ignored, so that a file-size
/// limit makes its writes fail as on a full disk instead of killing it.
const IGNORING_XFSZ: &[&str] = &["sh", "-c", "trap '' XFSZ; exec \"$@\"", "sh"];

#[test]
fn a_full_disk_is_reported_the_session_serves_on_and_records_once_there_is_room() {
    let dir = project(&[("main.py", GREET)]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let client = Client {
        through: IGNORING_XFSZ,
        ..Client::default()
    };
    let session = Session::start_as(&args, &client);
    let hover = || hover_greet(&session);
    hover();
    let id = only_session_id(&session);
    wait_until("the first call is recorded", || {
        tool_calls(&session, &id).len() == 1
    });
    let limit = |size: &str| {
        let pid = session.pid().to_string();
        let fsize = format!("--fsize={size}:");
        Command::new("prlimit")
            .args(["--pid", &pid, &fsize])
            .status()
            .unwrap()
            .success()
    };
    // No file of the serving process may grow past the store's size now.
    let database = session.state.path().join("state/windlass/windlass.db");
    let size = std::fs::metadata(&database).unwrap().len();
    assert!(limit(&size.to_string()));
    let mut status = String::new();
    wait_until("status says the store fails", || {
        assert!(hover().contains("greet"), "served while the store fails");
        status = session.ok("status", json!({}));
        status.contains("not recorded so far")
    });
    assert!(
        status.contains("database or disk is full") || status.contains("disk I/O error"),
        "{status}"
    );
    assert!(limit("unlimited"));
    wait_until("calls are recorded again, counting the lost ones", || {
        hover();
        let errors = windlass(&session, &["query", "--kind", "error", "--format", "json"]);
        String::from_utf8_lossy(&errors.stdout)
            .contains("events were not recorded while the store failed")
    });
    let status = session.ok("status", json!({}));
    assert!(!status.contains("not recorded"), "{status}");
}

#[test]
fn a_read_only_state_directory_is_survived_and_recorded_in_once_writable() {
    let Some(through) = read_only_directory("XDG_STATE_HOME") else {
        return;
    };
    let through: Vec<&str> = through.iter().map(String::as_str).collect();
    let dir = project(&[("main.py", GREET)]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let client = Client {
        through: &through,
        ..Client::default()
    };
    // Neither its log file nor its store can be written: it serves.
    let session = Session::start_as(&args, &client);
    let hover = || hover_greet(&session);
    assert!(hover().contains("greet"));
    let status = session.wait_for_status(|status| status.contains("not recorded so far"));
    assert!(status.contains("cannot be opened"), "{status}");
    let state = session.state.path().join("state");
    let remounted = Command::new("nsenter")
        .args(["--target", &session.pid().to_string(), "--mount"])
        .args(["mount", "-o", "remount,rw,bind"])
        .arg(&state)
        .arg(&state)
        .status()
        .unwrap();
    assert!(remounted.success());
    // Idle meanwhile: the writer tries again on its own.
    let id = only_session_id(&session);
    wait_until("calls are recorded once the directory is writable", || {
        hover();
        !tool_calls(&session, &id).is_empty()
    });
    let status = session.ok("status", json!({}));
    assert!(!status.contains("not recorded"), "{status}");
}

/// A store past `store_limit` forgets its oldest events when a process
/// next records, and records on: here a limit of one byte, so that every
/// event written before it is forgotten whatever the store's size.
#[test]
fn a_store_past_its_limit_forgets_its_oldest_events_and_records_on() {
    let dir = project(&[("main.py", GREET)]);
    let mut first = start(dir.path());
    for _ in 0..20 {
        hover_greet(&first);
    }
    let first_id = only_session_id(&first);
    wait_until("the first session's calls are recorded", || {
        tool_calls(&first, &first_id).len() == 20
    });
    let state = std::mem::replace(&mut first.state, tempfile::tempdir().unwrap());
    drop(first);

    let config = state.path().join("config/windlass");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "store_limit = \"1B\"\n").unwrap();
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let second = Session::start_with_state(state, &args);
    wait_until("the first session's calls are forgotten", || {
        tool_calls(&second, &first_id).is_empty()
    });
    hover_greet(&second);
    let listed = stdout_of(&second, &["list"]);
    assert!(listed.contains(&first_id[..4]), "sessions stay: {listed}");
    let second_id = listed
        .lines()
        .find(|line| line.contains("alive"))
        .and_then(|line| line.split_whitespace().next())
        .unwrap()
        .to_owned();
    wait_until("the second session's call is recorded", || {
        tool_calls(&second, &second_id).len() == 1
    });
}

#[test]
fn gc_dead_forgets_only_dead_sessions() {
    let dir = project(&[("main.py", GREET)]);
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().to_str().unwrap();
    let env = [("WINDLASS_STATE_DIR", state_dir)];
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let run = |args: &[&str]| {
        let output = Command::new(windlass_binary())
            .args(args)
            .env("WINDLASS_STATE_DIR", state_dir)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    let mut ended = Session::start_with_env(&args, &env);
    ended.ok(
        "hover",
        json!({"file": "main.py", "line": 1, "symbol": "greet"}),
    );
    let alive = Session::start_with_env(&args, &env);
    alive.ok(
        "hover",
        json!({"file": "main.py", "line": 1, "symbol": "greet"}),
    );
    wait_until("both sessions and their calls are recorded", || {
        run(&["query", "--kind", "tool_call"]).lines().count() == 2
    });
    ended.close_stdin();
    ended.wait_exit();
    let listed = run(&["list"]);
    let ids: Vec<&str> = listed
        .lines()
        .filter(|line| !line.starts_with(' '))
        .map(|line| line.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{listed}");
    let (alive_id, dead_id) = (ids[0], ids[1]);
    assert!(listed.contains(&format!("{dead_id}  dead")), "{listed}");

    let logs = state.path().join("logs");
    let ended_log = logs.join(format!("windlass-{}.log", ended.pid()));
    let alive_log = logs.join(format!("windlass-{}.log", alive.pid()));
    assert!(ended_log.exists() && alive_log.exists());
    assert_eq!(
        run(&["gc", "--dead"]),
        "forgot 1 sessions, 3 events, 1 language servers and 1 log files of ended processes\n"
    );
    let servers = run(&["query", "--sql", "SELECT serving_pid FROM language_servers"]);
    assert_eq!(servers, format!("serving_pid\n{}\n", alive.pid()));
    assert!(!ended_log.exists() && alive_log.exists());
    let listed = run(&["list"]);
    assert!(
        listed.starts_with(&format!("{alive_id}  alive")),
        "{listed}"
    );
    assert!(!listed.contains(dead_id), "{listed}");
    let left = run(&["query", "--kind", "tool_call", "--format", "json"]);
    let left: Value = serde_json::from_str(&left).unwrap();
    assert_eq!(left.as_array().unwrap().len(), 1);
    assert_eq!(left[0]["session"], alive_id);
    drop(alive);
}

fn events_of_kind(session: &Session, kind: &str) -> Vec<Value> {
    let json = stdout_of(session, &["query", "--kind", kind, "--format", "json"]);
    serde_json::from_str::<Value>(&json)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_servers_life_and_its_diagnostics_are_recorded() {
    let dir = project(&[("main.py", "ERROR here\n")]);
    let mut args = root_arg(dir.path());
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", "--crash-on textDocument/hover"),
    ]);
    let mut session = Session::start(&args);
    let diagnostics = session.ok("diagnostics", json!({"file": "main.py"}));
    assert!(diagnostics.contains("1 error"), "{diagnostics}");
    session.err("hover", json!({"file": "main.py", "line": 1, "column": 1}));
    wait_until("the restart is recorded", || {
        !events_of_kind(&session, "restart").is_empty()
    });
    let restart = &events_of_kind(&session, "restart")[0];
    assert_eq!(restart["server"], "python");
    assert_eq!(restart["detail"]["crashes"], 1);
    wait_until("the restarted server is ready", || {
        events_of_kind(&session, "server_state")
            .iter()
            .filter(|event| event["detail"]["state"] == "ready")
            .count()
            == 2
    });
    let states: Vec<String> = events_of_kind(&session, "server_state")
        .iter()
        .map(|event| event["detail"]["state"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(states, ["starting", "ready", "exited", "starting", "ready"]);
    let published = events_of_kind(&session, "diagnostics");
    assert!(
        published.iter().any(|event| event["detail"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("main.py")
            && event["detail"]["count"] == 1),
        "{published:?}"
    );
    // The server's row: one instance, restarted once, a new process.
    let servers = stdout_of(
        &session,
        &[
            "query",
            "--sql",
            "SELECT name, state, restarts, pid IS NOT NULL, command LIKE '%mockls%', ended IS NULL FROM language_servers",
            "--format",
            "json",
        ],
    );
    let servers: Value = serde_json::from_str(&servers).unwrap();
    assert_eq!(servers.as_array().unwrap().len(), 1, "{servers}");
    let row = &servers[0];
    assert_eq!(row["name"], "python", "{row}");
    assert_eq!(row["state"], "ready", "{row}");
    assert_eq!(row["restarts"], 1, "{row}");
    assert_eq!(row["pid IS NOT NULL"], 1, "{row}");
    assert_eq!(row["command LIKE '%mockls%'"], 1, "{row}");
    assert_eq!(row["ended IS NULL"], 1, "{row}");
    session.close_stdin();
    session.wait_exit();
    let ended = stdout_of(
        &session,
        &[
            "query",
            "--sql",
            "SELECT state, ended IS NOT NULL FROM language_servers",
        ],
    );
    assert_eq!(ended, "state\tended IS NOT NULL\nstopped\t1\n");
}

/// Seconds the concurrency test runs (`STORE_CONCURRENCY_SECONDS`).
fn concurrency_seconds() -> u64 {
    std::env::var("STORE_CONCURRENCY_SECONDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(30)
}

#[test]
fn four_serving_processes_and_a_reader_share_one_store_without_locking() {
    let dir = project(&[("main.py", GREET)]);
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().to_str().unwrap().to_owned();
    let env = [("WINDLASS_STATE_DIR", state_dir.as_str())];
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let sessions: Vec<Session> = (0..4)
        .map(|_| Session::start_with_env(&args, &env))
        .collect();
    let deadline =
        std::time::Instant::now() + std::time::Duration::from_secs(concurrency_seconds());
    let (calls, queries) = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut queries = 0;
            while std::time::Instant::now() < deadline {
                let output = Command::new(windlass_binary())
                    .args(["query", "--kind", "tool_call", "--limit", "10"])
                    .env("WINDLASS_STATE_DIR", &state_dir)
                    .output()
                    .unwrap();
                assert!(output.status.success(), "{output:?}");
                queries += 1;
            }
            queries
        });
        let callers: Vec<_> = sessions
            .iter()
            .map(|session| {
                scope.spawn(move || {
                    let mut calls = 0;
                    while std::time::Instant::now() < deadline {
                        session.ok(
                            "hover",
                            json!({"file": "main.py", "line": 1, "symbol": "greet"}),
                        );
                        calls += 1;
                    }
                    calls
                })
            })
            .collect();
        let calls: usize = callers
            .into_iter()
            .map(|caller| caller.join().unwrap())
            .sum();
        (calls, reader.join().unwrap())
    });
    assert!(queries > 0 && calls > 0);
    let count = |state_dir: &str| {
        let output = Command::new(windlass_binary())
            .args([
                "query",
                "--sql",
                "SELECT count(*) AS calls FROM events WHERE kind = 'tool_call'",
                "--format",
                "json",
            ])
            .env("WINDLASS_STATE_DIR", state_dir)
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&output.stdout).unwrap()[0]["calls"].clone()
    };
    wait_until("every call is recorded", || count(&state_dir) == calls);
    drop(sessions);
    for log in std::fs::read_dir(state.path().join("logs")).unwrap() {
        let text = std::fs::read_to_string(log.unwrap().path()).unwrap();
        let locked: Vec<&str> = text
            .lines()
            .filter(|line| line.contains("locked"))
            .collect();
        assert!(locked.is_empty(), "{locked:#?}");
    }
}

#[test]
fn a_store_locked_past_the_busy_timeout_is_reported_and_written_again_once_free() {
    let dir = project(&[("main.py", GREET)]);
    let session = start(dir.path());
    let id = only_session_id(&session);
    let hover = || hover_greet(&session);
    hover();
    wait_until("the first call is recorded", || {
        tool_calls(&session, &id).len() == 1
    });
    // Another process holds the write lock for longer than the writer waits.
    let path = session.state.path().join("state/windlass/windlass.db");
    let locker = rusqlite::Connection::open(&path).unwrap();
    locker.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let mut status = String::new();
    wait_until("status says the store fails", || {
        hover();
        status = session.ok("status", json!({}));
        status.contains("not recorded so far")
    });
    assert!(status.contains("locked"), "{status}");
    locker.execute_batch("COMMIT").unwrap();
    drop(locker);
    wait_until("recording resumes and says what was lost", || {
        hover();
        let errors = windlass(&session, &["query", "--kind", "error", "--format", "json"]);
        String::from_utf8_lossy(&errors.stdout)
            .contains("events were not recorded while the store failed")
    });
    assert!(tool_calls(&session, &id).len() > 1);
    assert!(!session.ok("status", json!({})).contains("not recorded"));
}
