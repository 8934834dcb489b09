//! The Recorder's writer: a thread of its own that owns the store's
//! connection, so that no actor ever waits on the disk. It takes what to
//! write from a channel and writes it in batches, one transaction each:
//! a batch closes [`BATCH_WINDOW`] after its first item, at
//! [`MAX_BATCH`] items, or when the channel closes (shutdown).

use crate::store::events::{self, Event};
use crate::store::sessions::{self, SessionRow};
use rusqlite::{Connection, TransactionBehavior};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The longest an item waits before it is written.
pub const BATCH_WINDOW: Duration = Duration::from_millis(100);
const MAX_BATCH: usize = 10_000;

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
        let deadline = Instant::now() + BATCH_WINDOW;
        let mut closed = false;
        while batch.len() < MAX_BATCH {
            match inbox.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(write) => batch.push(write),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    closed = true;
                    break;
                }
            }
        }
        if let Err(error) = write_batch(&mut connection, &batch) {
            tracing::warn!("recording {} events failed: {error}", batch.len());
        }
        if closed {
            break;
        }
    }
}

fn write_batch(connection: &mut Connection, batch: &[Write]) -> rusqlite::Result<()> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for write in batch {
        match write {
            Write::Event(event) => events::insert(&transaction, event)?,
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
