//! What the benchmarks read back from Windlass's event store.

use rusqlite::Connection;
use std::path::Path;
use std::time::SystemTime;

/// Milliseconds since the epoch, as the store records times.
pub fn epoch_millis(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as i64)
}

/// The time of the last publication in `published` from `from` to `to`
/// (ms since the epoch) that says what the edit made: errors when it
/// `broke` the file, none when it fixed it. An answer given at `to` was
/// made from that one.
pub fn last_publication(published: &[(i64, i64)], from: i64, to: i64, broke: bool) -> Option<i64> {
    published
        .iter()
        .rev()
        .find(|(at, count)| (from..=to).contains(at) && (*count > 0) == broke)
        .map(|(at, _)| *at)
}

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
