//! The Recorder actor: what happens in this serving process, kept.
//!
//! Owns the writer thread (`writer.rs`), the only writer of the store in
//! this process. Its inbox is `messages::recorder`: events from the
//! Gateways (tool calls), Sessions (start, client, roots, end), the
//! Supervisor and the LanguageServers (server states, diagnostics), and
//! live subscriptions from the daemon's control socket. Sending to it never
//! waits: a tool call pays one message, and the disk is the writer
//! thread's business. Live subscribers (`subscribers.rs`) get each event
//! as it comes, as far as they keep up. When the store cannot be opened
//! or written (locked, read-only, full, corrupt) the Recorder keeps taking
//! messages, the writer tries the store again every few seconds, and
//! `status` says why nothing is recorded until it can record again.

pub mod subscribers;
mod writer;

use crate::messages::recorder::RecorderMsg;
use crate::store::events::Event;
use crate::store::now_ms;
use crate::vocabulary::events::EventKind;
use ractor::{Actor, ActorProcessingErr, ActorRef};
use std::path::PathBuf;
use std::thread::JoinHandle;
use subscribers::Subscribers;
use writer::{Queue, Refused, Write};

pub struct Recorder;

/// Where the Recorder writes, and how much of it may be kept.
pub struct Arguments {
    /// The store's file; `None` records nothing.
    pub path: Option<PathBuf>,
    /// Bytes of the store past which its oldest events are forgotten;
    /// `None` keeps every event until `windlass gc`.
    pub limit: Option<u64>,
}

pub struct State {
    writer: Option<(Queue, JoinHandle<()>)>,
    /// Why nothing can be recorded at all (no state directory, no writer).
    problem: Option<String>,
    /// What the writer says is wrong with the store, while it is.
    trouble: writer::Trouble,
    subscribers: Subscribers,
    /// Items the writer had no room for since the last one it took.
    dropped: u64,
}

impl State {
    /// Writes an event and hands it to the subscribers it passes.
    fn event(&mut self, event: Event) {
        self.subscribers.publish(&event);
        self.write(Write::Event(event));
    }

    /// Hands `write` to the writer without waiting: when its queue is
    /// full the item is counted and dropped, and the count is written as
    /// an error event once there is room again.
    fn write(&mut self, write: Write) {
        let Some((sender, _)) = &self.writer else {
            return;
        };
        if self.dropped > 0 {
            let mut event = Event::now(EventKind::Error, None);
            event.detail = serde_json::json!({
                "error": format!("{} events were not recorded: the store fell behind", self.dropped),
            });
            match sender.offer(Write::Event(event)) {
                Ok(()) => self.dropped = 0,
                Err(Refused::Full) => {}
                Err(Refused::Closed) => return self.writer_stopped(),
            }
        }
        match sender.offer(write) {
            Ok(()) => {}
            Err(Refused::Full) => self.dropped += 1,
            Err(Refused::Closed) => self.writer_stopped(),
        }
    }

    fn writer_stopped(&mut self) {
        self.problem = Some("the event writer stopped".into());
        self.writer = None;
    }
}

impl Actor for Recorder {
    type Msg = RecorderMsg;
    type State = State;
    type Arguments = Arguments;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        Arguments { path, limit }: Arguments,
    ) -> Result<State, ActorProcessingErr> {
        let Some(path) = path else {
            return Ok(State {
                writer: None,
                problem: Some("no state directory: events are not recorded".into()),
                trouble: writer::Trouble::default(),
                subscribers: Subscribers::default(),
                dropped: 0,
            });
        };
        let (sender, inbox) = writer::queue();
        let trouble = writer::Trouble::default();
        let shared = trouble.clone();
        let thread = std::thread::Builder::new()
            .name("recorder".into())
            .spawn(move || writer::run(path, limit, inbox, shared))?;
        Ok(State {
            writer: Some((sender, thread)),
            problem: None,
            trouble,
            subscribers: Subscribers::default(),
            dropped: 0,
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            RecorderMsg::Event(event) => state.event(event),
            RecorderMsg::SessionStarted(row) => {
                let mut event = Event::now(EventKind::SessionStart, Some(row.id));
                event.detail = serde_json::json!({
                    "pid": row.pid,
                    "daemon": row.daemon,
                    "host_session": row.host_session,
                    "roots": row.roots,
                });
                state.write(Write::SessionStarted(row));
                state.event(event);
            }
            RecorderMsg::Client {
                session,
                name,
                version,
            } => state.write(Write::Client {
                session,
                name,
                version,
            }),
            RecorderMsg::Roots { session, roots } => {
                let mut event = Event::now(EventKind::RootsChanged, Some(session));
                event.detail = serde_json::json!({ "roots": roots });
                state.write(Write::Roots {
                    session,
                    roots,
                    at: event.at,
                });
                state.event(event);
            }
            RecorderMsg::SessionEnded { session } => {
                let event = Event::now(EventKind::SessionEnd, Some(session));
                state.write(Write::SessionEnded {
                    session,
                    at: now_ms(),
                });
                state.event(event);
            }
            RecorderMsg::Problem(reply) => {
                let trouble = state
                    .trouble
                    .lock()
                    .ok()
                    .and_then(|trouble| trouble.clone());
                let _gone = reply.send(state.problem.clone().or(trouble));
            }
            RecorderMsg::Subscribe(filter, reply) => {
                let _gone = reply.send(state.subscribers.add(filter));
            }
        }
        Ok(())
    }

    /// Closes the channel and waits for the writer to write what is left.
    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        if let Some((sender, thread)) = state.writer.take() {
            drop(sender);
            let _joined = tokio::task::spawn_blocking(move || thread.join()).await;
        }
        Ok(())
    }
}
