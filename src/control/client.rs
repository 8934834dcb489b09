//! Asking a control socket from a command or a hook: a blocking
//! connection, one request, its answer, and for a subscription the event
//! lines after it.

use super::protocol::{self, Answer, Request};
use anyhow::{Context as _, Result, bail};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// The answer to `request`, waiting at most `limit` for it.
pub fn ask(socket: &Path, request: &Request, limit: Duration) -> Result<Answer> {
    let (_, answer) = send(socket, request, Some(limit))?;
    Ok(answer)
}

/// The answer to `request` as `T`, a refusal as the error it says.
pub fn expect<T>(
    socket: &Path,
    request: &Request,
    limit: Duration,
    wanted: impl FnOnce(Answer) -> Option<T>,
) -> Result<T> {
    match ask(socket, request, limit)? {
        Answer::Refused(reason) => bail!("{reason}"),
        answer => {
            let shown = format!("{answer:?}");
            wanted(answer).with_context(|| format!("an unexpected answer: {shown}"))
        }
    }
}

/// Subscribes with `request`; the events follow as JSON lines until the
/// serving process goes away.
pub fn subscribe(
    socket: &Path,
    request: &Request,
) -> Result<std::io::Lines<BufReader<UnixStream>>> {
    let (reader, answer) = send(socket, request, None)?;
    match answer {
        Answer::Subscribed => Ok(reader.lines()),
        Answer::Refused(reason) => bail!("{reason}"),
        other => bail!("an unexpected answer: {other:?}"),
    }
}

fn send(
    socket: &Path,
    request: &Request,
    limit: Option<Duration>,
) -> Result<(BufReader<UnixStream>, Answer)> {
    let mut stream = UnixStream::connect(socket)
        .with_context(|| format!("nothing answers at {}", socket.display()))?;
    stream.set_read_timeout(limit)?;
    stream.write_all(&protocol::encode(request)?)?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .with_context(|| format!("no answer from {}", socket.display()))?;
    if line.is_empty() {
        bail!("{} hung up without answering", socket.display());
    }
    let answer = serde_json::from_str(&line).context("a malformed answer")?;
    reader.get_ref().set_read_timeout(None)?;
    Ok((reader, answer))
}
