//! The `windlass` binary: command line, configuration, logging, and the
//! start of the actor tree. Errors are `anyhow` here and typed below.

mod config;
mod logging;
mod trust;

use anyhow::{Context as _, Result};
use clap::{Args, Parser, Subcommand};
use ractor::Actor;
use std::path::PathBuf;
use std::time::Duration;
use windlass_actors::gateway::Connection;
use windlass_actors::roots::RootSet;
use windlass_actors::settings::{Reloader, Settings};
use windlass_actors::supervisor::{self, Mode, RestartPolicy, Supervisor};

#[derive(Parser)]
#[command(
    name = "windlass",
    version,
    about = "Language-server answers for AI coding agents, over MCP"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP over stdio (the default).
    Serve(ServeArgs),
    /// Allow a project .windlass.toml to run the server commands it names.
    Trust {
        /// The file to trust (default: the .windlass.toml for this directory).
        file: Option<PathBuf>,
    },
}

#[derive(Args, Clone, Default)]
struct ServeArgs {
    /// A workspace root (repeatable); pinned for the whole session.
    #[arg(short = 'r', long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// A language server as "LANG[,LANG]:COMMAND ARGS" (repeatable).
    #[arg(long = "lsp", value_name = "SPEC")]
    lsp: Vec<String>,
    /// A configuration file applied after the user and project files.
    #[arg(long, env = "WINDLASS_CONFIG")]
    config: Option<PathBuf>,
    /// Seconds before an idle document is closed; 0 = never.
    #[arg(long, env = "WINDLASS_IDLE_TIMEOUT")]
    idle_timeout: Option<u64>,
    /// Seconds a server gets to answer one request.
    #[arg(long, env = "WINDLASS_REQUEST_TIMEOUT")]
    request_timeout: Option<u64>,
    /// Cap on one tool result, in bytes.
    #[arg(long, env = "WINDLASS_MAX_OUTPUT_BYTES")]
    max_output_bytes: Option<usize>,
    /// Fixed diagnostics settle window in ms instead of the learned one
    /// (for baseline measurements).
    #[arg(long, env = "WINDLASS_DIAGNOSTICS_SETTLE_MS", value_name = "MS")]
    diagnostics_settle_ms: Option<u64>,
    /// Log filter for stderr and the log file (error, warn, info, debug, trace).
    #[arg(long, env = "WINDLASS_LOG_LEVEL", default_value = "info")]
    log_level: String,
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Trust { file }) => trust_command(file),
        Some(Command::Serve(args)) => serve(args),
        None => serve(cli.serve),
    }
}

fn trust_command(file: Option<PathBuf>) -> Result<()> {
    let file = match file {
        Some(file) => file,
        None => config::project_config_path(&std::env::current_dir()?)
            .context("no .windlass.toml here or above")?,
    };
    let trusted = trust::trust(&file)?;
    eprintln!("trusted {trusted}");
    Ok(())
}

fn serve(args: ServeArgs) -> Result<()> {
    logging::init(&args.log_level)?;
    let mut settings = load_settings(&args)?;
    let reload_args = args.clone();
    settings.reload = Some(Reloader::new(move || {
        load_settings(&reload_args).map_err(|error| format!("{error:#}"))
    }));
    tracing::info!(
        roots = ?settings.roots.roots().iter().map(|root| root.path.display().to_string()).collect::<Vec<_>>(),
        servers = ?settings.servers.iter().map(|spec| spec.name.as_str()).collect::<Vec<_>>(),
        "windlass starting"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let arguments = supervisor::Arguments {
            policy: RestartPolicy::default(),
            mode: Mode::Standalone,
            first: Some((settings, Connection::Stdio)),
        };
        let (supervisor, handle) = Actor::spawn(None, Supervisor, arguments)
            .await
            .context("starting the supervisor")?;
        tokio::select! {
            ended = handle => ended.context("supervisor task")?,
            signal = termination() => {
                tracing::info!("{signal}; shutting down");
                // Stopping the tree drops every server actor, whose
                // processes are killed with it; a signal's default action
                // would leave them running.
                supervisor.stop_children_and_wait(None, Some(Duration::from_secs(2))).await;
                supervisor.stop(Some(signal.to_owned()));
            }
        }
        anyhow::Ok(())
    })?;
    // Server processes are killed as their actors drop; nothing else to wait for.
    runtime.shutdown_timeout(Duration::from_secs(2));
    Ok(())
}

/// Resolves when the process is asked to stop (SIGTERM, SIGINT, SIGHUP).
async fn termination() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
            signal(SignalKind::hangup()),
        ) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
            _ = hup.recv() => "SIGHUP",
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "interrupted"
    }
}

fn load_settings(args: &ServeArgs) -> Result<Settings> {
    let directories = if args.roots.is_empty() {
        vec![std::env::current_dir()?]
    } else {
        args.roots.clone()
    };
    let roots = RootSet::new(&directories)?;
    let first_root = roots.first_directory();
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
        let (name, entry) = config::parse_lsp_flag(flag)?;
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
    })
}
