//! `windlass top`: the whole daemon at a glance. It attaches to the
//! running daemon's control socket, never starts one, and draws its
//! sessions, servers, leases and live events (a ratatui dashboard), or
//! prints one picture (`--once`, `--json`, or when stdout is not a
//! terminal). It only reads what the daemon already keeps: each refresh
//! asks `sessions` and every session's `status`, the store is read
//! read-only, and live events come through one bounded subscription.

mod screen;
mod snapshot;
mod text;

use crate::control::client;
use crate::control::protocol::{Answer, Request};
use crate::runtime_dir::RuntimeDir;
use anyhow::{Result, bail};
use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::time::Duration;

/// How long apart the two pictures of `--once` are, for CPU use.
const CPU_SAMPLE: Duration = Duration::from_millis(500);

#[derive(clap::Args, Debug)]
pub struct TopArgs {
    /// Print one picture as plain text and exit.
    #[arg(long)]
    pub once: bool,
    /// Print one picture as JSON and exit.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &TopArgs) -> Result<()> {
    let socket = daemon_socket()?;
    if args.once || args.json || !std::io::stdout().is_terminal() {
        return print_once(&socket, args.json);
    }
    screen::run(socket)
}

/// The running daemon's socket; none running is an error saying how to
/// start one.
fn daemon_socket() -> Result<PathBuf> {
    let socket = RuntimeDir::open()?.socket();
    let answers = client::expect(&socket, &Request::Ping, Duration::from_secs(5), |answer| {
        matches!(answer, Answer::Pong { .. }).then_some(())
    });
    if answers.is_err() {
        bail!(
            "no Windlass daemon is running for this user and version; an agent's first \
             `windlass` starts one, or start it with `windlass daemon`"
        );
    }
    Ok(socket)
}

fn print_once(socket: &std::path::Path, json: bool) -> Result<()> {
    let first = snapshot::take(socket, None)?;
    std::thread::sleep(CPU_SAMPLE);
    let picture = snapshot::take(socket, Some(&first))?;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&picture)?)?;
    } else {
        writeln!(out, "{}", text::render(&picture))?;
    }
    Ok(())
}
