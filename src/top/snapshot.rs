//! One picture of the daemon: its sessions and servers as the daemon
//! reports them (`sessions`, then each session's `status`), the leases,
//! clients and recent events as the store holds them. Reading the store
//! costs the daemon nothing; asking it costs one status per session, the
//! same as `windlass status` does.

use crate::control::client;
use crate::control::protocol::{Answer, Request};
use anyhow::{Context as _, Result};
use rusqlite::{Connection, params};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use windlass_actors::store::events::{self, Event};
use windlass_actors::store::{self, sessions};
use windlass_actors::vocabulary::events::EventKind;
use windlass_actors::vocabulary::ids::SessionId;
use windlass_actors::vocabulary::server_states::Phase;
use windlass_actors::vocabulary::status::{RunningCall, ServerReport, SessionStatus};

/// How long the daemon may take to answer one question.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);
/// Recent events kept for the event pane.
pub const RECENT_EVENTS: usize = 200;

#[derive(Debug, Clone, Serialize)]
pub struct Snapshot {
    /// When it was taken, in milliseconds since the epoch.
    pub at: i64,
    pub daemon: DaemonView,
    pub sessions: Vec<SessionView>,
    pub servers: Vec<ServerView>,
    pub leases: Vec<LeaseView>,
    /// The most recent events, oldest first.
    pub events: Vec<Event>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DaemonView {
    pub version: String,
    pub pid: Option<u32>,
    pub uptime_seconds: u64,
    /// Why nothing is recorded, if nothing is.
    pub store_trouble: Option<String>,
    /// The servers' resident memory above which idle ones stop.
    pub memory_budget: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SessionView {
    pub id: SessionId,
    pub host_session: Option<String>,
    pub client: Option<String>,
    /// `stdio` or `http`.
    pub transport: String,
    pub roots: Vec<PathBuf>,
    pub calls_last_minute: usize,
    /// Its tool calls in flight, with how long each has run.
    pub running: Vec<RunningCall>,
    pub last_error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ServerView {
    pub name: String,
    pub languages: Vec<String>,
    pub command: String,
    /// `running`, `starting`, `restarting`, `failed`, … with what the
    /// process is doing while it runs (`loading`, `busy`, `idle`).
    pub state: String,
    /// Why it is stopped or failed, or its last error.
    pub reason: Option<String>,
    pub pid: Option<u32>,
    /// CPU use since the previous picture, in percent of one core.
    pub cpu_percent: Option<f64>,
    /// CPU seconds it has used in all.
    pub cpu_seconds: Option<f64>,
    pub rss_bytes: Option<u64>,
    pub sessions: Vec<SessionId>,
    pub queued: usize,
    /// Requests sent to it and not answered yet.
    pub in_flight: usize,
    pub restarts: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct LeaseView {
    pub path: String,
    pub owner: String,
    pub session: Option<SessionId>,
    /// Leases are taken to edit; reading takes none.
    pub mode: &'static str,
    pub since: i64,
}

impl Snapshot {
    /// Nothing yet: what the dashboard draws before its first picture.
    pub fn empty() -> Self {
        Self {
            at: 0,
            daemon: DaemonView {
                version: String::new(),
                pid: None,
                uptime_seconds: 0,
                store_trouble: None,
                memory_budget: None,
            },
            sessions: Vec::new(),
            servers: Vec::new(),
            leases: Vec::new(),
            events: Vec::new(),
        }
    }
}

/// Takes a picture, with CPU use measured against `previous`.
pub fn take(socket: &Path, previous: Option<&Snapshot>) -> Result<Snapshot> {
    let (version, started, store_trouble) = client::expect(
        socket,
        &Request::Ping,
        ANSWER_TIMEOUT,
        |answer| match answer {
            Answer::Pong {
                version,
                started,
                store,
                ..
            } => Some((version, started, store)),
            _ => None,
        },
    )
    .context("asking the daemon")?;
    let attached = client::expect(
        socket,
        &Request::Sessions,
        ANSWER_TIMEOUT,
        |answer| match answer {
            Answer::Sessions(sessions) => Some(sessions),
            _ => None,
        },
    )?;
    let now = store::now_ms();
    let mut statuses = Vec::new();
    for session in &attached {
        let request = Request::Status {
            session: session.id,
        };
        // A session may end between the two questions.
        if let Ok(Answer::Status(status)) = client::ask(socket, &request, ANSWER_TIMEOUT) {
            statuses.push((session.id, status));
        }
    }
    // A daemon older than `servers` is refused it: its sessions' servers
    // are then all there is to show.
    let pool = client::expect(
        socket,
        &Request::Servers,
        ANSWER_TIMEOUT,
        |answer| match answer {
            Answer::Servers(reports) => Some(reports),
            _ => None,
        },
    )
    .ok();
    let recorded = Recorded::read(now).unwrap_or_default();
    let status_of = |id: SessionId| {
        statuses
            .iter()
            .find(|(session, _)| *session == id)
            .map(|(_, status)| status)
    };
    let sessions = attached
        .iter()
        .map(|session| SessionView {
            id: session.id,
            // A hook names a host's session in the store, not the daemon.
            host_session: session
                .host_session
                .clone()
                .or_else(|| recorded.host_sessions.get(&session.id).cloned().flatten()),
            // The store has the client a batch after the session does.
            client: status_of(session.id)
                .and_then(|status| status.client.clone())
                .or_else(|| recorded.clients.get(&session.id).cloned().flatten()),
            transport: recorded
                .transports
                .get(&session.id)
                .cloned()
                .unwrap_or_else(|| "stdio".into()),
            roots: session.roots.clone(),
            calls_last_minute: recorded.calls.get(&session.id).copied().unwrap_or(0),
            running: status_of(session.id)
                .map(|status| status.running.clone())
                .unwrap_or_default(),
            last_error: recorded.errors.get(&session.id).cloned(),
        })
        .collect();
    let elapsed = previous.map(|previous| (now - previous.at).max(1) as f64 / 1000.0);
    Ok(Snapshot {
        at: now,
        daemon: DaemonView {
            version,
            pid: statuses
                .iter()
                .find_map(|(_, status)| status.daemon.as_ref().map(|daemon| daemon.pid)),
            uptime_seconds: ((now as u128).saturating_sub(started) / 1000) as u64,
            store_trouble,
            memory_budget: statuses.iter().find_map(|(_, status)| {
                status
                    .daemon
                    .as_ref()
                    .and_then(|daemon| daemon.memory_budget)
            }),
        },
        sessions,
        servers: servers(pool, &statuses, previous.zip(elapsed)),
        leases: recorded.leases,
        events: recorded.events,
    })
}

/// Each server once, with every session that uses it: the daemon's
/// whole pool, or else those its sessions' statuses list.
fn servers(
    pool: Option<Vec<ServerReport>>,
    statuses: &[(SessionId, SessionStatus)],
    previous: Option<(&Snapshot, f64)>,
) -> Vec<ServerView> {
    let mut servers = match pool {
        Some(reports) => reports
            .iter()
            .map(|report| ServerView {
                sessions: report.shared_with.clone(),
                ..view_of(report)
            })
            .collect(),
        None => sessions_servers(statuses),
    };
    if let Some((previous, elapsed)) = previous {
        for server in &mut servers {
            let before = previous
                .servers
                .iter()
                .find(|old| old.pid.is_some() && old.pid == server.pid)
                .and_then(|old| old.cpu_seconds);
            if let (Some(before), Some(now)) = (before, server.cpu_seconds) {
                server.cpu_percent = Some(((now - before) / elapsed * 100.0).max(0.0));
            }
        }
    }
    servers
}

/// The servers the sessions' statuses list, each once, that were ever
/// started: a status lists every server its session could use.
fn sessions_servers(statuses: &[(SessionId, SessionStatus)]) -> Vec<ServerView> {
    let mut servers: BTreeMap<(String, String, Option<u32>), ServerView> = BTreeMap::new();
    for (session, status) in statuses {
        for report in &status.servers {
            let pid = report.process.as_ref().and_then(|process| process.pid);
            let key = (report.name.clone(), report.command.clone(), pid);
            let view = servers.entry(key).or_insert_with(|| view_of(report));
            if !view.sessions.contains(session) {
                view.sessions.push(*session);
            }
        }
    }
    servers
        .into_values()
        .filter(|server| server.state != Phase::NotStarted.name())
        .collect()
}

fn view_of(report: &ServerReport) -> ServerView {
    let process = report.process.as_ref();
    let state = match process {
        Some(process) => format!("{} {}", report.phase.name(), process.state),
        None => report.phase.name().to_owned(),
    };
    ServerView {
        name: report.name.clone(),
        languages: report.languages.clone(),
        command: report.command.clone(),
        state,
        reason: report.stopped.clone().or_else(|| report.last_error.clone()),
        pid: process.and_then(|process| process.pid),
        cpu_percent: None,
        cpu_seconds: process.and_then(|process| process.usage.map(|(cpu, _)| cpu)),
        rss_bytes: process.and_then(|process| process.usage.map(|(_, rss)| rss)),
        sessions: Vec::new(),
        queued: process.map_or(0, |process| process.queued),
        in_flight: process.map_or(0, |process| process.in_flight),
        restarts: report.restarts,
    }
}

/// What the store says of the sessions, leases and recent events.
#[derive(Default)]
struct Recorded {
    clients: BTreeMap<SessionId, Option<String>>,
    host_sessions: BTreeMap<SessionId, Option<String>>,
    transports: BTreeMap<SessionId, String>,
    calls: BTreeMap<SessionId, usize>,
    errors: BTreeMap<SessionId, String>,
    leases: Vec<LeaseView>,
    events: Vec<Event>,
}

impl Recorded {
    fn read(now: i64) -> Result<Self> {
        let path = crate::state_dir::store_path().context("no state directory")?;
        let connection = store::open_read_only(&path)?;
        let mut recorded = Recorded::default();
        for session in sessions::list(&connection)?.into_iter().filter(|s| s.alive) {
            recorded.clients.insert(session.id, session.client);
            recorded
                .host_sessions
                .insert(session.id, session.host_session);
            recorded.transports.insert(session.id, session.transport);
        }
        let last_id = events::last_id(&connection)?;
        recorded.events = recent_events(&connection, last_id)?;
        for event in &recorded.events {
            let Some(session) = event.session else {
                continue;
            };
            if event.kind == EventKind::ToolCall {
                if event.at >= now - 60_000 {
                    *recorded.calls.entry(session).or_default() += 1;
                }
                if event.ok == Some(false) {
                    let tool = event.tool.as_deref().unwrap_or("a tool");
                    let when = crate::clock::shown_time(event.at);
                    let why = event.error.as_deref().map_or(String::new(), |error| {
                        format!(": {}", error.lines().next().unwrap_or_default())
                    });
                    recorded
                        .errors
                        .insert(session, format!("{tool} failed at {when}{why}"));
                }
            }
        }
        recorded.leases = leases(&connection, now)?;
        Ok(recorded)
    }
}

fn recent_events(connection: &Connection, last_id: i64) -> Result<Vec<Event>> {
    let after = last_id - RECENT_EVENTS as i64;
    let written = events::written_after(connection, after, &EventKind::ALL, None)?;
    Ok(written.into_iter().map(|(_, event)| event).collect())
}

fn leases(connection: &Connection, now: i64) -> Result<Vec<LeaseView>> {
    let mut statement = connection.prepare(
        "SELECT path, owner, session, acquired FROM file_locks WHERE expires > ?1 ORDER BY acquired",
    )?;
    let rows = statement.query_map(params![now], |row| {
        Ok(LeaseView {
            path: row.get(0)?,
            owner: row.get(1)?,
            session: row.get(2)?,
            mode: "editing",
            since: row.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
