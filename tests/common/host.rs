//! The real agent hosts, Claude Code and Gemini CLI, with Windlass
//! installed as the README tells a user to (the plugin from this
//! repository's marketplace; the extension linked from its root), each in
//! a HOME and a Windlass daemon world of its own with the freshly built
//! binaries first on PATH, run non-interactively against a scripted
//! [`Model`].

use super::anthropic;
use super::model::{Api, Model, Step};
use super::{Daemon, have, skip, windlass_binary};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant, SystemTime};

/// How long one host process may run: a lease wait of today's build
/// (20 s) and a language server's start fit in it many times.
pub const HOST_DEADLINE: Duration = Duration::from_secs(120);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    Claude,
    Gemini,
}

impl Host {
    pub fn name(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Gemini => "gemini",
        }
    }

    pub fn api(self) -> Api {
        match self {
            Host::Claude => Api::Anthropic,
            Host::Gemini => Api::Gemini,
        }
    }

    /// What the model must do before calling the Windlass tool `tool`:
    /// Claude Code defers MCP tools until ToolSearch loads them.
    pub fn load(self, tool: &str) -> Vec<Step> {
        match self {
            Host::Claude => vec![Step::tool_search(&format!(
                "select:{}{tool}",
                anthropic::MCP_PREFIX
            ))],
            Host::Gemini => Vec::new(),
        }
    }
}

/// The repository: the marketplace (Claude Code) and extension (Gemini
/// CLI) root.
pub fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A host with Windlass installed in a HOME of its own, and the Windlass
/// daemon world its sessions share.
pub struct Installed {
    host: Host,
    /// The user's world: the host's HOME, where Windlass finds its daemon.
    pub daemon: Daemon,
}

impl Installed {
    /// Installs Windlass into `host`, trusting `projects` where the host
    /// asks; `None`, having said why, when the host or pyright is missing
    /// (a failure under `CI=true`).
    pub fn new(host: Host, projects: &[&Path]) -> Option<Installed> {
        for command in [host.name(), "pyright-langserver"] {
            if !have(command) {
                skip(&format!("{command} is not installed (see .ci/run)"));
                return None;
            }
        }
        let installed = Installed {
            host,
            daemon: Daemon::at_home(),
        };
        match host {
            Host::Claude => installed.install_plugin(),
            Host::Gemini => installed.link_extension(projects),
        }
        Some(installed)
    }

    /// `claude plugin marketplace add REPO && claude plugin install
    /// windlass@windlass`, as the README says.
    fn install_plugin(&self) {
        let repository = repository().display().to_string();
        self.setup(&["plugin", "marketplace", "add", &repository], &repository);
        self.setup(&["plugin", "install", "windlass@windlass"], &repository);
    }

    /// Gemini CLI's settings (API-key auth, nothing sent home, no update
    /// checks), the folders it must trust (it installs nothing into an
    /// untrusted one, silently), then `gemini extensions link REPO`:
    /// `install` would copy the repository, `target/` and all.
    fn link_extension(&self, projects: &[&Path]) {
        let gemini = self.daemon.home().join(".gemini");
        std::fs::create_dir_all(&gemini).unwrap();
        let settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "telemetry": {"enabled": false},
            "privacy": {"usageStatisticsEnabled": false},
            "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        });
        std::fs::write(gemini.join("settings.json"), settings.to_string()).unwrap();
        let trusted: serde_json::Map<String, Value> = projects
            .iter()
            .map(|path| path.to_path_buf())
            .chain([repository()])
            .map(|path| (path.display().to_string(), json!("TRUST_FOLDER")))
            .collect();
        std::fs::write(
            gemini.join("trustedFolders.json"),
            Value::Object(trusted).to_string(),
        )
        .unwrap();
        let repository = repository().display().to_string();
        self.setup(
            &["extensions", "link", &repository, "--consent"],
            &repository,
        );
    }

    /// Tells Claude Code of an MCP server over HTTP, as the README says:
    /// `claude mcp add --transport http --header …`.
    pub fn add_http_server(&self, name: &str, url: &str, header: &str, cwd: &Path) {
        assert_eq!(self.host, Host::Claude, "only Claude Code's is scripted");
        let args = [
            "mcp",
            "add",
            "--transport",
            "http",
            "--scope",
            "user",
            name,
            url,
            "--header",
            header,
        ];
        self.setup(&args, &cwd.display().to_string());
    }

    /// What one of the host's own commands (no model) printed, run in
    /// `cwd`.
    pub fn output(&self, args: &[&str], cwd: &str) -> std::process::Output {
        self.command(None)
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    /// Runs a host's set-up command, failing the test on an error.
    fn setup(&self, args: &[&str], cwd: &str) {
        let output = self.output(args, cwd);
        assert!(
            output.status.success(),
            "{} {}: {}{}",
            self.host.name(),
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// The host's command with nothing of this machine's environment but
    /// PATH (the fresh Windlass binaries first): its HOME, this world's
    /// daemon directories, no traffic but to `model`, when there is one.
    /// Set-up commands get no API key: with one, Claude Code spends 17 s
    /// trying to reach its API from `plugin marketplace add`.
    fn command(&self, model: Option<&Model>) -> Command {
        let binaries = windlass_binary().parent().unwrap().to_path_buf();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let path =
            std::env::join_paths(std::iter::once(binaries).chain(std::env::split_paths(&path)))
                .unwrap();
        let mut command = Command::new(self.host.name());
        command
            .env_clear()
            .env("PATH", path)
            .envs(self.daemon.environment());
        match self.host {
            Host::Claude => command.envs([
                ("DISABLE_TELEMETRY", "1"),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
                ("DISABLE_AUTOUPDATER", "1"),
            ]),
            Host::Gemini => command.env("GEMINI_CLI_NO_RELAUNCH", "true"),
        };
        if let Some(model) = model {
            let (url, key) = match self.host {
                Host::Claude => ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
                Host::Gemini => ("GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY"),
            };
            command.env(url, model.url()).env(key, "any");
        }
        command
    }

    /// Starts the host on `project` with a one-line prompt, its model
    /// `model`, and `args` added to its command line.
    pub fn start(&self, project: &Path, model: &Model, args: &[&str]) -> Running {
        let mut command = self.command(Some(model));
        command.args(["-p", "Follow the script."]);
        match self.host {
            Host::Claude => command.args([
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-hook-events",
                "--permission-mode",
                "acceptEdits",
                "--allowedTools",
                // A server's name alone allows every tool of it.
                &format!(
                    "Edit,Read,Write,ToolSearch,{},mcp__windlass-http",
                    anthropic::MCP_PREFIX.trim_end_matches('_')
                ),
            ]),
            Host::Gemini => {
                command.args(["--approval-mode", "yolo", "--output-format", "stream-json"])
            }
        };
        let mut child = command
            .args(args)
            .current_dir(project)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("starting {}: {error}", self.host.name()));
        let stdout = lines(child.stdout.take().unwrap());
        let stderr = collected(child.stderr.take().unwrap());
        Running {
            host: self.host,
            child,
            stdout,
            stderr,
        }
    }

    /// Runs the host on `project` until it exits.
    pub fn run(&self, project: &Path, model: &Model, args: &[&str]) -> Finished {
        self.start(project, model, args).finish()
    }
}

/// A host process at work.
pub struct Running {
    host: Host,
    child: Child,
    stdout: Receiver<(SystemTime, String)>,
    stderr: Receiver<String>,
}

/// What a host process printed, once it exited.
#[derive(Debug)]
pub struct Finished {
    /// Its stream-json events, each with when its line was read.
    pub events: Vec<(SystemTime, Value)>,
    pub stderr: String,
}

impl Finished {
    /// Writes the events to `path`, one JSON line each with the time it
    /// was read (ms since the epoch): what to read when a test fails.
    pub fn dump(&self, path: &Path) {
        let lines: Vec<String> = self
            .events
            .iter()
            .map(|(at, event)| json!({"at_ms": millis(*at), "event": event}).to_string())
            .collect();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, lines.join("\n")).unwrap();
    }
}

/// Milliseconds since the epoch.
pub fn millis(at: SystemTime) -> u128 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map(|since| since.as_millis())
        .unwrap_or_default()
}

impl Running {
    /// Waits for the host to exit (its stdout closes), failing the test
    /// with what it printed when it does not within [`HOST_DEADLINE`] or
    /// exits with an error.
    pub fn finish(self) -> Finished {
        self.finish_within(HOST_DEADLINE)
    }

    /// [`Running::finish`] with a limit of the caller's: a long script.
    pub fn finish_within(mut self, limit: Duration) -> Finished {
        let deadline = Instant::now() + limit;
        let mut events = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout.recv_timeout(left) {
                Ok((at, line)) => events.push((
                    at,
                    serde_json::from_str(&line).unwrap_or(Value::String(line)),
                )),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    let _ = self.child.kill();
                    panic!(
                        "{} did not finish within {limit:?}; it printed:\n{}\n{}",
                        self.host.name(),
                        render(&events),
                        self.stderr.recv().unwrap_or_default()
                    );
                }
            }
        }
        let status = self.child.wait().unwrap();
        let finished = Finished {
            events,
            stderr: self.stderr.recv().unwrap_or_default(),
        };
        assert!(
            status.success(),
            "{} exited with {status}:\n{}\n{}",
            self.host.name(),
            render(&finished.events),
            finished.stderr
        );
        finished
    }
}

fn render(events: &[(SystemTime, Value)]) -> String {
    events
        .iter()
        .map(|(_, event)| event.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A child's stdout, line by line as it comes, with when each came.
fn lines(stdout: impl Read + Send + 'static) -> Receiver<(SystemTime, String)> {
    let (sender, receiver) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if sender.send((SystemTime::now(), line)).is_err() {
                return;
            }
        }
    });
    receiver
}

/// A child's stderr, whole, once it closes.
fn collected(mut stderr: impl Read + Send + 'static) -> Receiver<String> {
    let (sender, receiver) = channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        let _ = sender.send(text);
    });
    receiver
}

/// Ends the whole test process when a test outlives its limit, so that a
/// hang fails fast instead of stalling CI; disarmed when dropped.
pub struct Watchdog {
    _disarm: Sender<()>,
}

impl Watchdog {
    pub fn arm(test: &'static str, limit: Duration) -> Watchdog {
        let (disarm, disarmed) = channel::<()>();
        std::thread::spawn(move || {
            if let Err(RecvTimeoutError::Timeout) = disarmed.recv_timeout(limit) {
                eprintln!("{test}: watchdog fired after {limit:?}; aborting");
                std::process::exit(101);
            }
        });
        Watchdog { _disarm: disarm }
    }
}
