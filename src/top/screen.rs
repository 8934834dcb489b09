//! The live dashboard: four panes (sessions, servers, leases, events)
//! under a status line, redrawn as new pictures and events arrive.
//! Pictures are taken once a second on a thread of their own and events
//! come from one subscription on another, so a slow daemon never freezes
//! the keys. Keys: Tab and Shift-Tab (or 1–4) move between panes, ↑ ↓
//! choose a row, Enter opens a session's detail, `/` filters the events,
//! `p` pauses, `q` or Esc quits. `NO_COLOR` turns colours off.

use super::snapshot::{self, Snapshot};
use super::text;
use crate::control::client;
use crate::control::protocol::{Answer, Request};
use anyhow::Result;
use ratatui::crossterm::event::{
    self, Event as Input, KeyCode, KeyEvent, KeyEventKind, KeyModifiers,
};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table, TableState};
use ratatui::{DefaultTerminal, Frame};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;
use windlass_actors::store::events::Event;
use windlass_actors::vocabulary::ids::SessionId;

/// How often a new picture is taken.
const REFRESH: Duration = Duration::from_secs(1);
/// Live events kept on screen.
const EVENTS_KEPT: usize = 500;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pane {
    Sessions,
    Servers,
    Leases,
    Events,
}

const PANES: [Pane; 4] = [Pane::Sessions, Pane::Servers, Pane::Leases, Pane::Events];

/// What the dashboard shows and where the user is in it.
struct Dashboard {
    socket: PathBuf,
    picture: Option<Snapshot>,
    /// Why the last picture could not be taken.
    trouble: Option<String>,
    events: VecDeque<Event>,
    pane: Pane,
    rows: [TableState; 4],
    filter: String,
    editing_filter: bool,
    /// Shared with the thread taking pictures, which stops meanwhile.
    paused: Arc<AtomicBool>,
    /// The session whose status is open, and its lines.
    detail: Option<(SessionId, Vec<String>)>,
    colour: bool,
}

pub fn run(socket: PathBuf) -> Result<()> {
    let paused = Arc::new(AtomicBool::new(false));
    let pictures = take_pictures(socket.clone(), paused.clone());
    let live = follow_events(socket.clone());
    let mut dashboard = Dashboard {
        socket,
        picture: None,
        trouble: None,
        events: VecDeque::new(),
        pane: Pane::Sessions,
        rows: Default::default(),
        filter: String::new(),
        editing_filter: false,
        paused,
        detail: None,
        colour: std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty()),
    };
    let mut terminal = ratatui::init();
    let shown = show(&mut terminal, &mut dashboard, &pictures, &live);
    ratatui::restore();
    shown
}

fn show(
    terminal: &mut DefaultTerminal,
    dashboard: &mut Dashboard,
    pictures: &Receiver<Result<Snapshot, String>>,
    live: &Receiver<Event>,
) -> Result<()> {
    // Drawn only when something changed: an idle dashboard costs no CPU
    // beside the agents it watches.
    let mut changed = true;
    loop {
        for picture in pictures.try_iter() {
            dashboard.take(picture);
            changed = true;
        }
        for event in live.try_iter() {
            if !dashboard.paused() {
                dashboard.events.push_back(event);
                if dashboard.events.len() > EVENTS_KEPT {
                    dashboard.events.pop_front();
                }
                changed = true;
            }
        }
        if changed {
            terminal.draw(|frame| draw(frame, dashboard))?;
            changed = false;
        }
        if event::poll(Duration::from_millis(100))? {
            match event::read()? {
                Input::Key(key) if key.kind == KeyEventKind::Press => {
                    if dashboard.key(key) {
                        return Ok(());
                    }
                    changed = true;
                }
                Input::Resize(..) => changed = true,
                _ => {}
            }
        }
    }
}

/// Pictures every [`REFRESH`], each measured against the one before;
/// none while `paused`.
fn take_pictures(socket: PathBuf, paused: Arc<AtomicBool>) -> Receiver<Result<Snapshot, String>> {
    let (send, pictures) = channel();
    std::thread::spawn(move || {
        let mut previous: Option<Snapshot> = None;
        loop {
            if paused.load(Ordering::Relaxed) {
                std::thread::sleep(REFRESH);
                continue;
            }
            let taken =
                snapshot::take(&socket, previous.as_ref()).map_err(|error| format!("{error:#}"));
            if let Ok(picture) = &taken {
                previous = Some(picture.clone());
            }
            if send.send(taken).is_err() {
                return;
            }
            std::thread::sleep(REFRESH);
        }
    });
    pictures
}

/// The daemon's events as they happen, through one subscription.
fn follow_events(socket: PathBuf) -> Receiver<Event> {
    let (send, events) = channel();
    std::thread::spawn(move || {
        let request = Request::Subscribe {
            session: None,
            kind: None,
        };
        let Ok(lines) = client::subscribe(&socket, &request) else {
            return;
        };
        for line in lines.map_while(Result::ok) {
            let Ok(event) = serde_json::from_str::<Event>(&line) else {
                continue;
            };
            if send.send(event).is_err() {
                return;
            }
        }
    });
    events
}

impl Dashboard {
    fn take(&mut self, picture: Result<Snapshot, String>) {
        match picture {
            Ok(picture) => {
                if self.events.is_empty() {
                    self.events.extend(picture.events.iter().cloned());
                }
                self.picture = Some(picture);
                self.trouble = None;
            }
            Err(trouble) => self.trouble = Some(trouble),
        }
    }

    /// Acts on a key; `true` to quit.
    fn key(&mut self, key: KeyEvent) -> bool {
        if self.editing_filter {
            match key.code {
                KeyCode::Enter => self.editing_filter = false,
                KeyCode::Esc => {
                    self.editing_filter = false;
                    self.filter.clear();
                }
                KeyCode::Backspace => {
                    self.filter.pop();
                }
                KeyCode::Char(character) => self.filter.push(character),
                _ => {}
            }
            return false;
        }
        if self.detail.is_some() {
            if matches!(key.code, KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q')) {
                self.detail = None;
            }
            return false;
        }
        match key.code {
            KeyCode::Char('q') | KeyCode::Esc => return true,
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => return true,
            KeyCode::Tab => self.pane = PANES[(self.index() + 1) % PANES.len()],
            KeyCode::BackTab => self.pane = PANES[(self.index() + PANES.len() - 1) % PANES.len()],
            KeyCode::Char(digit @ '1'..='4') => {
                self.pane = PANES[usize::from(digit as u8 - b'1')];
            }
            KeyCode::Down | KeyCode::Char('j') => self.move_row(1),
            KeyCode::Up | KeyCode::Char('k') => self.move_row(-1),
            KeyCode::Char('/') => {
                self.pane = Pane::Events;
                self.editing_filter = true;
            }
            KeyCode::Char('p') => {
                self.paused.fetch_xor(true, Ordering::Relaxed);
            }
            KeyCode::Enter if self.pane == Pane::Sessions => self.open_detail(),
            _ => {}
        }
        false
    }

    fn paused(&self) -> bool {
        self.paused.load(Ordering::Relaxed)
    }

    fn index(&self) -> usize {
        PANES
            .iter()
            .position(|pane| *pane == self.pane)
            .unwrap_or(0)
    }

    fn move_row(&mut self, by: isize) {
        let count = self.row_count();
        let state = &mut self.rows[self.index()];
        if count == 0 {
            state.select(None);
            return;
        }
        let current = state.selected().unwrap_or(0) as isize;
        state.select(Some((current + by).clamp(0, count as isize - 1) as usize));
    }

    fn row_count(&self) -> usize {
        let Some(picture) = &self.picture else {
            return 0;
        };
        match self.pane {
            Pane::Sessions => picture.sessions.len(),
            Pane::Servers => picture.servers.len(),
            Pane::Leases => picture.leases.len(),
            Pane::Events => self.shown_events().len(),
        }
    }

    /// The chosen session's status, as `windlass status` prints it.
    fn open_detail(&mut self) {
        let Some(picture) = &self.picture else {
            return;
        };
        let chosen = self.rows[0].selected().unwrap_or(0);
        let Some(session) = picture.sessions.get(chosen) else {
            return;
        };
        let request = Request::Status {
            session: session.id,
        };
        let lines = match client::ask(&self.socket, &request, Duration::from_secs(5)) {
            Ok(Answer::Status(status)) => status.lines(),
            Ok(Answer::Refused(reason)) => vec![reason],
            Ok(other) => vec![format!("an unexpected answer: {other:?}")],
            Err(error) => vec![format!("{error:#}")],
        };
        self.detail = Some((session.id, lines));
    }

    /// The events that pass the filter, newest first.
    fn shown_events(&self) -> Vec<String> {
        self.events
            .iter()
            .rev()
            .map(crate::recorded::table_line)
            .filter(|line| self.filter.is_empty() || line.contains(&self.filter))
            .collect()
    }

    fn style(&self, colour: Color) -> Style {
        if self.colour {
            Style::default().fg(colour)
        } else {
            Style::default()
        }
    }
}

fn draw(frame: &mut Frame, dashboard: &mut Dashboard) {
    let [status, sessions, servers, leases, events, help] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(4),
        Constraint::Min(5),
        Constraint::Length(4),
        Constraint::Min(5),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    frame.render_widget(Paragraph::new(status_line(dashboard)), status);
    if let Some((session, lines)) = &dashboard.detail {
        let area = Rect {
            height: frame.area().height.saturating_sub(2),
            y: 1,
            ..frame.area()
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .title(format!(" session {session} (Esc to close) "));
        let body: Vec<Line> = lines.iter().map(|line| Line::raw(line.clone())).collect();
        frame.render_widget(Paragraph::new(body).block(block), area);
        return;
    }
    let empty = Snapshot::empty();
    let picture = dashboard.picture.clone().unwrap_or(empty);
    table(
        frame,
        dashboard,
        Pane::Sessions,
        sessions,
        " 1 sessions ",
        text::SESSION_COLUMNS,
        picture.sessions.iter().map(text::session_row).collect(),
    );
    table(
        frame,
        dashboard,
        Pane::Servers,
        servers,
        " 2 servers ",
        text::SERVER_COLUMNS,
        picture.servers.iter().map(text::server_row).collect(),
    );
    table(
        frame,
        dashboard,
        Pane::Leases,
        leases,
        " 3 leases ",
        text::LEASE_COLUMNS,
        picture.leases.iter().map(text::lease_row).collect(),
    );
    let filter = if dashboard.filter.is_empty() && !dashboard.editing_filter {
        String::new()
    } else {
        format!(
            "filter: {}{} ",
            dashboard.filter,
            if dashboard.editing_filter { "_" } else { "" }
        )
    };
    let lines: Vec<Vec<String>> = dashboard
        .shown_events()
        .into_iter()
        .map(|line| vec![line])
        .collect();
    table(
        frame,
        dashboard,
        Pane::Events,
        events,
        &format!(" 4 events, newest first {filter}"),
        &["time  session  kind"],
        lines,
    );
    let keys = "Tab/1-4 pane  ↑↓ row  Enter session  / filter  p pause  q quit";
    frame.render_widget(
        Paragraph::new(keys).style(dashboard.style(Color::DarkGray)),
        help,
    );
}

fn status_line(dashboard: &Dashboard) -> String {
    let mut line = match &dashboard.picture {
        Some(picture) => text::headline(picture),
        None => "windlass: asking the daemon…".to_owned(),
    };
    if let Some(picture) = &dashboard.picture {
        line.push_str(&format!(
            "  {} sessions  {} servers  {} leases",
            picture.sessions.len(),
            picture.servers.len(),
            picture.leases.len()
        ));
    }
    if dashboard.paused() {
        line.push_str("  PAUSED");
    }
    if let Some(trouble) = &dashboard.trouble {
        line.push_str(&format!("  daemon: {trouble}"));
    }
    line
}

fn table(
    frame: &mut Frame,
    dashboard: &mut Dashboard,
    pane: Pane,
    area: Rect,
    title: &str,
    columns: &[&str],
    rows: Vec<Vec<String>>,
) {
    let focused = dashboard.pane == pane;
    let mut widths: Vec<u16> = columns
        .iter()
        .map(|name| name.chars().count() as u16)
        .collect();
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count().min(60) as u16);
        }
    }
    // The last column (the events' only one, a session's last error, a
    // server's command) takes what the others leave, so that a long text
    // there never narrows the short ones before it.
    let last = widths.len().saturating_sub(1);
    let constraints: Vec<Constraint> = widths
        .iter()
        .enumerate()
        .map(|(column, width)| match column == last {
            true => Constraint::Fill(1),
            false => Constraint::Length(*width),
        })
        .collect();
    let header = Row::new(columns.iter().map(|name| (*name).to_owned()))
        .style(Style::default().add_modifier(Modifier::BOLD));
    let border = if focused {
        dashboard.style(Color::Cyan)
    } else {
        Style::default()
    };
    let table = Table::new(rows.into_iter().map(Row::new), constraints)
        .header(header)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(title.to_owned())
                .border_style(border),
        )
        .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED));
    let index = PANES.iter().position(|each| *each == pane).unwrap_or(0);
    let mut state = dashboard.rows[index];
    if !focused {
        state.select(None);
    }
    frame.render_stateful_widget(table, area, &mut state);
}
