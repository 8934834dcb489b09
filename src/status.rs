//! `windlass status SESSION`: what the `status` tool would tell that
//! session (servers, states, roots, CPU and memory, sharing), asked of its
//! serving process over its control socket.

use crate::control::client;
use crate::control::protocol::{Answer, Request};
use crate::recorded::session_socket;
use anyhow::{Context as _, Result};
use std::io::Write;
use std::time::Duration;

/// How long the serving process may take to answer.
const STATUS_TIMEOUT: Duration = Duration::from_secs(10);

pub fn run(prefix: &str) -> Result<()> {
    let (session, socket) = session_socket(prefix)?;
    let request = Request::Status { session };
    let status = client::expect(&socket, &request, STATUS_TIMEOUT, |answer| match answer {
        Answer::Status(status) => Some(status),
        _ => None,
    })
    .with_context(|| format!("asking session {session}'s serving process"))?;
    writeln!(std::io::stdout().lock(), "{}", status.lines().join("\n"))?;
    Ok(())
}
