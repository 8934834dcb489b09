//! What one session asks for on the command line (`serve`'s flags and
//! their `WINDLASS_*` variables), and turning it into the settings the
//! actors run with. A bridge sends these arguments in its hello; the
//! daemon resolves them against the bridge's working directory, so a
//! session gets the same settings from a daemon as it would standalone.

use crate::config;
use anyhow::Result;
use clap::Args;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;
use windlass_actors::settings::{Identity, Reloader, Settings};
use windlass_actors::vocabulary::root_set::RootSet;

#[derive(Args, Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ServeArgs {
    /// A workspace root (repeatable); pinned for the whole session.
    #[arg(short = 'r', long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// A language server as "LANG[,LANG]:COMMAND ARGS" (repeatable).
    #[arg(long = "lsp", value_name = "SPEC")]
    pub lsp: Vec<String>,
    /// A configuration file applied after the user and project files.
    #[arg(long, env = "WINDLASS_CONFIG")]
    pub config: Option<PathBuf>,
    /// Seconds before an idle document is closed; 0 = never.
    #[arg(long, env = "WINDLASS_IDLE_TIMEOUT")]
    pub idle_timeout: Option<u64>,
    /// Seconds a server gets to answer one request.
    #[arg(long, env = "WINDLASS_REQUEST_TIMEOUT")]
    pub request_timeout: Option<u64>,
    /// Cap on one tool result, in bytes.
    #[arg(long, env = "WINDLASS_MAX_OUTPUT_BYTES")]
    pub max_output_bytes: Option<usize>,
    /// Fixed diagnostics settle window in ms instead of the learned one
    /// (for baseline measurements).
    #[arg(long, env = "WINDLASS_DIAGNOSTICS_SETTLE_MS", value_name = "MS")]
    pub diagnostics_settle_ms: Option<u64>,
    /// Run the whole server in this process, without a daemon.
    #[arg(long)]
    #[serde(skip)]
    pub standalone: bool,
    /// With --standalone: serve MCP streamable HTTP on this loopback
    /// address instead of stdio, the roots (-r, else this directory)
    /// those of any session whose client lists none.
    #[arg(long, value_name = "ADDR", requires = "standalone")]
    #[serde(skip)]
    pub http: Option<String>,
    /// With --http: whether requests need the bearer token.
    #[arg(long, value_name = "AUTH", requires = "http")]
    #[serde(skip)]
    pub http_auth: Option<crate::config::HttpAuth>,
    /// Log filter (error, warn, info, debug, trace) for the log file, and
    /// for stderr when given; without it the file gets info and stderr
    /// only warnings and errors (an MCP host shows a server's stderr as
    /// errors).
    #[arg(long, env = "WINDLASS_LOG")]
    #[serde(skip)]
    pub log_level: Option<String>,
}

impl ServeArgs {
    /// The same arguments with every relative path made absolute against
    /// `cwd`: the daemon that resolves them runs elsewhere.
    pub fn anchored(&self, cwd: &Path) -> ServeArgs {
        let mut anchored = self.clone();
        anchored.roots = self.roots.iter().map(|root| cwd.join(root)).collect();
        anchored.config = self.config.as_ref().map(|file| cwd.join(file));
        anchored
    }
}

/// Every configuration layer applied to `args`, for a session started in
/// `cwd`; the settings can read themselves again when a file changes.
pub fn resolve(args: &ServeArgs, cwd: &Path, identity: Identity) -> Result<Settings> {
    resolve_with_defaults(args.anchored(cwd), vec![cwd.to_path_buf()], cwd, identity)
}

/// The settings of a session that has no directory of its own (an HTTP
/// client's): its roots `default_roots` (maybe none) until its client
/// lists some, its project configuration that of the first of them.
pub fn resolve_without_directory(
    default_roots: &[PathBuf],
    identity: Identity,
) -> Result<Settings> {
    let base = default_roots
        .first()
        .cloned()
        .unwrap_or_else(|| PathBuf::from("/"));
    resolve_with_defaults(
        ServeArgs::default(),
        default_roots.to_vec(),
        &base,
        identity,
    )
}

/// `args` applied over every layer; `defaults` are the roots, unpinned,
/// when `args` names none.
fn resolve_with_defaults(
    args: ServeArgs,
    defaults: Vec<PathBuf>,
    cwd: &Path,
    identity: Identity,
) -> Result<Settings> {
    let mut settings = load(&args, &defaults, cwd, identity.clone())?;
    let cwd = cwd.to_path_buf();
    settings.reload = Some(Reloader::new(move || {
        load(&args, &defaults, &cwd, identity.clone()).map_err(|error| format!("{error:#}"))
    }));
    Ok(settings)
}

fn load(
    args: &ServeArgs,
    defaults: &[PathBuf],
    cwd: &Path,
    identity: Identity,
) -> Result<Settings> {
    let directories = if args.roots.is_empty() {
        defaults
    } else {
        &args.roots
    };
    let roots = RootSet::new(directories)?;
    let first_root = if roots.roots().is_empty() {
        cwd.to_path_buf()
    } else {
        roots.first_directory()
    };
    let mut layers = config::load(&first_root, args.config.as_deref())?;
    // The project layer is the first root's `.windlass.toml`, or the
    // nearest above it: a change to either is picked up.
    let mut config_directories = vec![first_root.clone()];
    config_directories.extend(
        config::project_config_path(&first_root)
            .and_then(|file| file.parent().map(PathBuf::from))
            .filter(|directory| *directory != first_root),
    );
    for flag in &args.lsp {
        let (name, mut entry) = config::parse_lsp_flag(flag)?;
        // A command given as a relative path means the session's own
        // directory, not wherever the process runs.
        entry.command = entry.command.map(|command| anchor_command(&command, cwd));
        layers.servers.entry(name).or_default().merge(entry);
    }
    Ok(Settings {
        servers: config::resolve_servers(&layers.servers)?,
        roots,
        roots_pinned: !args.roots.is_empty(),
        request_timeout: Duration::from_secs(
            args.request_timeout
                .unwrap_or(layers.request_timeout)
                .max(1),
        ),
        idle_timeout: Duration::from_secs(args.idle_timeout.unwrap_or(layers.idle_timeout)),
        max_output_bytes: args
            .max_output_bytes
            .unwrap_or(layers.max_output_bytes)
            .max(256),
        diagnostics_settle: args
            .diagnostics_settle_ms
            .or(layers.diagnostics_settle_ms)
            .map(Duration::from_millis),
        warnings: layers.warnings,
        reload: None,
        config_directories,
        identity,
    })
}

/// `./bin/server` against `cwd`; a bare name is left for PATH.
fn anchor_command(command: &str, cwd: &Path) -> String {
    if command.contains('/') && Path::new(command).is_relative() {
        cwd.join(command).display().to_string()
    } else {
        command.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_anchored_to_the_sessions_directory() {
        let args = ServeArgs {
            roots: vec!["src".into(), "/abs".into()],
            config: Some("w.toml".into()),
            ..ServeArgs::default()
        };
        let anchored = args.anchored(Path::new("/home/me/app"));
        assert_eq!(
            anchored.roots,
            vec![PathBuf::from("/home/me/app/src"), PathBuf::from("/abs")]
        );
        assert_eq!(anchored.config, Some(PathBuf::from("/home/me/app/w.toml")));
        assert_eq!(anchor_command("./ls", Path::new("/p")), "/p/./ls");
        assert_eq!(anchor_command("clangd", Path::new("/p")), "clangd");
    }
}
