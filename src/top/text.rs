//! A picture as plain text: `windlass top --once`, for scripts and for
//! terminals that are not TTYs. The dashboard draws the same columns.

use super::snapshot::{LeaseView, ServerView, SessionView, Snapshot};
use crate::clock::shown_time;

/// Every pane of the picture, one section each, no wider than needed.
pub fn render(snapshot: &Snapshot) -> String {
    let mut out = vec![headline(snapshot), String::new()];
    out.push(format!("SESSIONS ({})", snapshot.sessions.len()));
    out.extend(table(
        SESSION_COLUMNS,
        snapshot.sessions.iter().map(session_row),
    ));
    out.push(String::new());
    out.push(format!("SERVERS ({})", snapshot.servers.len()));
    out.extend(table(
        SERVER_COLUMNS,
        snapshot.servers.iter().map(server_row),
    ));
    out.push(String::new());
    out.push(format!("LEASES ({})", snapshot.leases.len()));
    out.extend(table(LEASE_COLUMNS, snapshot.leases.iter().map(lease_row)));
    out.push(String::new());
    out.push("EVENTS (latest last)".into());
    let shown = snapshot.events.len().saturating_sub(10);
    out.extend(
        snapshot.events[shown..]
            .iter()
            .map(|event| format!("  {}", crate::recorded::table_line(event))),
    );
    out.join("\n")
}

/// The status line: version, pid, uptime and the store's health.
pub fn headline(snapshot: &Snapshot) -> String {
    let daemon = &snapshot.daemon;
    let pid = daemon
        .pid
        .map_or_else(String::new, |pid| format!("  pid {pid}"));
    let store = match &daemon.store_trouble {
        None => "store ok".to_owned(),
        Some(trouble) => format!("store: {trouble}"),
    };
    let used: u64 = snapshot
        .servers
        .iter()
        .filter_map(|server| server.rss_bytes)
        .sum();
    let memory = match daemon.memory_budget {
        Some(budget) => format!(
            "  servers {} of {} budget",
            megabytes(used),
            megabytes(budget)
        ),
        None => format!("  servers {}", megabytes(used)),
    };
    format!(
        "windlass {}{pid}  up {}  {store}{memory}",
        daemon.version,
        duration(daemon.uptime_seconds)
    )
}

/// `125M`.
fn megabytes(bytes: u64) -> String {
    format!("{:.0}M", bytes as f64 / (1024.0 * 1024.0))
}

/// `3h05m`, `4m12s`, `9s`.
pub fn duration(seconds: u64) -> String {
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m{:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h{:02}m", seconds / 3600, seconds % 3600 / 60),
    }
}

pub const SESSION_COLUMNS: &[&str] = &[
    "id",
    "transport",
    "client",
    "host session",
    "calls/min",
    "running",
    "roots",
    "last error",
];

pub fn session_row(session: &SessionView) -> Vec<String> {
    let roots: Vec<String> = session
        .roots
        .iter()
        .map(|root| root.display().to_string())
        .collect();
    vec![
        session.id.to_string(),
        session.transport.clone(),
        session.client.clone().unwrap_or_else(|| "-".into()),
        session.host_session.clone().unwrap_or_else(|| "-".into()),
        session.calls_last_minute.to_string(),
        running(session),
        roots.join(" "),
        session.last_error.clone().unwrap_or_default(),
    ]
}

/// `hover 2.1s`, the longest running call first; `-` for none.
fn running(session: &SessionView) -> String {
    let calls: Vec<String> = session
        .running
        .iter()
        .map(|call| format!("{} {:.1}s", call.tool, call.seconds))
        .collect();
    match calls.is_empty() {
        true => "-".into(),
        false => calls.join(" "),
    }
}

pub const SERVER_COLUMNS: &[&str] = &[
    "server",
    "state",
    "pid",
    "cpu%",
    "rss",
    "sessions",
    "in flight",
    "queued",
    "restarts",
    "command",
];

pub fn server_row(server: &ServerView) -> Vec<String> {
    let mut state = server.state.clone();
    if let Some(reason) = &server.reason {
        state.push_str(&format!(": {reason}"));
    }
    vec![
        server.name.clone(),
        state,
        server.pid.map_or_else(|| "-".into(), |pid| pid.to_string()),
        server
            .cpu_percent
            .map_or_else(|| "-".into(), |cpu| format!("{cpu:.0}")),
        server.rss_bytes.map_or_else(|| "-".into(), megabytes),
        match server.sessions.is_empty() {
            // Kept warm in the pool for the next session.
            true => "none".into(),
            false => server
                .sessions
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" "),
        },
        server.in_flight.to_string(),
        server.queued.to_string(),
        server.restarts.to_string(),
        server.command.clone(),
    ]
}

pub const LEASE_COLUMNS: &[&str] = &["file", "owner", "mode", "since"];

pub fn lease_row(lease: &LeaseView) -> Vec<String> {
    vec![
        lease.path.clone(),
        lease.owner.clone(),
        lease.mode.to_owned(),
        shown_time(lease.since),
    ]
}

/// Rows under their header, each column as wide as its widest cell.
fn table(header: &[&str], rows: impl Iterator<Item = Vec<String>>) -> Vec<String> {
    let rows: Vec<Vec<String>> = rows.collect();
    let mut widths: Vec<usize> = header.iter().map(|name| name.chars().count()).collect();
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        format!("  {}", padded.join("  ").trim_end())
    };
    let mut lines = vec![line(header.iter().map(|name| (*name).to_owned()).collect())];
    lines.extend(rows.into_iter().map(line));
    lines
}
