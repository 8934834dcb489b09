//! A small MCP client for the end-to-end tests: it spawns the real
//! `windlass` binary and speaks newline-delimited JSON-RPC to it over stdio,
//! independently of the rmcp crate the server uses.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod anthropic;
pub mod chat;
pub mod gemini;
pub mod host;
pub mod http;
pub mod install;
pub mod model;
pub mod oracle;
pub mod projects;
pub mod registry;
pub mod responses;
pub mod scenario;

use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long any single exchange may take before the test fails instead of
/// hanging CI.
pub const WATCHDOG: Duration = Duration::from_secs(90);

pub fn windlass_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_windlass"))
}

/// mockls is built next to windlass by `cargo test --workspace`.
pub fn mockls_binary() -> PathBuf {
    let path = windlass_binary().with_file_name(format!("mockls{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "mockls is not built at {}; run `cargo build --workspace`",
        path.display()
    );
    path
}

/// `--lsp` value that runs mockls for `languages` with extra flags.
pub fn mockls_lsp(languages: &str, flags: &str) -> String {
    format!("{languages}:{} {flags}", mockls_binary().display())
}

/// Where `command` is on PATH, if it is.
pub fn which(command: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|directory| directory.join(command))
        .find(|path| path.is_file())
}

/// Whether an executable is on PATH; real-server tests skip, saying so,
/// when it is not.
pub fn have(command: &str) -> bool {
    which(command).is_some()
}

/// Whether `rust-analyzer` on PATH is the server, not rustup's proxy
/// without its component.
pub fn rust_analyzer_runs() -> bool {
    std::process::Command::new("rust-analyzer")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

/// An answer without the warning that its server was still loading, or
/// still taking in changes on disk or files just opened: on a machine running many servers at
/// once, a server may be busy for longer than the patience requests
/// have, and is then asked anyway, its answer saying so (first, or last
/// among the notes of a list).
pub fn past_loading_warning(answer: &str) -> String {
    answer
        .lines()
        .filter(|line| {
            !(line.starts_with("warning: ")
                && (line.contains("is still loading") || line.contains("is still taking in ")))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Prints why a test did not run. Under `CI=true` a missing server (or
/// anything else CI provides) is a failure instead: a skip there would let
/// the suite pass without testing anything real.
pub fn skip(reason: &str) {
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        panic!("CI=true and a real-server test cannot run: {reason}");
    }
    eprintln!("SKIPPED: {reason}");
}

pub struct ToolOutcome {
    pub text: String,
    pub is_error: bool,
}

type Waiters = Arc<Mutex<HashMap<i64, Sender<Value>>>>;
type Stdin = Arc<Mutex<Option<ChildStdin>>>;

/// How the test client presents itself: the directory windlass starts in,
/// and the roots it declares (`None`: no roots capability at all). Without
/// a `daemon`, windlass runs standalone with its own state directories;
/// with one, it is a bridge to that test's daemon.
#[derive(Default)]
pub struct Client<'a> {
    pub cwd: Option<&'a Path>,
    pub roots: Option<Vec<PathBuf>>,
    pub env: &'a [(&'a str, &'a str)],
    pub daemon: Option<&'a Daemon>,
    /// A command that runs windlass (as its last arguments), such as a
    /// shell that changes a signal's disposition and `exec`s it.
    pub through: &'a [&'a str],
    /// Run with the log levels a user gets: no `WINDLASS_LOG`, where tests
    /// otherwise ask for debug lines on stderr.
    pub default_log: bool,
    /// The windlass to run, when not the one built for the tests (an
    /// installed package's).
    pub program: Option<&'a Path>,
}

/// A test's own daemon world: runtime, state and config directories that
/// no other test shares, so each test that uses one gets its own daemon.
/// Dropping it stops the daemon.
pub struct Daemon {
    pub dir: tempfile::TempDir,
    /// Extra environment every bridge (and so the daemon) gets.
    pub env: Vec<(String, String)>,
    /// A user's world as the agent hosts give it: a home of its own and
    /// nothing of Windlass's variables, which a host may not pass on.
    home: bool,
}

impl Daemon {
    pub fn new() -> Daemon {
        Daemon::with_env(&[])
    }

    pub fn with_env(env: &[(&str, &str)]) -> Daemon {
        Daemon {
            dir: tempfile::tempdir().unwrap(),
            env: env
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
            home: false,
        }
    }

    /// A world whose user configuration file holds `config`.
    pub fn with_user_config(config: &str) -> Daemon {
        let daemon = Daemon::new();
        let directory = daemon.dir.path().join("config/windlass");
        std::fs::create_dir_all(&directory).unwrap();
        std::fs::write(directory.join("config.toml"), config).unwrap();
        daemon
    }

    /// A world placed by its HOME alone, as a user's is whatever variables
    /// a host strips; its `XDG_RUNTIME_DIR` is set as logind sets it, for
    /// the processes that keep it, and Windlass must not follow it.
    pub fn at_home() -> Daemon {
        let daemon = Daemon {
            dir: tempfile::tempdir().unwrap(),
            env: Vec::new(),
            home: true,
        };
        for directory in ["home", "xdg-run"] {
            std::fs::create_dir_all(daemon.dir.path().join(directory)).unwrap();
        }
        daemon
    }

    /// The world's home directory (of an [`Daemon::at_home`] world).
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// The variables that place a bridge, and the daemon it starts.
    pub fn environment(&self) -> Vec<(String, String)> {
        let path = |name: &str| self.dir.path().join(name).display().to_string();
        let mut env = match self.home {
            true => vec![
                ("HOME".to_owned(), path("home")),
                ("XDG_RUNTIME_DIR".to_owned(), path("xdg-run")),
            ],
            false => vec![
                ("WINDLASS_RUNTIME_DIR".to_owned(), path("run/windlass")),
                ("XDG_STATE_HOME".to_owned(), path("state")),
                ("XDG_CONFIG_HOME".to_owned(), path("config")),
            ],
        };
        env.extend(self.env.iter().cloned());
        env
    }

    /// A bridge to this daemon with `args`, handshake done.
    pub fn session(&self, args: &[String]) -> Session {
        self.session_as(args, Client::default())
    }

    pub fn session_as(&self, args: &[String], client: Client) -> Session {
        let client = Client {
            daemon: Some(self),
            ..client
        };
        Session::spawn(tempfile::tempdir().unwrap(), args, &client)
    }

    /// The sockets of running (or dead) daemons in the runtime directory.
    pub fn sockets(&self) -> Vec<PathBuf> {
        let runtime = match self.home {
            true => self.home().join(".local/state/windlass/run"),
            false => self.dir.path().join("run/windlass"),
        };
        std::fs::read_dir(runtime)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|entry| entry.path())
                    .filter(|path| path.extension().is_some_and(|ext| ext == "sock"))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Runs `windlass ARGS` as a host runs a hook in this daemon's world:
    /// `input` on stdin; it must exit 0.
    pub fn hook(&self, args: &[&str], input: &str) -> std::process::Output {
        let output = hook_process(args, input, self.environment());
        assert!(output.status.success(), "a hook always exits 0: {output:?}");
        output
    }

    /// Runs `windlass stop` in this daemon's world.
    pub fn stop(&self) -> std::process::Output {
        Command::new(windlass_binary())
            .arg("stop")
            .envs(self.environment())
            .output()
            .unwrap()
    }
}

impl Drop for Daemon {
    /// Stops the daemon, then ends any windlass process of this world
    /// still running: a bridge whose host was still exiting when the
    /// daemon stopped starts another, which would outlive the test.
    fn drop(&mut self) {
        let _ = self.stop();
        let Some((name, value)) = self.environment().into_iter().next() else {
            return;
        };
        let marker = format!("{name}={value}");
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = world_processes(&marker);
            if left.is_empty() || Instant::now() > deadline {
                for pid in left {
                    let _ = Command::new("kill").arg(pid.to_string()).status();
                }
                return;
            }
            let _ = self.stop();
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The windlass processes (daemons, bridges) whose environment holds
/// `marker` (`NAME=VALUE`).
fn world_processes(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
            let windlass = exe
                .file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("windlass"));
            windlass
                && std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                    environ
                        .split(|byte| *byte == 0)
                        .any(|entry| entry == marker.as_bytes())
                })
        })
        .collect()
}

pub struct Session {
    child: Child,
    stdin: Stdin,
    waiters: Waiters,
    /// The roots the client answers `roots/list` with, as URIs.
    roots: Arc<Mutex<Vec<String>>>,
    next_id: AtomicI64,
    /// Kept so logs and state stay inside the test's own directory.
    pub state: tempfile::TempDir,
    /// Directories that must outlive the session.
    kept: Mutex<Vec<tempfile::TempDir>>,
    /// Every line windlass wrote on stderr so far.
    pub stderr: Arc<Mutex<Vec<String>>>,
}

impl Session {
    /// Starts windlass with `args` and completes the MCP handshake.
    pub fn start(args: &[String]) -> Session {
        Session::start_with_state(tempfile::tempdir().unwrap(), args)
    }

    /// Starts windlass with extra environment variables.
    pub fn start_with_env(args: &[String], env: &[(&str, &str)]) -> Session {
        let client = Client {
            env,
            ..Client::default()
        };
        Session::spawn(tempfile::tempdir().unwrap(), args, &client)
    }

    /// Starts windlass with its state and config directories under `state`.
    pub fn start_with_state(state: tempfile::TempDir, args: &[String]) -> Session {
        Session::spawn(state, args, &Client::default())
    }

    /// Starts windlass with `config` as the user's configuration file.
    pub fn start_with_user_config(config: &str, args: &[String]) -> Session {
        let state = tempfile::tempdir().unwrap();
        let directory = state.path().join("config/windlass");
        std::fs::create_dir_all(&directory).unwrap();
        std::fs::write(directory.join("config.toml"), config).unwrap();
        Session::start_with_state(state, args)
    }

    /// Starts windlass for a client presenting itself as `client`.
    pub fn start_as(args: &[String], client: &Client) -> Session {
        Session::spawn(tempfile::tempdir().unwrap(), args, client)
    }

    fn spawn(state: tempfile::TempDir, args: &[String], client: &Client) -> Session {
        let windlass = client
            .program
            .map_or_else(windlass_binary, Path::to_path_buf);
        let mut command = match client.through {
            [] => Command::new(windlass),
            [program, arguments @ ..] => {
                let mut command = Command::new(program);
                command.args(arguments).arg(windlass);
                command
            }
        };
        match client.daemon {
            Some(daemon) => command.args(args).envs(daemon.environment()),
            None => command
                .arg("--standalone")
                .args(args)
                .env("WINDLASS_RUNTIME_DIR", state.path().join("run/windlass"))
                .env("XDG_STATE_HOME", state.path().join("state"))
                .env("XDG_CONFIG_HOME", state.path().join("config")),
        };
        match client.default_log {
            true => command.env_remove("WINDLASS_LOG"),
            false => command.env("WINDLASS_LOG", "debug"),
        };
        command
            .envs(client.env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = client.cwd {
            command.current_dir(cwd);
        }
        let mut child = command.spawn().expect("spawn windlass");
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let stdin: Stdin = Arc::new(Mutex::new(child.stdin.take()));
        let waiters: Waiters = Arc::default();
        let roots = Arc::new(Mutex::new(uris(client.roots.iter().flatten())));
        spawn_reader(stdout, waiters.clone(), stdin.clone(), roots.clone());
        let stderr_lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let lines = stderr_lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("windlass: {line}");
                lines.lock().unwrap().push(line);
            }
        });
        let session = Session {
            child,
            stdin,
            waiters,
            roots,
            next_id: AtomicI64::new(1),
            state,
            kept: Mutex::default(),
            stderr: stderr_lines,
        };
        let capabilities = match client.roots {
            Some(_) => json!({"roots": {"listChanged": true}}),
            None => json!({}),
        };
        session.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": capabilities, "clientInfo": {"name": "tests", "version": "0"}}),
        );
        session.notify("notifications/initialized", json!({}));
        session
    }

    /// Sends a request and returns the receiver of its response.
    pub fn send(&self, method: &str, params: Value) -> Receiver<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = channel();
        self.waiters.lock().unwrap().insert(id, sender);
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        receiver
    }

    pub fn request(&self, method: &str, params: Value) -> Value {
        wait(&self.send(method, params))
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn write(&self, message: &Value) {
        write_line(&self.stdin, message);
    }

    /// Changes the client's roots and tells windlass, as a client does
    /// after `/add-dir`.
    pub fn set_roots(&self, roots: &[&Path]) {
        *self.roots.lock().unwrap() = uris(roots.iter().copied());
        self.notify("notifications/roots/list_changed", json!({}));
    }

    pub fn call_async(&self, tool: &str, arguments: Value) -> Receiver<Value> {
        self.send("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    pub fn call(&self, tool: &str, arguments: Value) -> ToolOutcome {
        outcome(wait(&self.call_async(tool, arguments)))
    }

    /// Calls a tool expecting success, and returns its text.
    pub fn ok(&self, tool: &str, arguments: Value) -> String {
        let outcome = self.call(tool, arguments.clone());
        assert!(
            !outcome.is_error,
            "{tool} {arguments} failed: {}",
            outcome.text
        );
        outcome.text
    }

    /// Calls a tool expecting a tool error, and returns its text.
    pub fn err(&self, tool: &str, arguments: Value) -> String {
        let outcome = self.call(tool, arguments.clone());
        assert!(
            outcome.is_error,
            "{tool} {arguments} should fail, got: {}",
            outcome.text
        );
        outcome.text
    }

    /// Calls `status` until `done` holds for its text, failing after the
    /// watchdog.
    pub fn wait_for_status(&self, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WATCHDOG;
        loop {
            let status = self.ok("status", json!({}));
            if done(&status) {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "status never matched; last:\n{status}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Keeps `dir` until the session ends.
    pub fn keep(&self, dir: tempfile::TempDir) {
        self.kept.lock().unwrap().push(dir);
    }

    /// Closes windlass's stdin, as a client that goes away does.
    pub fn close_stdin(&self) {
        self.stdin.lock().unwrap().take();
    }

    /// Waits for the process to exit and returns its exit code.
    pub fn wait_exit(&mut self) -> Option<i32> {
        let deadline = Instant::now() + WATCHDOG;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "windlass did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn wait(receiver: &Receiver<Value>) -> Value {
    receiver
        .recv_timeout(WATCHDOG)
        .expect("no answer from windlass within the watchdog")
}

pub fn outcome(response: Value) -> ToolOutcome {
    if let Some(error) = response.get("error") {
        return ToolOutcome {
            text: error.to_string(),
            is_error: true,
        };
    }
    let result = &response["result"];
    let text = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    ToolOutcome {
        text,
        is_error: result["isError"].as_bool().unwrap_or(false),
    }
}

fn write_line(stdin: &Stdin, message: &Value) {
    let mut stdin = stdin.lock().unwrap();
    let stdin = stdin.as_mut().expect("stdin was closed");
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
}

fn uris<P: AsRef<Path>>(paths: impl IntoIterator<Item = P>) -> Vec<String> {
    paths
        .into_iter()
        .map(|path| format!("file://{}", path.as_ref().display()))
        .collect()
}

/// Reads windlass's stdout: responses go to their waiters; `roots/list`
/// is answered with the client's roots, any other request refused.
fn spawn_reader(
    stdout: std::process::ChildStdout,
    waiters: Waiters,
    stdin: Stdin,
    roots: Arc<Mutex<Vec<String>>>,
) {
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                panic!("windlass wrote a non-JSON line to stdout: {line}");
            };
            let Some(id) = message.get("id").cloned() else {
                continue;
            };
            if let Some(method) = message.get("method").and_then(Value::as_str) {
                let answer = match method {
                    "roots/list" => {
                        let listed: Vec<Value> = roots
                            .lock()
                            .unwrap()
                            .iter()
                            .map(|uri| json!({"uri": uri}))
                            .collect();
                        json!({"jsonrpc": "2.0", "id": id, "result": {"roots": listed}})
                    }
                    _ => {
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "not supported"}})
                    }
                };
                write_line(&stdin, &answer);
                continue;
            }
            let Some(id) = id.as_i64() else { continue };
            if let Some(sender) = waiters.lock().unwrap().remove(&id) {
                let _ = sender.send(message);
            }
        }
    });
}

/// Writes files into a fresh directory: (relative path, content) pairs.
pub fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }
    dir
}

/// A `[server.NAME]` table serving Python with `command` and its
/// whitespace-separated `args`, then any `extra` lines.
pub fn python_server(name: &str, command: &str, args: &str, extra: &str) -> String {
    let args: Vec<String> = args
        .split_whitespace()
        .map(|arg| format!("{arg:?}"))
        .collect();
    format!(
        "[server.{name}]\ncommand = {command:?}\nargs = [{}]\nlanguages = [\"python\"]\n{extra}\n",
        args.join(", ")
    )
}

pub fn root_arg(dir: &Path) -> Vec<String> {
    vec!["-r".into(), dir.display().to_string()]
}

/// Runs a windlass subcommand with state and config under `state`.
pub fn run_windlass(state: &Path, args: &[&str]) -> std::process::Output {
    Command::new(windlass_binary())
        .args(args)
        .env("XDG_STATE_HOME", state.join("state"))
        .env("XDG_CONFIG_HOME", state.join("config"))
        .output()
        .unwrap()
}

/// Runs `windlass ARGS` as a host runs a hook: `input` on stdin, the
/// state directories under `state` (an `XDG_STATE_HOME`).
pub fn run_hook(state: &Path, args: &[&str], input: &str) -> std::process::Output {
    let state = ("XDG_STATE_HOME".to_owned(), state.display().to_string());
    hook_process(args, input, vec![state])
}

/// What a hook printed, as JSON; `None` for nothing.
pub fn hook_answer(output: &std::process::Output) -> Option<Value> {
    let text = String::from_utf8(output.stdout.clone()).unwrap();
    match text.trim() {
        "" => None,
        text => Some(serde_json::from_str(text).unwrap()),
    }
}

/// A hook process with `env`, `input` on stdin, run to its end.
pub fn hook_process(
    args: &[&str],
    input: &str,
    env: Vec<(String, String)>,
) -> std::process::Output {
    let mut child = Command::new(windlass_binary())
        .args(args)
        .envs(env)
        .env_remove("WINDLASS_STATE_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

/// The lines a child writes to stdout, on a channel as they come.
pub fn lines_of(stdout: std::process::ChildStdout) -> Receiver<String> {
    let (lines, received) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    received
}

/// Polls `done` until it holds, failing after the watchdog.
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + WATCHDOG;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Where mockls records its messages: a hidden directory of the project,
/// which mockls's own file scan skips.
pub fn record_path(project: &Path) -> PathBuf {
    let directory = project.join(".records");
    std::fs::create_dir_all(&directory).unwrap();
    directory.join("record.jsonl")
}

/// Reads mockls's `--record` file as (direction, message) pairs.
/// A `/proc` file's field in kB (`VmRSS:` of `/proc/PID/status`, `Pss:`
/// of `smaps_rollup`); 0 when it cannot be read.
pub fn proc_kib(file: &str, field: &str) -> u64 {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .find(|line| line.starts_with(field))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .unwrap_or(0)
}

/// Resident memory of a process, in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    proc_kib(&format!("/proc/{pid}/status"), "VmRSS:")
}

/// A command prefix for [`Client::through`] that runs windlass in a mount
/// namespace of its own where the directory the environment variable
/// `variable` names is mounted read-only (for root too); `None`, saying
/// so, where mount namespaces are not allowed (a failure under `CI=true`,
/// where they are).
pub fn read_only_directory(variable: &str) -> Option<Vec<String>> {
    let allowed = Command::new("unshare")
        .args(["--mount", "true"])
        .status()
        .is_ok_and(|status| status.success());
    if !allowed {
        skip("mount namespaces need root (`unshare --mount` failed)");
        return None;
    }
    let script = format!(
        "mkdir -p \"${variable}\" && mount --bind -o ro \"${variable}\" \"${variable}\" && exec \"$@\""
    );
    Some(
        ["unshare", "--mount", "sh", "-c", &script, "sh"]
            .map(str::to_owned)
            .to_vec(),
    )
}

/// The client's answer, in mockls's record, to the first request of
/// `method` mockls sent.
pub fn recorded_answer(path: &Path, method: &str) -> Option<Value> {
    let messages = recorded(path);
    let (_, request) = messages
        .iter()
        .find(|(direction, m)| direction == "out" && m["method"] == method)?;
    messages
        .iter()
        .find(|(direction, m)| {
            direction == "in" && m["id"] == request["id"] && m["method"].is_null()
        })
        .map(|(_, answer)| answer.clone())
}

pub fn recorded(path: &Path) -> Vec<(String, Value)> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|entry| {
            (
                entry["dir"].as_str().unwrap_or_default().to_owned(),
                entry["message"].clone(),
            )
        })
        .collect()
}
