//! The diagnostics cache and the rule that decides when a caller waiting
//! for fresh diagnostics may be answered.
//!
//! Every `publishDiagnostics` bumps its URI's generation. When the bridge
//! sends a change it records the generation at that moment; diagnostics are
//! fresh only once the generation has moved past it. How to tell that the
//! server is *done* publishing depends on what it has shown it does
//! ([`Strategy`]), and a short settle window, learned from how the server
//! published before, catches second rounds.

use crate::monitor::ProcessSample;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// At most this many diagnostics are kept per URI.
pub const MAX_PER_URI: usize = 1_000;
/// At most this many URIs are cached; the least recently published go.
pub const MAX_URIS: usize = 4_096;
/// Unexplained CPU work allowed while waiting: 10 CPU-seconds.
pub const TICK_BUDGET: u64 = 1_000;
/// How long a server that has never published may sit idle before it is
/// reported as publishing nothing.
pub const NO_PUBLISH_GRACE: Duration = Duration::from_millis(1_500);
/// Settle window while nothing is known about the server's rounds.
const DEFAULT_SETTLE: Duration = Duration::from_millis(90);
/// Settle window for a server seen publishing once per change, repeatedly.
const SINGLE_ROUND_SETTLE: Duration = Duration::from_millis(10);
/// Publications further apart than this are not rounds of one check.
const MAX_ROUND_GAP: Duration = Duration::from_secs(2);

/// How the end of a server's work on a change is recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// The server echoes the document version in its publications.
    Version,
    /// The server brackets its work with `$/progress`.
    Progress,
    /// Neither: the process's CPU samples tell when it is done.
    Process,
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Self::Version => "version",
            Self::Progress => "progress",
            Self::Process => "process",
        }
    }
}

/// What the server has shown about how it publishes.
#[derive(Debug, Default, Clone)]
pub struct Observations {
    pub saw_version: bool,
    pub published_ever: bool,
    /// The longest gap seen between two publications for one change.
    pub round_gap: Option<Duration>,
    /// Changes that ended with exactly one publication.
    pub single_round_changes: u32,
    /// Whether the Monitor can sample this process at all.
    pub sampled: bool,
}

impl Observations {
    pub fn strategy(&self, progress_seen: bool) -> Strategy {
        match (self.saw_version, progress_seen) {
            (true, _) => Strategy::Version,
            (false, true) => Strategy::Progress,
            (false, false) => Strategy::Process,
        }
    }

    /// How long after a publication to wait for another round.
    pub fn settle_window(&self, fixed: Option<Duration>) -> Duration {
        if let Some(fixed) = fixed {
            return fixed;
        }
        match self.round_gap {
            Some(gap) => (gap * 3 / 2 + Duration::from_millis(10)).min(MAX_ROUND_GAP),
            None if self.single_round_changes >= 3 => SINGLE_ROUND_SETTLE,
            None => DEFAULT_SETTLE,
        }
    }
}

/// One URI's latest publication and the change it must answer.
#[derive(Debug, Clone, Default)]
pub struct Entry {
    pub generation: u64,
    pub version: Option<i64>,
    pub items: Arc<[Value]>,
    pub published_at: Option<Instant>,
    /// The generation when the last change was sent.
    pub change_generation: u64,
    pub change_version: i64,
    epoch_publications: u32,
}

impl Entry {
    pub fn is_fresh(&self) -> bool {
        self.generation > self.change_generation
    }
}

/// Publications by URI, bounded.
#[derive(Debug, Default)]
pub struct Cache {
    entries: HashMap<String, Entry>,
    pub observations: Observations,
}

impl Cache {
    pub fn entry(&self, uri: &str) -> Option<&Entry> {
        self.entries.get(uri)
    }

    /// Records that a change (or open) of `uri` at `version` was sent.
    pub fn note_change(&mut self, uri: &str, version: i64) {
        let entry = self.entries.entry(uri.to_owned()).or_default();
        if entry.epoch_publications == 1 {
            self.observations.single_round_changes += 1;
        }
        entry.change_generation = entry.generation;
        entry.change_version = version;
        entry.epoch_publications = 0;
        self.evict();
    }

    /// Records one `publishDiagnostics`.
    pub fn publish(
        &mut self,
        uri: &str,
        version: Option<i64>,
        mut items: Vec<Value>,
        now: Instant,
    ) {
        items.truncate(MAX_PER_URI);
        let entry = self.entries.entry(uri.to_owned()).or_default();
        if let Some(previous) = entry.published_at
            && entry.epoch_publications > 0
        {
            let gap = now.duration_since(previous);
            if gap < MAX_ROUND_GAP {
                let longest = self.observations.round_gap.unwrap_or_default().max(gap);
                self.observations.round_gap = Some(longest);
            }
        }
        entry.generation += 1;
        entry.version = version;
        entry.items = items.into();
        entry.published_at = Some(now);
        entry.epoch_publications += 1;
        self.observations.published_ever = true;
        self.observations.saw_version |= version.is_some();
        self.evict();
    }

    fn evict(&mut self) {
        while self.entries.len() > MAX_URIS {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, entry)| entry.published_at)
                .map(|(uri, _)| uri.clone());
            match oldest {
                Some(uri) => self.entries.remove(&uri),
                None => return,
            };
        }
    }
}

/// Limits of one server's diagnostics waits.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// A fixed settle window instead of the learned one.
    pub fixed_settle: Option<Duration>,
    /// How long a server that has published before may sit idle without
    /// publishing for the change before the wait gives up.
    pub idle_limit: Duration,
}

/// What a waiting caller should get now.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Wait,
    /// Nothing to do before this instant unless something arrives.
    WaitUntil(Instant),
    Done(Arc<[Value]>),
    /// The server has never published and has gone idle.
    NoDiagnostics,
    /// The server kept working without explaining itself.
    Busy {
        ticks: u64,
    },
    /// The server went idle without publishing for the change.
    Silent,
}

/// A caller waiting for fresh diagnostics of one URI.
#[derive(Debug)]
pub struct Wait {
    pub uri: String,
    pub started: Instant,
    pub strategy: Strategy,
    /// CPU ticks spent with no progress reported, since the wait began.
    busy_ticks: u64,
    /// Consecutive samples that found the process idle.
    quiet_streak: u32,
    /// Since when the process has been idle, if it is.
    quiet_since: Option<Instant>,
    /// The last sample that confirmed the process idle.
    last_quiet: Option<Instant>,
}

/// Samples in a row that must find the process idle before it counts as
/// quiet: one 20 ms sample can fall between the ticks of a process that is
/// busy less than half the time.
const QUIET_SAMPLES: u32 = 2;

impl Wait {
    pub fn new(uri: String, strategy: Strategy, now: Instant) -> Self {
        Self {
            uri,
            started: now,
            strategy,
            busy_ticks: 0,
            quiet_streak: 0,
            quiet_since: None,
            last_quiet: None,
        }
    }

    /// Folds in one CPU sample of the server process.
    pub fn observe(&mut self, sample: &ProcessSample, progress_idle: bool, now: Instant) {
        let quiet = sample.delta_ticks == 0 && !sample.running;
        if quiet {
            self.quiet_streak += 1;
            self.quiet_since.get_or_insert(now);
            if self.quiet_streak >= QUIET_SAMPLES {
                self.last_quiet = Some(now);
            }
        } else {
            self.quiet_streak = 0;
            self.quiet_since = None;
            if progress_idle {
                self.busy_ticks += sample.delta_ticks;
            }
        }
    }

    pub fn verdict(
        &self,
        entry: Option<&Entry>,
        observations: &Observations,
        progress_idle: bool,
        rules: &Rules,
        now: Instant,
    ) -> Verdict {
        let fresh = entry.filter(|entry| entry.is_fresh());
        if let Some(entry) = fresh
            && let Some(published_at) = entry.published_at
            && self.signalled(entry, published_at, observations.sampled, progress_idle)
        {
            let due = published_at + observations.settle_window(rules.fixed_settle);
            return if now >= due {
                Verdict::Done(entry.items.clone())
            } else {
                Verdict::WaitUntil(due)
            };
        }
        if self.busy_ticks > TICK_BUDGET {
            return Verdict::Busy {
                ticks: self.busy_ticks,
            };
        }
        if fresh.is_some() || !progress_idle {
            return Verdict::Wait;
        }
        // Idle and nothing for this change yet: how long that may last
        // depends on whether the server publishes at all.
        let confirmed_quiet = self.quiet_streak >= QUIET_SAMPLES;
        let idle_from = match observations.sampled {
            true => self.quiet_since.filter(|_| confirmed_quiet),
            false => Some(self.started),
        };
        let Some(idle_from) = idle_from.map(|idle_from| idle_from.max(self.started)) else {
            return Verdict::Wait;
        };
        let (limit, verdict) = match observations.published_ever {
            false => (NO_PUBLISH_GRACE, Verdict::NoDiagnostics),
            true => (rules.idle_limit, Verdict::Silent),
        };
        if now >= idle_from + limit {
            verdict
        } else {
            Verdict::WaitUntil(idle_from + limit)
        }
    }

    fn signalled(
        &self,
        entry: &Entry,
        published_at: Instant,
        sampled: bool,
        progress_idle: bool,
    ) -> bool {
        let quiet_after_publish =
            !sampled || self.last_quiet.is_some_and(|quiet| quiet >= published_at);
        match self.strategy {
            Strategy::Version => match entry.version {
                Some(version) => version >= entry.change_version,
                None => quiet_after_publish,
            },
            Strategy::Progress => progress_idle,
            Strategy::Process => quiet_after_publish,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const URI: &str = "file:///w/a.py";
    const RULES: Rules = Rules {
        fixed_settle: None,
        idle_limit: Duration::from_secs(30),
    };

    fn sample(delta_ticks: u64) -> ProcessSample {
        ProcessSample {
            cpu_ticks: 0,
            delta_ticks,
            running: delta_ticks > 0,
            rss_bytes: 0,
        }
    }

    fn at(base: Instant, millis: u64) -> Instant {
        base + Duration::from_millis(millis)
    }

    #[test]
    fn a_publication_from_before_the_change_is_never_fresh() {
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.note_change(URI, 1);
        cache.publish(URI, Some(1), vec![json!("old")], now);
        cache.note_change(URI, 2);
        let wait = Wait::new(URI.into(), Strategy::Version, now);
        let verdict = wait.verdict(
            cache.entry(URI),
            &cache.observations,
            true,
            &RULES,
            at(now, 500),
        );
        assert_eq!(
            verdict,
            Verdict::WaitUntil(at(now, 30_000)),
            "nothing fresh: wait, bounded by the idle limit"
        );
        cache.publish(URI, Some(1), vec![json!("late and stale")], at(now, 10));
        let verdict = wait.verdict(
            cache.entry(URI),
            &cache.observations,
            true,
            &RULES,
            at(now, 500),
        );
        assert_eq!(
            verdict,
            Verdict::Wait,
            "a late publication for version 1 does not answer version 2"
        );
        cache.publish(URI, Some(2), vec![json!("new")], at(now, 20));
        let verdict = wait.verdict(
            cache.entry(URI),
            &cache.observations,
            true,
            &RULES,
            at(now, 500),
        );
        assert_eq!(verdict, Verdict::Done(vec![json!("new")].into()));
    }

    #[test]
    fn the_settle_window_delays_the_answer_and_learns_second_rounds() {
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.note_change(URI, 1);
        cache.publish(URI, Some(1), vec![], now);
        let wait = Wait::new(URI.into(), Strategy::Version, now);
        let due = at(now, 90);
        assert_eq!(
            wait.verdict(
                cache.entry(URI),
                &cache.observations,
                true,
                &RULES,
                at(now, 1)
            ),
            Verdict::WaitUntil(due)
        );
        cache.publish(URI, Some(1), vec![json!("second round")], at(now, 40));
        assert_eq!(
            cache.observations.round_gap,
            Some(Duration::from_millis(40))
        );
        assert_eq!(
            cache.observations.settle_window(None),
            Duration::from_millis(70)
        );
        assert_eq!(
            cache
                .observations
                .settle_window(Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
    }

    #[test]
    fn single_round_servers_settle_quickly() {
        let now = Instant::now();
        let mut cache = Cache::default();
        for version in 1..=4 {
            cache.note_change(URI, version);
            cache.publish(URI, Some(version), vec![], at(now, version as u64 * 5_000));
        }
        cache.note_change(URI, 5);
        assert_eq!(cache.observations.settle_window(None), SINGLE_ROUND_SETTLE);
    }

    #[test]
    fn progress_servers_are_done_when_their_work_ends() {
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.note_change(URI, 1);
        cache.publish(URI, None, vec![json!(1)], now);
        let wait = Wait::new(URI.into(), Strategy::Progress, now);
        assert_eq!(
            wait.verdict(
                cache.entry(URI),
                &cache.observations,
                false,
                &RULES,
                at(now, 100)
            ),
            Verdict::Wait
        );
        assert!(matches!(
            wait.verdict(
                cache.entry(URI),
                &cache.observations,
                true,
                &RULES,
                at(now, 100)
            ),
            Verdict::Done(_)
        ));
    }

    #[test]
    fn process_servers_are_done_when_quiet_after_publishing() {
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.observations.sampled = true;
        cache.note_change(URI, 1);
        let mut wait = Wait::new(URI.into(), Strategy::Process, now);
        wait.observe(&sample(30), true, at(now, 20));
        cache.publish(URI, None, vec![json!(1)], at(now, 30));
        wait.observe(&sample(2), true, at(now, 40));
        assert_eq!(
            wait.verdict(
                cache.entry(URI),
                &cache.observations,
                true,
                &RULES,
                at(now, 100)
            ),
            Verdict::Wait
        );
        wait.observe(&sample(0), true, at(now, 60));
        assert_eq!(
            wait.verdict(
                cache.entry(URI),
                &cache.observations,
                true,
                &RULES,
                at(now, 100)
            ),
            Verdict::Wait,
            "one idle sample is not quiet yet"
        );
        wait.observe(&sample(0), true, at(now, 80));
        assert!(matches!(
            wait.verdict(
                cache.entry(URI),
                &cache.observations,
                true,
                &RULES,
                at(now, 200)
            ),
            Verdict::Done(_)
        ));
    }

    #[test]
    fn unexplained_work_past_the_budget_fails_but_progress_explains_it() {
        let now = Instant::now();
        let cache = Cache {
            observations: Observations {
                sampled: true,
                published_ever: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut wait = Wait::new(URI.into(), Strategy::Process, now);
        wait.observe(&sample(900), false, at(now, 10));
        wait.observe(&sample(900), true, at(now, 20));
        assert_eq!(
            wait.verdict(None, &cache.observations, true, &RULES, at(now, 30)),
            Verdict::Wait
        );
        wait.observe(&sample(200), true, at(now, 40));
        assert_eq!(
            wait.verdict(None, &cache.observations, true, &RULES, at(now, 50)),
            Verdict::Busy { ticks: 1_100 }
        );
    }

    #[test]
    fn a_server_that_never_publishes_is_reported_after_going_idle() {
        let now = Instant::now();
        let cache = Cache {
            observations: Observations {
                sampled: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut wait = Wait::new(URI.into(), Strategy::Process, now);
        assert_eq!(
            wait.verdict(None, &cache.observations, true, &RULES, at(now, 5_000)),
            Verdict::Wait,
            "not idle yet"
        );
        wait.observe(&sample(0), true, at(now, 100));
        wait.observe(&sample(0), true, at(now, 120));
        let due = at(now, 100) + NO_PUBLISH_GRACE;
        assert_eq!(
            wait.verdict(None, &cache.observations, true, &RULES, at(now, 200)),
            Verdict::WaitUntil(due)
        );
        assert_eq!(
            wait.verdict(None, &cache.observations, true, &RULES, due),
            Verdict::NoDiagnostics
        );
    }

    #[test]
    fn a_publishing_server_that_goes_silent_is_given_up_on_after_the_idle_limit() {
        let now = Instant::now();
        let cache = Cache {
            observations: Observations {
                published_ever: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let wait = Wait::new(URI.into(), Strategy::Process, now);
        assert_eq!(
            wait.verdict(None, &cache.observations, true, &RULES, at(now, 1_000)),
            Verdict::WaitUntil(at(now, 30_000))
        );
        assert_eq!(
            wait.verdict(None, &cache.observations, true, &RULES, at(now, 30_000)),
            Verdict::Silent
        );
        assert_eq!(
            wait.verdict(None, &cache.observations, false, &RULES, at(now, 60_000)),
            Verdict::Wait,
            "progress explains the wait"
        );
    }

    #[test]
    fn caps_items_and_uris() {
        let mut cache = Cache::default();
        let now = Instant::now();
        cache.publish(URI, None, vec![json!(0); MAX_PER_URI + 5], now);
        assert_eq!(cache.entry(URI).unwrap().items.len(), MAX_PER_URI);
        for index in 0..MAX_URIS + 3 {
            cache.publish(
                &format!("file:///{index}"),
                None,
                vec![],
                at(now, index as u64),
            );
        }
        assert_eq!(cache.entries.len(), MAX_URIS);
        assert!(cache.entry(URI).is_none(), "the oldest URI went first");
    }

    #[test]
    fn strategy_follows_what_was_seen() {
        let mut observations = Observations::default();
        assert_eq!(observations.strategy(false), Strategy::Process);
        assert_eq!(observations.strategy(true), Strategy::Progress);
        observations.saw_version = true;
        assert_eq!(observations.strategy(true), Strategy::Version);
    }
}
