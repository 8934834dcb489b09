//! The diagnostics cache and the rule that decides when a caller waiting
//! for fresh diagnostics may be answered.
//!
//! Every `publishDiagnostics` bumps its URI's generation. When Windlass
//! sends a change it records the generation at that moment; diagnostics are
//! fresh only once the generation has moved past it. How to tell that the
//! server is *done* publishing depends on what it has shown it does
//! ([`Strategy`]); a server whose recent checks of edited files took more
//! than one round is waited on for the rounds still to come ([`Rounds`]).

use super::rounds::Rounds;
use crate::process::ProcessSample;
use crate::vocabulary::server_states::Strategy;
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
/// How long a publication without a version is held for a later one when
/// the change it follows was sent while the server's check of the text
/// before it was still out: the first may be that check's. Longer than
/// the delay with which servers that wait for typing to pause start a
/// check (500 ms for the CSS and HTML servers).
pub const SUPERSEDED_WINDOW: Duration = Duration::from_millis(1_000);
/// How long a server known only by its CPU must stay quiet after a
/// publication before it counts as done: its work comes in bursts (a
/// type checker's suggestions follow its errors), and a starved process
/// can look idle for a sample or two between them.
pub const QUIET_HOLD: Duration = Duration::from_millis(100);

/// What the server has shown about how it publishes.
#[derive(Debug, Default, Clone)]
pub struct Observations {
    pub saw_version: bool,
    pub published_ever: bool,
    /// Whether the server has reported progress begun during a check (not
    /// only while loading, which says nothing about its diagnostics).
    pub progress_in_checks: bool,
    /// Its recent checks of edited files.
    pub rounds: Rounds,
    /// Whether the Monitor can sample this process at all.
    pub sampled: bool,
    /// Whether its diagnostics are asked for rather than waited for.
    pub asking: Asking,
}

/// Whether a server's diagnostics are asked for (`textDocument/diagnostic`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Asking {
    /// Its publications are waited for; it may yet be asked.
    #[default]
    No,
    Yes,
    /// It refused to be asked, though it announced it could be: it is
    /// never asked again.
    Refused,
}

impl Observations {
    pub fn strategy(&self) -> Strategy {
        match (self.saw_version, self.progress_in_checks) {
            _ if self.asking == Asking::Yes => Strategy::Pull,
            (true, _) => Strategy::Version,
            (false, true) => Strategy::Progress,
            (false, false) => Strategy::Process,
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
    /// Publications answering the last change: of its version, or of none.
    rounds: u32,
    /// Whether any change was sent.
    changed: bool,
    /// Whether the last change was sent before anything answered the one
    /// before it.
    superseded: bool,
    /// Whether a caller was answered with this publication as final: until
    /// the next change or publication, it is the answer, with no wait for
    /// the server to go quiet again (under other sessions' questions it may
    /// never be).
    settled: bool,
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

    /// Records that a change of `uri` at `version` was sent: an edit, or
    /// (`edit` false) an open.
    pub fn note_change(&mut self, uri: &str, version: i64, edit: bool, now: Instant) {
        let entry = self.entries.entry(uri.to_owned()).or_default();
        entry.superseded = entry.changed && entry.generation == entry.change_generation;
        entry.changed = true;
        entry.change_generation = entry.generation;
        entry.change_version = version;
        entry.rounds = 0;
        entry.settled = false;
        self.observations
            .rounds
            .change_sent(uri, version, edit, now);
        self.evict();
    }

    /// A caller was answered with `uri`'s publication as final.
    pub fn settle(&mut self, uri: &str) {
        if let Some(entry) = self.entries.get_mut(uri) {
            entry.settled = true;
        }
    }

    /// Many files changed on disk at once.
    pub fn workspace_changed(&mut self, now: Instant) {
        self.observations.rounds.workspace_changed(now);
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
        // Possibly the check of the text before the change: it teaches
        // nothing of how many rounds a check of an edit takes.
        let earlier_check = entry.superseded && entry.rounds == 0 && version.is_none();
        // A check's last diagnostics again, under its version, after the
        // next change was sent (ty publishes an open document's again when
        // told of a change on disk): no late round of that check. Counted,
        // the pause before it, which is the client's own, would teach a
        // window that grows with every edit.
        let repeated = version.is_some_and(|version| version < entry.change_version)
            && entry.version == version
            && entry.published_at.is_some()
            && *entry.items == *items;
        entry.generation += 1;
        entry.settled = false;
        entry.version = version;
        entry.items = items.into();
        entry.published_at = Some(now);
        if version.is_none_or(|version| version == entry.change_version) && !repeated {
            entry.rounds += 1;
        }
        if !earlier_check && !repeated {
            self.observations.rounds.published(uri, version, now);
        }
        self.observations.published_ever = true;
        self.observations.saw_version |= version.is_some();
        self.evict();
    }

    /// Progress began: if an edit is being checked, the server brackets
    /// its checks with progress. Progress begun after an open is taken for
    /// loading, which says nothing about diagnostics.
    pub fn progress_began(&mut self, now: Instant) {
        if self.observations.rounds.checking_edit(now) {
            self.observations.progress_in_checks = true;
        }
    }

    /// Gives `uri` back the diagnostics it had, when what it holds now
    /// answered a text that was never written (another document's
    /// unsaved version, since taken back). Its generation stays: no
    /// change of its own is waiting for it.
    pub fn put_back(&mut self, uri: &str, items: Arc<[Value]>) {
        if let Some(entry) = self.entries.get_mut(uri) {
            entry.items = items;
        }
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
    /// The rest a server takes after input, if it takes one.
    pub rest: Option<Rest>,
    /// Whether the server can be asked for a document's diagnostics
    /// though it publishes them: one gone quiet without publishing for
    /// a change is asked rather than waited for until the idle limit.
    pub can_ask: bool,
}

/// A server's rest after the last message it was sent: until it ends, the
/// server may still go on with work it has not finished, so quiet is not
/// done, and input from anyone starts the rest again.
#[derive(Debug, Clone, Copy)]
pub struct Rest {
    pub last_input: Instant,
    pub length: Duration,
}

/// How much later than a wait's start input must come to be someone
/// else's, not the change the wait is for (a check sends several changes,
/// each waited for, one after another).
const OWN_INPUT_SLACK: Duration = Duration::from_millis(50);

impl Rest {
    pub fn until(&self) -> Instant {
        self.last_input + self.length
    }

    /// Whether input sent after `started` keeps the server resting past
    /// the rest the change itself began.
    fn prolonged_since(&self, started: Instant, now: Instant) -> bool {
        now < self.until() && self.last_input > started + OWN_INPUT_SLACK
    }
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
    /// The server, which can be asked, went quiet without publishing for
    /// the change: rust-analyzer does not publish diagnostics that did not
    /// change, so an edit of a comment is never published at all.
    Unpublished,
    /// The server has published for the change; only a sample finding it
    /// quiet is missing.
    Quieting,
    /// The server's work for the change is not over (nothing published
    /// for it yet, or its progress still running), and input sent since
    /// keeps it resting: it goes on only when no one asks it anything for
    /// a while.
    Resting,
    /// Published and quiet: done at this instant if it stays quiet.
    Settling(Instant),
}

/// A caller waiting for fresh diagnostics of one URI.
#[derive(Debug)]
pub struct Wait {
    pub uri: String,
    pub started: Instant,
    pub strategy: Strategy,
    /// CPU ticks spent with no progress reported, since the wait began or
    /// the server last published.
    busy_ticks: u64,
    /// Consecutive samples that found the process idle.
    quiet_streak: u32,
    /// Since when the process has been idle, if it is.
    quiet_since: Option<Instant>,
    /// The last sample that found the process idle with the one before.
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

    /// The server published diagnostics, of any document: it is working
    /// through its checks, not stuck (tsserver checked 16 agents' files
    /// in turn for longer than the budget before it reached the last).
    pub fn saw_publication(&mut self) {
        self.busy_ticks = 0;
    }

    /// The server was handed work its CPU does not show yet (the answer
    /// it waited for): it is quiet again only when samples after now say
    /// so.
    pub fn work_handed(&mut self) {
        self.quiet_streak = 0;
        self.quiet_since = None;
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
        if let Some(entry) = fresh.filter(|entry| entry.settled) {
            return Verdict::Done(entry.items.clone());
        }
        if let Some(entry) = fresh
            && let Some(published_at) = entry.published_at
            && let Some(settled) =
                self.settled_at(entry, published_at, observations, progress_idle, rules)
        {
            let mut settle = rules
                .fixed_settle
                .unwrap_or_else(|| observations.rounds.settle(entry.rounds));
            if entry.superseded && entry.version.is_none() && entry.rounds <= 1 {
                settle = settle.max(SUPERSEDED_WINDOW);
            }
            let due = settled.max(published_at + settle);
            return if now >= due {
                Verdict::Done(entry.items.clone())
            } else {
                Verdict::Settling(due)
            };
        }
        if self.busy_ticks > TICK_BUDGET {
            return Verdict::Busy {
                ticks: self.busy_ticks,
            };
        }
        if let Some(entry) = fresh
            && entry.published_at.is_some()
            && self.lacks_only_quiet(entry, observations, progress_idle)
        {
            return Verdict::Quieting;
        }
        if rules
            .rest
            .is_some_and(|rest| rest.prolonged_since(self.started, now))
        {
            return Verdict::Resting;
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
        let (limit, verdict) = match (observations.published_ever, rules.can_ask) {
            (false, _) => (NO_PUBLISH_GRACE, Verdict::NoDiagnostics),
            (true, true) => (NO_PUBLISH_GRACE, Verdict::Unpublished),
            (true, false) => (rules.idle_limit, Verdict::Silent),
        };
        if now >= idle_from + limit {
            verdict
        } else {
            Verdict::WaitUntil(idle_from + limit)
        }
    }

    /// When the server's work on the change counts as over by what it
    /// has shown, if it does yet: a publication of the change's version
    /// with no check still running under progress, and a sample after it
    /// (and after any rest the server takes after input) finding the
    /// process quiet; progress ended; or the process quiet for
    /// [`QUIET_HOLD`] after publishing. A version alone is not believed:
    /// pyright labels a publication with the document's version when it
    /// sends it, not with the one it checked, so a check of the old text
    /// under way when the change came (another agent's edit, or its own
    /// pass over the project, had it checking again), or of a closed
    /// file's text on disk when it is opened, arrives under the new version
    /// while it goes on to check the new text.
    fn settled_at(
        &self,
        entry: &Entry,
        published_at: Instant,
        observations: &Observations,
        progress_idle: bool,
        rules: &Rules,
    ) -> Option<Instant> {
        match (entry.version, self.strategy) {
            (None, Strategy::Progress) => progress_idle.then_some(published_at),
            _ if self.lacks_only_quiet(entry, observations, progress_idle) => {
                let hold = match entry.version {
                    Some(_) => Duration::ZERO,
                    None => QUIET_HOLD,
                };
                let from = rules
                    .rest
                    .map_or(published_at, |rest| rest.until().max(published_at));
                self.quiet_after(from, observations.sampled, hold)
            }
            _ => None,
        }
    }

    /// Whether what the server has published settles the wait once a
    /// sample finds the process quiet: a publication of the change's
    /// version with no check still running under progress, or one without
    /// a version from a server whose progress does not bracket its checks.
    fn lacks_only_quiet(
        &self,
        entry: &Entry,
        observations: &Observations,
        progress_idle: bool,
    ) -> bool {
        let checks_done = progress_idle || !observations.progress_in_checks;
        match (entry.version, self.strategy) {
            (Some(version), _) => version >= entry.change_version && checks_done,
            (None, Strategy::Progress) => false,
            (None, Strategy::Version | Strategy::Process | Strategy::Pull) => true,
        }
    }

    /// When the process will have been quiet for `hold` since it
    /// published, if a sample taken since found it quiet and it still is.
    fn quiet_after(&self, published_at: Instant, sampled: bool, hold: Duration) -> Option<Instant> {
        if !sampled {
            return Some(published_at + hold);
        }
        self.last_quiet.filter(|quiet| *quiet >= published_at)?;
        let since = self
            .quiet_since
            .filter(|_| self.quiet_streak >= QUIET_SAMPLES)?;
        Some(since.max(published_at) + hold)
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
        rest: None,
        can_ask: false,
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

    /// The verdict for `wait` with `progress_idle`, at `now`.
    fn ask(wait: &Wait, cache: &Cache, progress_idle: bool, now: Instant) -> Verdict {
        wait.verdict(
            cache.entry(URI),
            &cache.observations,
            progress_idle,
            &RULES,
            now,
        )
    }

    #[test]
    fn a_publication_from_before_the_change_is_never_fresh() {
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.note_change(URI, 1, true, now);
        cache.publish(URI, Some(1), vec![json!("old")], now);
        cache.note_change(URI, 2, true, at(now, 3_000));
        let wait = Wait::new(URI.into(), Strategy::Version, at(now, 3_000));
        assert_eq!(
            ask(&wait, &cache, true, at(now, 3_500)),
            Verdict::WaitUntil(at(now, 33_000)),
            "nothing fresh: wait, bounded by the idle limit"
        );
        cache.publish(URI, Some(1), vec![json!("late and stale")], at(now, 3_010));
        assert_eq!(
            ask(&wait, &cache, true, at(now, 3_500)),
            Verdict::Wait,
            "a late publication for version 1 does not answer version 2"
        );
        cache.publish(URI, Some(2), vec![json!("new")], at(now, 3_020));
        assert_eq!(
            ask(&wait, &cache, true, at(now, 3_020)),
            Verdict::Done(vec![json!("new")].into()),
            "the change's own version is final at once"
        );
    }

    #[test]
    fn a_version_is_final_once_a_sample_after_it_finds_the_server_quiet() {
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.observations.sampled = true;
        // An edit's check seen to its end: no first-check window.
        cache.note_change("file:///w/b.py", 2, true, now);
        cache.publish("file:///w/b.py", Some(2), vec![], now);
        cache.note_change(URI, 1, false, now);
        let mut wait = Wait::new(URI.into(), Strategy::Version, now);
        wait.observe(&sample(0), true, at(now, 20));
        wait.observe(&sample(0), true, at(now, 40));
        // The old text's result, under the new version.
        cache.publish(URI, Some(1), vec![], at(now, 45));
        assert_eq!(ask(&wait, &cache, true, at(now, 45)), Verdict::Quieting);
        wait.observe(&sample(4), true, at(now, 60));
        wait.observe(&sample(0), true, at(now, 80));
        cache.publish(URI, Some(1), vec![json!("error")], at(now, 85));
        wait.observe(&sample(0), true, at(now, 100));
        assert_eq!(
            ask(&wait, &cache, true, at(now, 100)),
            Verdict::Done(vec![json!("error")].into())
        );
    }

    #[test]
    fn a_server_kept_resting_by_others_input_is_resting_not_silent() {
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.observations.published_ever = true;
        cache.note_change(URI, 1, true, now);
        let wait = Wait::new(URI.into(), Strategy::Version, now);
        let rest = |last_input| Rules {
            rest: Some(Rest {
                last_input,
                length: Duration::from_millis(300),
            }),
            ..RULES
        };
        let verdict = |rules: &Rules, when| {
            wait.verdict(cache.entry(URI), &cache.observations, true, rules, when)
        };
        assert_eq!(
            verdict(&rest(now), at(now, 100)),
            Verdict::WaitUntil(at(now, 30_000)),
            "the change's own rest"
        );
        assert_eq!(
            verdict(&rest(at(now, 250)), at(now, 400)),
            Verdict::Resting,
            "another session's question at 250 ms"
        );
        assert_eq!(
            verdict(&rest(at(now, 250)), at(now, 600)),
            Verdict::WaitUntil(at(now, 30_000)),
            "rested"
        );
    }

    #[test]
    fn quiet_while_a_server_rests_after_input_is_not_done() {
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.observations.sampled = true;
        cache.note_change("file:///w/b.py", 2, true, now);
        cache.publish("file:///w/b.py", Some(2), vec![], now);
        cache.note_change(URI, 1, false, now);
        let mut wait = Wait::new(URI.into(), Strategy::Version, now);
        // Read as another file's import only: its type errors are to come.
        cache.publish(URI, Some(1), vec![], at(now, 400));
        let resting = Rules {
            rest: Some(Rest {
                last_input: at(now, 200),
                length: Duration::from_millis(300),
            }),
            ..RULES
        };
        let ask_resting = |wait: &Wait, cache: &Cache, when| {
            wait.verdict(cache.entry(URI), &cache.observations, true, &resting, when)
        };
        wait.observe(&sample(0), true, at(now, 420));
        wait.observe(&sample(0), true, at(now, 440));
        assert_eq!(
            ask_resting(&wait, &cache, at(now, 440)),
            Verdict::Quieting,
            "a request at 200 ms lets it rest until 500 ms"
        );
        wait.observe(&sample(5), true, at(now, 520));
        cache.publish(URI, Some(1), vec![json!("error")], at(now, 530));
        wait.observe(&sample(0), true, at(now, 540));
        wait.observe(&sample(0), true, at(now, 560));
        assert_eq!(
            ask_resting(&wait, &cache, at(now, 560)),
            Verdict::Done(vec![json!("error")].into())
        );
    }

    #[test]
    fn an_answer_given_stands_until_the_next_change_or_publication() {
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.observations.sampled = true;
        cache.note_change(URI, 1, false, now);
        cache.publish(URI, Some(1), vec![json!("error")], at(now, 10));
        cache.settle(URI);
        // Another session's questions keep the server busy: no quiet sample.
        let mut wait = Wait::new(URI.into(), Strategy::Version, at(now, 500));
        wait.observe(&sample(3), true, at(now, 520));
        assert_eq!(
            ask(&wait, &cache, true, at(now, 520)),
            Verdict::Done(vec![json!("error")].into())
        );
        cache.publish(URI, Some(1), vec![], at(now, 530));
        assert_eq!(ask(&wait, &cache, true, at(now, 540)), Verdict::Quieting);
        cache.settle(URI);
        cache.note_change(URI, 2, true, at(now, 550));
        assert_eq!(ask(&wait, &cache, true, at(now, 560)), Verdict::Wait);
    }

    #[test]
    fn a_dependents_publications_never_delay_the_edited_files_answer() {
        const DEPENDENT: &str = "file:///w/app.py";
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.note_change(DEPENDENT, 1, true, now);
        cache.publish(DEPENDENT, Some(1), vec![], at(now, 50));
        for edit in 0..200u64 {
            let sent = at(now, 1_000 + edit * 400);
            let version = edit as i64 + 1;
            cache.note_change(URI, version, true, sent);
            let wait = Wait::new(URI.into(), Strategy::Version, sent);
            let published = sent + Duration::from_millis(280);
            cache.publish(URI, Some(version), vec![json!(edit)], published);
            // The importer is checked again at once, as pyright does.
            cache.publish(DEPENDENT, Some(1), vec![], published);
            cache.publish(
                DEPENDENT,
                Some(1),
                vec![],
                published + Duration::from_millis(150),
            );
            assert!(
                matches!(ask(&wait, &cache, true, published), Verdict::Done(_)),
                "edit {edit} answered at its publication"
            );
        }
    }

    #[test]
    fn a_server_seen_publishing_in_rounds_is_waited_on_for_the_next_round() {
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.note_change(URI, 1, true, now);
        cache.publish(URI, Some(1), vec![], at(now, 10));
        cache.publish(URI, Some(1), vec![json!("flycheck")], at(now, 410));
        cache.note_change(URI, 2, true, at(now, 1_000));
        let wait = Wait::new(URI.into(), Strategy::Version, at(now, 1_000));
        cache.publish(URI, Some(2), vec![], at(now, 1_010));
        assert_eq!(
            ask(&wait, &cache, true, at(now, 1_010)),
            Verdict::Settling(at(now, 1_010 + 610)),
            "half as long again as the gap seen, plus 10 ms"
        );
        cache.publish(URI, Some(2), vec![json!("flycheck")], at(now, 1_300));
        assert_eq!(
            ask(&wait, &cache, true, at(now, 1_300)),
            Verdict::Done(vec![json!("flycheck")].into()),
            "all the rounds are in"
        );
        let fixed = Rules {
            fixed_settle: Some(Duration::from_secs(2)),
            ..RULES
        };
        let verdict = wait.verdict(
            cache.entry(URI),
            &cache.observations,
            true,
            &fixed,
            at(now, 1_300),
        );
        assert_eq!(verdict, Verdict::Settling(at(now, 3_300)), "a fixed window");
    }

    #[test]
    fn progress_servers_are_done_when_their_work_ends() {
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.note_change(URI, 1, true, now);
        cache.progress_began(at(now, 5));
        assert_eq!(cache.observations.strategy(), Strategy::Progress);
        cache.publish(URI, None, vec![json!(1)], now);
        let wait = Wait::new(URI.into(), Strategy::Progress, now);
        assert_eq!(ask(&wait, &cache, false, at(now, 100)), Verdict::Wait);
        assert!(matches!(
            ask(&wait, &cache, true, at(now, 100)),
            Verdict::Done(_)
        ));
    }

    #[test]
    fn progress_after_an_open_says_nothing_about_checks() {
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.progress_began(now);
        cache.note_change(URI, 1, false, now);
        cache.progress_began(at(now, 10));
        assert_eq!(cache.observations.strategy(), Strategy::Process);
    }

    #[test]
    fn process_servers_are_done_when_quiet_for_a_while_after_publishing() {
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.observations.sampled = true;
        cache.note_change(URI, 1, true, now);
        let mut wait = Wait::new(URI.into(), Strategy::Process, now);
        wait.observe(&sample(30), true, at(now, 20));
        cache.publish(URI, None, vec![json!(1)], at(now, 30));
        wait.observe(&sample(2), true, at(now, 40));
        assert_eq!(ask(&wait, &cache, true, at(now, 100)), Verdict::Quieting);
        wait.observe(&sample(0), true, at(now, 60));
        assert_eq!(
            ask(&wait, &cache, true, at(now, 100)),
            Verdict::Quieting,
            "one idle sample is not quiet yet"
        );
        wait.observe(&sample(0), true, at(now, 80));
        let due = at(now, 60) + QUIET_HOLD;
        assert_eq!(
            ask(&wait, &cache, true, at(now, 80)),
            Verdict::Settling(due)
        );
        // A type checker going on to its next round.
        wait.observe(&sample(3), true, at(now, 100));
        assert_eq!(
            ask(&wait, &cache, true, due),
            Verdict::Quieting,
            "busy again"
        );
        wait.observe(&sample(0), true, at(now, 120));
        wait.observe(&sample(0), true, at(now, 140));
        assert!(matches!(
            ask(&wait, &cache, true, at(now, 120) + QUIET_HOLD),
            Verdict::Done(_)
        ));
    }

    #[test]
    fn a_check_of_the_text_before_a_change_does_not_answer_it() {
        let now = Instant::now();
        let mut cache = Cache::default();
        cache.note_change(URI, 1, false, now);
        // The open's check is still out when the edit is sent; its
        // publication, without a version, arrives after the edit.
        cache.note_change(URI, 2, true, at(now, 300));
        let wait = Wait::new(URI.into(), Strategy::Process, at(now, 300));
        cache.publish(URI, None, vec![], at(now, 350));
        let held = at(now, 350) + SUPERSEDED_WINDOW;
        assert_eq!(
            ask(&wait, &cache, true, at(now, 500)),
            Verdict::Settling(held)
        );
        // The edit's own check, half a second after it, is the answer.
        cache.publish(URI, None, vec![json!("broken")], at(now, 850));
        assert_eq!(
            ask(&wait, &cache, true, at(now, 5_000)),
            Verdict::Done(vec![json!("broken")].into())
        );
        // An edit sent after the last check answered is not held.
        let mut answered = Cache::default();
        answered.note_change(URI, 1, false, now);
        answered.publish(URI, None, vec![], at(now, 500));
        answered.note_change(URI, 2, true, at(now, 2_000));
        assert!(!answered.entry(URI).unwrap().superseded);
        assert!(cache.entry(URI).unwrap().superseded);
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
    fn a_publication_of_any_document_starts_the_budget_again() {
        let now = Instant::now();
        let observations = Observations {
            sampled: true,
            published_ever: true,
            ..Default::default()
        };
        let mut wait = Wait::new(URI.into(), Strategy::Process, now);
        wait.observe(&sample(900), true, at(now, 10));
        wait.saw_publication();
        wait.observe(&sample(900), true, at(now, 20));
        assert_eq!(
            wait.verdict(None, &observations, true, &RULES, at(now, 30)),
            Verdict::Wait
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
    fn a_server_that_can_be_asked_is_asked_once_quiet_without_publishing() {
        let now = Instant::now();
        let cache = Cache {
            observations: Observations {
                published_ever: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let asked = Rules {
            can_ask: true,
            ..RULES
        };
        let wait = Wait::new(URI.into(), Strategy::Version, now);
        let due = now + NO_PUBLISH_GRACE;
        assert_eq!(
            wait.verdict(None, &cache.observations, true, &asked, at(now, 100)),
            Verdict::WaitUntil(due)
        );
        assert_eq!(
            wait.verdict(None, &cache.observations, true, &asked, due),
            Verdict::Unpublished
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
    fn the_last_publication_again_after_the_next_change_is_no_round() {
        let now = Instant::now();
        let mut cache = Cache::default();
        let mut previous: Vec<Value> = Vec::new();
        for edit in 0..12u64 {
            let sent = at(now, edit * 1_000);
            let version = edit as i64 + 1;
            cache.note_change(URI, version, true, sent);
            if edit > 0 {
                // Told of this edit on disk, it publishes the last one's
                // diagnostics again, under its version.
                cache.publish(URI, Some(version - 1), previous.clone(), sent);
            }
            let items = vec![json!(format!("problem of edit {edit}"))];
            let wait = Wait::new(URI.into(), Strategy::Version, sent);
            let published = sent + Duration::from_millis(40);
            cache.publish(URI, Some(version), items.clone(), published);
            cache.publish(URI, Some(version), items.clone(), published);
            let soon = published + Duration::from_millis(100);
            assert!(
                matches!(ask(&wait, &cache, true, soon), Verdict::Done(_)),
                "edit {edit} answered soon after its publication"
            );
            previous = items;
        }
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
        assert_eq!(observations.strategy(), Strategy::Process);
        observations.progress_in_checks = true;
        assert_eq!(observations.strategy(), Strategy::Progress);
        observations.saw_version = true;
        assert_eq!(observations.strategy(), Strategy::Version);
    }
}
