//! The deadlines of a server's requests in flight, under one timer.
//!
//! A timer per request would be a task sleeping for the whole request
//! timeout however soon the answer came: a few hundred bytes each, and at
//! hundreds of requests a second, megabytes of sleepers. Here an answered
//! request's deadline is dropped with it, and the actor keeps a single
//! timer armed for the earliest deadline.

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

#[derive(Default)]
pub(super) struct Deadlines {
    by_time: BTreeSet<(Instant, i64)>,
    by_id: HashMap<i64, Instant>,
    /// When the armed timer fires, if one is armed.
    armed: Option<Instant>,
}

impl Deadlines {
    /// Records request `id`'s deadline; returns when a timer must fire if
    /// none is armed by then.
    pub(super) fn set(&mut self, id: i64, at: Instant) -> Option<Instant> {
        if let Some(previous) = self.by_id.insert(id, at) {
            self.by_time.remove(&(previous, id));
        }
        self.by_time.insert((at, id));
        self.arm(at)
    }

    /// The request was answered or given up: its deadline no longer counts.
    pub(super) fn remove(&mut self, id: i64) {
        if let Some(at) = self.by_id.remove(&id) {
            self.by_time.remove(&(at, id));
        }
    }

    /// A timer fired: the requests whose deadlines have passed by `now`,
    /// earliest first, and when the next timer must fire, if any.
    pub(super) fn fired(&mut self, now: Instant) -> (Vec<i64>, Option<Instant>) {
        if self.armed.is_some_and(|armed| armed <= now) {
            self.armed = None;
        }
        let mut passed = Vec::new();
        while let Some(&(at, id)) = self.by_time.first()
            && at <= now
        {
            self.by_time.pop_first();
            self.by_id.remove(&id);
            passed.push(id);
        }
        let earliest = self.by_time.first().map(|&(at, _)| at);
        let next = earliest.and_then(|at| self.arm(at));
        (passed, next)
    }

    /// Arms the timer for `at` unless it already fires by then.
    fn arm(&mut self, at: Instant) -> Option<Instant> {
        match self.armed {
            Some(armed) if armed <= at => None,
            _ => {
                self.armed = Some(at);
                Some(at)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn one_timer_serves_every_later_deadline() {
        let start = Instant::now();
        let mut deadlines = Deadlines::default();
        let at = |ms| start + Duration::from_millis(ms);
        assert_eq!(deadlines.set(1, at(100)), Some(at(100)));
        assert_eq!(deadlines.set(2, at(200)), None);
        assert_eq!(deadlines.set(3, at(50)), Some(at(50)), "an earlier one");
        assert_eq!(deadlines.fired(at(60)), (vec![3], Some(at(100))));
        assert_eq!(deadlines.fired(at(250)), (vec![1, 2], None));
        assert_eq!(deadlines.set(4, at(300)), Some(at(300)));
    }

    #[test]
    fn an_answered_request_never_times_out() {
        let start = Instant::now();
        let mut deadlines = Deadlines::default();
        deadlines.set(1, start);
        deadlines.set(2, start);
        deadlines.remove(1);
        assert_eq!(deadlines.fired(start), (vec![2], None));
        assert!(deadlines.by_id.is_empty() && deadlines.by_time.is_empty());
    }

    #[test]
    fn an_early_timer_rearms_for_what_is_left() {
        let start = Instant::now();
        let mut deadlines = Deadlines::default();
        let at = |ms| start + Duration::from_millis(ms);
        deadlines.set(1, at(100));
        deadlines.set(2, at(300));
        deadlines.remove(1);
        // The timer armed for 100 ms finds nothing due, and moves on.
        assert_eq!(deadlines.fired(at(100)), (vec![], Some(at(300))));
        assert_eq!(deadlines.fired(at(300)), (vec![2], None));
    }
}
