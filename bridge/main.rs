//! `windlass-bridge`: what an agent's `windlass` process becomes once it
//! has resolved its session. A program of its own, so that each agent's
//! bridge costs the few pages it needs rather than the whole server's:
//! `windlass` checks the session's arguments (a bad root fails there, as
//! standalone), writes its hello, and replaces itself with this.
//!
//! It attaches the session to this user's daemon of its version, starting
//! one when none answers (`daemon.rs`), then carries the MCP stream both
//! ways, line by line (`carry.rs`). If the daemon goes away the calls in
//! flight fail saying so, a new daemon is attached with the same hello and
//! the client's `initialize` replayed, and the client's connection never
//! drops. Where no daemon can be reached or started, the session is
//! served by `windlass --standalone` (`upstream.rs`).
//!
//! `windlass` hands over through the environment (`WINDLASS_BRIDGE_*`)
//! and passes its own arguments, for the standalone fallback.

mod carry;
mod daemon;
// The daemon's answer to the hello, as the daemon writes it.
#[path = "../src/control/handshake.rs"]
mod handshake;
mod log;
mod upstream;

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;

/// What `windlass` hands over.
pub struct Handoff {
    /// The hello, one JSON line without its newline.
    hello: String,
    socket: PathBuf,
    start_lock: PathBuf,
    /// The `windlass` binary: the daemon and the standalone fallback.
    windlass: PathBuf,
    /// `windlass`'s own arguments.
    args: Vec<OsString>,
}

impl Handoff {
    fn from_environment() -> Result<Self, String> {
        let variable = |name: &str| {
            std::env::var_os(name)
                .ok_or_else(|| format!("{name} is not set: run `windlass`, not windlass-bridge"))
        };
        Ok(Self {
            hello: variable("WINDLASS_BRIDGE_HELLO")?
                .into_string()
                .map_err(|_| "the hello is not UTF-8".to_owned())?,
            socket: variable("WINDLASS_BRIDGE_SOCKET")?.into(),
            start_lock: variable("WINDLASS_BRIDGE_LOCK")?.into(),
            windlass: variable("WINDLASS_BRIDGE_WINDLASS")?.into(),
            args: std::env::args_os().skip(1).collect(),
        })
    }

    /// `windlass` run standalone with the session's arguments, without the
    /// handoff in its environment.
    pub fn standalone(&self) -> std::process::Command {
        let mut command = std::process::Command::new(&self.windlass);
        command.args(&self.args).arg("--standalone");
        remove_handoff(&mut command);
        command
    }
}

/// Keeps the handoff out of the processes the bridge starts.
pub fn remove_handoff(command: &mut std::process::Command) {
    for name in [
        "WINDLASS_BRIDGE_HELLO",
        "WINDLASS_BRIDGE_SOCKET",
        "WINDLASS_BRIDGE_LOCK",
        "WINDLASS_BRIDGE_WINDLASS",
        "WINDLASS_BRIDGE_LOG",
    ] {
        command.env_remove(name);
    }
}

fn main() -> ExitCode {
    log::open(std::env::var_os("WINDLASS_BRIDGE_LOG").map(PathBuf::from));
    let handoff = match Handoff::from_environment() {
        Ok(handoff) => handoff,
        Err(error) => {
            log::error(&error);
            return ExitCode::FAILURE;
        }
    };
    let upstream = match daemon::attach(&handoff) {
        Ok(upstream) => upstream,
        Err(error) => {
            log::warn(&format!("no daemon ({error}); serving standalone"));
            // Only returns if the standalone server could not be started.
            let error = handoff.standalone().exec();
            log::error(&format!(
                "could not run {}: {error}",
                handoff.windlass.display()
            ));
            return ExitCode::FAILURE;
        }
    };
    match carry::Carrier::new(handoff).carry(upstream) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            log::error(&error);
            ExitCode::FAILURE
        }
    }
}
