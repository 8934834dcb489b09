//! Session rows: written by the Recorder as sessions attach, learn their
//! client, change roots and end; read by `list` and by whatever looks a
//! session up by id prefix.

use crate::vocabulary::ids::SessionId;
use rusqlite::{Connection, OptionalExtension, Transaction, params};
use std::path::PathBuf;

/// A session as it starts.
#[derive(Debug, Clone)]
pub struct SessionRow {
    pub id: SessionId,
    /// The serving process: the daemon, or the standalone process.
    pub pid: u32,
    pub socket: Option<PathBuf>,
    pub daemon: bool,
    pub host_session: Option<String>,
    /// The MCP client's process (the host), when it runs on this machine.
    pub client_pid: Option<u32>,
    /// `stdio` or `http`.
    pub transport: &'static str,
    pub started: i64,
    pub roots: Vec<PathBuf>,
}

/// A session as `list` shows it.
#[derive(Debug, Clone)]
pub struct ListedSession {
    pub id: SessionId,
    pub pid: u32,
    pub daemon: bool,
    pub host_session: Option<String>,
    pub transport: String,
    pub client: Option<String>,
    pub started: i64,
    pub ended: Option<i64>,
    pub alive: bool,
    pub roots: Vec<String>,
}

pub fn insert(transaction: &Transaction, row: &SessionRow) -> rusqlite::Result<()> {
    transaction.execute(
        "INSERT INTO sessions (id, pid, socket, daemon, host_session, started, transport, client_pid, alive)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1)",
        params![
            row.id,
            row.pid,
            row.socket
                .as_ref()
                .map(|socket| socket.display().to_string()),
            row.daemon,
            row.host_session,
            row.started,
            row.transport,
            row.client_pid,
        ],
    )?;
    set_roots(transaction, row.id, &row.roots, row.started)
}

/// Records the session's roots as of `at`: roots no longer listed are
/// marked removed, new ones added.
pub fn set_roots(
    transaction: &Transaction,
    id: SessionId,
    roots: &[PathBuf],
    at: i64,
) -> rusqlite::Result<()> {
    let shown: Vec<String> = roots
        .iter()
        .map(|root| root.display().to_string())
        .collect();
    let current: Vec<String> = {
        let mut statement = transaction
            .prepare("SELECT path FROM workspace_roots WHERE session = ?1 AND removed IS NULL")?;
        let paths = statement.query_map(params![id], |row| row.get(0))?;
        paths.collect::<rusqlite::Result<_>>()?
    };
    for gone in current.iter().filter(|path| !shown.contains(path)) {
        transaction.execute(
            "UPDATE workspace_roots SET removed = ?3 WHERE session = ?1 AND path = ?2 AND removed IS NULL",
            params![id, gone, at],
        )?;
    }
    for added in shown.iter().filter(|path| !current.contains(path)) {
        transaction.execute(
            "INSERT INTO workspace_roots (session, path, added) VALUES (?1, ?2, ?3)",
            params![id, added, at],
        )?;
    }
    Ok(())
}

pub fn set_client(
    transaction: &Transaction,
    id: SessionId,
    name: &str,
    version: &str,
) -> rusqlite::Result<()> {
    transaction.execute(
        "UPDATE sessions SET client_name = ?2, client_version = ?3 WHERE id = ?1",
        params![id, name, version],
    )?;
    Ok(())
}

pub fn end(transaction: &Transaction, id: SessionId, at: i64) -> rusqlite::Result<()> {
    transaction.execute(
        "UPDATE sessions SET ended = ?2, alive = 0 WHERE id = ?1 AND ended IS NULL",
        params![id, at],
    )?;
    Ok(())
}

/// Every session, alive first, newest first within each.
pub fn list(connection: &Connection) -> rusqlite::Result<Vec<ListedSession>> {
    let mut statement = connection.prepare(
        "SELECT id, pid, daemon, host_session, client_name, client_version, started, ended, alive,
                transport
         FROM sessions ORDER BY alive DESC, started DESC",
    )?;
    let rows = statement.query_map([], |row| {
        let name: Option<String> = row.get(4)?;
        let version: Option<String> = row.get(5)?;
        Ok(ListedSession {
            id: row.get(0)?,
            pid: row.get(1)?,
            daemon: row.get(2)?,
            host_session: row.get(3)?,
            transport: row.get(9)?,
            client: name.map(|name| match version {
                Some(version) => format!("{name} {version}"),
                None => name,
            }),
            started: row.get(6)?,
            ended: row.get(7)?,
            alive: row.get(8)?,
            roots: Vec::new(),
        })
    })?;
    let mut sessions: Vec<ListedSession> = rows.collect::<rusqlite::Result<_>>()?;
    let mut roots = connection.prepare(
        "SELECT path FROM workspace_roots WHERE session = ?1 AND removed IS NULL ORDER BY rowid",
    )?;
    for session in &mut sessions {
        session.roots = roots
            .query_map(params![session.id], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
    }
    Ok(sessions)
}

/// Marks sessions whose serving process is gone as dead, ended now.
pub fn mark_dead(connection: &mut Connection, ids: &[SessionId], at: i64) -> rusqlite::Result<()> {
    let transaction =
        connection.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    for id in ids {
        transaction.execute(
            "UPDATE sessions SET alive = 0, ended = coalesce(ended, ?2) WHERE id = ?1",
            params![id, at],
        )?;
    }
    transaction.commit()
}

/// The ids that start with `prefix`; else the session of the host's
/// session id (or a prefix of one) that `prefix` names, the live and most
/// recent if the host session was served more than once.
pub fn matching(connection: &Connection, prefix: &str) -> rusqlite::Result<Vec<SessionId>> {
    let mut statement = connection.prepare(
        "SELECT id FROM sessions WHERE substr(id, 1, length(?1)) = ?1 ORDER BY started DESC",
    )?;
    let ids: Vec<SessionId> = statement
        .query_map(params![prefix], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if !ids.is_empty() {
        return Ok(ids);
    }
    let mut by_host = connection.prepare(
        "SELECT id, host_session FROM sessions
         WHERE substr(host_session, 1, length(?1)) = ?1 ORDER BY alive DESC, started DESC",
    )?;
    let hosts: Vec<(SessionId, String)> = by_host
        .query_map(params![prefix], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let Some((first, host)) = hosts.first() else {
        return Ok(Vec::new());
    };
    // Each host session the prefix names, by its newest Windlass session.
    let mut named = vec![*first];
    let mut seen = vec![host.clone()];
    for (id, host) in &hosts {
        if !seen.contains(host) {
            seen.push(host.clone());
            named.push(*id);
        }
    }
    Ok(named)
}

/// Records `host` as the host's session id of session `id` when it has
/// none: a host that cannot pass its session id to its MCP server (Gemini
/// CLI) names it in every hook it runs. Returns whether it was recorded.
pub fn adopt_host_session(
    connection: &Connection,
    id: SessionId,
    host: &str,
) -> rusqlite::Result<bool> {
    let changed = connection.execute(
        "UPDATE sessions SET host_session = ?2 WHERE id = ?1 AND host_session IS NULL",
        params![id, host],
    )?;
    Ok(changed > 0)
}

/// The socket a session's serving process listens on, if it has one.
pub fn socket(connection: &Connection, id: SessionId) -> rusqlite::Result<Option<String>> {
    connection.query_row(
        "SELECT socket FROM sessions WHERE id = ?1",
        params![id],
        |row| row.get(0),
    )
}

/// A live session a hook may belong to, with its control socket.
#[derive(Debug, Clone)]
pub struct LiveSession {
    pub id: SessionId,
    pub socket: PathBuf,
    /// The host's session id it was started with or has adopted.
    pub host_session: Option<String>,
    /// The MCP client's process.
    pub client_pid: Option<u32>,
    pub roots: Vec<PathBuf>,
}

/// The session a hook belongs to: the live one (per the store, and per
/// `alive` on its serving process) with the host's session id, else the
/// one whose MCP client is among the hook's `ancestors` (the host that
/// started both), else the most recent live one whose roots hold `cwd`.
pub fn find_live(
    connection: &Connection,
    host_session: Option<&str>,
    ancestors: &[u32],
    cwd: &std::path::Path,
    alive: impl Fn(u32) -> bool,
) -> rusqlite::Result<Option<LiveSession>> {
    let mut statement = connection.prepare(
        "SELECT id, pid, socket, host_session, client_pid FROM sessions
         WHERE alive = 1 AND socket IS NOT NULL ORDER BY started DESC",
    )?;
    let rows = statement.query_map([], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, u32>(1)?,
            LiveSession {
                id: row.get(0)?,
                socket: PathBuf::from(row.get::<_, String>(2)?),
                host_session: row.get(3)?,
                client_pid: row.get(4)?,
                roots: Vec::new(),
            },
        ))
    })?;
    let mut live: Vec<LiveSession> = rows
        .filter_map(Result::ok)
        .filter(|(_, pid, _)| alive(*pid))
        .map(|(.., session)| session)
        .collect();
    let mut roots = connection
        .prepare("SELECT path FROM workspace_roots WHERE session = ?1 AND removed IS NULL")?;
    for session in &mut live {
        session.roots = roots
            .query_map(params![session.id], |row| row.get::<_, String>(0))?
            .filter_map(Result::ok)
            .map(PathBuf::from)
            .collect();
    }
    Ok(choose(live, host_session, ancestors, cwd))
}

/// Of the live sessions (most recent first), the one a hook belongs to:
/// the one with the host's session id; else one started by a host among
/// the hook's `ancestors` whose roots hold `cwd`; else any whose roots
/// hold `cwd`; else one started by such a host (whose roots may not yet
/// follow the host's directory).
pub fn choose(
    live: Vec<LiveSession>,
    host_session: Option<&str>,
    ancestors: &[u32],
    cwd: &std::path::Path,
) -> Option<LiveSession> {
    let by_host = |session: &LiveSession| {
        host_session.is_some() && session.host_session.as_deref() == host_session
    };
    let by_client = |session: &LiveSession| {
        session
            .client_pid
            .is_some_and(|client| ancestors.contains(&client))
    };
    let by_directory =
        |session: &LiveSession| session.roots.iter().any(|root| cwd.starts_with(root));
    let chosen = live
        .iter()
        .position(by_host)
        .or_else(|| {
            live.iter()
                .position(|session| by_client(session) && by_directory(session))
        })
        .or_else(|| live.iter().position(by_directory))
        .or_else(|| live.iter().position(by_client))?;
    live.into_iter().nth(chosen)
}

/// Whether session `id` has ended, per the store or because its serving
/// process is gone.
pub fn gone(
    connection: &Connection,
    id: SessionId,
    alive: impl Fn(u32) -> bool,
) -> rusqlite::Result<bool> {
    let row: Option<(bool, u32)> = connection
        .query_row(
            "SELECT alive, pid FROM sessions WHERE id = ?1",
            params![id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()?;
    Ok(row.is_none_or(|(live, pid)| !live || !alive(pid)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(shown: &str) -> SessionId {
        shown.parse().unwrap()
    }

    fn row(id: &str, host: Option<&str>, started: i64) -> SessionRow {
        SessionRow {
            id: self::id(id),
            pid: 1,
            socket: None,
            daemon: true,
            host_session: host.map(str::to_owned),
            client_pid: None,
            transport: "stdio",
            started,
            roots: Vec::new(),
        }
    }

    fn live(id: &str, host: Option<&str>, client: Option<u32>, root: &str) -> LiveSession {
        LiveSession {
            id: self::id(id),
            socket: PathBuf::from("/run/s.sock"),
            host_session: host.map(str::to_owned),
            client_pid: client,
            roots: vec![PathBuf::from(root)],
        }
    }

    #[test]
    fn a_hook_finds_its_session_by_host_id_then_host_process_then_directory() {
        let sessions = || {
            vec![
                live("newest00", None, Some(7), "/plugins/windlass"),
                live("claude00", Some("c-1"), Some(9), "/p"),
                live("codex000", None, Some(8), "/p"),
            ]
        };
        let chosen = |host: Option<&str>, ancestors: &[u32], cwd: &str| {
            choose(sessions(), host, ancestors, std::path::Path::new(cwd)).map(|session| session.id)
        };
        assert_eq!(chosen(Some("c-1"), &[8], "/p"), Some(id("claude00")));
        assert_eq!(chosen(None, &[100, 8, 1], "/p/src"), Some(id("codex000")));
        assert_eq!(
            chosen(None, &[100], "/p/src"),
            Some(id("claude00")),
            "by directory"
        );
        assert_eq!(
            chosen(None, &[7], "/p"),
            Some(id("claude00")),
            "a directory another session holds comes before a host whose session holds it not"
        );
        assert_eq!(chosen(None, &[7], "/elsewhere"), Some(id("newest00")));
        assert_eq!(chosen(Some("unknown"), &[], "/elsewhere"), None);
    }

    #[test]
    fn a_host_session_id_names_its_newest_windlass_session() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = super::super::open(&dir.path().join("windlass.db")).unwrap();
        let transaction = db.transaction().unwrap();
        insert(&transaction, &row("k3x9aaaa", Some("5f1c-host"), 1)).unwrap();
        insert(&transaction, &row("p2q8bbbb", Some("5f1c-host"), 2)).unwrap();
        insert(&transaction, &row("z7y6cccc", None, 3)).unwrap();
        transaction.commit().unwrap();
        assert_eq!(matching(&db, "k3x").unwrap(), vec![id("k3x9aaaa")]);
        assert_eq!(matching(&db, "5f1c-host").unwrap(), vec![id("p2q8bbbb")]);
        assert_eq!(
            matching(&db, "5f1c").unwrap(),
            vec![id("p2q8bbbb")],
            "a prefix"
        );
        assert!(matching(&db, "gemini-1").unwrap().is_empty());
        assert!(adopt_host_session(&db, id("z7y6cccc"), "gemini-1").unwrap());
        assert!(
            !adopt_host_session(&db, id("z7y6cccc"), "gemini-2").unwrap(),
            "a session keeps the host session it has"
        );
        assert_eq!(matching(&db, "gemini-1").unwrap(), vec![id("z7y6cccc")]);
    }
}
