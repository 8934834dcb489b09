//! `windlass monitor`: a session's events (or every session's, `--all`)
//! live, as the daemon records them: subscribes on the daemon's socket and
//! prints each event as `query` does, or as JSON lines with `--json`.

use crate::hello::{Answer, Request};
use crate::query::{session_id, table_line};
use crate::runtime_dir::RuntimeDir;
use anyhow::{Context as _, Result, bail};
use clap::Args;
use regex::Regex;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use windlass_actors::store::events::Event;
use windlass_actors::store::{self, sessions};

#[derive(Args)]
pub struct MonitorArgs {
    /// A session id, or any unique prefix of one.
    session: Option<String>,
    /// Every session's events.
    #[arg(long, conflicts_with = "session")]
    all: bool,
    /// Only events whose line matches this regular expression.
    #[arg(long)]
    filter: Option<String>,
    /// Only events of this kind.
    #[arg(long)]
    kind: Option<String>,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
}

pub fn run(args: MonitorArgs) -> Result<()> {
    let filter = args
        .filter
        .as_deref()
        .map(Regex::new)
        .transpose()
        .context("--filter")?;
    let (session, socket) = match (&args.session, args.all) {
        (Some(prefix), false) => {
            let (id, socket) = session_socket(prefix)?;
            (Some(id), socket)
        }
        (None, true) => (None, RuntimeDir::open()?.socket()),
        _ => bail!("name a session, or --all"),
    };
    let mut stream = UnixStream::connect(&socket)
        .with_context(|| format!("connecting to the daemon at {}", socket.display()))?;
    let request = Request::Subscribe {
        session,
        kind: args.kind,
    };
    let mut line = serde_json::to_vec(&request)?;
    line.push(b'\n');
    stream.write_all(&line)?;
    let mut lines = BufReader::new(stream).lines();
    let answer: Answer = serde_json::from_str(&lines.next().context("the daemon hung up")??)?;
    if !matches!(answer, Answer::Subscribed) {
        bail!("the daemon answered {answer:?}");
    }
    let mut out = std::io::stdout().lock();
    for line in lines {
        let line = line.context("the daemon hung up")?;
        let shown = match args.json {
            true => line,
            false => table_line(&serde_json::from_str::<Event>(&line)?),
        };
        if filter.as_ref().is_none_or(|filter| filter.is_match(&shown)) {
            writeln!(out, "{shown}")?;
            out.flush()?;
        }
    }
    Ok(())
}

/// The session `prefix` names and the socket its daemon listens on.
pub fn session_socket(prefix: &str) -> Result<(String, std::path::PathBuf)> {
    let path = crate::state_dir::store_path().context("no state directory")?;
    let connection = store::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let id = session_id(&connection, prefix)?;
    match sessions::socket(&connection, &id)? {
        Some(socket) => Ok((id, socket.into())),
        None => bail!(
            "session {id} runs standalone: it has no socket to monitor (see `windlass query --session {id}`)"
        ),
    }
}
