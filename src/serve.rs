//! `windlass serve`, also what `windlass` alone runs: the session's
//! arguments are resolved here (a bad root or configuration fails exactly
//! as it does standalone), its hello is written, and the process replaces
//! itself with `windlass-bridge`, the small program that attaches the
//! session to the daemon and carries its MCP lines. Each agent's bridge
//! then costs that program's few pages, not this binary's. `--standalone`,
//! or a `windlass-bridge` that cannot be run, serves the session in this
//! process instead; `--standalone --http ADDR` serves MCP over HTTP from
//! this process, for as many sessions as connect.

use crate::config::HttpConfig;
use crate::control::protocol::{self, Hello, Request};
use crate::runtime_dir::{RuntimeDir, version};
use crate::session_args::{self, ServeArgs};
use crate::{logging, standalone};
use anyhow::{Context as _, Result};
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use windlass_actors::settings::Identity;

pub fn run(args: ServeArgs, raw_args: Vec<OsString>) -> Result<()> {
    let cwd = session_directory(std::env::current_dir().context("reading the current directory")?);
    let identity = Identity::of_this_process();
    let settings = match session_args::resolve(&args, &cwd, identity.clone()) {
        Ok(settings) => settings,
        Err(error) => {
            logging::init(args.log_level.as_deref())?;
            return Err(error);
        }
    };
    if let Some(address) = &args.http {
        logging::init(args.log_level.as_deref())?;
        let roots = settings
            .roots
            .roots()
            .iter()
            .map(|root| root.path.clone())
            .collect();
        let http = HttpConfig::at(address, args.http_auth.unwrap_or_default(), roots)?;
        return standalone::run_http(http);
    }
    if args.standalone {
        logging::init(args.log_level.as_deref())?;
        return standalone::run(settings);
    }
    let reason = match exec_bridge(
        &args,
        raw_args,
        Hello {
            version: version(),
            cwd,
            args: args.clone(),
            identity,
        },
    ) {
        Ok(never) => match never {},
        Err(error) => error,
    };
    logging::init(args.log_level.as_deref())?;
    tracing::warn!("{reason:#}; serving standalone");
    standalone::run(settings)
}

/// What a plugin's or extension's own directory holds: a host that starts
/// its MCP server there (Codex, Copilot CLI) is not asking about it.
const PLUGIN_MARKERS: [&str; 6] = [
    ".claude-plugin/plugin.json",
    ".codex-plugin/plugin.json",
    ".github/plugin/plugin.json",
    "plugin.json",
    "gemini-extension.json",
    "qwen-extension.json",
];

/// The directory a session serves when nothing names its roots: this
/// process's, unless that is an installed plugin's own directory, where
/// some hosts start a plugin's MCP server; then the directory the host
/// itself works in: the nearest process above whose directory is not a
/// plugin's.
fn session_directory(cwd: PathBuf) -> PathBuf {
    if !is_installed_plugin(&cwd) {
        return cwd;
    }
    crate::process::ancestors()
        .into_iter()
        .filter_map(crate::process::working_directory)
        .find(|directory| !is_installed_plugin(directory) && directory != Path::new("/"))
        .unwrap_or(cwd)
}

/// A directory with a plugin's manifest and no `.git`: a host's installed
/// copy, not a plugin's own repository that someone works on.
fn is_installed_plugin(directory: &Path) -> bool {
    PLUGIN_MARKERS
        .iter()
        .any(|marker| directory.join(marker).is_file())
        && !directory.join(".git").exists()
}

/// Replaces this process with `windlass-bridge`; returns only why it
/// could not.
fn exec_bridge(
    args: &ServeArgs,
    raw_args: Vec<OsString>,
    hello: Hello,
) -> Result<std::convert::Infallible> {
    let directory = RuntimeDir::open()?;
    let windlass = std::env::current_exe().context("finding this binary")?;
    let bridge = windlass.with_file_name("windlass-bridge");
    let hello = String::from_utf8(protocol::encode(&Request::Attach(Box::new(hello)))?)?;
    let log = logging::file_path()?;
    let mut bridge_command = std::process::Command::new(&bridge);
    if let Some(level) = &args.log_level {
        bridge_command.env("WINDLASS_LOG", level);
    }
    let error = bridge_command
        .args(raw_args)
        .env("WINDLASS_BRIDGE_HELLO", hello.trim_end())
        .env("WINDLASS_BRIDGE_SOCKET", directory.socket())
        .env("WINDLASS_BRIDGE_LOCK", directory.start_lock())
        .env("WINDLASS_BRIDGE_WINDLASS", &windlass)
        .env("WINDLASS_BRIDGE_LOG", log)
        .exec();
    Err(error).with_context(|| format!("running {}", bridge.display()))
}
