//! The Recorder's inbox: events and session rows to write, and live
//! subscriptions.
use crate::store::events::Event;
use crate::store::sessions::SessionRow;
use crate::vocabulary::events::EventKind;
use crate::vocabulary::ids::{ServerId, SessionId};
use ractor::RpcReplyPort;
use std::path::PathBuf;
use tokio::sync::mpsc;

/// An event about an instance of a server. Servers are shared, so it
/// names no session.
pub fn server_event(
    kind: EventKind,
    server: &str,
    instance: ServerId,
    detail: serde_json::Value,
) -> RecorderMsg {
    let mut event = Event::now(kind, None);
    event.server = Some(server.to_owned());
    event.detail = crate::store::servers::with_instance(detail, instance.0);
    RecorderMsg::Event(event)
}

pub enum RecorderMsg {
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
    },
    SessionEnded {
        session: SessionId,
    },
    /// Why nothing is recorded, if nothing is.
    Problem(RpcReplyPort<Option<String>>),
    /// A live subscriber: events that pass the filter from now on.
    Subscribe(Filter, RpcReplyPort<mpsc::Receiver<Event>>),
}

/// What a subscriber wants: one session's events (and the events of the
/// servers, which belong to no session), or all; one kind, or all.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub session: Option<SessionId>,
    pub kind: Option<EventKind>,
}

impl Filter {
    pub fn passes(&self, event: &Event) -> bool {
        let session = match (&self.session, &event.session) {
            (Some(wanted), Some(session)) => wanted == session,
            _ => true,
        };
        session && self.kind.is_none_or(|kind| kind == event.kind)
    }
}
