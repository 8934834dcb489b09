//! The Recorder's writer: a thread of its own that owns the store's
//! connection, so that no actor ever waits on the disk. It takes what to
//! write from a channel and writes it in batches, one transaction each: a
//! batch is its first item and what arrived in the [`BATCH_WINDOW`] after
//! it, everything left when the channel closes (shutdown) included. The
//! queue is bounded by count ([`QUEUE`], [`Queue`]): a store that cannot
//! keep up costs events, counted, never the serving process's memory. The thread sleeps through the window rather than waking for each item: on
//! a busy machine every wake-up is taken from the tool calls recorded.

use crate::store::events::{self, Event};
use crate::store::sessions::{self, SessionRow};
use crate::store::{self, now_ms, servers};
use crate::vocabulary::events::EventKind;
use crate::vocabulary::ids::SessionId;
use rusqlite::{Connection, TransactionBehavior};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest an item waits before it is written.
pub const BATCH_WINDOW: Duration = Duration::from_millis(100);

/// Items that may wait for the writer: a store slower than the events
/// costs events past this, not memory.
pub const QUEUE: usize = 100_000;

/// The Recorder's end of the writer's queue. It is bounded by a count
/// rather than by a channel's buffer, which would be allocated and
/// touched up front: 100,000 slots are 18 MB resident in every serving
/// process, most of its memory.
pub struct Queue {
    sender: Sender<Write>,
    queued: Arc<AtomicUsize>,
}

/// Why the queue did not take an item.
pub enum Refused {
    Full,
    /// The writer is gone.
    Closed,
}

impl Queue {
    /// Queues `write` unless [`QUEUE`] items are waiting already.
    pub fn offer(&self, write: Write) -> Result<(), Refused> {
        if self.queued.load(Ordering::Relaxed) >= QUEUE {
            return Err(Refused::Full);
        }
        self.queued.fetch_add(1, Ordering::Relaxed);
        self.sender.send(write).map_err(|_| Refused::Closed)
    }
}

/// The writer's end of the queue.
pub struct Inbox {
    receiver: Receiver<Write>,
    queued: Arc<AtomicUsize>,
}

/// What waiting on the inbox gave.
enum Next {
    Item(Write),
    /// Nothing came in the time given.
    Idle,
    Closed,
}

impl Inbox {
    /// The next item, waiting at most `patience` when one is given.
    fn next(&self, patience: Option<Duration>) -> Next {
        let received = match patience {
            None => self
                .receiver
                .recv()
                .map_err(|_| RecvTimeoutError::Disconnected),
            Some(limit) => self.receiver.recv_timeout(limit),
        };
        match received {
            Ok(write) => {
                self.queued.fetch_sub(1, Ordering::Relaxed);
                Next::Item(write)
            }
            Err(RecvTimeoutError::Timeout) => Next::Idle,
            Err(RecvTimeoutError::Disconnected) => Next::Closed,
        }
    }

    fn try_recv(&self) -> Result<Write, TryRecvError> {
        let write = self.receiver.try_recv()?;
        self.queued.fetch_sub(1, Ordering::Relaxed);
        Ok(write)
    }
}

/// A queue to the writer and the writer's end of it.
pub fn queue() -> (Queue, Inbox) {
    let (sender, receiver) = std::sync::mpsc::channel();
    let queued = Arc::new(AtomicUsize::new(0));
    let inbox = Inbox {
        receiver,
        queued: queued.clone(),
    };
    (Queue { sender, queued }, inbox)
}

/// One thing to write.
pub enum Write {
    Event(Event),
    SessionStarted(SessionRow),
    Client {
        session: SessionId,
        name: String,
        version: String,
    },
    Roots {
        session: SessionId,
        roots: Vec<PathBuf>,
        at: i64,
    },
    SessionEnded {
        session: SessionId,
        at: i64,
    },
}

impl Write {
    /// Whether hooks look the session up by what this writes.
    fn finds_a_session(&self) -> bool {
        matches!(self, Self::SessionStarted(_) | Self::Roots { .. })
    }
}

/// How often a store that could not be opened or written is tried again.
const RETRY: Duration = Duration::from_secs(10);

/// What went wrong with the store, shared with the Recorder for `status`;
/// `None` while writes succeed.
pub type Trouble = Arc<Mutex<Option<String>>>;

/// Writes until the channel closes, then writes what is left. A store
/// that cannot be opened or written is tried again every [`RETRY`]; what
/// could not be written meanwhile is counted, said in `trouble`, and
/// recorded as an error event once writing works again.
pub fn run(path: PathBuf, limit: Option<u64>, inbox: Inbox, trouble: Trouble) {
    let mut store = Store {
        path,
        limit,
        measured: None,
        connection: None,
        tried: None,
        lost: 0,
        held: Vec::new(),
        reason: String::new(),
        notices: Vec::new(),
        trouble,
    };
    store.connect();
    loop {
        // A failing store is tried again on time, not only when an event
        // comes, so that an idle session's row reaches `list` once it can.
        let patience = store.connection.is_none().then_some(RETRY);
        let first = match inbox.next(patience) {
            Next::Item(write) => write,
            Next::Idle => {
                store.write(Vec::new());
                continue;
            }
            Next::Closed => break,
        };
        // A hook run in a session's first moments finds the session by its
        // row: that is written at once, not with the next batch.
        if !first.finds_a_session() {
            std::thread::sleep(BATCH_WINDOW);
        }
        let mut batch = vec![first];
        let closed = loop {
            match inbox.try_recv() {
                Ok(write) => batch.push(write),
                Err(TryRecvError::Empty) => break false,
                Err(TryRecvError::Disconnected) => break true,
            }
        };
        store.write(batch);
        if closed {
            break;
        }
    }
    store.end();
}

/// The store as the writer holds it: open, or when it was last tried.
struct Store {
    path: PathBuf,
    /// Bytes past which the oldest events are forgotten.
    limit: Option<u64>,
    /// When the store's size was last held against the limit.
    measured: Option<Instant>,
    connection: Option<Connection>,
    tried: Option<Instant>,
    /// Events not written since the store last failed.
    lost: usize,
    /// Session rows not written yet: kept for when the store works again,
    /// so that `list` still knows every session.
    held: Vec<Write>,
    /// Why the store last failed.
    reason: String,
    /// What the next batch's first events must say: the store replaced,
    /// events lost.
    notices: Vec<String>,
    trouble: Trouble,
}

/// How often the store's size is held against its limit.
const MEASURE_EVERY: Duration = Duration::from_secs(60);

/// Session rows kept while the store fails; past this they are lost too.
const MAX_HELD: usize = 10_000;

impl Store {
    /// Opens the store unless it is open or was tried too recently.
    fn connect(&mut self) -> bool {
        if self.connection.is_some() {
            return true;
        }
        if self.tried.is_some_and(|tried| tried.elapsed() < RETRY) {
            return false;
        }
        self.tried = Some(Instant::now());
        match store::open(&self.path) {
            Ok(connection) => {
                self.connection = Some(connection);
                true
            }
            Err(error) if store::is_damaged(&error) => self.start_afresh(&error),
            Err(error) => {
                self.fail(
                    &format!(
                        "the store {} cannot be opened: {error}",
                        self.path.display()
                    ),
                    0,
                );
                false
            }
        }
    }

    /// A damaged store is kept beside a new one rather than retried for
    /// ever; the new store's first event says where the old one went.
    fn start_afresh(&mut self, damage: &rusqlite::Error) -> bool {
        let path = self.path.display().to_string();
        let moved = store::set_aside(&self.path).map_err(|e| e.to_string());
        let opened = moved
            .clone()
            .and_then(|aside| Ok((aside, store::open(&self.path).map_err(|e| e.to_string())?)));
        match opened {
            Ok((aside, connection)) => {
                let said = format!(
                    "the store {path} could not be read ({damage}); it was moved to {} and a new store started",
                    aside.display()
                );
                tracing::warn!("{said}");
                self.notices.push(said);
                self.connection = Some(connection);
                true
            }
            Err(error) => {
                let why = format!(
                    "the store {path} is damaged ({damage}) and could not be replaced: {error}"
                );
                self.fail(&why, 0);
                false
            }
        }
    }

    fn write(&mut self, batch: Vec<Write>) {
        let mut batch: Vec<Write> = std::mem::take(&mut self.held)
            .into_iter()
            .chain(batch)
            .collect();
        if !self.connect() {
            let why = self.reason.clone();
            return self.keep(batch, &why);
        }
        if self.lost > 0 {
            let said = format!(
                "{} events were not recorded while the store failed",
                self.lost
            );
            self.notices.push(said);
        }
        let notices = self.notices.len();
        for notice in self.notices.iter().rev() {
            let mut event = Event::now(EventKind::Error, None);
            event.detail = serde_json::json!({ "error": notice });
            batch.insert(0, Write::Event(event));
        }
        let Some(connection) = &mut self.connection else {
            return;
        };
        match write_batch(connection, &batch) {
            Ok(()) => {
                self.lost = 0;
                self.notices.clear();
                self.reason.clear();
                if let Ok(mut trouble) = self.trouble.lock() {
                    *trouble = None;
                }
                self.keep_to_limit();
            }
            Err(error) => {
                // Opened again next time: the file may have been replaced.
                self.connection = None;
                self.tried = Some(Instant::now());
                batch.drain(..notices);
                if self.lost > 0 {
                    self.notices.pop();
                }
                self.keep(batch, &format!("writing to the store failed: {error}"));
            }
        }
    }

    /// Forgets the oldest events once the store passes its limit, looking
    /// at most once every [`MEASURE_EVERY`]: sixteen busy sessions write
    /// about half a gigabyte an hour, which nothing else would bound.
    fn keep_to_limit(&mut self) {
        let (Some(limit), Some(connection)) = (self.limit, &mut self.connection) else {
            return;
        };
        if self
            .measured
            .is_some_and(|measured| measured.elapsed() < MEASURE_EVERY)
        {
            return;
        }
        self.measured = Some(Instant::now());
        match events::trim(connection, limit) {
            Ok(0) => {}
            Ok(forgotten) => tracing::info!(
                "the store passed its limit of {limit} bytes: forgot its {forgotten} oldest events"
            ),
            Err(error) => tracing::warn!("keeping the store to its limit failed: {error}"),
        }
    }

    /// Keeps the session rows of a batch that could not be written, and
    /// counts its events as lost.
    fn keep(&mut self, batch: Vec<Write>, why: &str) {
        let (events, rows): (Vec<Write>, Vec<Write>) = batch
            .into_iter()
            .partition(|write| matches!(write, Write::Event(_)));
        let room = MAX_HELD.saturating_sub(self.held.len());
        let overflow = rows.len().saturating_sub(room);
        self.held.extend(rows.into_iter().take(room));
        self.fail(why, events.len() + overflow);
    }

    /// Counts `lost` items and says why nothing is being recorded.
    /// The log is told once per new reason; `status` always has the count.
    fn fail(&mut self, why: &str, lost: usize) {
        self.lost += lost;
        let new = self.reason != why;
        why.clone_into(&mut self.reason);
        let said = format!(
            "{why}; {} events not recorded so far, retrying every {} s",
            self.lost,
            RETRY.as_secs()
        );
        if new {
            tracing::warn!("{said}");
        } else {
            tracing::debug!("{said}");
        }
        if let Ok(mut trouble) = self.trouble.lock() {
            *trouble = Some(said);
        }
    }

    /// The serving process is stopping: its servers stop with it.
    fn end(&mut self) {
        let Some(connection) = &mut self.connection else {
            return;
        };
        let ended = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .and_then(|transaction| {
                servers::end_all(&transaction, std::process::id(), now_ms())?;
                transaction.commit()
            });
        if let Err(error) = ended {
            tracing::warn!("recording the servers' end failed: {error}");
        }
    }
}

fn write_batch(connection: &mut Connection, batch: &[Write]) -> rusqlite::Result<()> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for write in batch {
        match write {
            Write::Event(event) => {
                events::insert(&transaction, event)?;
                servers::record(&transaction, std::process::id(), event)?;
            }
            Write::SessionStarted(row) => sessions::insert(&transaction, row)?,
            Write::Client {
                session,
                name,
                version,
            } => sessions::set_client(&transaction, *session, name, version)?,
            Write::Roots { session, roots, at } => {
                sessions::set_roots(&transaction, *session, roots, *at)?;
            }
            Write::SessionEnded { session, at } => sessions::end(&transaction, *session, *at)?,
        }
    }
    transaction.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event() -> Write {
        Write::Event(Event::now(EventKind::Error, None))
    }

    #[test]
    fn the_queue_refuses_past_its_bound_and_takes_again_once_read() {
        let (queue, inbox) = queue();
        for _ in 0..QUEUE {
            assert!(queue.offer(event()).is_ok());
        }
        assert!(matches!(queue.offer(event()), Err(Refused::Full)));
        assert!(matches!(inbox.next(None), Next::Item(_)));
        assert!(queue.offer(event()).is_ok());
        drop(inbox);
        while queue.queued.load(Ordering::Relaxed) >= QUEUE {
            queue.queued.fetch_sub(1, Ordering::Relaxed);
        }
        assert!(matches!(queue.offer(event()), Err(Refused::Closed)));
    }
}
