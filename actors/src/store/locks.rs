//! File leases between agents (`windlass acquire` / `release`): one row
//! per file being edited in `file_locks`, taken and given back in
//! IMMEDIATE transactions so that two hooks never both see a file free. A
//! lease is re-entrant for its owner and expires; a lease whose holder's
//! session has ended holds nothing. Reads take no lease: they only ask who
//! is editing.

use crate::vocabulary::ids::SessionId;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// Who holds a file, and since when (milliseconds since the epoch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub owner: String,
    pub since: i64,
    /// The agent host it runs in ("Codex"), when its hook said.
    pub host: Option<String>,
}

/// A lease as its row holds it.
struct Leased {
    holder: Holder,
    session: Option<SessionId>,
    expires: i64,
}

/// Who asks for a lease: the owner, the session it belongs to, and the
/// agent host it runs in.
#[derive(Debug, Clone, Copy)]
pub struct Claimant<'a> {
    pub owner: &'a str,
    pub session: Option<SessionId>,
    pub host: Option<&'a str>,
}

/// What asking for a lease came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lease {
    /// Taken now, or renewed for the owner that held it.
    Granted,
    Held(Holder),
}

/// One ask for the lease on `path`: granted (or renewed) until
/// `now + ttl_ms` when the file is free, its lease expired, its holder's
/// session is gone (`session_gone`, given the session id the lease
/// recorded, asked within the lease's transaction), or the owner already
/// holds it.
pub fn try_acquire(
    connection: &mut Connection,
    path: &str,
    claimant: Claimant<'_>,
    now: i64,
    ttl_ms: i64,
    session_gone: impl Fn(&Connection, SessionId) -> bool,
) -> rusqlite::Result<Lease> {
    let Claimant {
        owner,
        session,
        host,
    } = claimant;
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current: Option<Leased> = transaction
        .query_row(
            "SELECT owner, session, acquired, expires, host FROM file_locks WHERE path = ?1",
            params![path],
            |row| {
                Ok(Leased {
                    holder: Holder {
                        owner: row.get(0)?,
                        since: row.get(2)?,
                        host: row.get(4)?,
                    },
                    session: row.get(1)?,
                    expires: row.get(3)?,
                })
            },
        )
        .optional()?;
    let acquired = match current {
        Some(leased)
            if leased.holder.owner != owner
                && leased.expires > now
                && !leased
                    .session
                    .is_some_and(|session| session_gone(&transaction, session)) =>
        {
            return Ok(Lease::Held(leased.holder));
        }
        // The owner's own lease keeps the time it was first taken.
        Some(leased) if leased.holder.owner == owner => leased.holder.since,
        _ => now,
    };
    transaction.execute(
        "INSERT INTO file_locks (path, owner, session, acquired, expires, renewed, host)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (path) DO UPDATE SET owner = excluded.owner, session = excluded.session,
             acquired = excluded.acquired, expires = excluded.expires, renewed = excluded.renewed,
             host = excluded.host",
        params![path, owner, session, acquired, now + ttl_ms, now, host],
    )?;
    transaction.commit()?;
    Ok(Lease::Granted)
}

/// Who other than `owner` is editing `path` now, if anyone: a lease
/// unexpired whose holder's session is not gone.
pub fn editor(
    connection: &Connection,
    path: &str,
    owner: &str,
    now: i64,
    session_gone: impl Fn(&Connection, SessionId) -> bool,
) -> rusqlite::Result<Option<Holder>> {
    let current: Option<(String, Option<SessionId>, i64, Option<String>)> = connection
        .query_row(
            "SELECT owner, session, acquired, host FROM file_locks
             WHERE path = ?1 AND owner != ?2 AND expires > ?3",
            params![path, owner, now],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )
        .optional()?;
    Ok(current
        .filter(|(_, session, ..)| {
            !session.is_some_and(|session| session_gone(connection, session))
        })
        .map(|(owner, _, since, host)| Holder { owner, since, host }))
}

/// Lets go of `owner`'s leases on files other than `keep` last renewed
/// before `renewed_before`: the owner has moved on from them (an edit the
/// host rejected before its hooks ran never had its lease let go).
/// Returns the files let go.
pub fn release_others(
    connection: &mut Connection,
    owner: &str,
    keep: &[String],
    renewed_before: i64,
) -> rusqlite::Result<Vec<String>> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let released = {
        let mut statement = transaction.prepare(
            "DELETE FROM file_locks
             WHERE owner = ?1 AND coalesce(renewed, acquired) < ?2
               AND path NOT IN (SELECT value FROM json_each(?3))
             RETURNING path",
        )?;
        let keep = serde_json::to_string(keep).unwrap_or_else(|_| "[]".to_owned());
        statement
            .query_map(params![owner, renewed_before, keep], |row| row.get(0))?
            .collect::<rusqlite::Result<Vec<String>>>()?
    };
    transaction.commit()?;
    Ok(released)
}

/// Lets the owner's lease on `path` end `grace_ms` from `now` (at once
/// for 0). Returns whether the owner held it.
pub fn release(
    connection: &mut Connection,
    path: &str,
    owner: &str,
    now: i64,
    grace_ms: i64,
) -> rusqlite::Result<bool> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let changed = match grace_ms {
        0 => transaction.execute(
            "DELETE FROM file_locks WHERE path = ?1 AND owner = ?2",
            params![path, owner],
        )?,
        _ => transaction.execute(
            "UPDATE file_locks SET expires = min(expires, ?3) WHERE path = ?1 AND owner = ?2",
            params![path, owner, now + grace_ms],
        )?,
    };
    transaction.commit()?;
    Ok(changed > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let connection = super::super::open(&dir.path().join("windlass.db")).unwrap();
        (dir, connection)
    }

    const NONE_GONE: fn(&Connection, SessionId) -> bool = |_, _| false;

    /// `owner` of session `session`, in Codex.
    fn claimant(owner: &str, session: u64) -> Claimant<'_> {
        Claimant {
            owner,
            session: Some(SessionId(session)),
            host: Some("Codex"),
        }
    }

    #[test]
    fn a_lease_is_held_re_entrant_released_and_expires() {
        let (_dir, mut db) = store();
        let ask = |db: &mut Connection, owner: &str, now: i64| {
            try_acquire(db, "/p/a.py", claimant(owner, 1), now, 1_000, NONE_GONE).unwrap()
        };
        assert_eq!(ask(&mut db, "alice", 0), Lease::Granted);
        assert_eq!(ask(&mut db, "alice", 10), Lease::Granted, "re-entrant");
        let held = Lease::Held(Holder {
            owner: "alice".into(),
            since: 0,
            host: Some("Codex".into()),
        });
        assert_eq!(ask(&mut db, "bob", 20), held, "since the first grant");
        assert_eq!(ask(&mut db, "bob", 1_011), Lease::Granted, "expired");
        assert!(release(&mut db, "/p/a.py", "bob", 1_100, 0).unwrap());
        assert!(!release(&mut db, "/p/a.py", "bob", 1_100, 0).unwrap());
        assert_eq!(ask(&mut db, "carol", 1_200), Lease::Granted, "released");
        assert!(release(&mut db, "/p/a.py", "carol", 1_300, 50).unwrap());
        assert!(
            matches!(ask(&mut db, "dave", 1_340), Lease::Held(_)),
            "in grace"
        );
        assert_eq!(ask(&mut db, "dave", 1_351), Lease::Granted, "after grace");
    }

    #[test]
    fn readers_see_the_editor_and_an_owner_moving_on_lets_go() {
        let (_dir, mut db) = store();
        let lease = |db: &mut Connection, path: &str, now: i64| {
            try_acquire(db, path, claimant("alice", 1), now, 60_000, NONE_GONE).unwrap()
        };
        assert_eq!(lease(&mut db, "/p/a.py", 0), Lease::Granted);
        let editing = editor(&db, "/p/a.py", "bob", 10, NONE_GONE).unwrap();
        assert_eq!(
            editing,
            Some(Holder {
                owner: "alice".into(),
                since: 0,
                host: Some("Codex".into()),
            })
        );
        assert_eq!(
            editor(&db, "/p/a.py", "alice", 10, NONE_GONE).unwrap(),
            None
        );
        assert_eq!(lease(&mut db, "/p/b.py", 5_000), Lease::Granted);
        let released = release_others(&mut db, "alice", &["/p/c.py".to_owned()], 3_000).unwrap();
        assert_eq!(
            released,
            vec!["/p/a.py".to_owned()],
            "b.py is of the same batch"
        );
        assert_eq!(
            editor(&db, "/p/a.py", "bob", 5_010, NONE_GONE).unwrap(),
            None
        );
        assert!(
            editor(&db, "/p/b.py", "bob", 5_010, NONE_GONE)
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn a_holder_whose_session_is_gone_holds_nothing() {
        let (_dir, mut db) = store();
        try_acquire(
            &mut db,
            "/p/a.py",
            claimant("alice", 1),
            0,
            60_000,
            NONE_GONE,
        )
        .unwrap();
        let gone = |_: &Connection, session: SessionId| session == SessionId(1);
        let lease = try_acquire(&mut db, "/p/a.py", claimant("bob", 2), 10, 60_000, gone).unwrap();
        assert_eq!(lease, Lease::Granted);
    }
}
