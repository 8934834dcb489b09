//! Requests a server works on one at a time. pyright drops the references
//! request it is working on when the next one arrives, so with several
//! agents asking, each question cancelled the one before; here the next
//! waits for the answer to the one in flight instead
//! (`ServerSpec::references_one_at_a_time`). Pure: the actor decides what
//! waits and sends what comes out.

use super::fairness::QUEUED_PER_SESSION;
use crate::vocabulary::ids::SessionId;
use std::collections::VecDeque;

/// The method a server may work on only one request of at a time.
pub const ONE_AT_A_TIME: &str = "textDocument/references";

#[derive(Debug)]
pub struct Turns<T> {
    /// In arrival order: the question (as `requests.rs` keys it), whose
    /// request it is, and the request.
    waiting: VecDeque<(String, SessionId, T)>,
}

impl<T> Default for Turns<T> {
    fn default() -> Self {
        Self {
            waiting: VecDeque::new(),
        }
    }
}

impl<T> Turns<T> {
    /// Keeps `item` until its turn; gives it back, with how many of its
    /// session's wait already, when its session has its fill waiting.
    pub fn wait(&mut self, key: String, session: SessionId, item: T) -> Result<(), (T, usize)> {
        let queued = self
            .waiting
            .iter()
            .filter(|(_, waiting, _)| *waiting == session)
            .count();
        if queued >= QUEUED_PER_SESSION {
            return Err((item, queued));
        }
        self.waiting.push_back((key, session, item));
        Ok(())
    }

    /// The first waiting request and every other asking the same question,
    /// which share its answer once it is sent.
    pub fn next(&mut self) -> Vec<T> {
        let Some((key, _, first)) = self.waiting.pop_front() else {
            return Vec::new();
        };
        let mut turn = vec![first];
        let (same, others): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(waiting, _, _)| *waiting == key);
        self.waiting = others;
        turn.extend(same.into_iter().map(|(_, _, item)| item));
        turn
    }

    /// Every waiting request, in arrival order.
    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.waiting.drain(..).map(|(_, _, item)| item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(n: u64) -> SessionId {
        SessionId(n)
    }

    #[test]
    fn the_same_question_takes_its_turn_with_the_first() {
        let mut turns = Turns::default();
        for (key, item) in [("a", 1), ("b", 2), ("a", 3), ("c", 4)] {
            assert!(turns.wait(key.into(), session(1), item).is_ok());
        }
        assert_eq!(turns.next(), vec![1, 3]);
        assert_eq!(turns.next(), vec![2]);
        assert_eq!(turns.next(), vec![4]);
        assert!(turns.next().is_empty());
    }

    #[test]
    fn a_session_with_its_fill_waiting_is_refused_and_others_are_not() {
        let mut turns = Turns::default();
        for item in 0..QUEUED_PER_SESSION {
            assert!(turns.wait(item.to_string(), session(1), item).is_ok());
        }
        assert_eq!(
            turns.wait("x".into(), session(1), 999),
            Err((999, QUEUED_PER_SESSION))
        );
        assert!(turns.wait("x".into(), session(2), 999).is_ok());
        assert_eq!(turns.drain().count(), QUEUED_PER_SESSION + 1);
    }
}
