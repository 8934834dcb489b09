//! `windlass top` in a real terminal: tmux runs it in a shell against a
//! daemon with two sessions, one mockls made busy and another made to
//! crash, a call in flight and a lease held; the test reads the screen (`capture-pane`),
//! presses keys (`send-keys`), and checks that `q` gives the shell its
//! screen back. `--once` and `--json` are checked without a terminal.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Daemon, mockls_lsp, project, root_arg, windlass_binary};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

/// A tmux server of the test's own, so that nothing else's sessions or
/// settings get in.
struct Terminal {
    socket: String,
}

impl Terminal {
    /// A shell in a 120×40 terminal, with `env` set.
    fn start(env: &[(String, String)]) -> Terminal {
        let terminal = Terminal {
            socket: format!("windlass-top-{}", std::process::id()),
        };
        let mut command = Command::new("tmux");
        command
            .args(["-L", &terminal.socket, "-f", "/dev/null"])
            .args(["new-session", "-d", "-s", "top", "-x", "120", "-y", "40"]);
        for (name, value) in env {
            command.args(["-e", &format!("{name}={value}")]);
        }
        let output = command
            .args(["bash", "--norc", "--noprofile"])
            .output()
            .unwrap();
        assert!(output.status.success(), "tmux: {output:?}");
        terminal
    }

    fn tmux(&self, args: &[&str]) -> Output {
        let output = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "tmux {args:?}: {output:?}");
        output
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "top"];
        args.extend(keys);
        self.tmux(&args);
    }

    fn literal(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "top", "-l", text]);
    }

    fn screen(&self) -> String {
        String::from_utf8(self.tmux(&["capture-pane", "-p", "-t", "top"]).stdout).unwrap()
    }

    /// Waits until the screen shows what `shows` looks for; the screen.
    fn until(&self, what: &str, shows: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + common::WATCHDOG;
        loop {
            let screen = self.screen();
            if shows(&screen) {
                return screen;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting until {what}:\n{screen}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

/// The number in the servers pane's column `header` of the row of
/// `server`, read at the column's place on the screen.
fn server_cell(screen: &str, server: &str, header: &str) -> Option<f64> {
    let lines: Vec<Vec<char>> = screen.lines().map(|line| line.chars().collect()).collect();
    let find = |line: &[char], text: &str| {
        let text: Vec<char> = text.chars().collect();
        line.windows(text.len())
            .position(|window| window == text.as_slice())
    };
    let at = lines.iter().find_map(|line| {
        (find(line, "restarts").is_some() && find(line, "server").is_some())
            .then(|| find(line, header))
            .flatten()
    })?;
    let row = lines.iter().find(|line| {
        line.iter()
            .skip(1)
            .collect::<String>()
            .starts_with(&format!("{server} "))
    })?;
    let cell: String = row
        .iter()
        .skip(at)
        .take_while(|c| !c.is_whitespace())
        .collect();
    cell.trim_end_matches('M').parse().ok()
}

/// A daemon with two sessions: one whose mockls burns CPU after each
/// change (`python`), one whose mockls dies on hover (`c`), and a lease
/// taken through the `acquire` hook.
/// Fields drop in order: the bridges go before the daemon stops, or
/// they would start another one to carry on.
struct Busy {
    sessions: Vec<common::Session>,
    daemon: Daemon,
    _projects: Vec<tempfile::TempDir>,
    edited: std::path::PathBuf,
}

fn busy_daemon() -> Busy {
    let python = project(&[("app.py", "x = 1\n")]);
    let c = project(&[("main.c", "int main(void) { return 0; }\n")]);
    let daemon = Daemon::new();
    let mut first = root_arg(python.path());
    first.extend(["--lsp".into(), mockls_lsp("python", "--cpu-busy 20000")]);
    let mut second = root_arg(c.path());
    second.extend([
        "--lsp".into(),
        mockls_lsp("c", "--crash-on textDocument/hover"),
    ]);
    let sessions = vec![daemon.session(&first), daemon.session(&second)];
    sessions[0].ok("diagnostics", json!({"file": "app.py"}));
    sessions[1].ok("document_symbols", json!({"file": "main.c"}));
    let edited = python.path().join("app.py");
    let input = json!({
        "session_id": "host-a",
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": python.path(),
        "hook_event_name": "PreToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": edited},
        "tool_use_id": "toolu_01",
    });
    daemon.hook(
        &["acquire", "--format", "claude", "--timeout", "0"],
        &input.to_string(),
    );
    Busy {
        sessions,
        daemon,
        _projects: vec![python, c],
        edited,
    }
}

/// Edits the busy server's file, whose diagnostics then burn its CPU, and
/// hovers in the crashing server's file.
fn stir(busy: &Busy) {
    std::fs::write(&busy.edited, "x = 2\n").unwrap();
    let _busy = busy.sessions[0].call_async("diagnostics", json!({"file": "app.py"}));
    let _crash =
        busy.sessions[1].call_async("hover", json!({"file": "main.c", "line": 1, "column": 5}));
}

fn session_ids(busy: &Busy) -> Vec<String> {
    busy.sessions
        .iter()
        .map(|session| {
            let status = session.ok("status", json!({}));
            let line = status
                .lines()
                .find(|line| line.contains("session "))
                .unwrap();
            let after = &line[line.find("session ").unwrap() + "session ".len()..];
            after
                .split_whitespace()
                .next()
                .unwrap()
                .trim_matches(',')
                .to_owned()
        })
        .collect()
}

#[test]
fn the_dashboard_shows_sessions_busy_and_crashed_servers_and_leases_and_takes_keys() {
    if !common::have("tmux") {
        return common::skip("tmux is not on PATH (.ci/run installs it)");
    }
    let busy = busy_daemon();
    let ids = session_ids(&busy);
    let terminal = Terminal::start(&busy.daemon.environment());
    terminal.literal(&format!(
        "clear; echo BEFORE-TOP; {} top",
        windlass_binary().display()
    ));
    terminal.keys(&["Enter"]);
    let screen = terminal.until("top shows both sessions", |screen| {
        ids.iter().all(|id| screen.contains(id.as_str()))
    });
    assert!(
        screen.contains("windlass 0.1.0") && screen.contains("store ok"),
        "{screen}"
    );
    assert!(
        screen.contains("app.py") && screen.contains("editing"),
        "the lease:\n{screen}"
    );

    stir(&busy);
    let running = regex::Regex::new(r"diagnostics \d+\.\ds").unwrap();
    terminal.until(
        "the call the busy server holds up shows as running",
        |screen| running.is_match(screen),
    );
    terminal.until("the busy server's CPU shows", |screen| {
        server_cell(screen, "python", "cpu%").is_some_and(|cpu| cpu >= 50.0)
    });
    terminal.until("the crashed server shows its restart", |screen| {
        server_cell(screen, "c", "restarts").is_some_and(|restarts| restarts >= 1.0)
    });

    terminal.keys(&["/"]);
    terminal.literal("tool_call");
    terminal.keys(&["Enter"]);
    let screen = terminal.until("the events are filtered", |screen| {
        screen.contains("filter: tool_call")
    });
    let events: Vec<&str> = screen
        .lines()
        .skip_while(|line| !line.contains("4 events"))
        .skip(2)
        .take_while(|line| line.starts_with('│'))
        .filter(|line| {
            !line
                .trim_matches(|c: char| c == '│' || c.is_whitespace())
                .is_empty()
        })
        .collect();
    assert!(!events.is_empty(), "{screen}");
    assert!(
        events.iter().all(|line| line.contains("tool_call")),
        "{screen}"
    );

    terminal.keys(&["1", "Enter"]);
    let screen = terminal.until("Enter opens a session's detail", |screen| {
        screen.contains("(Esc to close)")
    });
    assert!(
        screen.contains("watching") && screen.contains("(from -r)"),
        "{screen}"
    );
    // Apart: an Escape followed at once by a key reads as Alt and that key.
    terminal.keys(&["Escape"]);
    terminal.until("Esc closes the detail", |screen| {
        !screen.contains("(Esc to close)") && screen.contains("1 sessions")
    });
    terminal.keys(&["p"]);
    terminal.until("p pauses", |screen| screen.contains("PAUSED"));

    terminal.keys(&["q"]);
    let screen = terminal.until("q gives the shell its screen back", |screen| {
        !screen.contains("1 sessions") && screen.contains("BEFORE-TOP")
    });
    let alternate = terminal.tmux(&["display-message", "-p", "-t", "top", "#{alternate_on}"]);
    assert_eq!(
        String::from_utf8_lossy(&alternate.stdout).trim(),
        "0",
        "{screen}"
    );
}

fn top(daemon: &Daemon, args: &[&str]) -> Output {
    Command::new(windlass_binary())
        .arg("top")
        .args(args)
        .envs(daemon.environment())
        .env_remove("WINDLASS_STATE_DIR")
        .output()
        .unwrap()
}

#[test]
fn once_and_json_print_one_picture_and_no_daemon_is_said_plainly() {
    let mut busy = busy_daemon();
    let ids = session_ids(&busy);
    let refusal = busy.sessions[1].err("hover", json!({"file": "/etc/hosts", "line": 1}));
    let once = top(&busy.daemon, &["--once"]);
    assert!(once.status.success(), "{once:?}");
    let text = String::from_utf8(once.stdout).unwrap();
    for id in &ids {
        assert!(text.contains(id.as_str()), "{text}");
    }
    assert!(
        text.contains("SERVERS (2)") && text.contains("LEASES (1)"),
        "{text}"
    );
    assert!(
        text.contains("of 4096M budget"),
        "the default budget: {text}"
    );

    // The refusal reaches the store within the Recorder's batch window.
    let mut picture = Value::Null;
    common::wait_until("the refusal is recorded", || {
        let json = top(&busy.daemon, &["--json"]);
        picture = serde_json::from_slice(&json.stdout).unwrap();
        picture["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|session| session["last_error"].is_string())
    });
    assert_eq!(
        picture["sessions"].as_array().unwrap().len(),
        2,
        "{picture}"
    );
    let servers: Vec<&str> = picture["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|server| server["name"].as_str().unwrap())
        .collect();
    assert_eq!(servers, ["c", "python"], "{picture}");
    let refused = picture["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|session| session["id"] == ids[1].as_str())
        .unwrap();
    let last_error = refused["last_error"].as_str().unwrap();
    assert!(
        last_error.starts_with("hover failed at ") && last_error.ends_with(refusal.trim()),
        "the last error and what its client was told ({refusal}): {picture}"
    );
    assert_eq!(picture["leases"][0]["mode"], "editing");
    assert!(Path::new(picture["leases"][0]["path"].as_str().unwrap()).ends_with("app.py"));

    // A server whose sessions have all ended stays in the pool, warm for
    // the next, and in the picture.
    drop(busy.sessions.remove(0));
    common::wait_until("the python session ends and its server stays", || {
        let json = top(&busy.daemon, &["--json"]);
        let picture: Value = serde_json::from_slice(&json.stdout).unwrap();
        let python = picture["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|server| server["name"] == "python")
            .cloned();
        picture["sessions"].as_array().unwrap().len() == 1
            && python
                .is_some_and(|python| python["sessions"] == json!([]) && python["pid"].is_u64())
    });
    let once = top(&busy.daemon, &["--once"]);
    let text = String::from_utf8(once.stdout).unwrap();
    let python = text
        .lines()
        .find(|line| line.trim_start().starts_with("python"))
        .unwrap_or_default();
    assert!(python.contains(" none "), "{text}");

    let nobody = Daemon::new();
    let refused = top(&nobody, &["--once"]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("no Windlass daemon is running") && stderr.contains("windlass daemon"),
        "{stderr}"
    );
    assert!(nobody.sockets().is_empty(), "top started no daemon");
}
