//! `windlass status SESSION`: what the `status` tool would tell that
//! session (servers, states, roots, CPU and memory, sharing), asked of its
//! daemon over the socket.

use crate::hello::{Answer, Request};
use crate::monitor::session_socket;
use anyhow::{Context as _, Result, bail};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;

pub fn run(prefix: &str) -> Result<()> {
    let (session, socket) = session_socket(prefix)?;
    let mut stream = UnixStream::connect(&socket).with_context(|| {
        format!(
            "session {session}'s daemon does not answer at {}",
            socket.display()
        )
    })?;
    let mut line = serde_json::to_vec(&Request::Status { session })?;
    line.push(b'\n');
    stream.write_all(&line)?;
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer)?;
    match serde_json::from_str(&answer).context("the daemon hung up")? {
        Answer::Status(status) => {
            writeln!(std::io::stdout().lock(), "{status}")?;
            Ok(())
        }
        Answer::Refused(reason) => bail!("{reason}"),
        other => bail!("the daemon answered {other:?}"),
    }
}
