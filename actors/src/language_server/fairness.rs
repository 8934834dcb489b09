//! Fair shares of one server among the sessions using it: each session
//! may have a few requests in flight at the server; more wait in the
//! session's own queue, and queues are served round-robin, so one agent
//! flooding a server cannot push another's request behind its flood.
//! While other sessions use the server, each has one request there at a
//! time, so that another's question waits behind one request at most.
//! Pure: the actor decides what a queued item is and how to send it.

use crate::vocabulary::ids::SessionId;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Requests one session may have at the server at once while it is the
/// only one asking: enough for an agent's parallel calls to keep a
/// multi-threaded server busy.
pub const PER_SESSION: usize = 8;

/// The same while other sessions use the server too: most servers answer
/// one request at a time, in order, so another session's question waits
/// behind every request already written. Pyright beside a client keeping
/// one hover in flight answered another's hovers with p99 20 ms, with two
/// 36 ms, with eight 75 ms; to a server answering in order one at a time
/// is no slower, as a flood alone measured.
pub const PER_SESSION_SHARED: usize = 1;

/// How long a session that asked the server still counts as using it: an
/// agent between two calls (its model thinking) is still at work, and a
/// flood given the whole server meanwhile would make its next call wait
/// behind the flood's full share.
pub const ACTIVE_FOR: Duration = Duration::from_secs(30);

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
    /// When each session last asked, within [`ACTIVE_FOR`].
    asked_at: HashMap<SessionId, Instant>,
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
            asked_at: HashMap::new(),
            last: None,
        }
    }

    /// With `shared_cap` requests at once for each session while another
    /// has work at the server or waiting for it, or asked lately.
    pub fn shared(self, shared_cap: usize) -> Self {
        Self {
            shared_cap: shared_cap.clamp(1, self.cap),
            ..self
        }
    }

    /// How many requests `session` may have at the server at `now`.
    fn cap_of(&self, session: SessionId, now: Instant) -> usize {
        let lately = self
            .asked_at
            .iter()
            .filter(|(_, at)| now.saturating_duration_since(**at) < ACTIVE_FOR)
            .map(|(other, _)| other);
        let others = self
            .in_flight
            .keys()
            .chain(self.queues.keys())
            .chain(lately)
            .any(|other| *other != session);
        if others { self.shared_cap } else { self.cap }
    }

    /// Takes a slot for `session` and gives `item` back to be sent now
    /// when the session has a slot free and nothing queued ahead of it;
    /// otherwise queues it, unless the session's queue is full.
    pub fn admit(&mut self, session: SessionId, item: T, now: Instant) -> Admitted<T> {
        self.asked(session, now);
        let queued = self.queues.get(&session).map_or(0, VecDeque::len);
        let busy = self.in_flight.get(&session).copied().unwrap_or(0);
        if queued > 0 || busy >= self.cap_of(session, now) {
            return self.queue(session, item, now);
        }
        *self.in_flight.entry(session).or_default() += 1;
        Admitted::Now(item)
    }

    /// Notes that `session` asked at `now`, forgetting sessions that have
    /// not asked for [`ACTIVE_FOR`].
    fn asked(&mut self, session: SessionId, now: Instant) {
        self.asked_at
            .retain(|_, at| now.saturating_duration_since(*at) < ACTIVE_FOR);
        self.asked_at.insert(session, now);
    }

    /// Queues `item` for its session's turn, whatever its share, unless
    /// the session's queue is full.
    pub fn queue(&mut self, session: SessionId, item: T, now: Instant) -> Admitted<T> {
        self.asked(session, now);
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
    pub fn next(&mut self, now: Instant) -> Option<(SessionId, T)> {
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
                self.in_flight.get(session).copied().unwrap_or(0) < self.cap_of(*session, now)
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
        let now = Instant::now();
        let mut fairness = Fairness::new(2, 10);
        assert_eq!(fairness.admit(A, 1, now), Admitted::Now(1));
        assert_eq!(fairness.admit(A, 2, now), Admitted::Now(2));
        assert_eq!(fairness.admit(A, 3, now), Admitted::Queued, "over the cap");
        assert_eq!(
            fairness.admit(B, 10, now),
            Admitted::Now(10),
            "another session is not held back"
        );
        assert_eq!(fairness.next(now), None, "A is still at its cap");
        fairness.finished(A);
        assert_eq!(fairness.next(now), Some((A, 3)));
    }

    #[test]
    fn queues_are_served_in_turn() {
        let now = Instant::now();
        let mut fairness = Fairness::new(1, 10);
        for n in 0..3 {
            fairness.admit(A, n, now);
        }
        for n in 10..12 {
            fairness.admit(B, n, now);
        }
        fairness.admit(C, 20, now);
        fairness.admit(C, 21, now);
        for session in [A, B, C] {
            fairness.finished(session);
        }
        let mut order = Vec::new();
        while let Some((session, item)) = fairness.next(now) {
            order.push(item);
            fairness.finished(session);
        }
        assert_eq!(order, vec![1, 11, 21, 2]);
    }

    #[test]
    fn a_session_with_work_queued_does_not_jump_its_own_queue() {
        let now = Instant::now();
        let mut fairness = Fairness::new(1, 10);
        assert_eq!(fairness.admit(A, 1, now), Admitted::Now(1));
        assert_eq!(fairness.admit(A, 2, now), Admitted::Queued);
        fairness.finished(A);
        assert_eq!(fairness.admit(A, 3, now), Admitted::Queued, "2 goes first");
        assert_eq!(fairness.next(now), Some((A, 2)));
        assert_eq!(fairness.queued(), 1);
        assert_eq!(fairness.drain(), vec![(A, 3)]);
    }

    #[test]
    fn a_full_queue_refuses_its_session_alone() {
        let now = Instant::now();
        let mut fairness = Fairness::new(1, 2);
        assert_eq!(fairness.admit(A, 1, now), Admitted::Now(1));
        assert_eq!(fairness.admit(A, 2, now), Admitted::Queued);
        assert_eq!(fairness.admit(A, 3, now), Admitted::Queued);
        assert_eq!(
            fairness.admit(A, 4, now),
            Admitted::Refused { item: 4, queued: 2 }
        );
        assert_eq!(fairness.admit(B, 10, now), Admitted::Now(10));
        fairness.finished(A);
        assert_eq!(fairness.next(now), Some((A, 2)));
        assert_eq!(fairness.admit(A, 5, now), Admitted::Queued, "room again");
    }

    /// A quiet agent between two calls still uses the server: a flood
    /// given the full share meanwhile would be at the server when its next
    /// call comes.
    #[test]
    fn a_session_that_asked_lately_still_shares_the_server() {
        let now = Instant::now();
        let mut fairness = Fairness::new(3, 10).shared(1);
        assert_eq!(fairness.admit(B, 10, now), Admitted::Now(10));
        fairness.finished(B);
        assert_eq!(fairness.admit(A, 1, now), Admitted::Now(1));
        assert_eq!(
            fairness.admit(A, 2, now),
            Admitted::Queued,
            "B asked lately"
        );
        fairness.finished(A);
        let later = now + ACTIVE_FOR;
        assert_eq!(fairness.next(later), Some((A, 2)));
        assert_eq!(fairness.admit(A, 3, later), Admitted::Now(3), "B is gone");
    }

    #[test]
    fn a_session_has_fewer_requests_at_the_server_while_another_asks() {
        let now = Instant::now();
        let mut fairness = Fairness::new(3, 10).shared(1);
        for n in 0..3 {
            assert_eq!(
                fairness.admit(A, n, now),
                Admitted::Now(n),
                "alone, the full cap"
            );
        }
        assert_eq!(fairness.admit(B, 10, now), Admitted::Now(10));
        assert_eq!(fairness.admit(B, 11, now), Admitted::Queued, "B shares now");
        assert_eq!(fairness.admit(A, 3, now), Admitted::Queued);
        fairness.finished(A);
        fairness.finished(A);
        assert_eq!(fairness.next(now), None, "A still has one at the server");
        fairness.finished(A);
        fairness.finished(B);
        let mut turns = Vec::new();
        while let Some((session, item)) = fairness.next(now) {
            turns.push(item);
            fairness.finished(session);
        }
        assert_eq!(turns, vec![3, 11]);
    }
}
