//! `windlass query`: recorded events, filtered, as a table or JSON; or
//! any `SELECT` over the store with `--sql`, on a read-only connection.

use crate::clock;
use crate::list::shown_time;
use anyhow::{Context as _, Result, bail};
use clap::{Args, ValueEnum};
use rusqlite::types::ValueRef;
use serde_json::{Map, Value};
use std::io::Write;
use windlass_actors::store::events::{self, Event, Filter};
use windlass_actors::store::{self, sessions};
use windlass_actors::vocabulary::events::EventKind;

#[derive(Args)]
pub struct QueryArgs {
    /// A session id, or any unique prefix of one.
    #[arg(long)]
    session: Option<String>,
    /// Only events since: a duration back (30s, 15m, 1h, 7d), `today`
    /// (UTC), or a date (YYYY-MM-DD, UTC).
    #[arg(long)]
    since: Option<String>,
    /// Only events of this kind (tool_call, session_start, ...).
    #[arg(long)]
    kind: Option<EventKind>,
    /// Only events whose tool, server or detail contains this text.
    #[arg(long)]
    search: Option<String>,
    /// A SELECT over the store, run read-only (other filters ignored).
    #[arg(long)]
    sql: Option<String>,
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// The newest this many events.
    #[arg(long, default_value_t = 100)]
    limit: usize,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Json,
}

pub fn run(args: QueryArgs) -> Result<()> {
    let path = crate::state_dir::store_path().context("no state directory")?;
    if !path.exists() {
        bail!("no events recorded yet ({} does not exist)", path.display());
    }
    if let Some(sql) = &args.sql {
        let connection =
            store::open_read_only(&path).with_context(|| format!("opening {}", path.display()))?;
        return print_rows(&connection, sql, args.format);
    }
    let connection = store::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let filter = Filter {
        session: args
            .session
            .as_deref()
            .map(|prefix| session_id(&connection, prefix))
            .transpose()?,
        since: args
            .since
            .as_deref()
            .map(|since| since_ms(since, store::now_ms()))
            .transpose()?,
        kind: args.kind,
        search: args.search,
        limit: args.limit,
    };
    let found = events::query(&connection, &filter)?;
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&found)?)?,
        Format::Table => {
            for event in &found {
                writeln!(out, "{}", table_line(event))?;
            }
        }
    }
    Ok(())
}

/// The one session `prefix` names; an ambiguous prefix lists them.
pub fn session_id(connection: &rusqlite::Connection, prefix: &str) -> Result<String> {
    let ids = sessions::matching(connection, prefix)?;
    match ids.as_slice() {
        [] => bail!("no session {prefix:?}"),
        [id] => Ok(id.clone()),
        _ => bail!("{prefix:?} is ambiguous: {}", ids.join(", ")),
    }
}

pub fn table_line(event: &Event) -> String {
    let mut line = format!(
        "{}  {}  {}",
        shown_time(event.at),
        event.session.as_deref().unwrap_or("-"),
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
    if !event.detail.is_null() {
        line.push_str(&format!("  {}", event.detail));
    }
    line
}

/// `--since` in milliseconds since the epoch.
pub fn since_ms(since: &str, now_ms: i64) -> Result<i64> {
    const DAY_MS: i64 = 86_400_000;
    if since == "today" {
        return Ok(now_ms - now_ms.rem_euclid(DAY_MS));
    }
    if let Some(day) = parse_date(since) {
        return Ok(day * DAY_MS);
    }
    let unit = since.len().saturating_sub(1);
    let (number, unit) = since.split_at(unit);
    let scale = match unit {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => DAY_MS,
        _ => {
            bail!("--since {since:?}: expected a duration (30s, 15m, 1h, 7d), today, or YYYY-MM-DD")
        }
    };
    let number: i64 = number
        .parse()
        .with_context(|| format!("--since {since:?}: {number:?} is not a number"))?;
    Ok(now_ms - number.saturating_mul(scale))
}

/// Days since the epoch of a `YYYY-MM-DD` date.
fn parse_date(text: &str) -> Option<i64> {
    let mut parts = text.splitn(3, '-').map(|part| part.parse::<u64>().ok());
    let (year, month, day) = (parts.next()??, parts.next()??, parts.next()??);
    clock::days_from_civil(year, month, day).and_then(|days| i64::try_from(days).ok())
}

/// Runs a statement on a read-only connection and prints its rows.
fn print_rows(connection: &rusqlite::Connection, sql: &str, format: Format) -> Result<()> {
    let mut statement = connection.prepare(sql)?;
    let columns: Vec<String> = statement.column_names().map(str::to_owned).collect();
    let mut rows = statement.query([])?;
    let mut found: Vec<Vec<Value>> = Vec::new();
    while let Some(row) = rows.next()? {
        let values = (0..columns.len())
            .map(|index| row.get_ref(index).map(json_value))
            .collect::<rusqlite::Result<_>>()?;
        found.push(values);
    }
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => {
            let objects: Vec<Value> = found
                .into_iter()
                .map(|values| {
                    Value::Object(columns.iter().cloned().zip(values).collect::<Map<_, _>>())
                })
                .collect();
            writeln!(out, "{}", serde_json::to_string_pretty(&objects)?)?;
        }
        Format::Table => {
            writeln!(out, "{}", columns.join("\t"))?;
            for values in found {
                let cells: Vec<String> = values
                    .iter()
                    .map(|value| match value {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    })
                    .collect();
                writeln!(out, "{}", cells.join("\t"))?;
            }
        }
    }
    Ok(())
}

fn json_value(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(number) => number.into(),
        ValueRef::Real(number) => number.into(),
        ValueRef::Text(text) => String::from_utf8_lossy(text).into_owned().into(),
        ValueRef::Blob(bytes) => format!("<{} bytes>", bytes.len()).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_durations_today_and_dates() {
        let now = 1_795_345_355_207;
        assert_eq!(since_ms("1h", now).unwrap(), now - 3_600_000);
        assert_eq!(since_ms("7d", now).unwrap(), now - 7 * 86_400_000);
        assert_eq!(since_ms("today", now).unwrap(), 1_795_305_600_000);
        assert_eq!(since_ms("2026-11-22", now).unwrap(), 1_795_305_600_000);
        assert!(since_ms("yesterday", now).is_err());
        assert!(since_ms("xh", now).is_err());
    }
}
