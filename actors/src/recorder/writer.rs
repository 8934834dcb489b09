//! The Recorder's writer: a thread of its own that owns the store's
//! connection, so that no actor ever waits on the disk. It takes what to
//! write from a channel and writes it in batches, one transaction each: a
//! batch is its first item and what arrived in the [`BATCH_WINDOW`] after
//! it, everything left when the channel closes (shutdown) included. The
//! channel is bounded ([`QUEUE`]): a store that cannot keep up costs
//! events, counted, never the serving process's memory. The thread sleeps through the window rather than waking for each item: on
//! a busy machine every wake-up is taken from the tool calls recorded.

use crate::store::events::{self, Event};
use crate::store::sessions::{self, SessionRow};
use crate::store::{now_ms, servers};
use rusqlite::{Connection, TransactionBehavior};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Duration;

/// The longest an item waits before it is written.
pub const BATCH_WINDOW: Duration = Duration::from_millis(100);

/// Items that may wait for the writer: a store slower than the events
/// costs events past this, not memory.
pub const QUEUE: usize = 100_000;

/// One thing to write.
pub enum Write {
    Event(Event),
    SessionStarted(SessionRow),
    Client {
        session: String,
        name: String,
        version: String,
    },
    Roots {
        session: String,
        roots: Vec<PathBuf>,
        at: i64,
    },
    SessionEnded {
        session: String,
        at: i64,
    },
}

/// Writes until the channel closes, then writes what is left.
pub fn run(mut connection: Connection, inbox: Receiver<Write>) {
    while let Ok(first) = inbox.recv() {
        let mut batch = vec![first];
        std::thread::sleep(BATCH_WINDOW);
        let closed = loop {
            match inbox.try_recv() {
                Ok(write) => batch.push(write),
                Err(TryRecvError::Empty) => break false,
                Err(TryRecvError::Disconnected) => break true,
            }
        };
        if let Err(error) = write_batch(&mut connection, &batch) {
            tracing::warn!("recording {} events failed: {error}", batch.len());
        }
        if closed {
            break;
        }
    }
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
            } => sessions::set_client(&transaction, session, name, version)?,
            Write::Roots { session, roots, at } => {
                sessions::set_roots(&transaction, session, roots, *at)?;
            }
            Write::SessionEnded { session, at } => sessions::end(&transaction, session, *at)?,
        }
    }
    transaction.commit()
}
