//! The last change on disk as a server that checks only the files it is
//! told changed (intelephense) takes it in: the open documents it sent
//! again, when, when the server had published them all, and so from when
//! the server's publications of the other open documents are its own
//! check of them after the change, which saves sending them again.

use std::collections::HashSet;
use std::time::{Duration, Instant};

/// How long a dependent is held, once the server has published the
/// changed documents, for the server to check it by itself: intelephense
/// publishes the open dependents 4–20 ms after the changed document, and
/// a dependent sent again instead waits out its pause of about a second.
pub const OWN_CHECK_GRACE: Duration = Duration::from_millis(250);

/// How long a dependent is held after a change to files none of which is
/// open: intelephense checks the open documents by itself about half a
/// second after it is told of the change.
pub const OWN_CHECK_PATIENCE: Duration = Duration::from_secs(1);

#[derive(Debug, Default)]
pub struct DiskChange {
    /// The open documents the change sent again.
    sent: Vec<String>,
    /// When the server was told.
    at: Option<Instant>,
    /// When the server had published every one of `sent`.
    taken_in_at: Option<Instant>,
    /// Open documents whose diagnostics were still awaited when the change
    /// came: their next publication answers what was sent before it.
    awaited: HashSet<String>,
}

impl DiskChange {
    pub fn new(sent: Vec<String>, awaited: HashSet<String>, now: Instant) -> Self {
        Self {
            sent,
            at: Some(now),
            taken_in_at: None,
            awaited,
        }
    }

    /// The open documents the change sent again.
    pub fn sent(&self) -> &[String] {
        &self.sent
    }

    /// The server has published every document the change sent: from now
    /// on it checks the others. False when it already had.
    pub fn taken_in(&mut self, now: Instant) -> bool {
        if self.at.is_none() || self.taken_in_at.is_some() {
            return false;
        }
        self.taken_in_at = Some(now);
        true
    }

    /// Whether a dependent should wait, at `now`, for the server to check
    /// it by itself rather than be sent again.
    pub fn awaits_own_check(&self, now: Instant) -> bool {
        let (from, patience) = match self.sent.is_empty() {
            true => (self.at, OWN_CHECK_PATIENCE),
            false => (self.taken_in_at, OWN_CHECK_GRACE),
        };
        from.is_some_and(|from| now < from + patience)
    }

    /// Whether a publication of `uri` at `now` is the server's own check
    /// of it after the change.
    pub fn is_own_check(&self, uri: &str, now: Instant) -> bool {
        let from = match self.sent.is_empty() {
            true => self.at,
            false => self.taken_in_at,
        };
        !self.sent.iter().any(|sent| sent == uri)
            && !self.awaited.contains(uri)
            && from.is_some_and(|from| now >= from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_changed_file_must_be_published_before_dependents_count_as_checked() {
        let start = Instant::now();
        let mut change = DiskChange::new(vec!["lib".into()], HashSet::new(), start);
        assert!(
            !change.is_own_check("main", start),
            "before the change is taken in"
        );
        assert!(!change.awaits_own_check(start));
        let taken = start + Duration::from_secs(1);
        assert!(change.taken_in(taken));
        assert!(!change.taken_in(taken), "once");
        assert!(change.is_own_check("main", taken));
        assert!(
            !change.is_own_check("lib", taken),
            "the changed file itself"
        );
        assert!(change.awaits_own_check(taken + OWN_CHECK_GRACE / 2));
        assert!(!change.awaits_own_check(taken + OWN_CHECK_GRACE));
    }

    #[test]
    fn with_no_changed_file_open_the_servers_checks_count_from_the_change() {
        let start = Instant::now();
        let awaited: HashSet<String> = ["pending".to_owned()].into_iter().collect();
        let change = DiskChange::new(Vec::new(), awaited, start);
        assert!(change.is_own_check("main", start + Duration::from_millis(500)));
        assert!(
            !change.is_own_check("pending", start + Duration::from_millis(500)),
            "a publication still owed for what was sent before"
        );
        assert!(change.awaits_own_check(start + OWN_CHECK_PATIENCE / 2));
        assert!(!change.awaits_own_check(start + OWN_CHECK_PATIENCE));
        assert!(!DiskChange::default().awaits_own_check(start));
    }
}
