//! The event store: one SQLite database per user (`windlass.db` in the
//! state directory) holding sessions, their roots, events, language
//! servers and file leases.
//!
//! Opening sets WAL, `synchronous=NORMAL` and a busy timeout, and brings
//! the schema forward (`schema.rs`). The serving process's Recorder is the
//! only writer of events; readers (`list`, `query`) open their own
//! connections, read-only where they only read (`query --sql`).
//!
//! Beside it, `index.db` holds the symbol index (`index.rs`): a cache of
//! servers' outlines, apart so that its bulk writes never wait on the
//! Recorder's nor make `query` slower, and so that it can be deleted at
//! any time; `sketches.db` the text searches' filters (`sketches.rs`), a
//! cache too.

pub mod events;
pub mod hooks;
pub mod index;
pub mod locks;
mod schema;
pub mod servers;
pub mod sessions;
pub mod sketches;

use crate::vocabulary::ids::SessionId;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use schema::{SCHEMA_VERSION, migrate};

/// How long a connection waits for another process's write to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A session id is stored as it is shown. A column that holds something
/// else fails to read, as a column of the wrong type does.
impl ToSql for SessionId {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.to_string()))
    }
}

impl FromSql for SessionId {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        value
            .as_str()?
            .parse()
            .map_err(|error| FromSqlError::Other(Box::new(error)))
    }
}

/// The store's file in a state directory.
pub fn database_path(state_dir: &Path) -> PathBuf {
    state_dir.join("windlass.db")
}

/// The symbol index's file in a state directory.
pub fn index_path(state_dir: &Path) -> PathBuf {
    state_dir.join("index.db")
}

/// Opens (creating it and its directory if needed) one of the caches
/// beside the store, as the store itself is opened: WAL, `synchronous`
/// NORMAL, and a wait on another process's write.
fn open_cache(path: &Path) -> rusqlite::Result<Connection> {
    if let Some(parent) = path.parent() {
        let _created = std::fs::create_dir_all(parent);
    }
    let connection = Connection::open(path)?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    connection.pragma_update(None, "journal_mode", "WAL")?;
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(connection)
}

/// Opens a cache beside the store (as [`open_cache`]), its tables made
/// again by `make` when its file was made at another layout. Every
/// serving process opens the caches as it starts, at once: the layout is
/// read again inside the write transaction, so that only the first makes
/// the tables and the others, which waited, find them made.
fn open_cache_at(
    path: &Path,
    layout: i64,
    make: impl Fn(&Connection) -> rusqlite::Result<()>,
) -> rusqlite::Result<Connection> {
    // A new file's first connections race to make it WAL, and SQLite
    // answers the others "busy" at once, whatever their busy timeout.
    let mut attempt = 0;
    loop {
        match made_at(path, layout, &make) {
            Err(error)
                if attempt < OPEN_ATTEMPTS
                    && error.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy) =>
            {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(20 * attempt));
            }
            made => return made,
        }
    }
}

/// Times a cache is opened again after SQLite found it busy at once.
const OPEN_ATTEMPTS: u64 = 10;

/// One attempt of [`open_cache_at`].
fn made_at(
    path: &Path,
    layout: i64,
    make: &impl Fn(&Connection) -> rusqlite::Result<()>,
) -> rusqlite::Result<Connection> {
    let mut connection = open_cache(path)?;
    if self::layout(&connection)? != layout {
        let transaction =
            connection.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if self::layout(&transaction)? != layout {
            make(&transaction)?;
            transaction.pragma_update(None, "user_version", layout)?;
        }
        transaction.commit()?;
    }
    Ok(connection)
}

/// The layout a cache's file was made at (`user_version`).
fn layout(connection: &Connection) -> rusqlite::Result<i64> {
    connection.query_row("PRAGMA user_version", [], |row| row.get(0))
}

/// The text searches' filters' file in a state directory.
pub fn sketches_path(state_dir: &Path) -> PathBuf {
    state_dir.join("sketches.db")
}

/// Opens (creating if needed) the store for reading and writing, with
/// its schema brought up to date.
pub fn open(path: &Path) -> rusqlite::Result<Connection> {
    if let Some(parent) = path.parent() {
        // A missing directory shows as SQLite's "unable to open".
        let _created = std::fs::create_dir_all(parent);
    }
    let mut connection = Connection::open(path)?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    connection.pragma_update(None, "journal_mode", "WAL")?;
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    connection.pragma_update(None, "foreign_keys", "ON")?;
    migrate(&mut connection)?;
    Ok(connection)
}

/// Whether SQLite found that the file is no database, or a damaged one:
/// waiting will not make it readable.
pub fn is_damaged(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
    )
}

/// Moves a damaged store, with its WAL files, out of the way of a new one,
/// keeping it for whoever wants to look; returns where it went.
pub fn set_aside(path: &Path) -> std::io::Result<PathBuf> {
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(".damaged-{}", now_ms()));
    let aside = PathBuf::from(aside);
    std::fs::rename(path, &aside)?;
    for suffix in ["-wal", "-shm"] {
        let mut from = path.as_os_str().to_owned();
        from.push(suffix);
        let mut to = aside.as_os_str().to_owned();
        to.push(suffix);
        // Absent when SQLite never opened the file.
        let _moved = std::fs::rename(from, to);
    }
    Ok(aside)
}

/// Opens the store so that no statement can change it: SQLite refuses
/// writes on a read-only connection whatever the SQL says.
pub fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    Ok(connection)
}

/// Milliseconds since the Unix epoch: how the store keeps time.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        })
}
