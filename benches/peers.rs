//! Post-edit diagnostics beside serena-agent, on the same pyright and the
//! same file; run by hand:
//!
//! ```sh
//! cargo bench --bench peers            # PEERS_EDITS=20 writes a phase
//! ```
//!
//! The bench installs serena-agent 2.1.0 from PyPI into a virtual
//! environment of its own (`target/peers/serena-venv`, kept for the next
//! run) with `python3 -m venv` and pip; when that fails it says why and
//! measures Windlass alone.
//!
//! What Serena is: its diagnostics tool is `get_diagnostics_for_file`
//! (`{"relative_path": ...}`), in its `tools` agent interface (2.1's
//! default interface is `REPL`, one `serena_repl` tool running Python
//! that calls the same function). Before each call it polls the mtimes of
//! the project's source files and sends pyright
//! `workspace/didChangeWatchedFiles` for those that changed; then it
//! opens the file (`didOpen` with the text on disk), asks
//! `textDocument/diagnostic`, and closes the file again. When that pull
//! answer is empty it waits up to 2.5 s for a non-empty publication
//! before believing it, so a clean file costs it 2.5 s. Its Python server
//! is pyright by default, run through `uvx` at its own pinned version
//! (1.1.403); the bench points it, with `ls_specific_settings.python.ls_path`
//! in a `serena_config.yml` of the bench's own `SERENA_HOME`, at the
//! `pyright-langserver` on PATH, the one Windlass runs. It is started as
//! `serena start-mcp-server --transport stdio --project COPY --context
//! agent --agent-interface tools` with the web dashboard, its browser tab
//! and the GUI log window turned off, and usage reporting off
//! (`SERENA_USAGE_REPORTING=false`).
//!
//! Windlass runs standalone, configured with that same pyright as the only
//! Python server (its default also starts ruff beside it), and is asked
//! `diagnostics` with `{"file": ...}`.
//!
//! Each gets its own copy of requests 2.34.2. `src/requests/hooks.py`
//! (imported by `sessions.py`) is written PEERS_EDITS times, alternating
//! a type error of its own (`broken: int = "edit N"`) and the file as it
//! was; for each write, in turn (who goes first alternates), the file is
//! written in one side's copy and that side asked, and the time from the
//! write to the answer taken. An answer is wrong when it lacks this
//! write's error after an edit, or shows the error after a revert. Each
//! write comes 300 ms after the previous answer, as an agent pauses. For
//! Windlass, pyright's own answer about each write's outcome (the reply to
//! Windlass's `textDocument/diagnostic`, or a publication for a server
//! that is waited for) is read from its event store too, and the answer's
//! time beyond it printed.
//!
//! Two phases: quiet, then with another session working, shared by both:
//! a third copy of requests served by a standalone Windlass with its own
//! pyright, with every module of the package open, whose `compat.py`
//! (imported by most of them, which pyright checks again each time) is
//! edited, a type error and its fix in turn, and its diagnostics asked in
//! a loop for the whole phase. It loads the two cores, not either side's
//! server. `uptime` is printed around each phase.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/common/mod.rs"]
mod common;
mod percentiles;
mod store_events;

use common::projects::real_project;
use common::*;
use percentiles::report;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant, SystemTime};
use store_events::{diagnostics_events, epoch_millis, last_publication};

const PROJECT: &str = "requests-2.34.2";
const EDITED: &str = "src/requests/hooks.py";
/// The file the background session edits, imported by most of the
/// package, all of which it keeps open.
const LOADED: &str = "src/requests/compat.py";
const SERENA: &str = "serena-agent==2.1.0";
const SERENA_VERSION: &str = "Serena 2.1.0";
/// The longest an answer may take before the side counts as stuck.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);
/// The first answer waits for the server to load the project.
const FIRST_ANSWER_TIMEOUT: Duration = Duration::from_secs(300);
const INSTALL_TIMEOUT: Duration = Duration::from_secs(900);
/// Between one side's answer and the next write, as an agent pauses.
const PAUSE: Duration = Duration::from_millis(300);

fn main() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let writes: usize = std::env::var("PEERS_EDITS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(20);
    let Some(windlass_copy) = real_project(PROJECT) else {
        return skip("target/real-projects/requests-2.34.2 is missing (.ci/run unpacks it)");
    };
    let serena_copy = real_project(PROJECT).unwrap();
    uptime("start");
    let mut sides = vec![Side::new("windlass", Peer::windlass(windlass_copy.path()))];
    match install_serena().and_then(|serena| Peer::serena(&serena, serena_copy.path())) {
        Ok(peer) => sides.push(Side::new("serena", peer)),
        Err(why) => println!("SKIPPED Serena: {why}"),
    }
    for side in &mut sides {
        side.warm_up();
    }
    let quiet = run_phase(&mut sides, "quiet", 1, writes);
    uptime("after the quiet phase");
    let load = Load::start();
    let loaded = run_phase(&mut sides, "loaded", 2, writes);
    uptime("after the loaded phase");
    println!("background session: {} checks", load.stop());
    println!();
    summarize(&quiet);
    summarize(&loaded);
}

/// Prints the load average, labelled.
fn uptime(label: &str) {
    let output = Command::new("uptime").output();
    let text = output.map_or_else(
        |error| error.to_string(),
        |output| String::from_utf8_lossy(&output.stdout).trim().to_owned(),
    );
    println!("uptime ({label}): {text}");
}

/// One MCP server under test, with its copy of the project.
enum Peer {
    Windlass {
        session: Session,
        root: PathBuf,
        _config: tempfile::TempDir,
    },
    Serena {
        client: McpClient,
        root: PathBuf,
    },
}

impl Peer {
    /// Windlass standalone on `root`, with pyright as its only Python
    /// server.
    fn windlass(root: &Path) -> Peer {
        let root = root.canonicalize().unwrap();
        let (session, config) = pyright_only_session(&root);
        Peer::Windlass {
            session,
            root,
            _config: config,
        }
    }

    fn serena(serena: &Path, root: &Path) -> Result<Peer, String> {
        let root = root.canonicalize().unwrap();
        let client = start_serena(serena, &root)?;
        Ok(Peer::Serena { client, root })
    }

    fn root(&self) -> &Path {
        match self {
            Peer::Windlass { root, .. } | Peer::Serena { root, .. } => root,
        }
    }

    /// Windlass's event store, where pyright's publications are recorded.
    fn store(&self) -> Option<PathBuf> {
        match self {
            Peer::Windlass { session, .. } => {
                Some(session.state.path().join("state/windlass/windlass.db"))
            }
            Peer::Serena { .. } => None,
        }
    }

    /// The edited file's diagnostics as the tool gave them, or why there
    /// was no answer.
    fn diagnostics(&mut self, timeout: Duration) -> Result<String, String> {
        match self {
            Peer::Windlass { session, .. } => {
                let outcome = session.call("diagnostics", json!({"file": EDITED}));
                match outcome.is_error {
                    true => Err(outcome.text),
                    false => Ok(outcome.text),
                }
            }
            Peer::Serena { client, .. } => {
                let arguments = json!({"relative_path": EDITED});
                let response = client.call_tool("get_diagnostics_for_file", arguments, timeout)?;
                let outcome = outcome(response);
                match outcome.is_error {
                    true => Err(outcome.text),
                    false => Ok(outcome.text),
                }
            }
        }
    }
}

/// A standalone Windlass session whose user configuration names pyright
/// as the only Python server, logging as a user's does.
fn pyright_only_session(root: &Path) -> (Session, tempfile::TempDir) {
    let config = tempfile::tempdir().unwrap();
    let directory = config.path().join("windlass");
    std::fs::create_dir_all(&directory).unwrap();
    let table = python_server("python", "pyright-langserver", "--stdio", "");
    std::fs::write(directory.join("config.toml"), table).unwrap();
    let home = config.path().display().to_string();
    let env = [("XDG_CONFIG_HOME", home.as_str())];
    let client = Client {
        env: &env,
        default_log: true,
        ..Client::default()
    };
    (Session::start_as(&root_arg(root), &client), config)
}

/// A side's samples in one phase.
#[derive(Default)]
struct Samples {
    edits: Vec<Duration>,
    reverts: Vec<Duration>,
    wrong: usize,
    /// Answers that never came, or came as errors.
    failed: usize,
    /// Each write's wall-clock time, its answer's time, and whether it
    /// added the error.
    timeline: Vec<(SystemTime, Duration, bool)>,
    /// Windlass only: from the write to pyright's last diagnostics of its
    /// outcome before the answer, and the answer beyond that.
    server_times: Vec<Duration>,
    overheads: Vec<Duration>,
}

/// A peer, the edited file's text as it was, and what each phase measured.
struct Side {
    name: &'static str,
    peer: Peer,
    original: String,
    /// Set when an answer did not come in time: the side is asked no more.
    stuck: bool,
}

impl Side {
    fn new(name: &'static str, peer: Peer) -> Side {
        let original = std::fs::read_to_string(peer.root().join(EDITED)).unwrap();
        Side {
            name,
            peer,
            original,
            stuck: false,
        }
    }

    /// The first answer (the server loading the project), then an edit
    /// and its revert, none counted.
    fn warm_up(&mut self) {
        let started = Instant::now();
        if let Err(why) = self.peer.diagnostics(FIRST_ANSWER_TIMEOUT) {
            println!("{}: no first answer: {why}", self.name);
            self.stuck = true;
            return;
        }
        println!(
            "{}: first answer in {:.1} s",
            self.name,
            started.elapsed().as_secs_f64()
        );
        for tag in [0, 1] {
            let _ = self.write_and_ask(tag, tag == 0);
        }
    }

    /// Writes the edited file (with edit `tag`'s error when `broken`),
    /// asks for its diagnostics, and times it from the write.
    fn write_and_ask(
        &mut self,
        tag: usize,
        broken: bool,
    ) -> (SystemTime, Duration, Result<String, String>) {
        let text = match broken {
            true => format!("{}\nbroken: int = \"edit {tag}\"\n", self.original),
            false => self.original.clone(),
        };
        let file = self.peer.root().join(EDITED);
        let (written, started) = (SystemTime::now(), Instant::now());
        std::fs::write(file, text).unwrap();
        let answer = self.peer.diagnostics(ANSWER_TIMEOUT);
        (written, started.elapsed(), answer)
    }

    /// One timed write, counted into `samples`; prints a line for it.
    fn step(&mut self, tag: usize, broken: bool, samples: &mut Samples) {
        if self.stuck {
            return;
        }
        let (written, took, answer) = self.write_and_ask(tag, broken);
        samples.timeline.push((written, took, broken));
        let verdict = match &answer {
            Ok(text) if right(text, tag, broken) => "right",
            Ok(_) => "WRONG",
            Err(_) => "FAILED",
        };
        let kind = if broken { "error" } else { "revert" };
        println!(
            "  {:<8} write {tag:>3} ({kind:<6}) {:>7.0} ms  {verdict}",
            self.name,
            took.as_secs_f64() * 1000.0
        );
        match answer {
            Ok(text) if verdict == "WRONG" => {
                samples.wrong += 1;
                println!("    answer: {}", text.replace('\n', "\n            "));
            }
            Ok(_) => {}
            Err(why) => {
                samples.failed += 1;
                samples.wrong += 1;
                println!("    no answer: {why}");
                self.stuck = took >= ANSWER_TIMEOUT;
            }
        }
        match broken {
            true => samples.edits.push(took),
            false => samples.reverts.push(took),
        }
    }
}

/// Whether an answer shows edit `tag`'s type error exactly when the file
/// has it: after a revert, no error of any edit.
fn right(answer: &str, tag: usize, broken: bool) -> bool {
    let has_error = answer.contains("reportAssignmentType");
    match broken {
        true => has_error && answer.contains(&format!("'edit {tag}'")),
        false => !has_error,
    }
}

/// One phase's samples per side, by side name.
struct Phase {
    label: &'static str,
    sides: Vec<(&'static str, Samples)>,
}

/// `writes` writes to every side, edits and reverts in turn; the side
/// that goes first alternates. Tags are unique across phases, so an
/// earlier phase's error cannot pass for this one's.
fn run_phase(sides: &mut [Side], label: &'static str, number: usize, writes: usize) -> Phase {
    println!("\nphase: {label}");
    let mut samples: Vec<Samples> = sides.iter().map(|_| Samples::default()).collect();
    for n in 0..writes {
        let tag = number * 1000 + n;
        let broken = n.is_multiple_of(2);
        let mut order: Vec<usize> = (0..sides.len()).collect();
        if n % 4 >= 2 {
            order.reverse();
        }
        for index in order {
            std::thread::sleep(PAUSE);
            sides[index].step(tag, broken, &mut samples[index]);
        }
    }
    // The store's writer commits within 100 ms of an event.
    std::thread::sleep(Duration::from_millis(500));
    for (side, samples) in sides.iter().zip(&mut samples) {
        if let Some(store) = side.peer.store() {
            read_publications(&store, &side.peer.root().join(EDITED), samples);
        }
    }
    Phase {
        label,
        sides: sides.iter().map(|side| side.name).zip(samples).collect(),
    }
}

/// For each write, pyright's last diagnostics of its outcome before the
/// answer (asked or published), from Windlass's event store.
fn read_publications(store: &Path, file: &Path, samples: &mut Samples) {
    let published = diagnostics_events(store, &format!("file://{}", file.display()));
    for (written, answer, broken) in &samples.timeline {
        let from = epoch_millis(*written);
        let to = from + answer.as_millis() as i64 + 5;
        if let Some(at) = last_publication(&published, from, to, *broken) {
            let publish = Duration::from_millis((at - from).max(0) as u64);
            samples.server_times.push(publish);
            samples.overheads.push(answer.saturating_sub(publish));
        }
    }
}

fn summarize(phase: &Phase) {
    for (name, samples) in &phase.sides {
        let all: Vec<Duration> = samples
            .edits
            .iter()
            .chain(&samples.reverts)
            .copied()
            .collect();
        let label = format!("{}: {name}", phase.label);
        report(&format!("{label}, write -> answer"), &all);
        report(&format!("{label}, edits (error added)"), &samples.edits);
        report(&format!("{label}, reverts (clean file)"), &samples.reverts);
        if !samples.server_times.is_empty() {
            report(&format!("{label}, pyright answers"), &samples.server_times);
            report(&format!("{label}, answer - pyright's"), &samples.overheads);
        }
        println!(
            "{label}: {} wrong answers of {} ({} without an answer)",
            samples.wrong,
            all.len(),
            samples.failed
        );
    }
}

/// The background session: a standalone Windlass on a third copy, editing
/// `sessions.py` and asking its diagnostics in a loop until stopped.
struct Load {
    stop: Arc<AtomicBool>,
    checks: Arc<AtomicUsize>,
    thread: std::thread::JoinHandle<()>,
}

impl Load {
    /// Starts the loop and returns once its server has answered once.
    fn start() -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let checks = Arc::new(AtomicUsize::new(0));
        let (ready, started) = std::sync::mpsc::channel();
        let thread = {
            let (stop, checks) = (stop.clone(), checks.clone());
            std::thread::spawn(move || load_loop(&stop, &checks, ready))
        };
        let _ = started.recv_timeout(FIRST_ANSWER_TIMEOUT);
        Load {
            stop,
            checks,
            thread,
        }
    }

    /// Stops the loop; returns how many checks it made.
    fn stop(self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
        self.checks.load(Ordering::Relaxed)
    }
}

fn load_loop(stop: &AtomicBool, checks: &AtomicUsize, ready: std::sync::mpsc::Sender<()>) {
    let copy = real_project(PROJECT).unwrap();
    let root = copy.path().canonicalize().unwrap();
    let (session, _config) = pyright_only_session(&root);
    let file = root.join(LOADED);
    let original = std::fs::read_to_string(&file).unwrap();
    session.call("diagnostics", json!({"files": package_files(&root)}));
    let _ = ready.send(());
    for n in 0.. {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let text = match n % 2 {
            0 => format!("{original}\nbackground: int = \"load {n}\"\n"),
            _ => original.clone(),
        };
        std::fs::write(&file, text).unwrap();
        session.call("diagnostics", json!({"file": LOADED}));
        checks.fetch_add(1, Ordering::Relaxed);
    }
}

/// The package's modules, relative to `root`.
fn package_files(root: &Path) -> Vec<String> {
    let package = Path::new(EDITED).parent().unwrap();
    let mut files: Vec<String> = std::fs::read_dir(root.join(package))
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".py"))
        .map(|name| package.join(name).display().to_string())
        .collect();
    files.sort();
    files
}

/// Where the bench keeps Serena's environment and home.
fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/peers")
}

/// The `serena` program of serena-agent 2.1.0, installed into the bench's
/// own virtual environment when it is not there yet.
fn install_serena() -> Result<PathBuf, String> {
    let venv = peers_dir().join("serena-venv");
    let serena = venv.join("bin/serena");
    if serena_version(&serena).starts_with(SERENA_VERSION) {
        return Ok(serena);
    }
    if !have("python3") {
        return Err("python3 is not on PATH".into());
    }
    println!("installing {SERENA} into {}", venv.display());
    if !venv.join("bin/pip").exists() {
        let mut command = Command::new("python3");
        command.args(["-m", "venv"]).arg(&venv);
        run_logged(command, "venv")?;
    }
    let mut command = Command::new(venv.join("bin/pip"));
    command.args(["install", "--disable-pip-version-check", "-q", SERENA]);
    run_logged(command, "pip")?;
    let version = serena_version(&serena);
    match version.starts_with(SERENA_VERSION) {
        true => Ok(serena),
        false => Err(format!("`serena --version` says {version:?} after pip")),
    }
}

fn serena_version(serena: &Path) -> String {
    Command::new(serena)
        .arg("--version")
        .output()
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// Runs `command` to its end within the install timeout, its output in
/// `target/peers/NAME.log`; on failure, why, with the log's last lines.
fn run_logged(mut command: Command, name: &str) -> Result<(), String> {
    let log = peers_dir().join(format!("{name}.log"));
    std::fs::create_dir_all(peers_dir()).map_err(|error| error.to_string())?;
    let file = std::fs::File::create(&log).map_err(|error| error.to_string())?;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(file.try_clone().map_err(|error| error.to_string())?)
        .stderr(file)
        .spawn()
        .map_err(|error| format!("{name} did not start: {error}"))?;
    let deadline = Instant::now() + INSTALL_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|error| error.to_string())? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{name} took over {INSTALL_TIMEOUT:?}"));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    if status.success() {
        return Ok(());
    }
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let tail: Vec<&str> = text.lines().rev().take(10).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(format!("{name} failed ({status}):\n{}", tail.join("\n")))
}

/// Serena's global configuration for the bench: no dashboard, no GUI, the
/// tools interface, and pyright on PATH for Python. Written afresh each
/// run, so no project registered by an earlier run stays listed.
fn serena_home() -> Result<PathBuf, String> {
    let home = peers_dir().join("serena-home");
    let pyright = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("pyright-langserver"))
        .find(|path| path.is_file())
        .ok_or("pyright-langserver is not on PATH")?;
    let config = format!(
        "language_backend: LSP\n\
         agent_interface: tools\n\
         gui_log_window: False\n\
         web_dashboard: False\n\
         web_dashboard_open_on_launch: False\n\
         log_level: 20\n\
         trace_lsp_communication: False\n\
         ls_specific_settings:\n  python:\n    ls_path: {:?}\n\
         ignored_paths: []\n\
         tool_timeout: 240\n\
         excluded_tools: []\n\
         included_optional_tools: []\n\
         base_modes:\n  - interactive\n  - editing\n\
         projects: []\n",
        pyright.display().to_string()
    );
    std::fs::create_dir_all(&home).map_err(|error| error.to_string())?;
    std::fs::write(home.join("serena_config.yml"), config).map_err(|error| error.to_string())?;
    Ok(home)
}

/// Serena's MCP server on `root`, handshake done; its log goes to
/// `target/peers/serena.log`.
fn start_serena(serena: &Path, root: &Path) -> Result<McpClient, String> {
    let home = serena_home()?;
    let log = std::fs::File::create(peers_dir().join("serena.log")).map_err(|e| e.to_string())?;
    let mut command = Command::new(serena);
    command
        .args(["start-mcp-server", "--transport", "stdio", "--project"])
        .arg(root)
        .args(["--context", "agent", "--agent-interface", "tools"])
        .args([
            "--enable-web-dashboard",
            "false",
            "--open-web-dashboard",
            "false",
        ])
        .args(["--enable-gui-log-window", "false"])
        .env("SERENA_HOME", &home)
        .env("SERENA_USAGE_REPORTING", "false")
        .current_dir(root)
        .stderr(log);
    let mut client = McpClient::spawn(command)?;
    let initialize = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "peers-bench", "version": "0"}});
    let answer = client.request("initialize", initialize, FIRST_ANSWER_TIMEOUT)?;
    println!(
        "serena: {} {}",
        answer["result"]["serverInfo"]["name"], answer["result"]["serverInfo"]["version"]
    );
    client.notify("notifications/initialized", json!({}))?;
    Ok(client)
}

/// A plain MCP client over stdio (newline-delimited JSON-RPC) for a
/// server that is not Windlass: every wait has a deadline.
struct McpClient {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: i64,
}

impl McpClient {
    fn spawn(mut command: Command) -> Result<McpClient, String> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|error| format!("{command:?} did not start: {error}"))?;
        let lines = lines_of(child.stdout.take().unwrap());
        let stdin = child.stdin.take();
        Ok(McpClient {
            child,
            stdin,
            lines,
            next_id: 1,
        })
    }

    fn write(&mut self, message: &Value) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        writeln!(stdin, "{message}")
            .and_then(|()| stdin.flush())
            .map_err(|error| format!("writing to the server: {error}"))
    }

    fn notify(&mut self, method: &str, params: Value) -> Result<(), String> {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// Sends a request and waits for its response until `timeout`;
    /// requests from the server are refused, notifications skipped.
    fn request(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .map_err(|_| format!("no answer to {method} within {timeout:?}"))?;
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("method").is_some() {
                if let Some(request) = message.get("id") {
                    let refusal = json!({"jsonrpc": "2.0", "id": request, "error": {"code": -32601, "message": "not supported"}});
                    self.write(&refusal)?;
                }
                continue;
            }
            if message["id"] == json!(id) {
                return Ok(message);
            }
        }
    }

    fn call_tool(
        &mut self,
        name: &str,
        arguments: Value,
        timeout: Duration,
    ) -> Result<Value, String> {
        let params = json!({"name": name, "arguments": arguments});
        self.request("tools/call", params, timeout)
    }
}

impl Drop for McpClient {
    /// Closes stdin, as a client that goes away does, so the server stops
    /// its language server; killed if it has not exited in 15 s.
    fn drop(&mut self) {
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
