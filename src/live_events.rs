//! `windlass monitor`: a session's events (or every session's, `--all`)
//! live, as its serving process records them: subscribes on its control
//! socket and prints each event as `query` does (coloured by kind on a
//! terminal), or as JSON lines with `--json`. While nothing happens, a
//! terminal shows one status line saying for how long and what was seen.
//! Hooks record their events (leases, runs) from their own processes
//! straight into the store, where no serving process sees them: those are
//! read from the store every half second and shown among the rest.

use crate::control::client;
use crate::control::protocol::Request;
use crate::recorded::{session_socket, table_line};
use crate::runtime_dir::RuntimeDir;
use anyhow::{Context as _, Result, bail};
use clap::Args;
use regex::Regex;
use std::io::{IsTerminal, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};
use windlass_actors::store;
use windlass_actors::store::events::{self, Event};
use windlass_actors::vocabulary::events::EventKind;
use windlass_actors::vocabulary::ids::SessionId;

/// Quiet for this long, a terminal shows the idle status line.
const IDLE: Duration = Duration::from_secs(2);
/// How often the store is read for the hooks' events.
const POLL: Duration = Duration::from_millis(500);
#[derive(Args)]
pub struct MonitorArgs {
    /// A session id, or any unique prefix of one.
    session: Option<String>,
    /// Every session's events.
    #[arg(long, conflicts_with = "session")]
    all: bool,
    /// Only events whose line matches this regular expression.
    #[arg(long)]
    filter: Option<String>,
    /// Only events of this kind.
    #[arg(long)]
    kind: Option<EventKind>,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
    /// No colours, even on a terminal.
    #[arg(long)]
    nocolor: bool,
}

pub fn run(args: MonitorArgs) -> Result<()> {
    let filter = args
        .filter
        .as_deref()
        .map(Regex::new)
        .transpose()
        .context("--filter")?;
    let (session, socket) = match (&args.session, args.all) {
        (Some(prefix), false) => {
            let (id, socket) = session_socket(prefix)?;
            (Some(id), socket)
        }
        (None, true) => (None, RuntimeDir::open()?.socket()),
        _ => bail!("name a session, or --all"),
    };
    let watched = match &session {
        Some(id) => format!("session {id}"),
        None => "every session of the daemon".to_owned(),
    };
    let mut hooks = HookEvents::open(session, args.kind);
    let request = Request::Subscribe {
        session,
        kind: args.kind,
    };
    let lines = client::subscribe(&socket, &request)
        .with_context(|| format!("subscribing to {watched}"))?;
    // Lines come on their own thread so that the idle line can be drawn
    // between them.
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in lines {
            if sender.send(line).is_err() {
                return;
            }
        }
    });
    let terminal = std::io::stdout().is_terminal();
    let mut screen = Screen {
        colour: terminal && !args.nocolor && std::env::var_os("NO_COLOR").is_none(),
        idle_line: terminal && !args.json,
        shown: 0,
        last: Instant::now(),
        idle_drawn: false,
        watched,
    };
    let show = |screen: &mut Screen, event: &Event, line: String| {
        let shown = table_line(event);
        match filter.as_ref().is_none_or(|filter| filter.is_match(&shown)) {
            true => screen.event(event, if args.json { line } else { shown }),
            false => Ok(()),
        }
    };
    loop {
        for event in hooks.iter_mut().flat_map(HookEvents::new_ones) {
            show(&mut screen, &event, serde_json::to_string(&event)?)?;
        }
        match receiver.recv_timeout(POLL) {
            Ok(line) => {
                let line = line.context("the serving process hung up")?;
                let event: Event = serde_json::from_str(&line)?;
                show(&mut screen, &event, line)?;
            }
            Err(RecvTimeoutError::Timeout) => screen.idle()?,
            Err(RecvTimeoutError::Disconnected) => {
                screen.clear_idle()?;
                eprintln!("{} is no longer served", screen.watched);
                return Ok(());
            }
        }
    }
}

/// The hooks' events as the store gets them, from the moment the monitor
/// started.
struct HookEvents {
    connection: rusqlite::Connection,
    /// The last row shown, or the newest when the monitor started.
    after: i64,
    session: Option<SessionId>,
    kinds: Vec<EventKind>,
    polled: Instant,
}

impl HookEvents {
    /// `None` when `--kind` leaves no hook kind, or the store cannot be
    /// read: the serving process's events are shown all the same.
    fn open(session: Option<SessionId>, kind: Option<EventKind>) -> Option<Self> {
        let kinds: Vec<EventKind> = EventKind::HOOKS
            .into_iter()
            .filter(|hook_kind| kind.is_none_or(|wanted| wanted == *hook_kind))
            .collect();
        if kinds.is_empty() {
            return None;
        }
        let path = crate::state_dir::store_path()?;
        let connection = store::open_read_only(&path).ok()?;
        let after = events::last_id(&connection).ok()?;
        Some(Self {
            connection,
            after,
            session,
            kinds,
            polled: Instant::now(),
        })
    }

    /// The events written since the last look, at most every [`POLL`].
    fn new_ones(&mut self) -> Vec<Event> {
        if self.polled.elapsed() < POLL {
            return Vec::new();
        }
        self.polled = Instant::now();
        let written =
            events::written_after(&self.connection, self.after, &self.kinds, self.session);
        let Ok(written) = written else {
            return Vec::new();
        };
        if let Some((id, _)) = written.last() {
            self.after = *id;
        }
        written.into_iter().map(|(_, event)| event).collect()
    }
}

/// What the terminal shows: events, and the idle line under them.
struct Screen {
    colour: bool,
    idle_line: bool,
    shown: u64,
    last: Instant,
    idle_drawn: bool,
    watched: String,
}

impl Screen {
    fn event(&mut self, event: &Event, line: String) -> Result<()> {
        self.clear_idle()?;
        let mut out = std::io::stdout().lock();
        match self.colour {
            true => writeln!(out, "\x1b[{}m{line}\x1b[0m", colour_of(event))?,
            false => writeln!(out, "{line}")?,
        }
        out.flush()?;
        self.shown += 1;
        self.last = Instant::now();
        Ok(())
    }

    /// Draws (or redraws) the idle line once nothing has come for a while.
    fn idle(&mut self) -> Result<()> {
        let quiet = self.last.elapsed();
        if !self.idle_line || quiet < IDLE {
            return Ok(());
        }
        let mut out = std::io::stdout().lock();
        write!(
            out,
            "\r\x1b[2K{}-- {} · {} events shown · idle for {} s --{}",
            if self.colour { "\x1b[2m" } else { "" },
            self.watched,
            self.shown,
            quiet.as_secs(),
            if self.colour { "\x1b[0m" } else { "" },
        )?;
        out.flush()?;
        self.idle_drawn = true;
        Ok(())
    }

    fn clear_idle(&mut self) -> Result<()> {
        if self.idle_drawn {
            let mut out = std::io::stdout().lock();
            write!(out, "\r\x1b[2K")?;
            out.flush()?;
            self.idle_drawn = false;
        }
        Ok(())
    }
}

/// The SGR colour of an event's line: failures red, servers' lives
/// yellow, diagnostics cyan, sessions blue, lost events magenta.
fn colour_of(event: &Event) -> &'static str {
    if event.ok == Some(false) || event.kind == EventKind::Error {
        return "31";
    }
    match event.kind {
        EventKind::ToolCall => "32",
        EventKind::ServerState | EventKind::Restart | EventKind::Eviction => "33",
        EventKind::Diagnostics => "36",
        EventKind::SessionStart | EventKind::SessionEnd | EventKind::RootsChanged => "34",
        EventKind::Missed => "35",
        _ => "0",
    }
}
