//! Event rows: what happened, when, in which session, written by the
//! Recorder in batches and read back by `query` with filters.

use crate::vocabulary::events::EventKind;
use crate::vocabulary::ids::SessionId;
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, Transaction, TransactionBehavior, params, params_from_iter};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One event. `detail` holds what only some kinds have (a tool's
/// arguments, a server's exit reason, a diagnostics count).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Milliseconds since the Unix epoch.
    pub at: i64,
    pub session: Option<SessionId>,
    pub kind: EventKind,
    pub server: Option<String>,
    pub tool: Option<String>,
    pub duration_us: Option<i64>,
    pub bytes: Option<i64>,
    pub ok: Option<bool>,
    pub detail: Value,
    /// What a failed call's client was told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Event {
    /// An event of `kind` now, with nothing else known yet.
    pub fn now(kind: EventKind, session: Option<SessionId>) -> Self {
        Self {
            at: super::now_ms(),
            session,
            kind,
            server: None,
            tool: None,
            duration_us: None,
            bytes: None,
            ok: None,
            detail: Value::Null,
            error: None,
        }
    }
}

pub fn insert(transaction: &Transaction, event: &Event) -> rusqlite::Result<()> {
    let mut statement = transaction.prepare_cached(
        "INSERT INTO events (at, session, kind, server, tool, duration_us, bytes, ok, detail, error)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    statement.execute(params![
        event.at,
        event.session,
        event.kind.name(),
        event.server,
        event.tool,
        event.duration_us,
        event.bytes,
        event.ok,
        event.detail.to_string(),
        event.error,
    ])?;
    Ok(())
}

/// Which events `query` wants; every field narrows.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub session: Option<SessionId>,
    /// Milliseconds since the Unix epoch.
    pub since: Option<i64>,
    pub kind: Option<EventKind>,
    /// Text that must appear in the tool, server, detail or error.
    pub search: Option<String>,
    pub limit: usize,
}

/// The newest events that pass `filter`, oldest first.
pub fn query(connection: &Connection, filter: &Filter) -> rusqlite::Result<Vec<Event>> {
    let mut conditions = Vec::new();
    let mut values: Vec<SqlValue> = Vec::new();
    if let Some(session) = &filter.session {
        values.push(session.to_string().into());
        conditions.push(format!("session = ?{}", values.len()));
    }
    if let Some(kind) = &filter.kind {
        values.push(kind.name().to_owned().into());
        conditions.push(format!("kind = ?{}", values.len()));
    }
    if let Some(since) = filter.since {
        values.push(since.into());
        conditions.push(format!("at >= ?{}", values.len()));
    }
    if let Some(search) = &filter.search {
        values.push(search.clone().into());
        let n = values.len();
        conditions.push(format!(
            "(instr(coalesce(tool, ''), ?{n}) OR instr(coalesce(server, ''), ?{n}) OR instr(detail, ?{n}) OR instr(coalesce(error, ''), ?{n}))"
        ));
    }
    let filter_sql = match conditions.is_empty() {
        true => String::new(),
        false => format!("WHERE {}", conditions.join(" AND ")),
    };
    values.push(i64::try_from(filter.limit).unwrap_or(i64::MAX).into());
    let sql = format!(
        "SELECT at, session, kind, server, tool, duration_us, bytes, ok, detail, error FROM (
            SELECT id, at, session, kind, server, tool, duration_us, bytes, ok, detail, error
            FROM events {filter_sql} ORDER BY at DESC, id DESC LIMIT ?{}
         ) ORDER BY at, id",
        values.len()
    );
    let mut statement = connection.prepare(&sql)?;
    let rows = statement.query_map(params_from_iter(values), |row| event_at(row, 0))?;
    rows.collect()
}

/// The newest event's row id, 0 when there is none.
pub fn last_id(connection: &Connection) -> rusqlite::Result<i64> {
    connection.query_row("SELECT coalesce(max(id), 0) FROM events", [], |row| {
        row.get(0)
    })
}

/// The bytes of the store's pages in use: what its events, sessions and
/// servers take, less the pages freed for reuse.
pub fn used_bytes(connection: &Connection) -> rusqlite::Result<u64> {
    let used: i64 = connection.query_row(
        "SELECT (page_count - freelist_count) * page_size
         FROM pragma_page_count, pragma_freelist_count, pragma_page_size",
        [],
        |row| row.get(0),
    )?;
    Ok(u64::try_from(used).unwrap_or(0))
}

/// Forgets the oldest events when the store uses more than `limit`
/// bytes, enough of them to bring it to [`TRIMMED_TO`] of the limit
/// (events are nearly all of a busy store). The pages they held are
/// reused by the next events rather than given back, so the file stops
/// growing without the pause a `VACUUM` would cost every writer. Returns
/// how many were forgotten.
pub fn trim(connection: &mut Connection, limit: u64) -> rusqlite::Result<usize> {
    let used = used_bytes(connection)?;
    if used <= limit {
        return Ok(0);
    }
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let count: i64 = transaction.query_row("SELECT count(*) FROM events", [], |row| row.get(0))?;
    let kept = count as f64 * (limit as f64 * TRIMMED_TO) / used as f64;
    let forget = (count - kept as i64).clamp(1, MAX_FORGOTTEN);
    let forgotten = transaction.execute(
        "DELETE FROM events WHERE id IN (SELECT id FROM events ORDER BY id LIMIT ?1)",
        params![forget],
    )?;
    transaction.commit()?;
    Ok(forgotten)
}

/// Events forgotten at most at once: a store far past its limit (one
/// older than the limit, or a limit just lowered) comes down over a few
/// trims rather than in one long pause of its writer.
const MAX_FORGOTTEN: i64 = 100_000;

/// The share of its limit a trimmed store is brought down to: trimming
/// again at every batch past the limit would make every batch slow.
pub const TRIMMED_TO: f64 = 0.8;

/// Events of one of `kinds` written after row `after` (of `session` when
/// given), oldest first, each with its row id.
pub fn written_after(
    connection: &Connection,
    after: i64,
    kinds: &[EventKind],
    session: Option<SessionId>,
) -> rusqlite::Result<Vec<(i64, Event)>> {
    let mut statement = connection.prepare_cached(
        "SELECT id, at, session, kind, server, tool, duration_us, bytes, ok, detail, error
         FROM events WHERE id > ?1 AND (?2 IS NULL OR session = ?2)
           AND kind IN (SELECT value FROM json_each(?3))
         ORDER BY id",
    )?;
    let kinds = serde_json::to_string(kinds).unwrap_or_default();
    let rows = statement.query_map(params![after, session, kinds], |row| {
        Ok((row.get(0)?, event_at(row, 1)?))
    })?;
    rows.collect()
}

/// The event in a row's columns from `first` on: at, session, kind,
/// server, tool, duration_us, bytes, ok, detail, error.
fn event_at(row: &rusqlite::Row, first: usize) -> rusqlite::Result<Event> {
    let detail: String = row.get(first + 8)?;
    Ok(Event {
        at: row.get(first)?,
        session: row.get(first + 1)?,
        kind: EventKind::named(&row.get::<_, String>(first + 2)?),
        server: row.get(first + 3)?,
        tool: row.get(first + 4)?,
        duration_us: row.get(first + 5)?,
        bytes: row.get(first + 6)?,
        ok: row.get(first + 7)?,
        detail: serde_json::from_str(&detail).unwrap_or(Value::String(detail)),
        error: row.get(first + 9)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(connection: &mut Connection, count: usize, detail: &str) {
        let transaction = connection.transaction().unwrap();
        for _ in 0..count {
            let mut event = Event::now(EventKind::Error, None);
            event.detail = Value::String(detail.to_owned());
            insert(&transaction, &event).unwrap();
        }
        transaction.commit().unwrap();
    }

    #[test]
    fn a_store_past_its_limit_forgets_its_oldest_events_and_reuses_their_pages() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("windlass.db");
        let mut connection = super::super::open(&path).unwrap();
        let padding = "x".repeat(1000);
        write(&mut connection, 2000, &padding);
        let newest = last_id(&connection).unwrap();
        assert_eq!(
            trim(&mut connection, 64 << 20).unwrap(),
            0,
            "under the limit"
        );
        let limit = 1 << 20;
        let forgotten = trim(&mut connection, limit).unwrap();
        assert!(forgotten > 1000, "{forgotten}");
        assert!(used_bytes(&connection).unwrap() <= limit);
        let oldest: i64 = connection
            .query_row("SELECT min(id) FROM events", [], |row| row.get(0))
            .unwrap();
        assert_eq!(
            oldest,
            i64::try_from(forgotten).unwrap() + 1,
            "the oldest go first"
        );
        assert_eq!(last_id(&connection).unwrap(), newest, "the newest stay");
        // Written again past the limit and trimmed, the file grows no more.
        connection
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        for _ in 0..5 {
            write(&mut connection, 500, &padding);
            trim(&mut connection, limit).unwrap();
        }
        connection
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() <= size + (256 << 10));
    }
}
