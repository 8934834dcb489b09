//! What the benchmarks read back from Windlass's event store.

use rusqlite::Connection;
use std::path::Path;

/// The store's diagnostics publications for `uri`: (ms since the epoch,
/// count), in order.
pub fn diagnostics_events(store: &Path, uri: &str) -> Vec<(i64, i64)> {
    let connection = Connection::open(store).unwrap();
    let mut statement = connection
        .prepare(
            "SELECT at, json_extract(detail, '$.count') FROM events
             WHERE kind = 'diagnostics' AND json_extract(detail, '$.uri') = ?1
             ORDER BY at, id",
        )
        .unwrap();
    statement
        .query_map([uri], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}
