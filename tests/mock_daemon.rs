//! One daemon, many agents: bridges (the real `windlass` binary) attach
//! sessions to a daemon of their own test's runtime directory, and the
//! sessions share its mockls servers without seeing each other's files,
//! opening a document twice, or losing their connection when the daemon
//! dies.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `--lsp` for mockls serving python, recording into `record`.
fn mockls_args(root: &Path, flags: &str, record: &Path) -> Vec<String> {
    let mut args = root_arg(root);
    args.extend([
        "--lsp".into(),
        mockls_lsp("python", &format!("{flags} --record {}", record.display())),
    ]);
    args
}

/// The number after `label ` on the first line that has `marker`.
fn number_after(status: &str, marker: &str, label: &str) -> u32 {
    let line = status
        .lines()
        .find(|line| line.contains(marker))
        .unwrap_or_else(|| panic!("no line with {marker:?} in:\n{status}"));
    let rest = &line[line
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in {line}"))
        + label.len()..];
    rest.split_whitespace()
        .next()
        .and_then(|number| number.parse().ok())
        .unwrap_or_else(|| panic!("no number after {label:?} in {line}"))
}

fn server_pid(session: &Session) -> u32 {
    let status = session.wait_for_status(|status| status.contains(" ready pid "));
    number_after(&status, "[python]", " pid ")
}

fn daemon_pid(session: &Session) -> u32 {
    let status = session.ok("status", json!({}));
    number_after(&status, "of daemon pid", "daemon pid ")
}

fn count_in(record: &Path, method: &str) -> usize {
    recorded(record)
        .iter()
        .filter(|(dir, message)| dir == "in" && message["method"] == method)
        .count()
}

fn hover_greet(session: &Session) -> String {
    session.ok(
        "hover",
        json!({"file": "main.py", "line": 1, "symbol": "greet"}),
    )
}

const GREET: &str = "def greet():\n    pass\n\ngreet()\n";

#[test]
fn two_sessions_in_one_workspace_share_one_server_process() {
    let daemon = Daemon::new();
    let project = project(&[("main.py", GREET)]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let args = mockls_args(project.path(), "--workspace-folders", &record);
    let first = daemon.session(&args);
    let second = daemon.session(&args);
    assert!(hover_greet(&first).contains("greet"));
    assert!(hover_greet(&second).contains("greet"));
    assert_eq!(server_pid(&first), server_pid(&second));
    assert_eq!(daemon_pid(&first), daemon_pid(&second));
    let status = second.ok("status", json!({}));
    assert!(status.contains("shared by 2 sessions"), "{status}");
    assert!(status.contains("(2 attached)"), "{status}");
    assert_eq!(
        count_in(&record, "initialize"),
        1,
        "one server, initialized once"
    );
}

#[test]
fn a_document_already_open_is_not_opened_again_for_a_second_session() {
    let daemon = Daemon::new();
    let project = project(&[("main.py", GREET)]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let args = mockls_args(project.path(), "--workspace-folders", &record);
    let first = daemon.session(&args);
    hover_greet(&first);
    let opened = count_in(&record, "textDocument/didOpen");
    assert!(opened >= 1);
    let second = daemon.session(&args);
    hover_greet(&second);
    second.ok("document_symbols", json!({"file": "main.py"}));
    assert_eq!(count_in(&record, "textDocument/didOpen"), opened);
    assert_eq!(count_in(&record, "textDocument/didChange"), 0);
}

#[test]
fn a_session_never_sees_the_files_of_another_sessions_roots() {
    let daemon = Daemon::new();
    let project = project(&[
        (
            "alpha/alpha.py",
            "def shared_name():\n    pass\n\nshared_name()\n",
        ),
        (
            "beta/beta.py",
            "def shared_name():\n    pass\n\nshared_name()\n",
        ),
    ]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let flags = "--workspace-folders";
    let alpha = daemon.session(&mockls_args(&project.path().join("alpha"), flags, &record));
    let beta = daemon.session(&mockls_args(&project.path().join("beta"), flags, &record));
    assert_eq!(server_pid(&alpha), server_pid(&beta), "one shared server");
    beta.wait_for_status(|status| status.contains("shared by 2 sessions"));

    let search = alpha.ok("search", json!({"query": "shared_name"}));
    assert!(search.contains("alpha.py"), "{search}");
    assert!(!search.contains("beta"), "{search}");
    assert!(
        search.contains("outside the workspace roots left out"),
        "the shared server did answer with the other root's file: {search}"
    );
    let references = alpha.ok(
        "find_references",
        json!({"file": "alpha.py", "line": 4, "symbol": "shared_name"}),
    );
    assert!(references.contains("alpha.py"), "{references}");
    assert!(!references.contains("beta"), "{references}");
    let search = beta.ok("search", json!({"query": "shared_name"}));
    assert!(
        search.contains("beta.py") && !search.contains("alpha"),
        "{search}"
    );
    // Paths are checked against the caller's own roots.
    let refused = alpha.err(
        "hover",
        json!({"file": project.path().join("beta/beta.py"), "line": 1, "symbol": "shared_name"}),
    );
    assert!(refused.contains("outside the workspace roots"), "{refused}");
}

#[test]
fn a_shared_servers_words_about_another_sessions_files_are_not_shown() {
    let daemon = Daemon::new();
    let project = project(&[("alpha/main.py", GREET), ("beta/main.py", GREET)]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let flags = "--workspace-folders --crash-on textDocument/hover";
    let alpha = daemon.session(&mockls_args(&project.path().join("alpha"), flags, &record));
    let beta = daemon.session(&mockls_args(&project.path().join("beta"), flags, &record));
    alpha.wait_for_status(|status| status.contains("shared by 2 sessions"));

    let crashed = beta.err(
        "hover",
        json!({"file": "main.py", "line": 1, "symbol": "greet"}),
    );
    let beta_dir = project.path().canonicalize().unwrap().join("beta");
    assert!(
        crashed.contains(&beta_dir.display().to_string()),
        "a session sees its own files named: {crashed}"
    );
    let status = alpha.wait_for_status(|status| status.contains("crashing on"));
    assert!(
        !status.contains(&beta_dir.display().to_string()),
        "{status}"
    );
    assert!(
        status.contains("of file:<path outside the roots> as asked"),
        "{status}"
    );
}

#[test]
fn one_sessions_diagnostics_stay_exact_while_another_edits_other_files() {
    let daemon = Daemon::new();
    let files: Vec<(String, &str)> = (0..4)
        .map(|n| (format!("other{n}.py"), "x = 1\n"))
        .chain([("main.py".to_owned(), "y = 2\n")])
        .collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), *c)).collect();
    let project = project(&files);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let args = mockls_args(
        project.path(),
        "--workspace-folders --publish-version --diagnostics-delay 30",
        &record,
    );
    let editor = daemon.session(&args);
    let watcher = daemon.session(&args);
    let root = project.path().to_path_buf();
    std::thread::scope(|scope| {
        let root_for_editor = root.clone();
        scope.spawn(move || {
            for round in 0..8 {
                let file = format!("other{}.py", round % 4);
                let broken = round % 2 == 0;
                let text = if broken { "x = ERROR\n" } else { "x = 1\n" };
                std::fs::write(root_for_editor.join(&file), text).unwrap();
                let answer = editor.ok("diagnostics", json!({"file": file}));
                assert_eq!(answer.contains("ERROR on line 1"), broken, "{answer}");
            }
        });
        for round in 0..8 {
            let broken = round % 2 == 1;
            let text = if broken { "y = ERROR\n" } else { "y = 2\n" };
            std::fs::write(root.join("main.py"), text).unwrap();
            let answer = watcher.ok("diagnostics", json!({"file": "main.py"}));
            if broken {
                assert!(
                    answer.contains("ERROR on line 1"),
                    "round {round}: {answer}"
                );
            } else {
                assert_eq!(answer, "main.py: no problems", "round {round}");
            }
        }
    });
}

#[test]
fn the_connection_survives_the_daemon_being_killed() {
    let daemon = Daemon::new();
    let project = project(&[("main.py", GREET), ("slow.py", "def slow():\n    pass\n")]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let session = daemon.session(&mockls_args(project.path(), "--workspace-folders", &record));
    hover_greet(&session);
    let (old_daemon, old_server) = (daemon_pid(&session), server_pid(&session));
    kill_hard(old_daemon);
    assert!(
        hover_greet(&session).contains("greet"),
        "the same connection answers"
    );
    let (new_daemon, new_server) = (daemon_pid(&session), server_pid(&session));
    assert_ne!(new_daemon, old_daemon);
    assert_ne!(new_server, old_server);
}

#[test]
fn a_call_in_flight_when_the_daemon_dies_fails_at_once_saying_why() {
    let daemon = Daemon::new();
    let project = project(&[("main.py", GREET)]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let args = mockls_args(project.path(), "--response-delay 5000", &record);
    let session = daemon.session(&args);
    let old_daemon = daemon_pid(&session);
    let pending = session.call_async(
        "hover",
        json!({"file": "main.py", "line": 1, "symbol": "greet"}),
    );
    wait_until("mockls has the hover", || {
        count_in(&record, "textDocument/hover") > 0
    });
    kill_hard(old_daemon);
    let failed = outcome(wait(&pending));
    assert!(failed.is_error);
    assert!(failed.text.contains("daemon stopped"), "{}", failed.text);
    assert_ne!(daemon_pid(&session), old_daemon);
}

#[test]
fn a_bridge_of_another_version_starts_its_own_daemon() {
    let daemon = Daemon::new();
    let project = project(&[("main.py", GREET)]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let args = mockls_args(project.path(), "", &record);
    let current = daemon.session(&args);
    let other = daemon.session_as(
        &args,
        Client {
            env: &[("WINDLASS_VERSION", "0.0.0-other")],
            ..Client::default()
        },
    );
    assert!(hover_greet(&current).contains("greet"));
    assert!(hover_greet(&other).contains("greet"));
    assert_ne!(daemon_pid(&current), daemon_pid(&other));
    let sockets: Vec<PathBuf> = daemon.sockets();
    assert_eq!(sockets.len(), 2, "{sockets:?}");
    assert!(
        sockets
            .iter()
            .any(|socket| socket.to_string_lossy().contains("0.0.0-other")),
        "{sockets:?}"
    );
}

#[test]
fn the_daemon_lingers_after_its_last_session_then_exits() {
    let daemon = Daemon::with_env(&[("WINDLASS_LINGER", "1")]);
    let project = project(&[("main.py", GREET)]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let args = mockls_args(project.path(), "", &record);
    let mut first = daemon.session(&args);
    let second = daemon.session(&args);
    hover_greet(&first);
    first.close_stdin();
    first.wait_exit();
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(daemon.sockets().len(), 1, "a session is still attached");
    assert!(hover_greet(&second).contains("greet"));
    let pid = daemon_pid(&second);
    drop(second);
    wait_until("the daemon exits after lingering", || {
        daemon.sockets().is_empty() && !alive(pid)
    });
}

fn kill_hard(pid: u32) {
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    wait_until("the process is gone", || !alive(pid));
}

/// Whether a process may still hold its files and sockets: it does until
/// it is gone, or a zombie none of whose threads is still exiting.
fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let zombie = stat
        .rsplit(')')
        .next()
        .and_then(|rest| rest.split_whitespace().next())
        == Some("Z");
    let threads = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|entries| entries.count())
        .unwrap_or(0);
    !zombie || threads > 1
}

#[test]
fn a_flooding_session_does_not_push_another_behind_its_flood() {
    let daemon = Daemon::new();
    let flood: String = (0..200).map(|n| format!("name_{n} = {n}\n")).collect();
    let project = project(&[("flood.py", &flood), ("other.py", "lonely = 1\n")]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let args = mockls_args(project.path(), "--response-delay 100", &record);
    let flooder = daemon.session(&args);
    let other = daemon.session(&args);
    other.ok("status", json!({}));
    let pending: Vec<_> = (0..200)
        .map(|n| {
            flooder.call_async(
                "hover",
                json!({"file": "flood.py", "line": n + 1, "column": 1}),
            )
        })
        .collect();
    wait_until("the flood reaches mockls", || {
        count_in(&record, "textDocument/hover") >= 2
    });
    let answer = other.ok("hover", json!({"file": "other.py", "line": 1, "column": 1}));
    assert!(answer.contains("lonely"), "{answer}");
    let hovers: Vec<String> = recorded(&record)
        .into_iter()
        .filter(|(dir, message)| dir == "in" && message["method"] == "textDocument/hover")
        .map(|(_, message)| {
            message["params"]["textDocument"]["uri"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    let position = hovers
        .iter()
        .position(|uri| uri.ends_with("/other.py"))
        .unwrap();
    assert!(
        position <= 10,
        "the lone request reached mockls as hover #{} of {}",
        position + 1,
        hovers.len()
    );
    let status = flooder.ok("status", json!({}));
    assert!(
        status.contains(" queued "),
        "the flood waits its turn: {status}"
    );
    drop(pending);
}

/// An agent between two calls (its model thinking) still uses the
/// server: a flood sent meanwhile has one request at the server at a
/// time, so that the agent's next call waits behind one at most.
#[test]
fn a_flood_between_another_sessions_calls_has_one_request_at_the_server() {
    let daemon = Daemon::new();
    let flood: String = (0..12).map(|n| format!("name_{n} = {n}\n")).collect();
    let project = project(&[("flood.py", &flood), ("other.py", "lonely = 1\n")]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let args = mockls_args(project.path(), "--response-delay 50", &record);
    let flooder = daemon.session(&args);
    let other = daemon.session(&args);
    let answer = other.ok("hover", json!({"file": "other.py", "line": 1, "column": 1}));
    assert!(answer.contains("lonely"), "{answer}");
    let pending: Vec<_> = (0..12)
        .map(|n| {
            flooder.call_async(
                "hover",
                json!({"file": "flood.py", "line": n + 1, "column": 1}),
            )
        })
        .collect();
    for (n, call) in pending.iter().enumerate() {
        let answer = outcome(wait(call));
        assert!(
            answer.text.contains(&format!("name_{n}")),
            "{}",
            answer.text
        );
    }
    let mut at_server = std::collections::HashSet::new();
    let mut most = 0;
    for (direction, message) in recorded(&record) {
        let flood_hover = message["method"] == "textDocument/hover"
            && message["params"]["textDocument"]["uri"]
                .as_str()
                .is_some_and(|uri| uri.ends_with("/flood.py"));
        match direction.as_str() {
            "in" if flood_hover => {
                at_server.insert(message["id"].to_string());
                most = most.max(at_server.len());
            }
            "out" if message["method"].is_null() => {
                at_server.remove(&message["id"].to_string());
            }
            _ => {}
        }
    }
    assert_eq!(most, 1, "the flood's hovers at mockls at once");
}

#[test]
fn identical_questions_in_flight_together_are_asked_once() {
    let daemon = Daemon::new();
    let project = project(&[("main.py", GREET)]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let args = mockls_args(project.path(), "--response-delay 500", &record);
    let first = daemon.session(&args);
    let second = daemon.session(&args);
    let question = json!({"file": "main.py", "line": 1, "symbol": "greet"});
    let asked_first = first.call_async("hover", question.clone());
    wait_until("mockls has the first hover", || {
        count_in(&record, "textDocument/hover") == 1
    });
    let answer_second = second.ok("hover", question);
    let answer_first = outcome(wait(&asked_first));
    assert!(!answer_first.is_error, "{}", answer_first.text);
    assert_eq!(answer_first.text, answer_second);
    assert!(answer_second.contains("greet"));
    assert_eq!(count_in(&record, "textDocument/hover"), 1, "asked once");
}

/// A project with a python and a rust file, each language served by its
/// own mockls with `flags`.
fn two_servers(flags: &str) -> (tempfile::TempDir, Vec<String>) {
    let project = project(&[("main.py", GREET), ("lib.rs", "fn main() {}\n")]);
    let mut args = root_arg(project.path());
    for language in ["python", "rust"] {
        args.extend(["--lsp".into(), mockls_lsp(language, flags)]);
    }
    (project, args)
}

fn pid_of(status: &str, server: &str) -> Option<u32> {
    status
        .lines()
        .find(|line| line.starts_with(&format!("[{server}]")) && line.contains(" pid "))
        .map(|_| number_after(status, &format!("[{server}]"), " pid "))
}

fn hover_rust(session: &Session) -> String {
    session.ok(
        "hover",
        json!({"file": "lib.rs", "line": 1, "symbol": "main"}),
    )
}

#[test]
fn an_idle_server_stops_and_a_busy_one_does_not() {
    let daemon = Daemon::with_env(&[("WINDLASS_SERVER_IDLE", "1")]);
    let (_project, args) = two_servers("");
    let session = daemon.session(&args);
    hover_rust(&session);
    hover_greet(&session);
    let python = pid_of(&session.ok("status", json!({})), "python").unwrap();
    let status = loop {
        hover_greet(&session);
        let status = session.ok("status", json!({}));
        if status.contains("stopped: idle for 1 s") {
            break status;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(pid_of(&status, "rust").is_none(), "{status}");
    assert_eq!(pid_of(&status, "python"), Some(python), "{status}");
    assert!(
        status.contains("[rust] ") && status.contains(" stopped "),
        "{status}"
    );
    assert!(hover_rust(&session).contains("main"), "restarted on demand");
}

#[test]
fn over_the_memory_budget_the_least_recently_used_idle_server_stops() {
    let daemon = Daemon::with_env(&[("WINDLASS_MEMORY_BUDGET", "150MiB")]);
    let (_project, args) = two_servers("--hold-memory 100");
    let session = daemon.session(&args);
    hover_rust(&session);
    hover_greet(&session);
    let python = pid_of(&session.ok("status", json!({})), "python").unwrap();
    let status = session.wait_for_status(|status| status.contains("over the memory budget"));
    assert!(pid_of(&status, "rust").is_none(), "{status}");
    assert_eq!(pid_of(&status, "python"), Some(python), "{status}");
    std::thread::sleep(Duration::from_millis(2500));
    let status = session.ok("status", json!({}));
    assert_eq!(
        pid_of(&status, "python"),
        Some(python),
        "under the budget again, nothing else stops: {status}"
    );
}

#[test]
fn a_daemon_that_another_version_supersedes_exits_after_its_last_session() {
    let daemon = Daemon::new();
    let project = project(&[("main.py", GREET)]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let args = mockls_args(project.path(), "", &record);
    let old = daemon.session_as(
        &args,
        Client {
            env: &[("WINDLASS_VERSION", "0.0.0-old")],
            ..Client::default()
        },
    );
    let old_pid = daemon_pid(&old);
    let new = daemon.session(&args);
    assert!(hover_greet(&new).contains("greet"));
    drop(old);
    wait_until("the old daemon exits instead of lingering", || {
        !alive(old_pid)
    });
    assert_eq!(daemon.sockets().len(), 1);
    assert!(hover_greet(&new).contains("greet"), "the new one serves on");
}

/// A session served standalone says so in `status`, without a daemon.
fn is_standalone(session: &Session) -> bool {
    let status = hover_and_status(session);
    !status.contains("of daemon pid")
}

fn hover_and_status(session: &Session) -> String {
    assert!(hover_greet(session).contains("greet"));
    session.ok("status", json!({}))
}

#[test]
fn a_bridge_whose_daemon_never_answers_serves_standalone() {
    let daemon = Daemon::new();
    let project = project(&[("main.py", GREET)]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    // Something that is not a daemon holds the socket: it takes
    // connections and hangs up on each.
    let runtime = daemon.dir.path().join("run/windlass");
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let listener = std::os::unix::net::UnixListener::bind(
        runtime.join(format!("windlass-{}.sock", env!("CARGO_PKG_VERSION"))),
    )
    .unwrap();
    std::thread::spawn(move || {
        for connection in listener.incoming() {
            drop(connection);
        }
    });
    let session = daemon.session(&mockls_args(project.path(), "", &record));
    assert!(is_standalone(&session));
}

#[test]
fn a_bridge_without_a_runtime_directory_serves_standalone() {
    let project = project(&[("main.py", GREET)]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let world = tempfile::tempdir().unwrap();
    let not_a_directory = world.path().join("file");
    std::fs::write(&not_a_directory, "").unwrap();
    let runtime = not_a_directory.join("windlass");
    let daemon = Daemon::with_env(&[("WINDLASS_RUNTIME_DIR", runtime.to_str().unwrap())]);
    let session = daemon.session(&mockls_args(project.path(), "", &record));
    assert!(is_standalone(&session));
}

#[test]
fn a_bridge_whose_runtime_directory_is_read_only_serves_standalone() {
    let Some(through) = read_only_directory("WINDLASS_RUNTIME_DIR") else {
        return;
    };
    let through: Vec<&str> = through.iter().map(String::as_str).collect();
    let project = project(&[("main.py", GREET)]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let daemon = Daemon::new();
    let client = Client {
        through: &through,
        ..Client::default()
    };
    let session = daemon.session_as(&mockls_args(project.path(), "", &record), client);
    assert!(is_standalone(&session));
    let written = std::fs::read_dir(daemon.dir.path().join("run/windlass"))
        .map(|entries| entries.count())
        .unwrap_or(0);
    assert_eq!(written, 0, "nothing was written to the runtime directory");
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// What a process of `uid` hears after pinging the daemon at `socket`.
fn ping_as(uid: u32, socket: &Path) -> String {
    ask_as(uid, socket, r#""ping""#)
}

/// What a process of `uid` hears after sending `request` (one JSON line)
/// to the daemon at `socket`.
fn ask_as(uid: u32, socket: &Path, request: &str) -> String {
    use std::os::unix::process::CommandExt;
    let script = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
try:
    s.sendall(sys.argv[2].encode() + b'\n')
    answer = s.recv(4096)
except (ConnectionResetError, BrokenPipeError):
    answer = b''
print(answer.decode() if answer else 'closed')
"#;
    let output = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(socket)
        .arg(request)
        .uid(uid)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[test]
fn the_daemon_is_private_to_its_user() {
    let daemon = Daemon::new();
    let project = project(&[("main.py", GREET)]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let session = daemon.session(&mockls_args(project.path(), "", &record));
    hover_greet(&session);
    let runtime = daemon.dir.path().join("run/windlass");
    let socket = daemon.sockets().pop().unwrap();
    assert_eq!(mode(&runtime), 0o700);
    assert_eq!(mode(&socket), 0o600);
    let own = rustix::process::getuid().as_raw();
    assert!(ping_as(own, &socket).contains("pong"));
    let unknown = ask_as(own, &socket, r#"{"frobnicate": {}}"#);
    assert!(
        unknown.contains("refused")
            && unknown.contains("cannot take this request: unknown variant `frobnicate`"),
        "{unknown}"
    );
    if own != 0 {
        eprintln!("skipped: a peer of another uid can only be made by root");
        return;
    }
    // With every door opened, the daemon itself still refuses a stranger.
    use std::os::unix::fs::PermissionsExt;
    for path in [daemon.dir.path(), &daemon.dir.path().join("run"), &runtime] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert_eq!(ping_as(65534, &socket), "closed");
    wait_until("the daemon logs why", || {
        std::fs::read_dir(daemon.dir.path().join("state/windlass/logs"))
            .unwrap()
            .filter_map(Result::ok)
            .any(|log| {
                std::fs::read_to_string(log.path())
                    .unwrap_or_default()
                    .contains("a peer of uid 65534")
            })
    });
    assert!(
        hover_greet(&session).contains("greet"),
        "the session goes on"
    );
}

/// The id `status` shows for a session of a daemon.
fn session_id(session: &Session) -> String {
    let status = session.ok("status", json!({}));
    let line = status
        .lines()
        .find(|line| line.starts_with("session "))
        .unwrap_or_else(|| panic!("no session line in {status}"));
    line.split_whitespace().nth(1).unwrap().to_owned()
}

#[test]
fn monitor_streams_a_sessions_events_as_they_happen() {
    let daemon = Daemon::new();
    let project = project(&[("main.py", GREET)]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let session = daemon.session(&mockls_args(project.path(), "", &record));
    let other = daemon.session(&mockls_args(project.path(), "", &record));
    let id = session_id(&session);
    wait_until("the session is recorded", || {
        let listed = std::process::Command::new(windlass_binary())
            .arg("list")
            .envs(daemon.environment())
            .output()
            .unwrap();
        String::from_utf8_lossy(&listed.stdout).contains(&id)
    });
    let mut monitor = std::process::Command::new(windlass_binary())
        .args(["monitor", &id[..5], "--json", "--kind", "tool_call"])
        .envs(daemon.environment())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let received = lines_of(monitor.stdout.take().unwrap());
    // Once the monitor shows a call, it is subscribed.
    let subscribed = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        session.ok("status", json!({}));
        if received.recv_timeout(Duration::from_millis(200)).is_ok() {
            break;
        }
        assert!(
            std::time::Instant::now() < subscribed,
            "monitor never subscribed"
        );
    }
    while received.try_recv().is_ok() {}
    hover_greet(&other);
    hover_greet(&session);
    session.ok("document_symbols", json!({"file": "main.py"}));
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let line = received
            .recv_timeout(Duration::from_secs(60))
            .expect("an event within a minute");
        let event: serde_json::Value = serde_json::from_str(&line).unwrap();
        if event["tool"] == "status" {
            continue;
        }
        assert_eq!(event["session"], id.as_str(), "{event}");
        assert_eq!(event["kind"], "tool_call");
        seen.push(event);
    }
    assert_eq!(seen[0]["tool"], "hover");
    assert_eq!(seen[0]["detail"]["symbol"], "greet");
    assert_eq!(seen[1]["tool"], "document_symbols");
    let _ = monitor.kill();
    let _ = monitor.wait();
}

#[test]
fn status_command_shows_a_live_sessions_servers_and_who_shares_them() {
    let daemon = Daemon::new();
    let project = project(&[("main.py", GREET)]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let first = daemon.session(&mockls_args(project.path(), "", &record));
    let second = daemon.session(&mockls_args(project.path(), "", &record));
    hover_greet(&first);
    hover_greet(&second);
    let id = session_id(&first);
    let status = |prefix: &str| {
        std::process::Command::new(windlass_binary())
            .args(["status", prefix])
            .envs(daemon.environment())
            .output()
            .unwrap()
    };
    let mut shown = String::new();
    wait_until("status shows the shared server", || {
        let output = status(&id[..6]);
        shown = String::from_utf8_lossy(&output.stdout).into_owned();
        output.status.success()
            && shown.contains("shared by 2 sessions")
            && shown.contains(" ready pid ")
    });
    assert!(
        shown.contains(&format!("session {id} of daemon pid")),
        "{shown}"
    );
    assert!(shown.contains(" ready pid "), "{shown}");
    assert!(
        shown.contains(" cpu ") && shown.contains(" rss "),
        "{shown}"
    );
    let other = session_id(&second);
    assert!(
        shown.contains(&format!("shared by 2 sessions (also {other})")),
        "{shown}"
    );
    let unknown = status("zzzzzzzz");
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no session"),
        "{unknown:?}"
    );
}

#[test]
fn the_socket_answers_a_files_diagnostics_through_the_session_that_has_it() {
    let daemon = Daemon::new();
    let project = project(&[("main.py", "ERROR here\n"), ("clean.py", "x = 1\n")]);
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let session = daemon.session(&mockls_args(project.path(), "", &record));
    session.ok("status", json!({}));
    let socket = daemon.sockets().pop().unwrap();
    let own = rustix::process::getuid().as_raw();
    let ask = |file: &Path| {
        let request =
            json!({"protocol": 2, "diagnostics": {"file": file, "session": null}}).to_string();
        ask_as(own, &socket, &request)
    };
    let base = project.path().canonicalize().unwrap();
    let answer: serde_json::Value = serde_json::from_str(&ask(&base.join("main.py"))).unwrap();
    let found = &answer["diagnostics"];
    assert_eq!(found["file"], "main.py", "{answer}");
    assert_eq!(found["diagnostics"][0]["severity"], "error", "{answer}");
    assert_eq!(
        found["diagnostics"].as_array().map(Vec::len),
        Some(1),
        "{answer}"
    );
    let clean: serde_json::Value = serde_json::from_str(&ask(&base.join("clean.py"))).unwrap();
    assert_eq!(clean["diagnostics"]["diagnostics"], json!([]), "{clean}");
    let older = ask_as(
        own,
        &socket,
        &json!({"diagnostics": {"file": base.join("main.py")}}).to_string(),
    );
    assert!(older.contains("answered as data"), "{older}");
    let outside = ask(Path::new("/etc/hostname"));
    assert!(
        outside.contains("no session attached to this daemon has /etc/hostname"),
        "{outside}"
    );
}

#[test]
fn the_socket_lists_sessions_and_changes_a_sessions_roots() {
    let daemon = Daemon::new();
    let project = project(&[("app/main.py", GREET), ("lib/util.py", GREET)]);
    let base = project.path().canonicalize().unwrap();
    let records = tempfile::tempdir().unwrap();
    let record = records.path().join("record.jsonl");
    let session = daemon.session_as(
        &mockls_args(&base.join("app"), "", &record),
        Client {
            env: &[("CLAUDE_CODE_SESSION_ID", "conversation-1")],
            ..Client::default()
        },
    );
    let id = session_id(&session);
    let socket = daemon.sockets().pop().unwrap();
    let own = rustix::process::getuid().as_raw();
    let sessions: serde_json::Value =
        serde_json::from_str(&ask_as(own, &socket, r#""sessions""#)).unwrap();
    assert_eq!(sessions["sessions"][0]["id"], id.as_str(), "{sessions}");
    assert_eq!(sessions["sessions"][0]["host_session"], "conversation-1");
    assert_eq!(sessions["sessions"][0]["roots"], json!([base.join("app")]));

    let added = ask_as(
        own,
        &socket,
        &json!({"roots": {"session": id, "add": [base.join("lib")]}}).to_string(),
    );
    let added: serde_json::Value = serde_json::from_str(&added).unwrap();
    assert_eq!(
        added["roots"]["roots"],
        json!([base.join("app"), base.join("lib")]),
        "{added}"
    );
    let found = session.ok("search", json!({"query": "def greet"}));
    assert!(
        found.contains("lib/util.py"),
        "the session searches its new root: {found}"
    );
    let unknown = ask_as(
        own,
        &socket,
        &json!({"roots": {"session": "zzzzzzzz", "set": []}}).to_string(),
    );
    assert!(unknown.contains("not attached"), "{unknown}");
}

/// An MCP host shows everything a server writes on stderr as an error:
/// at the default log level, a bridge, its daemon and a standalone
/// session write nothing there while all goes well; the log file has it.
#[test]
fn nothing_reaches_stderr_at_the_default_level_while_all_goes_well() {
    let dir = project(&[("main.py", "x = 1  # ERROR\n")]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let daemon = Daemon::new();
    let quiet = Client {
        default_log: true,
        ..Client::default()
    };
    let bridged = daemon.session_as(&args, quiet);
    let standalone = Session::start_as(
        &args,
        &Client {
            default_log: true,
            ..Client::default()
        },
    );
    for session in [&bridged, &standalone] {
        let answer = session.ok("diagnostics", json!({"file": "main.py"}));
        assert!(answer.contains("mockls: ERROR on line 1"), "{answer}");
    }
    let logged = std::fs::read_dir(daemon.dir.path().join("state/windlass/logs"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| std::fs::read_to_string(entry.path()).unwrap())
        .collect::<String>();
    assert!(logged.contains("attached"), "the log file has it: {logged}");
    for session in [&bridged, &standalone] {
        let written = session.stderr.lock().unwrap().clone();
        assert!(written.is_empty(), "written on stderr: {written:?}");
    }
}

/// A session flooding a shared server has its share: past the requests
/// it may have queued, its questions are refused at once with the reason,
/// every other is answered, and another session's hover goes through
/// meanwhile.
#[test]
fn a_flooding_session_is_refused_past_its_share_and_another_is_answered() {
    let daemon = Daemon::new();
    let lines: String = (0..40).map(|n| format!("value_{n} = {n}\n")).collect();
    let project = project(&[("main.py", &lines), ("other.py", GREET)]);
    let mut args = root_arg(project.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "--response-delay 40")]);
    let flooding = daemon.session(&args);
    let quiet = daemon.session(&args);
    assert!(hover_greet_in(&quiet, "other.py").contains("greet"));
    // Distinct questions, so that none shares another's answer.
    let calls: Vec<_> = (1..=40)
        .flat_map(|line| (1..=8).map(move |column| (line, column)))
        .map(|(line, column)| {
            flooding.call_async(
                "hover",
                json!({"file": "main.py", "line": line, "column": column}),
            )
        })
        .collect();
    assert!(hover_greet_in(&quiet, "other.py").contains("greet"));
    let outcomes: Vec<ToolOutcome> = calls.iter().map(|call| outcome(wait(call))).collect();
    let refused: Vec<&ToolOutcome> = outcomes.iter().filter(|o| o.is_error).collect();
    assert!(
        !refused.is_empty(),
        "320 questions at once exceed the share"
    );
    for outcome in &refused {
        assert!(
            outcome
                .text
                .contains("this session already has 256 questions waiting"),
            "{}",
            outcome.text
        );
    }
    assert!(
        outcomes.len() - refused.len() >= 256,
        "the queued ones are answered"
    );
}

fn hover_greet_in(session: &Session, file: &str) -> String {
    session.ok("hover", json!({"file": file, "line": 4, "symbol": "greet"}))
}

/// A server that says neither when nor which version it checked is
/// settled by being seen quiet after it publishes; another session's
/// questions, back to back, must not keep it from ever looking so. The
/// editing session is answered, right, while the other keeps asking.
#[test]
fn an_edit_is_answered_while_another_session_keeps_its_server_busy() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let daemon = Daemon::new();
    let project = project(&[("asking.py", GREET), ("editing.py", "value = 1\n")]);
    let mut args = root_arg(project.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let asking = daemon.session(&args);
    let editing = daemon.session(&args);
    assert!(hover_greet_in(&asking, "asking.py").contains("greet"));
    assert_eq!(
        editing.ok("diagnostics", json!({"file": "editing.py"})),
        "editing.py: no problems"
    );
    let answered = AtomicBool::new(false);
    let stopped_by_the_answer = std::thread::scope(|scope| {
        let flood = scope.spawn(|| {
            // A watchdog, not a timing: before, the flood had to end first.
            let give_up = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while !answered.load(Ordering::Relaxed) {
                if std::time::Instant::now() > give_up {
                    return false;
                }
                let calls: Vec<_> = (1..=4)
                    .map(|column| {
                        asking.call_async(
                            "hover",
                            json!({"file": "asking.py", "line": 4, "column": column}),
                        )
                    })
                    .collect();
                for call in &calls {
                    wait(call);
                }
            }
            true
        });
        std::fs::write(project.path().join("editing.py"), "x = 1  # ERROR\n").unwrap();
        let answer = editing.ok("diagnostics", json!({"file": "editing.py"}));
        answered.store(true, Ordering::Relaxed);
        assert_eq!(
            answer,
            "editing.py: 1 error\n  1:10 error [mockls E1] mockls: ERROR on line 1"
        );
        flood.join().unwrap()
    });
    assert!(
        stopped_by_the_answer,
        "the edit was answered only once the other session stopped asking"
    );
}
