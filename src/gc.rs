//! `windlass gc`: forgets what is no longer wanted: events and servers
//! older than an age, dead sessions with their roots and events (and the
//! servers and logs of ended processes), or one session; then gives the
//! space back (`VACUUM`).

use crate::clock::since_ms;
use crate::recorded::{mark_gone, session_id};
use anyhow::{Context as _, Result, bail};
use clap::Args;
use rusqlite::params;
use std::io::Write;
use windlass_actors::store;

#[derive(Args)]
pub struct GcArgs {
    /// Forget events, and servers that ended, older than this (30s, 15m,
    /// 1h, 7d, or a date).
    #[arg(long)]
    older_than: Option<String>,
    /// Forget sessions that are no longer alive, with their events, and
    /// the servers and logs of processes that have ended.
    #[arg(long)]
    dead: bool,
    /// Forget one session (any unique id prefix), with its events.
    #[arg(long)]
    session: Option<String>,
}

pub fn run(args: GcArgs) -> Result<()> {
    if args.older_than.is_none() && !args.dead && args.session.is_none() {
        bail!("say what to forget: --older-than AGE, --dead, or --session ID");
    }
    let path = crate::state_dir::store_path().context("no state directory")?;
    let mut connection =
        store::open(&path).with_context(|| format!("opening {}", path.display()))?;
    if args.dead {
        // Sessions whose process died without saying so are found first.
        mark_gone(&mut connection)?;
    }
    let session = args
        .session
        .as_deref()
        .map(|prefix| session_id(&connection, prefix))
        .transpose()?;
    let before = args
        .older_than
        .as_deref()
        .map(|age| since_ms(age, store::now_ms()))
        .transpose()?;
    let transaction =
        connection.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut events = 0;
    let mut sessions = 0;
    let mut servers = 0;
    if let Some(before) = before {
        events += transaction.execute("DELETE FROM events WHERE at < ?1", params![before])?;
        servers += store::servers::forget_ended(&transaction, before)?;
    }
    if args.dead {
        servers += store::servers::forget_gone(&transaction, |pid| !crate::process::alive(pid))?;
    }
    let doomed = "SELECT id FROM sessions WHERE (?1 AND alive = 0) OR id = ?2";
    events += transaction.execute(
        &format!("DELETE FROM events WHERE session IN ({doomed})"),
        params![args.dead, session],
    )?;
    transaction.execute(
        &format!("DELETE FROM workspace_roots WHERE session IN ({doomed})"),
        params![args.dead, session],
    )?;
    sessions += transaction.execute(
        "DELETE FROM sessions WHERE (?1 AND alive = 0) OR id = ?2",
        params![args.dead, session],
    )?;
    transaction.commit()?;
    connection.execute_batch("VACUUM")?;
    let logs = match args.dead {
        true => crate::logging::collect(&crate::logging::logs_directory()?, 0),
        false => 0,
    };
    writeln!(
        std::io::stdout().lock(),
        "forgot {sessions} sessions, {events} events, {servers} language servers and {logs} log files of ended processes"
    )?;
    Ok(())
}
