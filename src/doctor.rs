//! `windlass doctor`: whether Windlass can work here, and what is broken
//! if not. Per language, the server the configuration resolves to for a
//! root and whether it starts and initializes (and which tools its
//! capabilities support); the daemon; the hosts' hooks (the plugin and
//! extension installed and current, the `windlass` on PATH this one); the
//! state directory and its store. Exits non-zero when something that is
//! configured or installed does not work.

use crate::control::client;
use crate::control::protocol::{Answer, Request};
use crate::runtime_dir::RuntimeDir;
use crate::session_args::{self, ServeArgs};
use anyhow::{Context as _, Result};
use clap::Args;
use serde::Serialize;
use serde_json::{Value, json};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use windlass_actors::gateway::{Needs, TOOL_NEEDS};
use windlass_actors::language::ServerSpec;
use windlass_actors::lsp::message::{self, Incoming};
use windlass_actors::lsp::protocol::{Capabilities, WorkspaceFolder, initialize_params};
use windlass_actors::lsp::transport::Transport;
use windlass_actors::lsp::uri::path_to_uri;
use windlass_actors::settings::Identity;
use windlass_actors::store::{self, SCHEMA_VERSION};
use windlass_actors::supervisor::check;

/// How long a server may take to answer `initialize`.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the daemon may take to answer.
const DAEMON_TIMEOUT: Duration = Duration::from_secs(5);

/// The hooks files as this build ships them: an installed copy should
/// be the same.
const CLAUDE_HOOKS: &str = include_str!("../plugins/windlass/hooks/hooks.json");
const GEMINI_HOOKS: &str = include_str!("../hooks/hooks.json");
const CODEX_HOOKS: &str = include_str!("../plugins/windlass/hooks/codex.json");
/// Qwen Code's hooks are in its extension's manifest.
const QWEN_MANIFEST: &str = include_str!("../qwen-extension.json");
/// OpenCode's hooks are its plugin module's functions.
const OPENCODE_MODULE: &str = include_str!("../plugins/opencode/windlass.js");

/// A host's package of Windlass: where it is installed, its hooks file
/// (as shipped) and the launcher that runs `windlass` for it, both
/// relative to where it is installed.
struct HostPackage {
    name: &'static str,
    place: Option<PathBuf>,
    hooks: &'static str,
    shipped: &'static str,
    launcher: &'static str,
}

#[derive(Args)]
pub struct DoctorArgs {
    /// The project to check the servers for (default: this directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// No colours, even on a terminal.
    #[arg(long)]
    nocolor: bool,
}

/// One thing checked: its name, whether it works, and what was found.
#[derive(Debug, Serialize)]
struct Check {
    name: String,
    state: String,
    ok: bool,
    /// Whether a failure here breaks something configured or installed.
    broken: bool,
    detail: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<&'static str>,
}

impl Check {
    fn new(
        name: impl Into<String>,
        state: impl Into<String>,
        ok: bool,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            state: state.into(),
            ok,
            broken: !ok,
            detail: detail.into(),
            tools: Vec::new(),
        }
    }

    /// A failure that breaks nothing: something not installed and not asked for.
    fn missing(mut self) -> Self {
        self.broken = false;
        self
    }
}

pub fn run(args: DoctorArgs) -> Result<()> {
    let root = match &args.root {
        Some(root) => root.clone(),
        None => std::env::current_dir().context("reading the current directory")?,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let sections = vec![
        ("language servers", runtime.block_on(servers(&root))),
        ("daemon", vec![daemon()]),
        ("hooks", hooks()),
        ("state", vec![state()]),
    ];
    let broken = sections
        .iter()
        .flat_map(|(_, checks)| checks)
        .any(|check| check.broken);
    let mut out = std::io::stdout().lock();
    if args.json {
        let sections: serde_json::Map<String, Value> = sections
            .iter()
            .map(|(name, checks)| ((*name).to_owned(), json!(checks)))
            .collect();
        let report = json!({
            "version": env!("CARGO_PKG_VERSION"),
            "root": root,
            "broken": broken,
            "sections": sections,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        let colour = !args.nocolor && out.is_terminal() && std::env::var_os("NO_COLOR").is_none();
        writeln!(
            out,
            "windlass {} doctor, root {}",
            env!("CARGO_PKG_VERSION"),
            root.display()
        )?;
        for (name, checks) in &sections {
            writeln!(out, "\n{name}:")?;
            for check in checks {
                writeln!(out, "{}", line(check, colour))?;
            }
        }
        writeln!(
            out,
            "\n{}",
            if broken {
                "something is broken (above)"
            } else {
                "nothing is broken"
            }
        )?;
    }
    drop(out);
    runtime.shutdown_timeout(Duration::from_secs(1));
    if broken {
        std::process::exit(1);
    }
    Ok(())
}

fn line(check: &Check, colour: bool) -> String {
    let (mark, code) = match (check.ok, check.broken) {
        (true, _) => ("ok  ", "32"),
        (false, true) => ("FAIL", "31"),
        (false, false) => ("--  ", "33"),
    };
    let mark = match colour {
        true => format!("\x1b[{code}m{mark}\x1b[0m"),
        false => mark.to_owned(),
    };
    let mut shown = format!("  {mark} {:<22} {}", check.name, check.state);
    if !check.detail.is_empty() {
        shown.push_str(&format!(": {}", check.detail));
    }
    if !check.tools.is_empty() {
        shown.push_str(&format!("\n         tools: {}", check.tools.join(", ")));
    }
    shown
}

/// Every language's server for `root`: the configured and found ones
/// started and initialized, the known ones not on PATH listed missing.
async fn servers(root: &Path) -> Vec<Check> {
    let args = ServeArgs {
        roots: vec![root.to_path_buf()],
        ..ServeArgs::default()
    };
    let settings = match session_args::resolve(&args, root, Identity::default()) {
        Ok(settings) => settings,
        Err(error) => {
            return vec![Check::new(
                "configuration",
                "invalid",
                false,
                format!("{error:#}"),
            )];
        }
    };
    let mut checks = Vec::new();
    for warning in settings
        .warnings
        .iter()
        .filter(|warning| warning.contains("not trusted"))
    {
        checks.push(Check::new(
            "project configuration",
            "untrusted project command skipped",
            false,
            warning.clone(),
        ));
    }
    let started: Vec<_> = settings
        .servers
        .iter()
        .map(|spec| tokio::spawn(server(spec.clone(), root.to_path_buf())))
        .collect();
    for check in started {
        if let Ok(check) = check.await {
            checks.push(check);
        }
    }
    for missing in crate::config::missing_built_ins(&settings.servers) {
        checks.push(missing_server(&missing));
    }
    checks
}

/// A language nobody serves: the server to install for it, and the
/// others that would do.
fn missing_server(missing: &crate::config::Missing) -> Check {
    let built_in = missing.built_in;
    let mut detail = format!(
        "`{}` is not on PATH; install it with `{}`",
        built_in.command, built_in.install
    );
    if !missing.alternatives.is_empty() {
        let others: Vec<String> = missing
            .alternatives
            .iter()
            .map(|other| format!("`{}`", other.command))
            .collect();
        detail.push_str(&format!(" (or {})", others.join(", ")));
    }
    Check::new(
        format!("{} ({})", built_in.name, missing.languages.join(",")),
        "command not found",
        false,
        detail,
    )
    .missing()
}

/// Starts one server and asks it to `initialize` for `root`.
async fn server(spec: ServerSpec, root: PathBuf) -> Check {
    let name = format!("{} ({})", spec.name, spec.languages.join(","));
    let command = spec.command_line();
    if !crate::config::on_path(&spec.command) {
        return Check::new(name, "command not found", false, format!("`{command}`"));
    }
    // Only a server found on PATH rather than configured has a check;
    // one that fails it is left unused, which breaks nothing asked for.
    if let Some(check_args) = &spec.check
        && let Err(reason) = check::run(&spec.command, check_args).await
    {
        let detail = format!("found on PATH but unusable, so not used: {reason}");
        return Check::new(name, "spawn failed", false, detail).missing();
    }
    let (sender, answers) = mpsc::channel();
    let started = Instant::now();
    let transport = match Transport::spawn(&spec.command, &spec.args, &root, move |incoming| {
        let _gone = sender.send(incoming);
    }) {
        Ok(transport) => transport,
        Err(error) => {
            return Check::new(name, "spawn failed", false, format!("`{command}`: {error}"));
        }
    };
    let folder = WorkspaceFolder {
        uri: path_to_uri(&root),
        name: root
            .file_name()
            .map_or_else(|| "root".into(), |name| name.to_string_lossy().into_owned()),
    };
    let params = initialize_params(
        &[folder],
        spec.initialization_options.as_ref(),
        spec.pull_diagnostics,
    );
    transport.send(message::request(1, "initialize", params));
    let outcome = tokio::task::spawn_blocking(move || initialized(&answers)).await;
    let seconds = started.elapsed().as_secs_f64();
    let mut check = match outcome {
        Ok(Ok(result)) => {
            transport.send(message::notification("initialized", json!({})));
            transport.send(message::request(2, "shutdown", Value::Null));
            transport.send(message::notification("exit", Value::Null));
            let mut check = Check::new(
                name,
                "ready",
                true,
                format!("`{command}` initialized in {seconds:.1} s"),
            );
            check.tools = tools(&Capabilities::from_initialize_result(&result));
            check
        }
        Ok(Err(why)) => {
            let stderr = transport.stderr_reason();
            let detail = match stderr.is_empty() {
                true => format!("`{command}`: {why}"),
                false => format!("`{command}`: {why}; it said: {stderr}"),
            };
            Check::new(name, "initialize failed", false, detail)
        }
        Err(error) => Check::new(name, "initialize failed", false, error.to_string()),
    };
    check.detail = check.detail.replace('\n', " ");
    check
}

/// The server's answer to `initialize`, or why there is none.
fn initialized(answers: &mpsc::Receiver<Incoming>) -> std::result::Result<Value, String> {
    let deadline = Instant::now() + INITIALIZE_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match answers.recv_timeout(left) {
            Ok(Incoming::Response { id: 1, result }) => {
                return result.map_err(|error| {
                    format!("it answered initialize with an error: {}", error.message)
                });
            }
            Ok(Incoming::Closed) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err("it exited before answering initialize".into());
            }
            Ok(_) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => {
                return Err(format!(
                    "no answer to initialize within {} s",
                    INITIALIZE_TIMEOUT.as_secs()
                ));
            }
        }
    }
}

/// The tools a server with `capabilities` serves, in the gateway's table
/// of what each tool needs: those any server serves, and those whose
/// capability it announced, judged as the gateway judges a request.
fn tools(capabilities: &Capabilities) -> Vec<&'static str> {
    TOOL_NEEDS
        .iter()
        .filter(|(_, needs)| match needs {
            Needs::NoServer => false,
            Needs::AnyServer => true,
            Needs::Capability(feature) => capabilities.supports(*feature),
        })
        .map(|(tool, _)| *tool)
        .collect()
}

/// Whether this version's daemon runs, and what it serves.
fn daemon() -> Check {
    let socket = match RuntimeDir::open() {
        Ok(directory) => directory.socket(),
        Err(error) => {
            return Check::new(
                "daemon",
                "no runtime directory",
                false,
                format!("{error:#}; sessions run standalone"),
            )
            .missing();
        }
    };
    let pong = client::expect(
        &socket,
        &Request::Ping,
        DAEMON_TIMEOUT,
        |answer| match answer {
            Answer::Pong {
                version,
                protocol,
                store,
                ..
            } => Some((version, protocol, store)),
            _ => None,
        },
    );
    match pong {
        Ok((version, protocol, store)) => {
            let sessions =
                client::expect(
                    &socket,
                    &Request::Sessions,
                    DAEMON_TIMEOUT,
                    |answer| match answer {
                        Answer::Sessions(sessions) => Some(sessions.len()),
                        _ => None,
                    },
                );
            let sessions = sessions.map_or_else(
                |error| format!("sessions unknown ({error:#})"),
                |count| format!("{count} sessions"),
            );
            let serving = format!(
                "version {version}, control protocol {protocol}, {sessions}, at {}",
                socket.display()
            );
            match store {
                None => Check::new("daemon", "running", true, serving),
                Some(trouble) => Check::new(
                    "daemon",
                    "running, not recording",
                    false,
                    format!("{serving}; its store: {trouble}"),
                ),
            }
        }
        Err(_) if !socket.exists() => {
            Check::new("daemon", "not running", true, "the first session starts it")
        }
        Err(error) => Check::new(
            "daemon",
            "not answering",
            false,
            format!("{}: {error:#}", socket.display()),
        ),
    }
}

/// The hosts' hooks: the `windlass` they run, how their runs of the last
/// day went, and the installed plugin and extension with their hooks
/// files.
fn hooks() -> Vec<Check> {
    let mut checks = vec![windlass_on_path(), hook_runs()];
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
        return checks;
    };
    let codex_home =
        std::env::var_os("CODEX_HOME").map_or_else(|| home.join(".codex"), PathBuf::from);
    let extension =
        |path: PathBuf, manifest: &str| Some(path).filter(|path| path.join(manifest).exists());
    let packages = [
        HostPackage {
            name: "Claude Code plugin",
            place: find_plugin(&home.join(".claude/plugins"), ".claude-plugin", 6),
            hooks: "hooks/hooks.json",
            shipped: CLAUDE_HOOKS,
            launcher: "bin/run-windlass",
        },
        HostPackage {
            name: "Codex plugin",
            place: find_plugin(&codex_home.join("plugins/cache"), ".codex-plugin", 3),
            hooks: "hooks/codex.json",
            shipped: CODEX_HOOKS,
            launcher: "bin/run-windlass",
        },
        HostPackage {
            name: "Gemini CLI extension",
            place: extension(
                home.join(".gemini/extensions/windlass"),
                "gemini-extension.json",
            ),
            hooks: "hooks/hooks.json",
            shipped: GEMINI_HOOKS,
            launcher: "plugins/windlass/bin/run-windlass",
        },
        HostPackage {
            name: "Qwen Code extension",
            place: extension(
                home.join(".qwen/extensions/windlass"),
                "qwen-extension.json",
            ),
            hooks: "qwen-extension.json",
            shipped: QWEN_MANIFEST,
            launcher: "plugins/windlass/bin/run-windlass",
        },
        HostPackage {
            name: "Copilot CLI plugin",
            place: copilot_plugin(&home),
            hooks: "hooks/hooks.json",
            shipped: CLAUDE_HOOKS,
            launcher: "bin/run-windlass",
        },
        HostPackage {
            name: "OpenCode plugin",
            place: opencode_plugin(&home),
            hooks: "windlass.js",
            shipped: OPENCODE_MODULE,
            launcher: "../windlass/bin/run-windlass",
        },
    ];
    checks.extend(packages.iter().map(installed));
    checks
}

/// The hooks' runs of the last day: a hook never fails its host, so a
/// failure is seen only here, in `hooks.log` and in `query --kind hook`.
fn hook_runs() -> Check {
    const DAY_MS: i64 = 24 * 60 * 60 * 1000;
    let runs = crate::state_dir::store_path()
        .context("no state directory")
        .and_then(|path| Ok(store::open(&path)?))
        .and_then(|connection| {
            Ok(store::hooks::runs_since(
                &connection,
                store::now_ms() - DAY_MS,
            )?)
        });
    let runs = match runs {
        Ok(runs) => runs,
        Err(error) => {
            return Check::new("hook runs", "unknown", false, format!("{error:#}")).missing();
        }
    };
    let Some((at, hook, reason)) = runs.last_failure else {
        let state = match runs.total {
            0 => "none in the last day".to_owned(),
            total => format!("all {total} in the last day succeeded"),
        };
        return Check::new("hook runs", state, true, String::new());
    };
    Check::new(
        "hook runs",
        format!("{} of {} failed in the last day", runs.failed, runs.total),
        false,
        format!(
            "last at {}: {hook}: {reason} (more in `windlass query --kind hook` and logs/hooks.log)",
            crate::clock::shown_time(at)
        ),
    )
}

/// Whether the `windlass` the plugins' launcher tries first (the first on
/// PATH) is this binary.
fn windlass_on_path() -> Check {
    let this = std::env::current_exe().and_then(std::fs::canonicalize).ok();
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("windlass"))
            .find(|path| path.is_file())
    });
    let Some(found) = found else {
        return Check::new(
            "windlass on PATH",
            "not found",
            false,
            "the hosts' plugins run the windlass-mcp package through npx or uvx instead",
        )
        .missing();
    };
    let resolved = std::fs::canonicalize(&found).unwrap_or_else(|_| found.clone());
    if Some(&resolved) == this.as_ref() {
        return Check::new(
            "windlass on PATH",
            "this binary",
            true,
            found.display().to_string(),
        );
    }
    let version = std::process::Command::new(&found)
        .arg("--version")
        .output()
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .unwrap_or_default();
    let same = version.ends_with(env!("CARGO_PKG_VERSION"));
    Check::new(
        "windlass on PATH",
        if same {
            "another copy of this version"
        } else {
            "another version"
        },
        same,
        format!(
            "{} is {version:?}, this is {}",
            found.display(),
            env!("CARGO_PKG_VERSION")
        ),
    )
}

/// The installed copy of the Windlass plugin under `directory`: a folder
/// with `MANIFESTS/plugin.json` naming `windlass`, found within `depth`
/// levels.
fn find_plugin(directory: &Path, manifests: &str, depth: usize) -> Option<PathBuf> {
    let manifest = directory.join(manifests).join("plugin.json");
    let named = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .is_some_and(|plugin| plugin["name"] == "windlass");
    if named {
        return Some(directory.to_path_buf());
    }
    if depth == 0 {
        return None;
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(directory)
        .ok()?
        .filter_map(std::result::Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| entry.path())
        .collect();
    entries.sort();
    entries
        .into_iter()
        .find_map(|entry| find_plugin(&entry, manifests, depth - 1))
}

/// Copilot CLI loads a plugin of a local marketplace from where the
/// marketplace is (`~/.copilot/settings.json` names it): the Windlass
/// plugin within it, when `windlass@MARKETPLACE` is enabled.
fn copilot_plugin(home: &Path) -> Option<PathBuf> {
    let settings = std::fs::read_to_string(home.join(".copilot/settings.json")).ok()?;
    let settings: Value = serde_json::from_str(&settings).ok()?;
    let enabled = settings["enabledPlugins"].as_object()?;
    let marketplace = enabled.iter().find_map(|(name, on)| {
        (on == true)
            .then(|| name.strip_prefix("windlass@"))
            .flatten()
    })?;
    let source = settings["extraKnownMarketplaces"][marketplace]["source"]["path"].as_str()?;
    find_plugin(Path::new(source), ".claude-plugin", 3)
}

/// OpenCode names its plugin modules in its configuration
/// (`"plugin": ["file:CLONE/plugins/opencode"]`) and loads them from there.
fn opencode_plugin(home: &Path) -> Option<PathBuf> {
    let directory = std::env::var_os("XDG_CONFIG_HOME")
        .map_or_else(|| home.join(".config"), PathBuf::from)
        .join("opencode");
    ["opencode.json", "opencode.jsonc"].iter().find_map(|name| {
        let config = std::fs::read_to_string(directory.join(name)).ok()?;
        let config: Value = serde_json::from_str(&config).ok()?;
        config["plugin"].as_array()?.iter().find_map(|plugin| {
            let path = PathBuf::from(plugin.as_str()?.strip_prefix("file:")?);
            path.join("windlass.js").is_file().then_some(path)
        })
    })
}

/// Whether an installed plugin or extension is current (its hooks file
/// the same as this build's), and which `windlass` it runs.
fn installed(package: &HostPackage) -> Check {
    let Some(place) = &package.place else {
        return Check::new(
            package.name,
            "not installed",
            false,
            "see the README's Hooks section",
        )
        .missing();
    };
    // JSON compared as values, a module as text.
    let parsed = |text: &str| serde_json::from_str::<Value>(text).unwrap_or(Value::from(text));
    let read = |path: &Path| std::fs::read_to_string(path).ok().map(|text| parsed(&text));
    let ours = Some(parsed(package.shipped));
    let runs = format!(
        "{}; runs {}",
        place.display(),
        launched(&place.join(package.launcher))
    );
    match read(&place.join(package.hooks)) {
        Some(theirs) if Some(&theirs) == ours.as_ref() => {
            Check::new(package.name, "installed, hooks current", true, runs)
        }
        Some(_) => Check::new(
            package.name,
            "installed, hooks out of date",
            false,
            format!("{runs}: update the plugin"),
        ),
        None => Check::new(package.name, "installed without its hooks", false, runs),
    }
}

/// What the plugin's launcher says it runs: the binary, its version and
/// how it was found (it fetches nothing when asked only that).
fn launched(launcher: &Path) -> String {
    // POSIX puts `sh` there whatever PATH says.
    let output = std::process::Command::new("/bin/sh")
        .arg(launcher)
        .env("WINDLASS_RUN_WHICH", "1")
        .stdin(std::process::Stdio::null())
        .output();
    match output {
        Ok(output) if output.status.success() => {
            String::from_utf8_lossy(&output.stdout).trim().to_owned()
        }
        Ok(output) => String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        Err(error) => format!("nothing: {} cannot be run: {error}", launcher.display()),
    }
}

/// The state directory and the store in it.
fn state() -> Check {
    let directory = match crate::state_dir::path() {
        Ok(directory) => directory,
        Err(error) => return Check::new("state directory", "none", false, format!("{error:#}")),
    };
    let path = store::database_path(&directory);
    let opened = store::open(&path).and_then(|connection| {
        let integrity: String = connection.query_row("PRAGMA quick_check", [], |row| row.get(0))?;
        let events: i64 =
            connection.query_row("SELECT count(*) FROM events", [], |row| row.get(0))?;
        Ok((integrity, events))
    });
    let size = std::fs::metadata(&path).map_or(0, |metadata| metadata.len());
    match opened {
        Ok((integrity, events)) if integrity == "ok" => Check::new(
            "store",
            "healthy",
            true,
            format!(
                "{} (schema {SCHEMA_VERSION}, {events} events, {:.1} MB)",
                path.display(),
                size as f64 / 1_048_576.0
            ),
        ),
        Ok((integrity, _)) => Check::new(
            "store",
            "damaged",
            false,
            format!("{}: {integrity}", path.display()),
        ),
        Err(error) => Check::new(
            "store",
            "cannot be opened",
            false,
            format!("{}: {error}", path.display()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_tools_are_those_its_capabilities_serve() {
        let answer = json!({"capabilities": {"hoverProvider": true, "referencesProvider": false}});
        let capabilities = Capabilities::from_initialize_result(&answer);
        assert_eq!(
            tools(&capabilities),
            [
                "hover",
                "diagnostics",
                "check_edit",
                "search",
                "codebase_map"
            ]
        );
    }
}
