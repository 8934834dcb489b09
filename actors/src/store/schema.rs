//! The store's schema, as a list of forward migrations. Version N is the
//! database after the first N migrations; `meta.schema_version` says
//! which a database has. A new version appends a migration and never
//! edits an old one, so every database ever made can be brought forward.

use rusqlite::{Connection, OptionalExtension, params};

/// Each migration, in order: `MIGRATIONS[n]` takes version n to n + 1.
const MIGRATIONS: &[&str] = &[
    // 1: sessions, their roots, events, servers, leases.
    "CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        pid INTEGER NOT NULL,
        socket TEXT,
        daemon INTEGER NOT NULL,
        host_session TEXT,
        client_name TEXT,
        client_version TEXT,
        started INTEGER NOT NULL,
        ended INTEGER,
        alive INTEGER NOT NULL DEFAULT 1
    );
    CREATE INDEX sessions_alive ON sessions(alive, started);
    CREATE INDEX sessions_host ON sessions(host_session);
    CREATE TABLE workspace_roots (
        session TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        added INTEGER NOT NULL,
        removed INTEGER
    );
    CREATE INDEX workspace_roots_session ON workspace_roots(session);
    CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        session TEXT,
        kind TEXT NOT NULL,
        server TEXT,
        tool TEXT,
        duration_us INTEGER,
        bytes INTEGER,
        ok INTEGER,
        detail TEXT NOT NULL
    );
    CREATE INDEX events_session_kind_at ON events(session, kind, at);
    CREATE INDEX events_kind_at ON events(kind, at);
    CREATE INDEX events_at ON events(at);
    CREATE TABLE language_servers (
        id INTEGER PRIMARY KEY,
        serving_pid INTEGER NOT NULL,
        name TEXT NOT NULL,
        command TEXT NOT NULL,
        pid INTEGER,
        state TEXT NOT NULL,
        started INTEGER NOT NULL,
        ended INTEGER,
        restarts INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE file_locks (
        path TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        session TEXT,
        acquired INTEGER NOT NULL,
        expires INTEGER NOT NULL
    );",
    // 2: a server row names the instance it is within its serving process.
    "ALTER TABLE language_servers ADD COLUMN instance INTEGER;
    CREATE INDEX language_servers_instance ON language_servers(serving_pid, instance);",
    // 3: what the hosts' hooks remember between their runs: per owner and
    // file, the mtime it last saw and whether it was last told of errors;
    // per transcript, how far `sync-roots` has read it.
    "CREATE TABLE file_states (
        owner TEXT NOT NULL,
        path TEXT NOT NULL,
        mtime_ns INTEGER,
        told_errors INTEGER NOT NULL DEFAULT 0,
        at INTEGER NOT NULL,
        PRIMARY KEY (owner, path)
    );
    CREATE TABLE transcripts (
        path TEXT PRIMARY KEY,
        offset INTEGER NOT NULL,
        at INTEGER NOT NULL
    );
    CREATE INDEX file_locks_owner ON file_locks(owner);",
    // 4: the problems an owner was last told of in a file, so that the
    // next edit reports what it changed rather than everything again.
    "ALTER TABLE file_states ADD COLUMN problems TEXT;",
    // 5: when an edit lease was last renewed, so that an owner moving on
    // to another file lets go of those it no longer edits.
    "ALTER TABLE file_locks ADD COLUMN renewed INTEGER;",
    // 6: how each session's client reaches Windlass (stdio or http).
    "ALTER TABLE sessions ADD COLUMN transport TEXT NOT NULL DEFAULT 'stdio';",
    // 7: why a failed tool call failed, as its client was told.
    "ALTER TABLE events ADD COLUMN error TEXT;",
    // 8: the MCP client's process, by which a hook that its host started
    // finds its session when the host passes its MCP server no session id.
    "ALTER TABLE sessions ADD COLUMN client_pid INTEGER;",
    // 9: the agent host a lease's owner runs in, for another agent's
    // refusal to name.
    "ALTER TABLE file_locks ADD COLUMN host TEXT;",
];

/// The version this build writes.
pub const SCHEMA_VERSION: usize = MIGRATIONS.len();

/// Brings the database forward to [`SCHEMA_VERSION`], one transaction
/// per migration. A database newer than this build is left alone and
/// refused: its tables may mean what this build does not know.
pub fn migrate(connection: &mut Connection) -> rusqlite::Result<()> {
    let mut version = version(connection)?;
    if version > SCHEMA_VERSION {
        return Err(rusqlite::Error::InvalidParameterName(format!(
            "the store has schema version {version}, newer than this windlass ({SCHEMA_VERSION})"
        )));
    }
    while version < SCHEMA_VERSION {
        let transaction =
            connection.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // Another process may have migrated while this one waited.
        if self::version(&transaction)? != version {
            drop(transaction);
            version = self::version(connection)?;
            continue;
        }
        transaction.execute_batch(MIGRATIONS[version])?;
        version += 1;
        transaction.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![version.to_string()],
        )?;
        transaction.commit()?;
    }
    Ok(())
}

/// The database's schema version; 0 for a new, empty one.
pub fn version(connection: &Connection) -> rusqlite::Result<usize> {
    let has_meta: bool = connection.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
        [],
        |row| row.get::<_, i64>(0).map(|count| count > 0),
    )?;
    if !has_meta {
        return Ok(0);
    }
    let value: Option<String> = connection
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |row| row.get(0),
        )
        .optional()?;
    Ok(value.and_then(|value| value.parse().ok()).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database made by the first `version` migrations, as that build
    /// would have left it.
    fn made_by(version: usize) -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let mut connection = Connection::open(dir.path().join("windlass.db")).unwrap();
        for (n, migration) in MIGRATIONS[..version].iter().enumerate() {
            let transaction = connection.transaction().unwrap();
            transaction.execute_batch(migration).unwrap();
            transaction
                .execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?1)",
                    params![(n + 1).to_string()],
                )
                .unwrap();
            transaction.commit().unwrap();
        }
        (dir, connection)
    }

    #[test]
    fn every_earlier_version_upgrades_to_the_current_one() {
        for earlier in 0..=SCHEMA_VERSION {
            let (_dir, mut connection) = made_by(earlier);
            migrate(&mut connection).unwrap();
            assert_eq!(
                version(&connection).unwrap(),
                SCHEMA_VERSION,
                "from {earlier}"
            );
            // The tables the current version reads are all there.
            for table in [
                "sessions",
                "workspace_roots",
                "events",
                "language_servers",
                "file_locks",
                "file_states",
                "transcripts",
            ] {
                connection
                    .query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
                        row.get::<_, i64>(0)
                    })
                    .unwrap();
            }
        }
    }

    #[test]
    fn what_an_earlier_version_recorded_survives_the_upgrade() {
        for earlier in 1..SCHEMA_VERSION {
            let (_dir, mut connection) = made_by(earlier);
            connection
                .execute_batch(
                    "INSERT INTO sessions (id, pid, daemon, started) VALUES ('abc', 7, 0, 1);
                     INSERT INTO events (at, session, kind, detail) VALUES (2, 'abc', 'tool_call', '{}');
                     INSERT INTO language_servers (serving_pid, name, command, state, started)
                     VALUES (7, 'pyright', 'pyright-langserver', 'ready', 1);",
                )
                .unwrap();
            migrate(&mut connection).unwrap();
            for table in ["sessions", "events", "language_servers"] {
                let rows: i64 = connection
                    .query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
                        row.get(0)
                    })
                    .unwrap();
                assert_eq!(rows, 1, "{table} from version {earlier}");
            }
        }
    }

    #[test]
    fn a_newer_database_is_refused_untouched() {
        let (_dir, mut connection) = made_by(SCHEMA_VERSION);
        connection
            .execute(
                "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
                params![(SCHEMA_VERSION + 1).to_string()],
            )
            .unwrap();
        assert!(migrate(&mut connection).is_err());
        assert_eq!(version(&connection).unwrap(), SCHEMA_VERSION + 1);
    }

    #[test]
    fn migrating_twice_changes_nothing() {
        let (_dir, mut connection) = made_by(0);
        migrate(&mut connection).unwrap();
        migrate(&mut connection).unwrap();
        assert_eq!(version(&connection).unwrap(), SCHEMA_VERSION);
    }
}
