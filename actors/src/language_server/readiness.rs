//! Whether a server can be asked yet: loading after start, and taking in
//! a change to the workspace. Pure state fed with CPU samples and
//! `$/progress`, so the rules are unit-tested without a process.
//!
//! A server is *loading* until its process has been idle for
//! [`WARM_UP_IDLE`] after the last thing that set it loading (its start,
//! the opening of its first document), and while any work-done progress
//! that began before then is still running, whatever its title says.
//! A server is *settling* from a change in the workspace until CPU samples
//! taken after the change find it quiet twice in a row and the work-done
//! progress begun since the change has ended. Work begun before the change
//! (clangd indexing the project) is not waited for.
//!
//! Loading work whose end never comes does not hold a server loading for
//! ever: once the process has been idle for [`STALLED_WORK_IDLE`] and the
//! server has answered a request since the work began, the work counts as
//! ended (pyright, after serving roots in turn, was seen "loading" for
//! 200 s with its CPU idle, every answer warned of).
//!
//! A server that says when it has found its files is loaded when it says
//! so, however busy its process: pyright and basedpyright log each
//! workspace's start (`Starting service instance "name"`) and the end of
//! its file discovery (`Found 120 source files`, `No source files
//! found.`), after which they answer workspace questions in full. Their
//! CPU alone cannot tell: another session's questions, or a check of an
//! open file, keep them busy long after.

use crate::process::ProcessSample;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// How long a new server must sit idle before it counts as done loading.
/// Servers pause between start-up phases (pyright waits on timers before
/// it discovers files), so one idle sample is not enough.
pub const WARM_UP_IDLE: Duration = Duration::from_millis(400);

/// Samples in a row that must find the process idle before it counts as
/// quiet: one 20 ms sample can fall between the ticks of a process that is
/// busy less than half the time.
pub const QUIET_SAMPLES: u32 = 2;

/// How long a server that has answered since its loading work began must
/// sit idle before that work counts as ended without its end.
pub const STALLED_WORK_IDLE: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub struct Readiness {
    /// Whether CPU samples come for this server.
    sampled: bool,
    /// Whether the server has been idle long enough since it was set
    /// loading.
    warmed_up: bool,
    /// When the server last began loading (its start, new folders).
    loading_started: Instant,
    /// The last event that may have set the server loading.
    loading_since: Instant,
    idle_since: Option<Instant>,
    /// When the last CPU sample was taken: a sample's ticks are those
    /// since then.
    sampled_at: Option<Instant>,
    /// Progress tokens that began while the server was loading, with
    /// when each began.
    loading_work: HashMap<String, Instant>,
    /// When the server last answered a request.
    answered_at: Option<Instant>,
    /// A workspace change the server has not yet been seen to take in.
    settling_since: Option<Instant>,
    /// What that change was.
    taking: Taking,
    /// Progress tokens that began since that change.
    settling_work: HashSet<String>,
    quiet_streak: u32,
    /// Whether the server last said it is not quiescent (rust-analyzer's
    /// `experimental/serverStatus`): loading in its own words.
    busy_by_its_word: bool,
    /// Workspaces the server said it began discovering and has not yet
    /// said it found the files of.
    discovering: u32,
}

/// What changed in a settling server's workspace, as answers say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taking {
    /// Files changed on disk.
    DiskChanges,
    /// Files opened for a question about the whole project, which a server
    /// that loads a project per open file (tsserver) may have to load.
    OpenedFiles,
}

impl Taking {
    pub fn says(self) -> &'static str {
        match self {
            Self::DiskChanges => "changes on disk",
            Self::OpenedFiles => "the files just opened",
        }
    }
}

impl Readiness {
    /// `sampled` is whether CPU samples will come; without them there is
    /// no telling when start-up work ends, so the server counts as loaded.
    pub fn new(now: Instant, sampled: bool) -> Self {
        Self {
            sampled,
            warmed_up: !sampled,
            loading_started: now,
            loading_since: now,
            idle_since: None,
            sampled_at: None,
            loading_work: HashMap::new(),
            answered_at: None,
            settling_since: None,
            taking: Taking::DiskChanges,
            settling_work: HashSet::new(),
            quiet_streak: 0,
            busy_by_its_word: false,
            discovering: 0,
        }
    }

    pub fn is_loading(&self) -> bool {
        !self.warmed_up || !self.loading_work.is_empty() || self.busy_by_its_word
    }

    /// The server said whether it is quiescent: while it says it is not, it
    /// is loading, however quiet its process, from when it first said so.
    pub fn server_status(&mut self, quiescent: bool, now: Instant) {
        if !quiescent && !self.busy_by_its_word {
            self.loading_started = now;
        }
        self.busy_by_its_word = !quiescent;
    }

    /// Folds in a line the server logged; `true` when it said it has
    /// found the files of every workspace it began, which ends loading.
    pub fn logged(&mut self, message: &str) -> bool {
        if message.starts_with("Starting service instance") {
            self.discovering = self.discovering.saturating_add(1);
            return false;
        }
        if self.discovering == 0 || !says_files_found(message) {
            return false;
        }
        self.discovering -= 1;
        let loaded = self.discovering == 0 && !self.warmed_up;
        if loaded {
            self.warmed_up = true;
        }
        loaded
    }

    pub fn is_settling(&self) -> bool {
        self.settling_since.is_some()
    }

    /// Since when the server has been taking in a change, if it is.
    pub fn settling_since(&self) -> Option<Instant> {
        self.settling_since
    }

    /// What the server is taking in, if it is settling.
    pub fn taking(&self) -> Option<Taking> {
        self.settling_since.map(|_| self.taking)
    }

    /// When the server last began loading.
    pub fn loading_started(&self) -> Instant {
        self.loading_started
    }

    /// Something that makes a server load (opening its first document)
    /// happened: it is loading again until it has been idle after it.
    pub fn reload(&mut self, now: Instant) {
        if !self.warmed_up {
            self.loading_since = now;
            self.idle_since = None;
        }
    }

    /// The server was given new workspace folders: it loads them as it
    /// loaded its first, and is loading until idle after this.
    pub fn load_again(&mut self, now: Instant) {
        self.warmed_up = !self.sampled;
        self.loading_started = now;
        self.loading_since = now;
        self.idle_since = None;
    }

    /// The workspace changed under the server.
    pub fn workspace_changed(&mut self, now: Instant, taking: Taking) {
        self.settling_since = Some(now);
        self.taking = taking;
        self.settling_work.clear();
        self.quiet_streak = 0;
    }

    /// Work-done progress began: while loading, it counts as loading;
    /// while settling, as taking the change in.
    pub fn progress_began(&mut self, token: &str, now: Instant) {
        if self.is_loading() {
            self.loading_work.insert(token.to_owned(), now);
        }
        if self.is_settling() {
            self.settling_work.insert(token.to_owned());
        }
    }

    pub fn progress_ended(&mut self, token: &str) {
        self.loading_work.remove(token);
        self.settling_work.remove(token);
    }

    /// The tokens of the loading work still running.
    pub fn loading_tokens(&self) -> impl Iterator<Item = &str> {
        self.loading_work.keys().map(String::as_str)
    }

    /// The server answered a request.
    pub fn answered(&mut self, now: Instant) {
        self.answered_at = Some(now);
    }

    /// Folds in one CPU sample taken at `now`.
    pub fn sample(&mut self, sample: &ProcessSample, now: Instant) {
        let idle = sample.delta_ticks == 0 && !sample.running;
        // No ticks since the sample before: idle since then, not only
        // now. Sampled once a second while nobody waits, a server idle
        // between two questions is seen loaded at the next question's
        // first sample, before another session's questions keep it busy.
        let interval_began = self.sampled_at.replace(now).unwrap_or(now);
        self.quiet_streak = if idle { self.quiet_streak + 1 } else { 0 };
        self.idle_since = match idle {
            true => Some(self.idle_since.unwrap_or(interval_began)),
            false => None,
        };
        let idle_enough = self.idle_since.is_some_and(|since| {
            now.saturating_duration_since(since.max(self.loading_since)) >= WARM_UP_IDLE
        });
        if idle_enough {
            self.warmed_up = true;
        }
        self.end_stalled_work(now);
        if self.quiet_streak >= QUIET_SAMPLES
            && self.settling_work.is_empty()
            && self.settling_since.is_some_and(|since| now > since)
        {
            self.settling_since = None;
        }
    }
}

impl Readiness {
    /// Ends the loading work the server has answered past and has sat
    /// idle beside for [`STALLED_WORK_IDLE`].
    fn end_stalled_work(&mut self, now: Instant) {
        let (Some(idle_since), Some(answered_at)) = (self.idle_since, self.answered_at) else {
            return;
        };
        if now.saturating_duration_since(idle_since) < STALLED_WORK_IDLE {
            return;
        }
        self.loading_work
            .retain(|_, began| *began >= answered_at || *began >= idle_since);
    }
}

/// `Found 1 source file`, `Found 120 source files`, `No source files
/// found.`: the end of a pyright workspace's file discovery.
fn says_files_found(message: &str) -> bool {
    let message = message.trim();
    if message == "No source files found." {
        return true;
    }
    message
        .strip_prefix("Found ")
        .and_then(|rest| rest.split_once(' '))
        .is_some_and(|(count, rest)| {
            count.bytes().all(|byte| byte.is_ascii_digit())
                && matches!(rest, "source file" | "source files")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn loading_ends_after_a_long_enough_idle_stretch() {
        let start = Instant::now();
        let mut readiness = Readiness::new(start, true);
        assert!(readiness.is_loading());
        readiness.sample(&sample(5), at(start, 100));
        readiness.sample(&sample(0), at(start, 200));
        readiness.sample(&sample(0), at(start, 450));
        assert!(
            readiness.is_loading(),
            "idle 350 ms, since the sample at 100"
        );
        readiness.sample(&sample(0), at(start, 500));
        assert!(!readiness.is_loading());
    }

    /// Sampled once a second while nobody waits: one sample that finds no
    /// ticks since the one before has seen a second of idleness.
    #[test]
    fn one_idle_sample_counts_the_whole_interval_before_it() {
        let start = Instant::now();
        let mut readiness = Readiness::new(start, true);
        readiness.sample(&sample(40), at(start, 1_000));
        assert!(readiness.is_loading());
        readiness.sample(&sample(0), at(start, 2_000));
        assert!(!readiness.is_loading());
    }

    #[test]
    fn a_server_that_says_it_is_busy_loads_until_it_says_it_is_not() {
        let start = Instant::now();
        let mut readiness = Readiness::new(start, true);
        readiness.server_status(false, at(start, 50));
        readiness.sample(&sample(0), at(start, 100));
        readiness.sample(&sample(0), at(start, 900));
        assert!(readiness.is_loading(), "quiet, but busy in its own words");
        assert_eq!(readiness.loading_started(), at(start, 50));
        readiness.server_status(true, at(start, 1_000));
        assert!(!readiness.is_loading());
    }

    #[test]
    fn opening_a_document_restarts_the_warm_up() {
        let start = Instant::now();
        let mut readiness = Readiness::new(start, true);
        readiness.sample(&sample(0), at(start, 100));
        readiness.reload(at(start, 400));
        readiness.sample(&sample(0), at(start, 550));
        assert!(
            readiness.is_loading(),
            "idle, but not for long since the open"
        );
        readiness.sample(&sample(9), at(start, 600));
        readiness.sample(&sample(0), at(start, 700));
        readiness.sample(&sample(0), at(start, 1_100));
        assert!(!readiness.is_loading());
    }

    #[test]
    fn progress_begun_while_loading_holds_whatever_its_title() {
        let start = Instant::now();
        let mut readiness = Readiness::new(start, true);
        readiness.progress_began("init", start);
        readiness.sample(&sample(0), at(start, 100));
        readiness.sample(&sample(0), at(start, 900));
        assert!(readiness.is_loading(), "the loading work still runs");
        readiness.progress_ended("init");
        assert!(!readiness.is_loading());
        readiness.progress_began("check", at(start, 950));
        assert!(
            !readiness.is_loading(),
            "work begun once ready is not loading"
        );
    }

    #[test]
    fn new_folders_set_a_loaded_server_loading_again() {
        let start = Instant::now();
        let mut readiness = Readiness::new(start, true);
        readiness.sample(&sample(0), at(start, 100));
        readiness.sample(&sample(0), at(start, 600));
        assert!(!readiness.is_loading());
        readiness.load_again(at(start, 700));
        assert!(readiness.is_loading());
        assert_eq!(readiness.loading_started(), at(start, 700));
        readiness.sample(&sample(0), at(start, 800));
        readiness.sample(&sample(0), at(start, 1_200));
        assert!(!readiness.is_loading());
    }

    #[test]
    fn a_server_busy_after_finding_the_files_of_every_workspace_is_loaded() {
        let start = Instant::now();
        let mut readiness = Readiness::new(start, true);
        assert!(
            !readiness.logged("Found 3 source files"),
            "no workspace began"
        );
        for began in [
            "Starting service instance \"a\"",
            "Starting service instance \"b\"",
        ] {
            assert!(!readiness.logged(began));
        }
        assert!(!readiness.logged("Found 1 source file"));
        readiness.sample(&sample(40), at(start, 1_000));
        assert!(
            readiness.is_loading(),
            "one workspace is still being discovered"
        );
        assert!(!readiness.logged("Found 1 sources of trouble"));
        assert!(readiness.logged("No source files found."));
        readiness.sample(&sample(40), at(start, 2_000));
        assert!(
            !readiness.is_loading(),
            "busy, but it said it has found them"
        );
    }

    #[test]
    fn a_server_given_new_folders_is_loaded_once_it_found_their_files() {
        let start = Instant::now();
        let mut readiness = Readiness::new(start, true);
        readiness.logged("Starting service instance \"a\"");
        readiness.logged("Found 12 source files");
        readiness.load_again(at(start, 500));
        assert!(readiness.is_loading());
        readiness.logged("Starting service instance \"b\"");
        assert!(readiness.logged("Found 4 source files"));
        assert!(!readiness.is_loading());
    }

    #[test]
    fn a_server_without_samples_is_never_loading() {
        let readiness = Readiness::new(Instant::now(), false);
        assert!(!readiness.is_loading());
    }

    #[test]
    fn loading_work_whose_end_never_comes_ends_once_answered_past_and_idle() {
        let start = Instant::now();
        let mut readiness = Readiness::new(start, true);
        readiness.progress_began("analysis", at(start, 50));
        readiness.sample(&sample(9), at(start, 1_000));
        readiness.sample(&sample(0), at(start, 2_000));
        readiness.sample(&sample(0), at(start, 30_000));
        assert!(
            readiness.is_loading(),
            "idle, but nothing answered since the work began"
        );
        readiness.answered(at(start, 30_500));
        readiness.sample(&sample(0), at(start, 31_000));
        assert!(!readiness.is_loading(), "answered past and idle 29 s");

        let mut busy = Readiness::new(start, true);
        busy.progress_began("analysis", at(start, 50));
        busy.answered(at(start, 500));
        busy.sample(&sample(9), at(start, 1_000));
        busy.sample(&sample(0), at(start, 2_000));
        busy.sample(&sample(0), at(start, 3_000));
        assert!(busy.is_loading(), "idle only 2 s");
        busy.sample(&sample(0), at(start, 7_000));
        assert!(!busy.is_loading());
    }

    #[test]
    fn a_workspace_change_settles_on_quiet_samples_taken_after_it() {
        let start = Instant::now();
        let mut readiness = Readiness::new(start, false);
        readiness.progress_began("indexing the project", start);
        readiness.workspace_changed(at(start, 100), Taking::DiskChanges);
        assert!(readiness.is_settling());
        readiness.sample(&sample(30), at(start, 120));
        readiness.sample(&sample(0), at(start, 140));
        assert!(readiness.is_settling(), "one quiet sample");
        readiness.progress_began("checking the change", at(start, 150));
        readiness.sample(&sample(0), at(start, 160));
        assert!(readiness.is_settling(), "the change's work still runs");
        readiness.progress_ended("checking the change");
        readiness.sample(&sample(0), at(start, 180));
        assert!(
            !readiness.is_settling(),
            "work begun before the change is not waited for"
        );
        assert_eq!(readiness.taking(), None);
    }

    #[test]
    fn what_is_taken_in_is_the_last_change() {
        let start = Instant::now();
        let mut readiness = Readiness::new(start, false);
        readiness.workspace_changed(at(start, 100), Taking::OpenedFiles);
        assert_eq!(readiness.taking(), Some(Taking::OpenedFiles));
        readiness.workspace_changed(at(start, 200), Taking::DiskChanges);
        assert_eq!(
            readiness.taking().map(Taking::says),
            Some("changes on disk")
        );
    }
}
