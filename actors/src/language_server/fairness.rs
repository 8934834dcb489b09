//! Fair shares of one server among the sessions using it: each session
//! may have a few requests in flight at the server; more wait in the
//! session's own queue, and queues are served round-robin, so one agent
//! flooding a server cannot push another's request behind its flood.
//! Pure: the actor decides what a queued item is and how to send it.

use crate::vocabulary::ids::SessionId;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// Requests one session may have at the server at once while it is the
/// only one asking: enough for an agent's parallel calls to keep a
/// multi-threaded server busy.
pub const PER_SESSION: usize = 8;

/// The same while other sessions ask too: most servers answer one request
/// at a time, in order, so another session's question waits behind every
/// request already written; two keep a server fed without a queue there.
pub const PER_SESSION_SHARED: usize = 2;

/// Requests one session may have waiting for its turn: past this its
/// requests are refused at once, so that no flood is an unbounded wait
/// and the daemon's memory stays bounded whatever a client sends.
pub const QUEUED_PER_SESSION: usize = 256;

#[derive(Debug)]
pub struct Fairness<T> {
    cap: usize,
    shared_cap: usize,
    queue_cap: usize,
    in_flight: HashMap<SessionId, usize>,
    queues: BTreeMap<SessionId, VecDeque<T>>,
    /// The session served last; the next turn starts after it.
    last: Option<SessionId>,
}

impl<T> Default for Fairness<T> {
    fn default() -> Self {
        Self::new(PER_SESSION, QUEUED_PER_SESSION).shared(PER_SESSION_SHARED)
    }
}

/// What became of a request given to [`Fairness::admit`].
#[derive(Debug, PartialEq, Eq)]
pub enum Admitted<T> {
    /// To be sent now, in a slot of its session's.
    Now(T),
    /// Queued for its session's turn.
    Queued,
    /// Given back: the session's queue is full.
    Refused { item: T, queued: usize },
}

impl<T> Fairness<T> {
    pub fn new(cap: usize, queue_cap: usize) -> Self {
        Self {
            cap: cap.max(1),
            shared_cap: cap.max(1),
            queue_cap,
            in_flight: HashMap::new(),
            queues: BTreeMap::new(),
            last: None,
        }
    }

    /// With `shared_cap` requests at once for each session while another
    /// has work at the server or waiting for it.
    pub fn shared(self, shared_cap: usize) -> Self {
        Self {
            shared_cap: shared_cap.clamp(1, self.cap),
            ..self
        }
    }

    /// How many requests `session` may have at the server now.
    fn cap_of(&self, session: SessionId) -> usize {
        let others = self
            .in_flight
            .keys()
            .chain(self.queues.keys())
            .any(|other| *other != session);
        if others { self.shared_cap } else { self.cap }
    }

    /// Takes a slot for `session` and gives `item` back to be sent now
    /// when the session has a slot free and nothing queued ahead of it;
    /// otherwise queues it, unless the session's queue is full.
    pub fn admit(&mut self, session: SessionId, item: T) -> Admitted<T> {
        let queued = self.queues.get(&session).map_or(0, VecDeque::len);
        let busy = self.in_flight.get(&session).copied().unwrap_or(0);
        if queued > 0 || busy >= self.cap_of(session) {
            return self.queue(session, item);
        }
        *self.in_flight.entry(session).or_default() += 1;
        Admitted::Now(item)
    }

    /// Queues `item` for its session's turn, whatever its share, unless
    /// the session's queue is full.
    pub fn queue(&mut self, session: SessionId, item: T) -> Admitted<T> {
        let queue = self.queues.entry(session).or_default();
        if queue.len() >= self.queue_cap {
            let queued = queue.len();
            return Admitted::Refused { item, queued };
        }
        queue.push_back(item);
        Admitted::Queued
    }

    /// One of `session`'s requests is answered (or failed): its slot is
    /// free.
    pub fn finished(&mut self, session: SessionId) {
        if let Some(busy) = self.in_flight.get_mut(&session) {
            *busy = busy.saturating_sub(1);
            if *busy == 0 {
                self.in_flight.remove(&session);
            }
        }
    }

    /// The next queued item to send, taking its session's slot: sessions
    /// with a free slot take turns, starting after the one served last.
    pub fn next(&mut self) -> Option<(SessionId, T)> {
        let sessions: Vec<SessionId> = self
            .queues
            .iter()
            .filter(|(_, queue)| !queue.is_empty())
            .map(|(session, _)| *session)
            .collect();
        let start = self.last.map_or(0, |last| {
            sessions.partition_point(|session| *session <= last)
        });
        let turn = sessions
            .iter()
            .cycle()
            .skip(start)
            .take(sessions.len())
            .copied()
            .find(|session| {
                self.in_flight.get(session).copied().unwrap_or(0) < self.cap_of(*session)
            })?;
        let queue = self.queues.get_mut(&turn)?;
        let item = queue.pop_front()?;
        if queue.is_empty() {
            self.queues.remove(&turn);
        }
        *self.in_flight.entry(turn).or_default() += 1;
        self.last = Some(turn);
        Some((turn, item))
    }

    /// Every queued item, for a process that stopped before sending them.
    pub fn drain(&mut self) -> Vec<(SessionId, T)> {
        self.in_flight.clear();
        std::mem::take(&mut self.queues)
            .into_iter()
            .flat_map(|(session, queue)| queue.into_iter().map(move |item| (session, item)))
            .collect()
    }

    pub fn queued(&self) -> usize {
        self.queues.values().map(VecDeque::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: SessionId = SessionId(1);
    const B: SessionId = SessionId(2);
    const C: SessionId = SessionId(3);

    #[test]
    fn a_session_under_its_cap_goes_straight_through() {
        let mut fairness = Fairness::new(2, 10);
        assert_eq!(fairness.admit(A, 1), Admitted::Now(1));
        assert_eq!(fairness.admit(A, 2), Admitted::Now(2));
        assert_eq!(fairness.admit(A, 3), Admitted::Queued, "over the cap");
        assert_eq!(
            fairness.admit(B, 10),
            Admitted::Now(10),
            "another session is not held back"
        );
        assert_eq!(fairness.next(), None, "A is still at its cap");
        fairness.finished(A);
        assert_eq!(fairness.next(), Some((A, 3)));
    }

    #[test]
    fn queues_are_served_in_turn() {
        let mut fairness = Fairness::new(1, 10);
        for n in 0..3 {
            fairness.admit(A, n);
        }
        for n in 10..12 {
            fairness.admit(B, n);
        }
        fairness.admit(C, 20);
        fairness.admit(C, 21);
        for session in [A, B, C] {
            fairness.finished(session);
        }
        let mut order = Vec::new();
        while let Some((session, item)) = fairness.next() {
            order.push(item);
            fairness.finished(session);
        }
        assert_eq!(order, vec![1, 11, 21, 2]);
    }

    #[test]
    fn a_session_with_work_queued_does_not_jump_its_own_queue() {
        let mut fairness = Fairness::new(1, 10);
        assert_eq!(fairness.admit(A, 1), Admitted::Now(1));
        assert_eq!(fairness.admit(A, 2), Admitted::Queued);
        fairness.finished(A);
        assert_eq!(fairness.admit(A, 3), Admitted::Queued, "2 goes first");
        assert_eq!(fairness.next(), Some((A, 2)));
        assert_eq!(fairness.queued(), 1);
        assert_eq!(fairness.drain(), vec![(A, 3)]);
    }

    #[test]
    fn a_full_queue_refuses_its_session_alone() {
        let mut fairness = Fairness::new(1, 2);
        assert_eq!(fairness.admit(A, 1), Admitted::Now(1));
        assert_eq!(fairness.admit(A, 2), Admitted::Queued);
        assert_eq!(fairness.admit(A, 3), Admitted::Queued);
        assert_eq!(
            fairness.admit(A, 4),
            Admitted::Refused { item: 4, queued: 2 }
        );
        assert_eq!(fairness.admit(B, 10), Admitted::Now(10));
        fairness.finished(A);
        assert_eq!(fairness.next(), Some((A, 2)));
        assert_eq!(fairness.admit(A, 5), Admitted::Queued, "room again");
    }

    #[test]
    fn a_session_has_fewer_requests_at_the_server_while_another_asks() {
        let mut fairness = Fairness::new(3, 10).shared(1);
        for n in 0..3 {
            assert_eq!(
                fairness.admit(A, n),
                Admitted::Now(n),
                "alone, the full cap"
            );
        }
        assert_eq!(fairness.admit(B, 10), Admitted::Now(10));
        assert_eq!(fairness.admit(B, 11), Admitted::Queued, "B shares now");
        assert_eq!(fairness.admit(A, 3), Admitted::Queued);
        fairness.finished(A);
        fairness.finished(A);
        assert_eq!(fairness.next(), None, "A still has one at the server");
        fairness.finished(A);
        fairness.finished(B);
        let mut turns = Vec::new();
        while let Some((session, item)) = fairness.next() {
            turns.push(item);
            fairness.finished(session);
        }
        assert_eq!(turns, vec![3, 11]);
    }
}
