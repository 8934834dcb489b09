//! The check a server runs when a document is saved (rust-analyzer's
//! `cargo check`), from the `didSave` until its progress begins.
//!
//! Such a server publishes the saved version at once with the last check's
//! results still in it, and begins the new check tens of milliseconds
//! later: in that gap the server looks done (the version is published, no
//! progress runs, the process is quiet) while what it published is the
//! check of the text before the save. So the gap counts as work under way.
//! The grace counts from the save or from when the server was last busy,
//! whichever is later: a server still loading, or at other work, begins
//! the check only after. One that lets the grace pass without beginning a
//! check, before it has ever begun one after a save (its check on save
//! turned off, or the file in no project it checks), is not waited on for
//! one again; once it has, a missed grace is that file's alone.
//!
//! Such a check reads the files on disk, so its findings are as old as
//! the save that began it: a file modified since then (written by an agent
//! before the file watcher has said so) calls for another save.

use std::time::{Duration, Instant, SystemTime};

/// How long after a save the server's check is expected to begin;
/// rust-analyzer took 60–110 ms on a two-core machine, 330 ms with three
/// busy processes beside it.
const GRACE: Duration = Duration::from_secs(1);

/// The grace for a server seen to check on save: a check that begins late
/// on a loaded machine is still that save's.
const PROVEN_GRACE: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub struct SaveCheck {
    /// Whether the server is still expected to check on save.
    expected: bool,
    /// Whether it has begun a check after a save.
    proven: bool,
    /// The save whose check has not begun yet: when the grace began
    /// (the save, or the server last busy) and when it was sent by the
    /// wall clock, which the file system's stamps are in.
    awaited: Option<(Instant, SystemTime)>,
    /// When the disk was last read by a check: the save that began it, or
    /// the server's start (it checks once it has loaded).
    disk_read_at: SystemTime,
}

impl SaveCheck {
    pub fn new(expected: bool) -> Self {
        Self {
            expected,
            proven: false,
            awaited: None,
            disk_read_at: SystemTime::now(),
        }
    }

    /// A `didSave` was sent; returns whether its check is awaited.
    pub fn saved(&mut self, now: Instant) -> bool {
        if self.expected {
            self.awaited = Some((now, SystemTime::now()));
        }
        self.expected
    }

    /// The server began work under progress: the save's check, if one was
    /// awaited, is now tracked as that work.
    pub fn progress_began(&mut self) {
        if let Some((_, saved_at)) = self.awaited.take() {
            self.disk_read_at = saved_at;
            self.proven = true;
        }
    }

    /// Whether a file last modified at `modified` changed after the last
    /// check read the disk, so that check's findings do not cover it.
    pub fn misses(&self, modified: SystemTime) -> bool {
        self.expected && modified > self.disk_read_at
    }

    /// Until when the check of the last save is still awaited, if it is;
    /// `busy` says the server is loading or at other work now.
    pub fn awaited_until(&mut self, now: Instant, busy: bool) -> Option<Instant> {
        let grace = match self.proven {
            true => PROVEN_GRACE,
            false => GRACE,
        };
        let (since, _) = self.awaited.as_mut()?;
        if busy {
            *since = now;
        }
        let due = *since + grace;
        if now < due {
            return Some(due);
        }
        self.awaited = None;
        match self.proven {
            true => tracing::info!("no check began within {grace:?} of a save"),
            false => {
                tracing::info!(
                    "no check began within {grace:?} of a save: saves are not waited on again"
                );
                self.expected = false;
            }
        }
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
        assert_eq!(check.awaited_until(now, false), None);
        assert!(check.saved(now));
        assert_eq!(check.awaited_until(now, false), Some(now + GRACE));
        check.progress_began();
        assert_eq!(check.awaited_until(now, false), None);
        check.saved(now);
        assert!(
            check.awaited_until(now, false).is_some(),
            "every save is awaited"
        );
    }

    #[test]
    fn a_server_that_lets_the_grace_pass_is_not_awaited_again() {
        let now = Instant::now();
        let mut check = SaveCheck::new(true);
        check.saved(now);
        assert_eq!(check.awaited_until(now + GRACE, false), None);
        assert!(!check.saved(now + GRACE));
        assert_eq!(check.awaited_until(now + GRACE, false), None);
    }

    #[test]
    fn the_grace_counts_from_when_the_server_was_last_busy() {
        let now = Instant::now();
        let mut check = SaveCheck::new(true);
        check.saved(now);
        let loaded = now + GRACE * 3;
        assert_eq!(check.awaited_until(loaded, true), Some(loaded + GRACE));
        assert!(check.awaited_until(loaded + GRACE / 2, false).is_some());
    }

    #[test]
    fn a_server_seen_to_check_on_save_is_waited_on_though_one_is_late() {
        let now = Instant::now();
        let mut check = SaveCheck::new(true);
        check.saved(now);
        check.progress_began();
        check.saved(now);
        assert_eq!(check.awaited_until(now, false), Some(now + PROVEN_GRACE));
        assert_eq!(check.awaited_until(now + PROVEN_GRACE, false), None);
        assert!(check.saved(now), "still expected");
    }

    #[test]
    fn a_file_modified_after_the_save_a_check_began_with_is_missed() {
        let mut check = SaveCheck::new(true);
        let before = SystemTime::now() - Duration::from_secs(1);
        assert!(!check.misses(before), "older than the server");
        check.saved(Instant::now());
        let during = SystemTime::now() + Duration::from_millis(10);
        check.progress_began();
        assert!(check.misses(during), "written after the save");
        assert!(!SaveCheck::new(false).misses(during));
    }

    #[test]
    fn servers_that_do_not_check_on_save_are_never_awaited() {
        let now = Instant::now();
        let mut check = SaveCheck::new(false);
        assert!(!check.saved(now));
        assert_eq!(check.awaited_until(now, false), None);
    }
}
