//! Language-server rows: one per server instance a serving process ran,
//! kept by the Recorder's writer from the servers' own events (started,
//! ready, exited, failed, stopped), so that `query --sql` can say which
//! servers ran where, how often they restarted and how they ended.

use super::events::Event;
use crate::vocabulary::events::EventKind;
use rusqlite::{OptionalExtension, Transaction, params};
use serde_json::Value;

/// Brings the row of the instance `event` is about up to date, if it is
/// a server's event with an instance.
pub fn record(transaction: &Transaction, serving_pid: u32, event: &Event) -> rusqlite::Result<()> {
    let (Some(name), Some(instance)) = (&event.server, event.detail["instance"].as_u64()) else {
        return Ok(());
    };
    let instance = i64::try_from(instance).unwrap_or(i64::MAX);
    let state = match event.kind {
        EventKind::ServerState => event.detail["state"].as_str().unwrap_or("unknown"),
        EventKind::Eviction => "stopped",
        EventKind::Restart => "restarting",
        _ => return Ok(()),
    };
    let row: Option<i64> = transaction
        .query_row(
            "SELECT id FROM language_servers WHERE serving_pid = ?1 AND instance = ?2",
            params![serving_pid, instance],
            |row| row.get(0),
        )
        .optional()?;
    let ended = matches!(state, "exited" | "failed" | "unusable" | "stopped").then_some(event.at);
    match (row, state) {
        (None, _) => {
            transaction.execute(
                "INSERT INTO language_servers
                 (serving_pid, instance, name, command, pid, state, started, ended, restarts)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    serving_pid,
                    instance,
                    name,
                    event.detail["command"].as_str().unwrap_or(""),
                    event.detail["pid"].as_i64(),
                    state,
                    event.at,
                    ended,
                    event.detail["restarts"].as_i64().unwrap_or(0),
                ],
            )?;
        }
        (Some(id), "starting") => {
            transaction.execute(
                "UPDATE language_servers
                 SET state = ?2, pid = ?3, restarts = ?4, ended = NULL,
                     command = coalesce(nullif(?5, ''), command)
                 WHERE id = ?1",
                params![
                    id,
                    state,
                    event.detail["pid"].as_i64(),
                    event.detail["restarts"].as_i64().unwrap_or(0),
                    event.detail["command"].as_str().unwrap_or(""),
                ],
            )?;
        }
        (Some(id), _) => {
            transaction.execute(
                "UPDATE language_servers SET state = ?2, ended = coalesce(?3, ended) WHERE id = ?1",
                params![id, state, ended],
            )?;
        }
    }
    Ok(())
}

/// The serving process is stopping: its servers stop with it.
pub fn end_all(transaction: &Transaction, serving_pid: u32, at: i64) -> rusqlite::Result<()> {
    transaction.execute(
        "UPDATE language_servers SET state = 'stopped', ended = ?2
         WHERE serving_pid = ?1 AND ended IS NULL",
        params![serving_pid, at],
    )?;
    Ok(())
}

/// Forgets the servers of serving processes for which `gone` holds;
/// returns how many.
pub fn forget_gone(
    transaction: &Transaction,
    gone: impl Fn(u32) -> bool,
) -> rusqlite::Result<usize> {
    let pids: Vec<u32> = {
        let mut statement =
            transaction.prepare("SELECT DISTINCT serving_pid FROM language_servers")?;
        let pids = statement.query_map([], |row| row.get(0))?;
        pids.collect::<rusqlite::Result<_>>()?
    };
    let mut forgotten = 0;
    for pid in pids.into_iter().filter(|pid| gone(*pid)) {
        forgotten += transaction.execute(
            "DELETE FROM language_servers WHERE serving_pid = ?1",
            params![pid],
        )?;
    }
    Ok(forgotten)
}

/// Forgets the servers that ended before `before`; returns how many.
pub fn forget_ended(transaction: &Transaction, before: i64) -> rusqlite::Result<usize> {
    transaction.execute(
        "DELETE FROM language_servers WHERE ended < ?1",
        params![before],
    )
}

/// The `detail` of a server's event, with the instance it is about.
pub fn with_instance(detail: Value, instance: u64) -> Value {
    match detail {
        Value::Object(mut object) => {
            object.insert("instance".into(), instance.into());
            Value::Object(object)
        }
        Value::Null => serde_json::json!({ "instance": instance }),
        other => serde_json::json!({ "instance": instance, "value": other }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server_event(kind: EventKind, at: i64, detail: Value) -> Event {
        let mut event = Event::now(kind, None);
        event.at = at;
        event.server = Some("pyright".into());
        event.detail = with_instance(detail, 3);
        event
    }

    fn rows(transaction: &Transaction) -> Vec<(String, Option<i64>, i64, Option<i64>)> {
        let mut statement = transaction
            .prepare("SELECT state, pid, restarts, ended FROM language_servers ORDER BY id")
            .unwrap();
        statement
            .query_map([], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    #[test]
    fn a_servers_life_is_one_row_brought_up_to_date() {
        let dir = tempfile::tempdir().unwrap();
        let mut connection = super::super::open(&dir.path().join("windlass.db")).unwrap();
        let transaction = connection.transaction().unwrap();
        let starting = |pid, restarts| json!({"state": "starting", "pid": pid, "restarts": restarts, "command": "pyright-langserver --stdio"});
        record(
            &transaction,
            9,
            &server_event(EventKind::ServerState, 1, starting(100, 0)),
        )
        .unwrap();
        record(
            &transaction,
            9,
            &server_event(EventKind::ServerState, 2, json!({"state": "ready"})),
        )
        .unwrap();
        assert_eq!(
            rows(&transaction),
            vec![("ready".into(), Some(100), 0, None)]
        );
        record(
            &transaction,
            9,
            &server_event(EventKind::ServerState, 3, json!({"state": "exited"})),
        )
        .unwrap();
        assert_eq!(
            rows(&transaction),
            vec![("exited".into(), Some(100), 0, Some(3))]
        );
        record(
            &transaction,
            9,
            &server_event(EventKind::ServerState, 4, starting(101, 1)),
        )
        .unwrap();
        assert_eq!(
            rows(&transaction),
            vec![("starting".into(), Some(101), 1, None)]
        );
        // Another serving process's instance 3 is another server.
        record(
            &transaction,
            10,
            &server_event(EventKind::ServerState, 5, starting(200, 0)),
        )
        .unwrap();
        assert_eq!(rows(&transaction).len(), 2);
        end_all(&transaction, 9, 6).unwrap();
        assert_eq!(
            rows(&transaction)[0],
            ("stopped".into(), Some(101), 1, Some(6))
        );
        assert_eq!(
            rows(&transaction)[1].3,
            None,
            "the other process's server runs on"
        );
        // Events that are not a server's change nothing.
        record(&transaction, 9, &Event::now(EventKind::ToolCall, None)).unwrap();
        assert_eq!(rows(&transaction).len(), 2);
    }
}
