//! What the hosts' hooks remember between their runs, each run being a
//! process of its own: per owner and file, the modification time it last
//! saw and the problems `release` last told it of (`file_states`); per
//! transcript, how far `sync-roots` has read it (`transcripts`). And how
//! their recent runs went, read back from their `hook` events.

use rusqlite::{Connection, OptionalExtension, params};

/// What an owner last knew of a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileState {
    /// Nanoseconds since the epoch; `None` when the file did not exist.
    pub mtime_ns: Option<i64>,
    pub told_errors: bool,
    /// The problems it was last told of, as `release` keys them; `None`
    /// when it was never told of this file.
    pub problems: Option<Vec<String>>,
}

pub fn file_state(
    connection: &Connection,
    owner: &str,
    path: &str,
) -> rusqlite::Result<Option<FileState>> {
    connection
        .query_row(
            "SELECT mtime_ns, told_errors, problems FROM file_states WHERE owner = ?1 AND path = ?2",
            params![owner, path],
            |row| {
                let problems: Option<String> = row.get(2)?;
                Ok(FileState {
                    mtime_ns: row.get(0)?,
                    told_errors: row.get(1)?,
                    problems: problems.and_then(|text| serde_json::from_str(&text).ok()),
                })
            },
        )
        .optional()
}

/// Records the mtime the owner saw.
pub fn set_mtime(
    connection: &Connection,
    owner: &str,
    path: &str,
    mtime_ns: Option<i64>,
    now: i64,
) -> rusqlite::Result<()> {
    connection.execute(
        "INSERT INTO file_states (owner, path, mtime_ns, at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (owner, path) DO UPDATE SET mtime_ns = excluded.mtime_ns, at = excluded.at",
        params![owner, path, mtime_ns, now],
    )?;
    Ok(())
}

/// Records the problems the owner was just told of (or found none of),
/// and whether any was an error.
pub fn set_told(
    connection: &Connection,
    owner: &str,
    path: &str,
    problems: &[String],
    errors: bool,
    now: i64,
) -> rusqlite::Result<()> {
    let problems = serde_json::to_string(problems).unwrap_or_else(|_| "[]".into());
    connection.execute(
        "INSERT INTO file_states (owner, path, told_errors, problems, at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (owner, path) DO UPDATE SET told_errors = excluded.told_errors,
             problems = excluded.problems, at = excluded.at",
        params![owner, path, errors, problems, now],
    )?;
    Ok(())
}

/// How far the transcript at `path` has been read, in bytes.
pub fn transcript_offset(connection: &Connection, path: &str) -> rusqlite::Result<u64> {
    let offset: Option<i64> = connection
        .query_row(
            "SELECT offset FROM transcripts WHERE path = ?1",
            params![path],
            |row| row.get(0),
        )
        .optional()?;
    Ok(offset
        .and_then(|offset| u64::try_from(offset).ok())
        .unwrap_or(0))
}

pub fn set_transcript_offset(
    connection: &Connection,
    path: &str,
    offset: u64,
    now: i64,
) -> rusqlite::Result<()> {
    connection.execute(
        "INSERT INTO transcripts (path, offset, at) VALUES (?1, ?2, ?3)
         ON CONFLICT (path) DO UPDATE SET offset = excluded.offset, at = excluded.at",
        params![path, i64::try_from(offset).unwrap_or(i64::MAX), now],
    )?;
    Ok(())
}

/// How the hooks' runs since some time went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runs {
    pub total: i64,
    pub failed: i64,
    /// The last failure: when (ms since the epoch), which hook, and why.
    pub last_failure: Option<(i64, String, String)>,
}

/// The hooks' runs recorded since `since` (ms since the epoch).
pub fn runs_since(connection: &Connection, since: i64) -> rusqlite::Result<Runs> {
    let (total, failed): (i64, i64) = connection.query_row(
        "SELECT count(*), coalesce(sum(ok = 0), 0) FROM events WHERE kind = 'hook' AND at >= ?1",
        params![since],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )?;
    let last_failure = connection
        .query_row(
            "SELECT at, coalesce(tool, '?'), coalesce(json_extract(detail, '$.error'), '') FROM events
             WHERE kind = 'hook' AND ok = 0 AND at >= ?1 ORDER BY at DESC, id DESC LIMIT 1",
            params![since],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .optional()?;
    Ok(Runs {
        total,
        failed,
        last_failure,
    })
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_and_offsets_are_remembered_per_owner_and_file() {
        let dir = tempfile::tempdir().unwrap();
        let db = super::super::open(&dir.path().join("windlass.db")).unwrap();
        assert_eq!(file_state(&db, "a", "/f").unwrap(), None);
        set_mtime(&db, "a", "/f", Some(5), 1).unwrap();
        set_told(&db, "a", "/f", &["error bad".into()], true, 2).unwrap();
        set_mtime(&db, "a", "/f", Some(6), 3).unwrap();
        let state = file_state(&db, "a", "/f").unwrap().unwrap();
        assert_eq!(
            state,
            FileState {
                mtime_ns: Some(6),
                told_errors: true,
                problems: Some(vec!["error bad".into()]),
            }
        );
        assert_eq!(file_state(&db, "b", "/f").unwrap(), None);
        assert_eq!(transcript_offset(&db, "/t.jsonl").unwrap(), 0);
        set_transcript_offset(&db, "/t.jsonl", 120, 3).unwrap();
        assert_eq!(transcript_offset(&db, "/t.jsonl").unwrap(), 120);
    }
}
