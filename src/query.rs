//! `windlass query`: recorded events, filtered, as a table or JSON; or
//! any `SELECT` over the store with `--sql`, on a read-only connection.

use crate::clock::since_ms;
use crate::recorded::{session_id, table_line};
use anyhow::{Context as _, Result, bail};
use clap::{Args, ValueEnum};
use rusqlite::types::ValueRef;
use serde_json::{Map, Value};
use std::io::Write;
use windlass_actors::store;
use windlass_actors::store::events::{self, Filter};
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
