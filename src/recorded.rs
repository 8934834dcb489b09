//! The store's sessions and events as the commands find and show them: a
//! session named by any unique prefix of its id, the control socket of
//! its serving process, the sessions whose process died without saying
//! so, and an event as one line of text.

use crate::clock::shown_time;
use anyhow::{Context as _, Result, bail};
use std::path::PathBuf;
use windlass_actors::store::events::Event;
use windlass_actors::store::{self, sessions};
use windlass_actors::vocabulary::ids::SessionId;

/// The one session `prefix` names; an ambiguous prefix lists them.
pub fn session_id(connection: &rusqlite::Connection, prefix: &str) -> Result<SessionId> {
    let ids = sessions::matching(connection, prefix)?;
    match ids.as_slice() {
        [] => bail!("no session {prefix:?}"),
        [id] => Ok(*id),
        _ => {
            let ids: Vec<String> = ids.iter().map(SessionId::to_string).collect();
            bail!("{prefix:?} is ambiguous: {}", ids.join(", "))
        }
    }
}

/// The session `prefix` names and the control socket of its serving
/// process.
pub fn session_socket(prefix: &str) -> Result<(SessionId, PathBuf)> {
    let path = crate::state_dir::store_path().context("no state directory")?;
    let connection = store::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let id = session_id(&connection, prefix)?;
    match sessions::socket(&connection, id)? {
        Some(socket) => Ok((id, socket.into())),
        None => bail!(
            "session {id} has no control socket (its process had no runtime directory); see `windlass query --session {id}`"
        ),
    }
}

/// Marks every session whose serving process is gone as dead.
pub fn mark_gone(connection: &mut rusqlite::Connection) -> Result<()> {
    let gone: Vec<SessionId> = sessions::list(connection)?
        .into_iter()
        .filter(|session| session.alive && !crate::process::alive(session.pid))
        .map(|session| session.id)
        .collect();
    if !gone.is_empty() {
        sessions::mark_dead(connection, &gone, store::now_ms())?;
    }
    Ok(())
}

/// An event as one line: a row of `query`'s table, and what `monitor`
/// prints and filters.
pub fn table_line(event: &Event) -> String {
    let mut line = format!(
        "{}  {}  {}",
        shown_time(event.at),
        event
            .session
            .map_or_else(|| "-".to_owned(), |session| session.to_string()),
        event.kind
    );
    for name in [&event.server, &event.tool].into_iter().flatten() {
        line.push_str(&format!("  {name}"));
    }
    if let Some(micros) = event.duration_us {
        line.push_str(&format!("  {:.3} ms", micros as f64 / 1000.0));
    }
    if let Some(bytes) = event.bytes {
        line.push_str(&format!("  {bytes} B"));
    }
    if event.ok == Some(false) {
        line.push_str("  failed");
    }
    if let Some(error) = &event.error {
        line.push_str(&format!(": {}", error.replace('\n', " ")));
    }
    if !event.detail.is_null() {
        line.push_str(&format!("  {}", event.detail));
    }
    line
}
