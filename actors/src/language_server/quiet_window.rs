//! A moment without new requests, so that a server answering other
//! sessions' questions can be seen quiet.
//!
//! A diagnostics wait on a server that does not say when its check ends
//! (no versions, no progress) is settled by CPU samples finding the process
//! quiet after its publication. Another session's questions, answered one
//! after another, can keep it from ever looking quiet, and the wait then
//! runs to its limit. When a wait has lacked nothing but that for a while,
//! new requests are held for a short window (those in flight finish), and
//! sent once the waits settle or the window ends. A server that goes quiet
//! by itself never sees a window, and windows are spaced, so a server busy
//! for reasons of its own delays requests by at most one window in every
//! few. A server that rests after input before going on with unfinished
//! work (pyright: 250 ms after any change or request) is starved by a
//! stream of questions less than that apart; a wait on it that has nothing
//! yet while others' input keeps it resting wants a window too, long
//! enough for the rest to end and the work to go on.

use std::time::{Duration, Instant};

/// How long new requests are held at most: long enough for the requests
/// in flight to end, two quiet samples 20 ms apart, and the 100 ms a
/// server known only by its CPU must then stay quiet.
const WINDOW: Duration = Duration::from_millis(250);
/// How long past its rest a server that rests after input has, within a
/// window, to go on with its work and then be seen quiet.
const AFTER_REST: Duration = Duration::from_millis(150);
/// How long a wait lacks only quiet before a window opens for it.
const PATIENCE: Duration = Duration::from_millis(200);
/// How long after a window ends before another may open.
const SPACING: Duration = Duration::from_millis(750);

#[derive(Debug, Default)]
pub struct QuietWindow {
    open_until: Option<Instant>,
    next_allowed: Option<Instant>,
    /// Since when some wait has lacked only quiet.
    wanted_since: Option<Instant>,
}

impl QuietWindow {
    /// A wait lacks only a quiet sample, or a server's rest after input
    /// without new input (`rest`, if it takes one): opens a window once
    /// that has lasted [`PATIENCE`], unless one is open or one ended
    /// lately; returns when a newly opened one ends.
    pub fn wanted(&mut self, now: Instant, rest: Option<Duration>) -> Option<Instant> {
        let since = *self.wanted_since.get_or_insert(now);
        if now < since + PATIENCE
            || self.is_open(now)
            || self.next_allowed.is_some_and(|allowed| now < allowed)
        {
            return None;
        }
        let until = now + rest.map_or(WINDOW, |rest| WINDOW.max(rest + AFTER_REST));
        self.open_until = Some(until);
        Some(until)
    }

    pub fn is_open(&self, now: Instant) -> bool {
        self.open_until.is_some_and(|until| now < until)
    }

    /// No wait lacks only quiet any more.
    pub fn not_wanted(&mut self, now: Instant) -> bool {
        self.wanted_since = None;
        self.close(now)
    }

    /// Ends the window, early or on time; returns whether one was open, so
    /// that what it held is sent.
    pub fn close(&mut self, now: Instant) -> bool {
        let Some(until) = self.open_until.take() else {
            return false;
        };
        self.next_allowed = Some(until.min(now) + SPACING);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_rests_gets_a_window_past_its_rest() {
        let start = Instant::now();
        let mut window = QuietWindow::default();
        let rest = Duration::from_millis(300);
        assert_eq!(window.wanted(start, Some(rest)), None);
        let now = start + PATIENCE;
        assert_eq!(
            window.wanted(now, Some(rest)),
            Some(now + rest + AFTER_REST)
        );
    }

    #[test]
    fn a_window_opens_ends_and_is_spaced_from_the_next() {
        let start = Instant::now();
        let mut window = QuietWindow::default();
        assert_eq!(
            window.wanted(start, None),
            None,
            "it may go quiet by itself"
        );
        let now = start + PATIENCE;
        assert!(!window.is_open(now));
        assert_eq!(window.wanted(now, None), Some(now + WINDOW));
        assert!(window.is_open(now));
        assert_eq!(window.wanted(now, None), None, "already open");
        let settled = now + Duration::from_millis(30);
        assert!(window.close(settled));
        assert!(!window.is_open(settled));
        assert!(!window.close(settled), "closed once");
        assert_eq!(
            window.wanted(settled + Duration::from_millis(10), None),
            None
        );
        let later = settled + SPACING;
        assert_eq!(window.wanted(later, None), Some(later + WINDOW));
        assert!(!window.is_open(later + WINDOW), "it ends by itself");
        assert!(window.not_wanted(later + WINDOW));
        let again = later + WINDOW + SPACING;
        assert_eq!(window.wanted(again, None), None, "patience starts over");
    }
}
