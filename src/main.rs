//! The `windlass` binary: command line, configuration, logging, and the
//! three ways a session is served: through a bridge (`windlass-bridge`)
//! to the user's daemon (the default), by the daemon itself, or
//! standalone in this process. Errors are `anyhow` here and typed below.

mod clock;
mod config;
mod control;
mod daemon;
mod doctor;
mod gc;
mod hooks;
mod http;
mod list;
mod live_events;
mod logging;
mod process;
mod query;
mod recorded;
mod runtime_dir;
mod serve;
mod session_args;
mod standalone;
mod state_dir;
mod status;
mod top;
mod tree;
mod trust;
mod tsserver_plugins;

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand};
use daemon::DaemonArgs;
use session_args::ServeArgs;
use std::path::PathBuf;

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
    /// Serve MCP over stdio (the default): a bridge to this user's daemon,
    /// started if none runs, or the whole server with --standalone.
    Serve(ServeArgs),
    /// Run the daemon that bridges attach to (normally started by a bridge).
    Daemon(DaemonArgs),
    /// Stop the daemon and its language servers.
    Stop,
    /// Recorded sessions, alive first.
    List,
    /// Recorded events, filtered; or a read-only SELECT over the store.
    Query(query::QueryArgs),
    /// Forget old events, dead sessions, or one session.
    Gc(gc::GcArgs),
    /// A session's events, live (or every session's, --all).
    Monitor(live_events::MonitorArgs),
    /// The whole daemon at a glance: sessions, servers, leases, events.
    Top(top::TopArgs),
    /// A live session's servers, states, roots, CPU and memory.
    Status {
        /// A session id, or any unique prefix of one.
        session: String,
    },
    /// Hook: before a tool reads or edits a file, take this agent's lease
    /// on it (host JSON on stdin).
    Acquire(hooks::acquire::AcquireArgs),
    /// Hook: after an edit, the edited files' fresh diagnostics; then let
    /// the lease go (host JSON on stdin).
    Release(hooks::release::ReleaseArgs),
    /// Hook: add the host's working directories to the session's roots
    /// (host JSON on stdin).
    SyncRoots(hooks::sync_roots::SyncRootsArgs),
    /// Whether windlass can work here: servers, daemon, hooks, store.
    Doctor(doctor::DoctorArgs),
    /// The bearer token of the daemon's HTTP endpoint (made if there is none).
    Token {
        /// Replace it; the old one stops working at once.
        #[arg(long)]
        rotate: bool,
    },
    /// Allow a project .windlass.toml to run the server commands it names.
    Trust {
        /// The file to trust (default: the .windlass.toml for this directory).
        file: Option<PathBuf>,
    },
}

/// A failure is one line on stderr and exit status 1: the error and its
/// causes, never a backtrace (Rust prints one for an error returned from
/// `main` whenever `RUST_BACKTRACE` is set, as it is on many developers'
/// machines).
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("windlass: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let raw_args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Trust { file }) => trust_command(file),
        Some(Command::Token { rotate }) => http::token::run(rotate),
        Some(Command::Serve(args)) => serve::run(args, raw_args),
        Some(Command::Daemon(args)) => daemon::run(args),
        Some(Command::Stop) => daemon::stop_all(),
        Some(Command::List) => list::run(),
        Some(Command::Query(args)) => query::run(args),
        Some(Command::Gc(args)) => gc::run(args),
        Some(Command::Monitor(args)) => live_events::run(args),
        Some(Command::Status { session }) => status::run(&session),
        Some(Command::Top(args)) => top::run(&args),
        Some(Command::Doctor(args)) => doctor::run(args),
        Some(Command::Acquire(args)) => hooks::acquire::run(&args),
        Some(Command::Release(args)) => hooks::release::run(&args),
        Some(Command::SyncRoots(args)) => hooks::sync_roots::run(&args),
        None => serve::run(cli.serve, raw_args),
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
