//! Live subscribers to the Recorder's events (`windlass monitor`): each a
//! bounded channel with a filter. A subscriber that does not keep up
//! loses events rather than slowing the Recorder, and is told how many
//! it lost before the next one it gets.

use crate::messages::recorder::Filter;
use crate::store::events::Event;
use crate::vocabulary::events::EventKind;
use serde_json::json;
use tokio::sync::mpsc::{self, error::TrySendError};

/// Events a subscriber may have waiting before it starts losing them.
pub const BUFFER: usize = 1024;

struct Subscriber {
    filter: Filter,
    sender: mpsc::Sender<Event>,
    missed: u64,
}

#[derive(Default)]
pub struct Subscribers(Vec<Subscriber>);

impl Subscribers {
    /// A new subscriber; its events come on the returned receiver.
    pub fn add(&mut self, filter: Filter) -> mpsc::Receiver<Event> {
        let (sender, receiver) = mpsc::channel(BUFFER);
        self.0.push(Subscriber {
            filter,
            sender,
            missed: 0,
        });
        receiver
    }

    /// Hands `event` to every subscriber it passes; drops the ones gone.
    pub fn publish(&mut self, event: &Event) {
        self.0.retain_mut(|subscriber| {
            if !subscriber.filter.passes(event) {
                return !subscriber.sender.is_closed();
            }
            if subscriber.missed > 0 {
                let mut missed = Event::now(EventKind::Missed, event.session);
                missed.detail = json!({"count": subscriber.missed});
                match subscriber.sender.try_send(missed) {
                    Ok(()) => subscriber.missed = 0,
                    Err(TrySendError::Full(_)) => {
                        subscriber.missed += 1;
                        return true;
                    }
                    Err(TrySendError::Closed(_)) => return false,
                }
            }
            match subscriber.sender.try_send(event.clone()) {
                Ok(()) => true,
                Err(TrySendError::Full(_)) => {
                    subscriber.missed += 1;
                    true
                }
                Err(TrySendError::Closed(_)) => false,
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::ids::SessionId;

    fn event(session: u64, kind: EventKind) -> Event {
        Event::now(kind, Some(SessionId(session)))
    }

    #[test]
    fn a_subscriber_gets_what_passes_its_filter() {
        let mut subscribers = Subscribers::default();
        let mut receiver = subscribers.add(Filter {
            session: Some(SessionId(1)),
            kind: Some(EventKind::ToolCall),
        });
        subscribers.publish(&event(1, EventKind::ToolCall));
        subscribers.publish(&event(2, EventKind::ToolCall));
        subscribers.publish(&event(1, EventKind::SessionEnd));
        let mut server = Event::now(EventKind::ToolCall, None);
        server.server = Some("python".into());
        subscribers.publish(&server);
        assert_eq!(receiver.try_recv().unwrap().session, Some(SessionId(1)));
        assert_eq!(
            receiver.try_recv().unwrap().server.as_deref(),
            Some("python")
        );
        assert!(receiver.try_recv().is_err());
    }

    #[test]
    fn a_slow_subscriber_is_told_how_many_it_missed() {
        let mut subscribers = Subscribers::default();
        let mut receiver = subscribers.add(Filter::default());
        for _ in 0..BUFFER + 10 {
            subscribers.publish(&event(1, EventKind::ToolCall));
        }
        for _ in 0..BUFFER {
            receiver.try_recv().unwrap();
        }
        subscribers.publish(&event(1, EventKind::SessionEnd));
        let missed = receiver.try_recv().unwrap();
        assert_eq!(missed.kind, EventKind::Missed);
        assert_eq!(missed.detail["count"], 10);
        assert_eq!(receiver.try_recv().unwrap().kind, EventKind::SessionEnd);
    }

    #[test]
    fn a_gone_subscriber_is_dropped() {
        let mut subscribers = Subscribers::default();
        drop(subscribers.add(Filter::default()));
        subscribers.publish(&event(1, EventKind::ToolCall));
        assert!(subscribers.0.is_empty());
    }
}
