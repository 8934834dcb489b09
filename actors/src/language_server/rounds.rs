//! How a server publishes an edited file's diagnostics: in how many
//! rounds, and how far apart, learned from its recent checks.
//!
//! A check begins when a change to a document is sent and lasts while the
//! server publishes that document again and again for it. It ends at the
//! next change sent for another document (after which a publication may
//! answer that other change: a dependent re-checked because the file it
//! imports moved is not a second round of anything) or when the server
//! pauses longer than [`MAX_ROUND_GAP`]. A check overtaken by the next
//! change of its own document still takes late rounds that carry its
//! version, since an agent may edit again before the last round of the
//! edit before arrives. Only the last [`REMEMBERED`] checks count, so a
//! window learned under load comes back down once the server publishes
//! promptly again.
//!
//! A change of many files at once on disk (a checkout, a stash) has the
//! server check its open documents again, in rounds of its own: what
//! it publishes then says how it takes in a checkout, not how it checks
//! an edit. Checks under way when such a change lands, or begun within
//! [`MAX_ROUND_GAP`] of it, teach nothing.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Publications further apart than this are not rounds of one check.
pub const MAX_ROUND_GAP: Duration = Duration::from_secs(2);
/// How many of the latest checks the learned window follows.
const REMEMBERED: usize = 8;
/// How long after a round the next is waited for while the server has
/// not finished a single check: long enough for a quick second round.
const FIRST_CHECK_WINDOW: Duration = Duration::from_millis(90);

/// What one finished check showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Finished {
    rounds: u32,
    longest_gap: Duration,
}

/// A check still taking rounds.
#[derive(Debug, Clone)]
struct Open {
    uri: String,
    version: i64,
    /// Whether it answers an edit rather than an open.
    edit: bool,
    /// Whether a change of the workspace landed in it, so that its rounds
    /// may be the server's answer to that.
    disturbed: bool,
    sent: Instant,
    rounds: u32,
    last_round: Option<Instant>,
    longest_gap: Duration,
}

/// The server's recent checks.
#[derive(Debug, Default, Clone)]
pub struct Rounds {
    /// The check of the document whose change was sent last.
    open: Option<Open>,
    /// The check before it, when it was of the same document.
    overtaken: Option<Open>,
    recent: VecDeque<Finished>,
    /// Whether the server has finished checking an edit, one a change
    /// elsewhere landed in included.
    finished_a_check: bool,
    /// When many files last changed on disk at once.
    workspace_changed: Option<Instant>,
}

impl Rounds {
    /// A change of `uri` at `version` was sent (an edit, or an open).
    pub fn change_sent(&mut self, uri: &str, version: i64, edit: bool, now: Instant) {
        let overtaken = std::mem::take(&mut self.overtaken);
        self.finish(overtaken);
        let open = self.open.take();
        match open {
            Some(open) if open.uri == uri => self.overtaken = Some(open),
            other => self.finish(other),
        }
        let disturbed = self
            .workspace_changed
            .is_some_and(|changed| now.saturating_duration_since(changed) < MAX_ROUND_GAP);
        self.open = Some(Open {
            uri: uri.to_owned(),
            version,
            edit,
            disturbed,
            sent: now,
            rounds: 0,
            last_round: None,
            longest_gap: Duration::ZERO,
        });
    }

    /// The server published `uri`'s diagnostics, of `version` if it said.
    pub fn published(&mut self, uri: &str, version: Option<i64>, now: Instant) {
        let answers = |check: &Option<Open>| {
            check.as_ref().is_some_and(|check| {
                check.uri == uri && version.is_none_or(|version| version == check.version)
            })
        };
        if answers(&self.open) {
            let open = self.open.take();
            self.open = self.take_round(open, now);
        } else if version.is_some() && answers(&self.overtaken) {
            let overtaken = self.overtaken.take();
            self.overtaken = self.take_round(overtaken, now);
        }
    }

    /// Many files changed on disk at once: the checks under way, and
    /// those begun shortly after, are not learned from.
    pub fn workspace_changed(&mut self, now: Instant) {
        self.workspace_changed = Some(now);
        for check in [&mut self.open, &mut self.overtaken].into_iter().flatten() {
            check.disturbed = true;
        }
    }

    /// Whether an edit is being checked: a change was sent and the server
    /// has not paused for long since.
    pub fn checking_edit(&self, now: Instant) -> bool {
        self.open.as_ref().is_some_and(|open| {
            let last = open.last_round.unwrap_or(open.sent);
            open.edit && now.saturating_duration_since(last) < MAX_ROUND_GAP
        })
    }

    /// How long after its latest round a check that has published
    /// `rounds` may still take another: nothing once it has as many as
    /// recent checks took, else half as long again as the longest gap
    /// between their rounds.
    pub fn settle(&self, rounds: u32) -> Duration {
        if self.known().next().is_none() {
            // Sixteen agents editing side by side land their files in one
            // batch often enough that every check is disturbed: a server
            // seen finishing them is no longer new, and with nothing
            // learned one round is what it takes.
            return match self.finished_a_check {
                true => Duration::ZERO,
                false => FIRST_CHECK_WINDOW,
            };
        }
        if rounds >= self.expected() {
            return Duration::ZERO;
        }
        let longest = self
            .known()
            .map(|finished| finished.longest_gap)
            .max()
            .unwrap_or_default();
        (longest * 3 / 2 + Duration::from_millis(10)).min(MAX_ROUND_GAP)
    }

    /// How many rounds the recent checks took at most.
    pub fn expected(&self) -> u32 {
        self.known()
            .map(|finished| finished.rounds)
            .max()
            .unwrap_or(1)
            .max(1)
    }

    /// The recent checks, and the overtaken one as far as it got.
    fn known(&self) -> impl Iterator<Item = Finished> + '_ {
        let overtaken = self
            .overtaken
            .as_ref()
            .filter(|check| check.teaches())
            .map(Open::finished);
        self.recent.iter().copied().chain(overtaken)
    }

    /// Counts a round of `check`, or ends it after a long pause.
    fn take_round(&mut self, check: Option<Open>, now: Instant) -> Option<Open> {
        let mut check = check?;
        if let Some(last) = check.last_round {
            let gap = now.saturating_duration_since(last);
            if gap >= MAX_ROUND_GAP {
                self.finish(Some(check));
                return None;
            }
            check.longest_gap = check.longest_gap.max(gap);
        }
        check.rounds += 1;
        check.last_round = Some(now);
        Some(check)
    }

    fn finish(&mut self, check: Option<Open>) {
        // An open's publications say how the server loads a file (pyright
        // publishes a file opened during its start-up once from its first
        // pass and again after checking it, 0.4-0.7 s apart), not how it
        // checks an edit.
        let Some(check) = check.filter(|check| check.edit && check.rounds > 0) else {
            return;
        };
        self.finished_a_check = true;
        if !check.teaches() {
            return;
        }
        if self.recent.len() == REMEMBERED {
            self.recent.pop_front();
        }
        self.recent.push_back(check.finished());
    }
}

impl Open {
    /// Whether its rounds say how the server checks an edit.
    fn teaches(&self) -> bool {
        self.edit && !self.disturbed
    }

    fn finished(&self) -> Finished {
        Finished {
            rounds: self.rounds,
            longest_gap: self.longest_gap,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EDITED: &str = "file:///w/mathutil.py";
    const DEPENDENT: &str = "file:///w/app.py";

    fn at(base: Instant, millis: u64) -> Instant {
        base + Duration::from_millis(millis)
    }

    #[test]
    fn a_checkouts_rounds_teach_nothing() {
        let start = Instant::now();
        let mut rounds = Rounds::default();
        rounds.change_sent(EDITED, 1, true, start);
        rounds.published(EDITED, Some(1), at(start, 100));
        // The checkout: the open documents are sent again, and the server
        // publishes each twice, 300 ms apart, as it takes the rest in.
        rounds.workspace_changed(at(start, 1_000));
        rounds.change_sent(DEPENDENT, 2, true, at(start, 1_001));
        rounds.change_sent(EDITED, 3, true, at(start, 1_002));
        rounds.published(EDITED, Some(3), at(start, 1_100));
        rounds.published(EDITED, Some(3), at(start, 1_400));
        // The next edit, still within the checkout's reach, and its own.
        rounds.change_sent(EDITED, 4, true, at(start, 1_500));
        rounds.published(EDITED, Some(4), at(start, 1_600));
        rounds.published(EDITED, Some(4), at(start, 1_900));
        rounds.change_sent(EDITED, 5, true, at(start, 4_000));
        rounds.published(EDITED, Some(5), at(start, 4_100));
        rounds.change_sent(EDITED, 6, true, at(start, 5_000));
        assert_eq!(rounds.expected(), 1);
        assert_eq!(rounds.settle(1), Duration::ZERO);
    }

    #[test]
    fn a_dependents_publications_teach_nothing() {
        let start = Instant::now();
        let mut rounds = Rounds::default();
        rounds.change_sent(DEPENDENT, 1, true, start);
        rounds.published(DEPENDENT, Some(1), at(start, 100));
        for edit in 0..20u64 {
            let sent = 1_000 + edit * 1_500;
            rounds.change_sent(EDITED, edit as i64 + 2, true, at(start, sent));
            rounds.published(EDITED, Some(edit as i64 + 2), at(start, sent + 280));
            // The dependent is checked again at once, with its old version.
            rounds.published(DEPENDENT, Some(1), at(start, sent + 281));
        }
        rounds.change_sent(EDITED, 99, true, at(start, 40_000));
        assert_eq!(rounds.expected(), 1);
        assert_eq!(rounds.settle(1), Duration::ZERO);
    }

    #[test]
    fn second_rounds_are_learned_and_forgotten_after_prompt_checks() {
        let start = Instant::now();
        let mut rounds = Rounds::default();
        rounds.change_sent(EDITED, 1, true, start);
        rounds.published(EDITED, None, at(start, 100));
        rounds.published(EDITED, None, at(start, 1_100));
        rounds.change_sent(EDITED, 2, true, at(start, 2_000));
        assert_eq!(rounds.expected(), 2);
        assert_eq!(rounds.settle(1), Duration::from_millis(1_510));
        for version in 3..4 + REMEMBERED as i64 {
            rounds.published(EDITED, None, at(start, version as u64 * 1_000));
            rounds.change_sent(EDITED, version, true, at(start, version as u64 * 1_000 + 1));
        }
        assert_eq!(rounds.expected(), 1, "the slow check has been forgotten");
        assert_eq!(rounds.settle(1), Duration::ZERO);
    }

    #[test]
    fn a_late_round_of_an_overtaken_edit_is_still_learned() {
        let start = Instant::now();
        let mut rounds = Rounds::default();
        rounds.change_sent(EDITED, 1, true, start);
        rounds.published(EDITED, Some(1), at(start, 10));
        // The agent edits again before the second round of its first edit.
        rounds.change_sent(EDITED, 2, true, at(start, 20));
        rounds.published(EDITED, Some(1), at(start, 60));
        assert_eq!(rounds.expected(), 2);
        assert_eq!(rounds.settle(1), Duration::from_millis(85));
        rounds.published(EDITED, Some(2), at(start, 70));
        rounds.change_sent(DEPENDENT, 1, true, at(start, 80));
        rounds.published(EDITED, Some(2), at(start, 90));
        assert_eq!(
            rounds.recent.len(),
            2,
            "the overtaken check and the one another document's change ended"
        );
    }

    #[test]
    fn another_version_or_a_long_pause_ends_a_check() {
        let start = Instant::now();
        let mut rounds = Rounds::default();
        rounds.change_sent(EDITED, 1, true, start);
        rounds.published(EDITED, Some(1), at(start, 10));
        rounds.published(EDITED, Some(2), at(start, 20));
        rounds.change_sent(EDITED, 3, true, at(start, 25));
        rounds.published(EDITED, None, at(start, 30));
        rounds.published(EDITED, None, at(start, 30 + 2_500));
        rounds.change_sent(EDITED, 4, true, at(start, 3_000));
        assert_eq!(rounds.recent.len(), 2);
        assert_eq!(rounds.expected(), 1);
    }

    /// Edits of several agents landing in one batch look like a checkout,
    /// and teach nothing; but a server seen finishing them is no longer
    /// waited on as one never seen to.
    #[test]
    fn checks_disturbed_by_other_edits_end_the_first_window() {
        let start = Instant::now();
        let mut rounds = Rounds::default();
        for edit in 0..3u64 {
            let sent = edit * 100;
            rounds.workspace_changed(at(start, sent));
            rounds.change_sent(EDITED, edit as i64 + 1, true, at(start, sent + 1));
            if edit == 0 {
                assert_eq!(rounds.settle(1), FIRST_CHECK_WINDOW, "none finished yet");
            }
            rounds.published(EDITED, Some(edit as i64 + 1), at(start, sent + 10));
            rounds.change_sent(DEPENDENT, edit as i64 + 1, true, at(start, sent + 20));
        }
        assert!(rounds.recent.is_empty(), "nothing learned");
        assert_eq!(rounds.settle(1), Duration::ZERO);
    }

    #[test]
    fn a_server_not_yet_seen_finishing_a_check_gets_a_short_window() {
        let start = Instant::now();
        let mut rounds = Rounds::default();
        assert_eq!(rounds.settle(1), FIRST_CHECK_WINDOW);
        rounds.change_sent(EDITED, 1, false, start);
        rounds.published(EDITED, Some(1), at(start, 10));
        assert_eq!(rounds.settle(1), FIRST_CHECK_WINDOW, "still open");
        rounds.change_sent(EDITED, 2, true, at(start, 20));
        assert_eq!(
            rounds.settle(1),
            FIRST_CHECK_WINDOW,
            "an open teaches nothing"
        );
        rounds.published(EDITED, Some(2), at(start, 30));
        rounds.change_sent(EDITED, 3, true, at(start, 40));
        assert_eq!(rounds.settle(1), Duration::ZERO);
    }

    #[test]
    fn an_open_published_twice_during_start_up_teaches_nothing() {
        let start = Instant::now();
        let mut rounds = Rounds::default();
        rounds.change_sent(DEPENDENT, 1, false, start);
        rounds.published(DEPENDENT, Some(1), at(start, 1_200));
        rounds.published(DEPENDENT, Some(1), at(start, 1_870));
        rounds.change_sent(EDITED, 1, true, at(start, 2_500));
        rounds.published(EDITED, Some(1), at(start, 2_790));
        rounds.change_sent(EDITED, 2, true, at(start, 3_500));
        assert_eq!(rounds.expected(), 1);
        assert_eq!(
            rounds.settle(1),
            Duration::ZERO,
            "no 1 s wait for a second round"
        );
    }

    #[test]
    fn a_check_with_no_publication_is_not_remembered_nor_under_way_for_long() {
        let start = Instant::now();
        let mut rounds = Rounds::default();
        rounds.change_sent(EDITED, 1, true, start);
        assert!(rounds.checking_edit(at(start, 1_000)));
        assert!(
            !rounds.checking_edit(at(start, 2_000)),
            "a long pause ends the check"
        );
        rounds.change_sent(DEPENDENT, 1, true, at(start, 3_000));
        assert!(rounds.recent.is_empty());
        assert_eq!(rounds.expected(), 1);
    }
}
