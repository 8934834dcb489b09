//! `windlass list`: every recorded session, alive first. A session whose
//! serving process is gone is shown dead, and its row is marked so.

use crate::clock::shown_time;
use crate::recorded::mark_gone;
use anyhow::{Context as _, Result};
use std::io::Write;
use windlass_actors::store::{self, sessions};

pub fn run() -> Result<()> {
    let path = crate::state_dir::store_path().context("no state directory")?;
    let mut connection =
        store::open(&path).with_context(|| format!("opening {}", path.display()))?;
    mark_gone(&mut connection)?;
    let listed = sessions::list(&connection)?;
    let mut out = std::io::stdout().lock();
    if listed.is_empty() {
        writeln!(out, "no sessions recorded")?;
    }
    for session in listed {
        writeln!(out, "{}", line(&session))?;
    }
    Ok(())
}

fn line(session: &sessions::ListedSession) -> String {
    let state = if session.alive { "alive" } else { "dead" };
    let serving = if session.daemon {
        "daemon"
    } else {
        "standalone"
    };
    let mut line = format!(
        "{}  {state:<5}  {} pid {} over {}  started {}",
        session.id,
        serving,
        session.pid,
        session.transport,
        shown_time(session.started)
    );
    if let Some(ended) = session.ended {
        line.push_str(&format!("  ended {}", shown_time(ended)));
    }
    if let Some(client) = &session.client {
        line.push_str(&format!("  client {client}"));
    }
    if let Some(host) = &session.host_session {
        line.push_str(&format!("  host session {host}"));
    }
    for root in &session.roots {
        line.push_str(&format!("\n    root {root}"));
    }
    line
}
