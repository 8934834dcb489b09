//! The real agent hosts (Claude Code, Gemini CLI, Codex, Copilot CLI,
//! OpenCode, Qwen Code) with Windlass installed as the README tells a user
//! to (a plugin from this repository's marketplace, an extension linked
//! from its root, OpenCode's plugin module named in its configuration),
//! each in a HOME of its own (or one shared by hosts working side by
//! side) with the freshly built binaries first on PATH, run
//! non-interactively against a scripted [`Model`].

use super::anthropic;
use super::chat::Dialect;
use super::model::{Api, Model, Step};
use super::{Daemon, have, skip, windlass_binary};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant, SystemTime};

/// Among a run's arguments: the model is one the host gives its patch
/// tool (OpenCode, Copilot CLI), not an argument of the host's.
pub const PATCHING: &str = "--windlass-test-patching";

/// How long one host process may run: a lease wait of today's build
/// (20 s) and a language server's start fit in it many times.
pub const HOST_DEADLINE: Duration = Duration::from_secs(120);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    Claude,
    Gemini,
    Codex,
    Copilot,
    Opencode,
    Qwen,
}

impl Host {
    pub fn name(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Gemini => "gemini",
            Host::Codex => "codex",
            Host::Copilot => "copilot",
            Host::Opencode => "opencode",
            Host::Qwen => "qwen",
        }
    }

    pub fn api(self) -> Api {
        match self {
            Host::Claude => Api::Anthropic,
            Host::Gemini => Api::Gemini,
            Host::Codex => Api::Responses,
            Host::Copilot => Api::Chat(Dialect::Copilot),
            Host::Opencode => Api::Chat(Dialect::Opencode),
            Host::Qwen => Api::Chat(Dialect::Qwen),
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
            _ => Vec::new(),
        }
    }

    /// What the model must do before it edits `files`: Qwen Code edits
    /// only a file read in the session.
    pub fn prepare_edits(self, files: &[&Path]) -> Vec<Step> {
        match self {
            Host::Qwen => files.iter().map(|file| Step::read(file)).collect(),
            _ => Vec::new(),
        }
    }
}

/// The scripted model's name: Codex offers `apply_patch` and its tool
/// search to this one; for Copilot CLI and OpenCode it is a name that gets
/// their edit tools.
pub(super) fn model_name(host: Host) -> &'static str {
    match host {
        Host::Codex => "gpt-5.5",
        Host::Copilot => "gpt-4.1",
        _ => "m",
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
    pub(super) host: Host,
    /// The user's world: the host's HOME, where Windlass finds its daemon;
    /// shared by hosts installed side by side.
    pub daemon: Arc<Daemon>,
}

impl Installed {
    /// Installs Windlass into `host`, trusting `projects` where the host
    /// asks; `None`, having said why, when the host or pyright is missing
    /// (a failure under `CI=true`).
    pub fn new(host: Host, projects: &[&Path]) -> Option<Installed> {
        Installed::in_world(host, projects, Arc::new(Daemon::at_home()))
    }

    /// `host` installed in the same HOME as `other`: one user running two
    /// hosts, whose agents share one daemon.
    pub fn beside(other: &Installed, host: Host, projects: &[&Path]) -> Option<Installed> {
        Installed::in_world(host, projects, other.daemon.clone())
    }

    /// `host` installed in a world the test made: a PATH of its own, or
    /// another npm registry, in `daemon`'s environment.
    pub fn in_home(host: Host, projects: &[&Path], daemon: Daemon) -> Option<Installed> {
        Installed::in_world(host, projects, Arc::new(daemon))
    }

    fn in_world(host: Host, projects: &[&Path], daemon: Arc<Daemon>) -> Option<Installed> {
        for command in [host.name(), "pyright-langserver"] {
            if !have(command) {
                skip(&format!("{command} is not installed (see .ci/run)"));
                return None;
            }
        }
        let installed = Installed { host, daemon };
        match host {
            Host::Claude => installed.install_plugin(),
            Host::Gemini => installed.link_extension(projects),
            Host::Codex => installed.install_codex_plugin(),
            Host::Copilot => installed.install_copilot_plugin(),
            Host::Opencode => installed.configure_opencode(),
            Host::Qwen => installed.link_qwen_extension(),
        }
        Some(installed)
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
    pub(super) fn setup(&self, args: &[&str], cwd: &str) {
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
    pub(super) fn command(&self, model: Option<&Model>) -> Command {
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
            Host::Claude => {
                command.envs([
                    ("DISABLE_TELEMETRY", "1"),
                    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
                    ("DISABLE_AUTOUPDATER", "1"),
                ]);
            }
            Host::Gemini => {
                command.env("GEMINI_CLI_NO_RELAUNCH", "true");
            }
            // Codex syncs plugins and analytics from the internet at
            // start: a proxy that refuses ends those at once.
            Host::Codex => {
                let refused = "http://127.0.0.1:9";
                for proxy in ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"] {
                    command
                        .env(proxy, refused)
                        .env(proxy.to_ascii_lowercase(), refused);
                }
                command
                    .env("NO_PROXY", "127.0.0.1,localhost")
                    .env("CODEX_HOME", self.daemon.home().join(".codex"));
            }
            Host::Copilot => {
                command.env("COPILOT_OFFLINE", "true");
            }
            Host::Opencode => {
                for switch in [
                    "OPENCODE_DISABLE_AUTOUPDATE",
                    "OPENCODE_DISABLE_MODELS_FETCH",
                    "OPENCODE_DISABLE_LSP_DOWNLOAD",
                    "OPENCODE_DISABLE_SHARE",
                    "OPENCODE_DISABLE_DEFAULT_PLUGINS",
                ] {
                    command.env(switch, "true");
                }
            }
            Host::Qwen => {
                command.env("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1");
            }
        }
        if let Some(model) = model {
            self.point_at(&mut command, model);
        }
        command
    }

    /// Points the host's API client at `model`.
    fn point_at(&self, command: &mut Command, model: &Model) {
        let api = format!("{}/v1", model.url());
        match self.host {
            Host::Claude => {
                command
                    .env("ANTHROPIC_BASE_URL", model.url())
                    .env("ANTHROPIC_API_KEY", "any");
            }
            Host::Gemini => {
                command
                    .env("GOOGLE_GEMINI_BASE_URL", model.url())
                    .env("GEMINI_API_KEY", "any");
            }
            Host::Codex => {
                command.env("SCRIPTED_API_KEY", "any");
            }
            Host::Copilot => {
                command.envs([
                    ("COPILOT_PROVIDER_BASE_URL", api.as_str()),
                    ("COPILOT_PROVIDER_TYPE", "openai"),
                    ("COPILOT_PROVIDER_WIRE_API", "completions"),
                    ("COPILOT_MODEL", model_name(Host::Copilot)),
                ]);
            }
            Host::Opencode => {
                let provider = json!({"provider": {"scripted": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "scripted",
                    "options": {"baseURL": api, "apiKey": "any"},
                    "models": {"m": {"name": "m", "tool_call": true},
                               "gpt-m": {"name": "gpt-m", "tool_call": true}},
                }}});
                command.env("OPENCODE_CONFIG_CONTENT", provider.to_string());
            }
            Host::Qwen => {}
        }
    }

    /// Starts the host on `project` with a one-line prompt, its model
    /// `model`, and `args` added to its command line.
    pub fn start(&self, project: &Path, model: &Model, args: &[&str]) -> Running {
        let mut command = self.command(Some(model));
        if self.host == Host::Copilot && args.contains(&PATCHING) {
            // Copilot CLI gives GPT-5 models `apply_patch` for its edits.
            command.env("COPILOT_MODEL", "gpt-5.4");
        }
        let prompt = "Follow the script.";
        let api = format!("{}/v1", model.url());
        match self.host {
            Host::Claude => command.args([
                "-p",
                prompt,
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
            Host::Gemini => command.args([
                "-p",
                prompt,
                "--approval-mode",
                "yolo",
                "--output-format",
                "stream-json",
            ]),
            Host::Codex => command.args([
                "exec",
                "--skip-git-repo-check",
                "--ephemeral",
                "--json",
                "-s",
                "workspace-write",
                // Codex runs no hook it was not told to trust.
                "--dangerously-bypass-hook-trust",
                "-c",
                &format!("model_providers.scripted.base_url={api:?}"),
            ]),
            Host::Copilot => command.args([
                "-p",
                prompt,
                "--allow-all-tools",
                "--no-auto-update",
                "--no-ask-user",
                "--output-format",
                "json",
            ]),
            Host::Opencode => command.args([
                "run",
                "--format",
                "json",
                "-m",
                self.opencode_model(args),
                // A title of its own: no side request for one.
                "--title",
                "windlass",
            ]),
            Host::Qwen => command.args([
                "-p",
                prompt,
                "--auth-type",
                "openai",
                "--openai-base-url",
                &api,
                "--openai-api-key",
                "any",
                "-m",
                model_name(Host::Qwen),
                "--approval-mode",
                "yolo",
                "--output-format",
                "json",
            ]),
        };
        let args: Vec<&str> = args
            .iter()
            .copied()
            .filter(|arg| *arg != PATCHING)
            .collect();
        if matches!(self.host, Host::Codex | Host::Opencode) {
            command.args(&args).arg(prompt);
        } else {
            command.args(&args);
        }
        let mut child = command
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

    /// OpenCode's model: one whose name has `gpt-` gets `apply_patch`
    /// in place of its edit tools.
    fn opencode_model(&self, args: &[&str]) -> &'static str {
        match args.contains(&PATCHING) {
            true => "scripted/gpt-m",
            false => "scripted/m",
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
