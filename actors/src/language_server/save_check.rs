//! The check a server runs when a document is saved (rust-analyzer's
//! `cargo check`), from the `didSave` until its progress begins.
//!
//! Such a server publishes the saved version at once with the last check's
//! results still in it, and begins the new check tens of milliseconds
//! later: in that gap the server looks done (the version is published, no
//! progress runs, the process is quiet) while what it published is the
//! check of the text before the save. So the gap counts as work under way.
//! A server that lets the grace pass without beginning a check (its check
//! on save was turned off, or the file is in no project it checks) is not
//! waited on for one again.

use std::time::{Duration, Instant};

/// How long after a save the server's check is expected to begin;
/// rust-analyzer took 60–110 ms on a two-core machine.
const GRACE: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub struct SaveCheck {
    /// Whether the server is still expected to check on save.
    expected: bool,
    /// When the save whose check has not begun yet was sent.
    awaited_since: Option<Instant>,
}

impl SaveCheck {
    pub fn new(expected: bool) -> Self {
        Self {
            expected,
            awaited_since: None,
        }
    }

    /// A `didSave` was sent; returns whether its check is awaited.
    pub fn saved(&mut self, now: Instant) -> bool {
        if self.expected {
            self.awaited_since = Some(now);
        }
        self.expected
    }

    /// The server began work under progress: the save's check, if one was
    /// awaited, is now tracked as that work.
    pub fn progress_began(&mut self) {
        self.awaited_since = None;
    }

    /// Until when the check of the last save is still awaited, if it is.
    /// Past the grace the server is taken not to check on save.
    pub fn awaited_until(&mut self, now: Instant) -> Option<Instant> {
        let due = self.awaited_since? + GRACE;
        if now < due {
            return Some(due);
        }
        tracing::info!("no check began within {GRACE:?} of a save: saves are not waited on again");
        self.expected = false;
        self.awaited_since = None;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_save_is_awaited_until_progress_begins() {
        let now = Instant::now();
        let mut check = SaveCheck::new(true);
        assert_eq!(check.awaited_until(now), None);
        assert!(check.saved(now));
        assert_eq!(check.awaited_until(now), Some(now + GRACE));
        check.progress_began();
        assert_eq!(check.awaited_until(now), None);
        check.saved(now);
        assert!(check.awaited_until(now).is_some(), "every save is awaited");
    }

    #[test]
    fn a_server_that_lets_the_grace_pass_is_not_awaited_again() {
        let now = Instant::now();
        let mut check = SaveCheck::new(true);
        check.saved(now);
        assert_eq!(check.awaited_until(now + GRACE), None);
        assert!(!check.saved(now + GRACE));
        assert_eq!(check.awaited_until(now + GRACE), None);
    }

    #[test]
    fn servers_that_do_not_check_on_save_are_never_awaited() {
        let now = Instant::now();
        let mut check = SaveCheck::new(false);
        assert!(!check.saved(now));
        assert_eq!(check.awaited_until(now), None);
    }
}
