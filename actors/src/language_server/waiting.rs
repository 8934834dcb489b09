//! Callers who wait: for fresh diagnostics after a change, and for a
//! server to be able to answer truthfully before it is asked anything.
//!
//! Each diagnostics caller is parked with a [`Wait`]; every event that
//! could settle it (a publication, progress, a CPU sample, a timer) runs
//! [`State::check_waits`], which asks each wait for its verdict. A request
//! is held while the server is loading, while it takes in a change on
//! disk, or until it has published a document sent again after such a
//! change; the same events release it, and its deadline releases it
//! whatever the server is doing. While anyone waits, the Monitor samples
//! this server fast.

use super::diagnostics::{Asking, Rest, Rules, Verdict, Wait};
use super::disk_change::{DiskChange, OWN_CHECK_GRACE, OWN_CHECK_PATIENCE};
use super::related;
use super::{Admission, Held, HeldDiagnostics, Parked, Phase, State};
use crate::error::{Error, Result};
use crate::language::{FILE_QUESTIONS, WhileLoading};
use crate::lsp::protocol::{Capabilities, Feature};
use crate::messages::language_server::{
    Call, DIAGNOSTICS_HARD_LIMIT, DiagnosticsCall, DiagnosticsReply, LanguageServerMsg,
    ServerRequest, Work,
};
use crate::messages::monitor::MonitorMsg;
use crate::process::ProcessSample;
use ractor::ActorRef;
use serde_json::Value;
use std::time::{Duration, Instant};

/// How long a document sent again after a change elsewhere is waited for
/// once the server has gone quiet without publishing it.
const AWAIT_QUIET_LIMIT: Duration = Duration::from_secs(1);

/// How long requests wait for a server to go quiet after a change on disk.
const SETTLE_PATIENCE: Duration = Duration::from_secs(3);

impl State {
    pub(super) fn diagnostics(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        call: DiagnosticsCall,
    ) {
        let capabilities = match self.admit() {
            Admission::Ready(capabilities) => capabilities,
            other => return self.defer(myself, other, Work::Diagnostics(call)),
        };
        if self.pulls() {
            match self.spec.tsserver_commands {
                false => return self.pull_diagnostics(myself, call, Vec::new()),
                true if self.asks_tsserver(&call.document.language_id) => {
                    return self.ask_tsserver_diagnostics(myself, call);
                }
                // A plugin's language: its publications are waited for.
                true => {}
            }
        }
        if self.holds_dependent(&call.document.uri) {
            let deadline = Instant::now() + SETTLE_PATIENCE;
            self.held_diagnostics
                .push(HeldDiagnostics { call, deadline });
            myself.send_after(SETTLE_PATIENCE, || LanguageServerMsg::ReleaseHeld);
            self.tell_monitor_urgency();
            return;
        }
        self.wait_for_diagnostics(myself, call, &capabilities);
    }

    /// Whether a caller's document must wait before it is sent again. A
    /// dependent sent while the server still takes in the file it depends
    /// on is checked against what the server knew before: intelephense
    /// answered "no problems" for a caller of a method just renamed. It
    /// re-reads a changed file after a pause with its CPU idle, so only its
    /// publication of that file says it has taken the change in. Servers
    /// that check dependents themselves (pyright, tsserver) are not held:
    /// by then they have published the dependent, and one that does not
    /// publish unchanged diagnostics again would publish nothing more. A
    /// dependent not yet open is held too: opened before the server has
    /// taken in the change, graphql-lsp checked an operation against the
    /// schema as it was.
    fn holds_dependent(&self, uri: &str) -> bool {
        if !self.spec.checks_only_what_changed {
            return false;
        }
        let taking_in = self.settling() || !self.changes_taken_in();
        match self.documents.is_open(uri) {
            false => taking_in,
            true => {
                self.documents.is_stale(uri)
                    && (taking_in || self.disk_change.awaits_own_check(Instant::now()))
            }
        }
    }

    /// A change on disk that sent the open documents `sent` again: a
    /// server that checks only what changed may check the others by itself
    /// once it has taken the change in. Other servers keep no record of it.
    pub(super) fn start_disk_change(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        sent: &[&str],
    ) {
        if !self.spec.checks_only_what_changed {
            return;
        }
        let awaited = self
            .documents
            .uris()
            .filter(|uri| {
                self.diagnostics
                    .entry(uri)
                    .is_some_and(|entry| !entry.is_fresh())
            })
            .map(str::to_owned)
            .collect();
        let sent = sent.iter().map(|uri| (*uri).to_owned()).collect();
        self.disk_change = DiskChange::new(sent, awaited, Instant::now());
        if self.disk_change.sent().is_empty() {
            myself.send_after(OWN_CHECK_PATIENCE, || LanguageServerMsg::ReleaseHeld);
        }
    }

    /// A publication of `uri` by a server that checks only what changed:
    /// the last of the changed documents' starts the grace in which the
    /// server may check the others by itself; one of theirs after that is
    /// that check, so the document need not be sent again.
    pub(super) fn note_taken_in(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        uri: &str,
        now: Instant,
    ) {
        if !self.spec.checks_only_what_changed {
            return;
        }
        if self.disk_change.is_own_check(uri, now) {
            self.documents.checked_again(uri);
        } else if self.disk_change.sent().iter().any(|sent| sent == uri)
            && self.changes_taken_in()
            && self.disk_change.taken_in(now)
        {
            myself.send_after(OWN_CHECK_GRACE, || LanguageServerMsg::ReleaseHeld);
        }
    }

    /// Whether the server has published every open document that the
    /// last change on disk sent it again.
    fn changes_taken_in(&self) -> bool {
        self.disk_change.sent().iter().all(|uri| {
            self.diagnostics
                .entry(uri)
                .is_none_or(|entry| entry.is_fresh())
        })
    }

    /// Sends the document as it is now and parks the caller until the
    /// server's diagnostics of it are fresh.
    fn wait_for_diagnostics(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        call: DiagnosticsCall,
        capabilities: &Capabilities,
    ) {
        let DiagnosticsCall {
            session,
            document,
            reply,
        } = call;
        let uri = document.uri.clone();
        self.sync_document(document.clone(), capabilities);
        let id = self.next_wait;
        self.next_wait += 1;
        self.waits.insert(
            id,
            Parked {
                wait: Wait::new(uri, self.strategy(), Instant::now()),
                session,
                document,
                reply,
            },
        );
        self.check_waits(myself);
    }

    pub(super) fn activity(&mut self, myself: &ActorRef<LanguageServerMsg>, sample: ProcessSample) {
        let now = Instant::now();
        self.last_sample = Some(sample);
        self.diagnostics.observations.sampled = true;
        let progress_idle = self.progress.is_idle();
        self.readiness.sample(&sample, now);
        if !self.readiness.is_settling() {
            self.documents
                .give_up_awaiting(now.checked_sub(AWAIT_QUIET_LIMIT).unwrap_or(now));
        }
        // CPU spent loading is the server's start-up, not unexplained work
        // on a change.
        // Nor is CPU spent while requests are at the server: it may be
        // answering them.
        let explained =
            !progress_idle || self.loading() || self.relayed > 0 || !self.pending.is_empty();
        for parked in self.waits.values_mut() {
            parked.wait.observe(&sample, !explained, now);
        }
        self.release_ready(myself);
        self.check_waits(myself);
    }

    /// The server was handed work (an answer it waited for): its waits
    /// count it quiet only from the samples after now.
    pub(super) fn work_handed(&mut self) {
        for parked in self.waits.values_mut() {
            parked.wait.work_handed();
        }
    }

    /// Answers every wait whose verdict is in, and arranges to look again
    /// when the earliest remaining one falls due.
    pub(super) fn check_waits(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        let now = Instant::now();
        let rules = Rules {
            fixed_settle: self.timeouts.fixed_settle,
            idle_limit: self.timeouts.request,
            rest: self
                .spec
                .rests_after_input
                .zip(self.transport.last_sent())
                .map(|(length, last_input)| Rest { last_input, length }),
            can_ask: self.can_ask(),
        };
        // While the server loads, waits on another's answer, or is about
        // to begin a save's check, its silence says nothing yet.
        let busy = !self.progress.is_idle() || self.loading() || self.relayed > 0;
        let save_check = self.save_check.awaited_until(now, busy);
        let progress_idle = !busy && save_check.is_none();
        let mut settled = Vec::new();
        let mut expired = Vec::new();
        let mut quieting = false;
        let mut earliest: Option<Instant> = save_check.filter(|_| !self.waits.is_empty());
        for (id, parked) in &self.waits {
            // The hard limit shares the waits' one timer: a timer per wait
            // would be a task asleep for the whole limit.
            let limit = parked.wait.started + DIAGNOSTICS_HARD_LIMIT;
            if limit <= now {
                expired.push(*id);
                continue;
            }
            earliest = Some(earliest.map_or(limit, |e| e.min(limit)));
            let entry = self.diagnostics.entry(&parked.wait.uri);
            match parked.wait.verdict(
                entry,
                &self.diagnostics.observations,
                progress_idle,
                &rules,
                now,
            ) {
                Verdict::Wait => {}
                Verdict::Quieting | Verdict::Resting => quieting = true,
                Verdict::Settling(due) => {
                    quieting = true;
                    earliest = Some(earliest.map_or(due, |e| e.min(due)));
                }
                Verdict::WaitUntil(due) => earliest = Some(earliest.map_or(due, |e| e.min(due))),
                verdict => settled.push((*id, verdict)),
            }
        }
        for (id, verdict) in settled {
            if let Some(parked) = self.waits.remove(&id) {
                if matches!(verdict, Verdict::Done(_)) {
                    self.diagnostics.settle(&parked.wait.uri);
                }
                if verdict == Verdict::NoDiagnostics && self.pull_instead() {
                    self.pull_diagnostics(myself, parked.into_call(), Vec::new());
                    continue;
                }
                if verdict == Verdict::Unpublished {
                    let besides = self.published_beside_asked(&parked.wait.uri);
                    self.pull_diagnostics(myself, parked.into_call(), besides);
                    continue;
                }
                let file_problem = self.coverage.problem(&parked.wait.uri);
                let warnings = self.coverage.answer_warnings(&self.spec.label());
                let answer = self
                    .diagnostics_answer(verdict)
                    .map(|reply| DiagnosticsReply {
                        file_problem,
                        warnings,
                        ..reply
                    });
                let _gone = parked.reply.send(answer);
            }
        }
        for id in expired {
            self.expire_wait(id);
        }
        self.hold_requests_while_quieting(myself, quieting, now);
        if let Some(due) = earliest
            && self.next_check.is_none_or(|scheduled| due < scheduled)
        {
            self.next_check = Some(due);
            myself.send_after(due.saturating_duration_since(now), || {
                LanguageServerMsg::CheckDiagnostics
            });
        }
        self.tell_monitor_urgency();
    }

    /// Opens a window without new requests while a wait lacks only a
    /// quiet sample, and ends it once none does.
    fn hold_requests_while_quieting(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        quieting: bool,
        now: Instant,
    ) {
        if !quieting {
            if self.quiet_window.not_wanted(now) {
                self.send_queued(myself);
            }
            return;
        }
        if let Some(until) = self.quiet_window.wanted(now, self.spec.rests_after_input) {
            myself.send_after(until.saturating_duration_since(now), || {
                LanguageServerMsg::QuietWindowEnded
            });
        }
    }

    /// Sends what the quiet window held, if one was open.
    pub(super) fn end_quiet_window(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        if self.quiet_window.close(Instant::now()) {
            self.send_queued(myself);
        }
    }

    /// Whether the server announced that it can be asked for a document's
    /// diagnostics, and has not refused since.
    fn can_ask(&self) -> bool {
        let Phase::Ready(capabilities) = &self.phase else {
            return false;
        };
        !self.spec.tsserver_commands
            && capabilities.supports(Feature::PullDiagnostics)
            && self.diagnostics.observations.asking != Asking::Refused
    }

    /// What of `uri`'s last publication an answer asked of the server
    /// does not hold: the findings of its check on save (rust-analyzer's
    /// `cargo check`), which only a save brings and only a publication
    /// tells. A save's check still to come keeps the wait from asking.
    fn published_beside_asked(&self, uri: &str) -> Vec<Value> {
        let sources = &self.spec.save_check_sources;
        self.diagnostics
            .entry(uri)
            .map(|entry| {
                entry
                    .items
                    .iter()
                    .filter(|item| {
                        item.get("source")
                            .and_then(Value::as_str)
                            .is_some_and(|source| sources.iter().any(|kept| kept == source))
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether a server that has published nothing can be asked for its
    /// diagnostics instead; from then on it is.
    fn pull_instead(&mut self) -> bool {
        if self.spec.tsserver_commands {
            return false;
        }
        match &self.phase {
            Phase::Ready(capabilities) => {
                let capabilities = capabilities.clone();
                self.start_pulling(&capabilities)
            }
            Phase::Initializing(_) => false,
        }
    }

    fn diagnostics_answer(&self, verdict: Verdict) -> Result<DiagnosticsReply> {
        let reply = |items| DiagnosticsReply {
            items,
            encoding: self.encoding(),
            file_problem: None,
            warnings: Vec::new(),
        };
        let server = self.spec.label();
        match verdict {
            Verdict::Done(items) => Ok(reply(Some(related::with_original_severities(
                items,
                &self.diagnostics,
            )))),
            Verdict::NoDiagnostics => Ok(reply(None)),
            Verdict::Busy { ticks } => Err(Error::Diagnostics {
                server,
                detail: format!(
                    "worked {:.1} CPU-seconds without publishing diagnostics",
                    ticks as f64 / 100.0
                ),
            }),
            Verdict::Silent => Err(Error::Diagnostics {
                server,
                detail: format!(
                    "published no diagnostics for this change and was idle for {} s",
                    self.timeouts.request.as_secs()
                ),
            }),
            // Asked of the server instead (`check_waits`).
            Verdict::Unpublished
            | Verdict::Wait
            | Verdict::WaitUntil(_)
            | Verdict::Quieting
            | Verdict::Resting
            | Verdict::Settling(_) => Err(Error::ShuttingDown),
        }
    }

    fn expire_wait(&mut self, id: u64) {
        if let Some(parked) = self.waits.remove(&id) {
            let detail = format!(
                "was still working on diagnostics after {} s",
                DIAGNOSTICS_HARD_LIMIT.as_secs()
            );
            let _gone = parked.reply.send(Err(Error::Diagnostics {
                server: self.spec.label(),
                detail,
            }));
        }
    }

    pub(super) fn tell_monitor_urgency(&self) {
        if let Some(pid) = self.transport.pid() {
            let urgent = !self.waits.is_empty()
                || !self.held.is_empty()
                || !self.held_diagnostics.is_empty();
            let _gone = self
                .monitor
                .send_message(MonitorMsg::Urgent { pid, urgent });
        }
    }

    /// Whether a request must wait before it is sent: the server is still
    /// loading, is taking in a change on disk, or has not yet published the
    /// request's document as sent again after such a change.
    pub(super) fn blocks(&self, request: &ServerRequest) -> bool {
        (self.loading() && !self.answers_while_loading(request))
            || (self.settling() && !self.answers_while_settling(request))
            || request
                .document
                .as_ref()
                .is_some_and(|document| self.documents.awaiting(&document.uri).is_some())
    }

    /// Whether the server is loading, within the patience of one request
    /// timeout from when it began: a server that never goes quiet is asked
    /// anyway after that, and its answers carry a warning.
    pub(super) fn loading(&self) -> bool {
        self.readiness.is_loading()
            && self.readiness.loading_started().elapsed() < self.timeouts.request
    }

    /// Whether the server answers `request` correctly while it loads.
    fn answers_while_loading(&self, request: &ServerRequest) -> bool {
        match self.spec.while_loading {
            WhileLoading::Waits => false,
            WhileLoading::AnswersFiles => FILE_QUESTIONS.contains(&request.method),
            WhileLoading::TakesAllInFirst => true,
        }
    }

    /// Whether the server answers `request` correctly while it takes in
    /// files created or deleted on disk: pyright resolves a file's imports
    /// when asked about it, and only its list of files, which questions
    /// about the whole project read, changes after a pause.
    fn answers_while_settling(&self, request: &ServerRequest) -> bool {
        self.spec.while_loading == WhileLoading::AnswersFiles
            && FILE_QUESTIONS.contains(&request.method)
    }

    /// Whether the server is taking in a change on disk, within a short
    /// patience: a server busy with other work is asked anyway. One that
    /// takes everything in before its next answer never is.
    fn settling(&self) -> bool {
        !self.spec.while_loading.takes_all_in_first()
            && self
                .readiness
                .settling_since()
                .is_some_and(|since| since.elapsed() < SETTLE_PATIENCE)
    }

    /// Holds a request until nothing blocks it, or for at most the request
    /// timeout, after which it is sent anyway.
    pub(super) fn hold(&mut self, myself: &ActorRef<LanguageServerMsg>, call: Call) {
        tracing::debug!(server = %self.spec.name, method = call.request.method, "request held until the server can answer it");
        let deadline = Instant::now() + self.timeouts.request;
        myself.send_after(self.timeouts.request, || LanguageServerMsg::ReleaseHeld);
        self.held.push(Held { call, deadline });
        self.tell_monitor_urgency();
    }

    /// Sends every held request that nothing blocks any more.
    pub(super) fn release_ready(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        let now = Instant::now();
        let (ready, still): (Vec<HeldDiagnostics>, Vec<HeldDiagnostics>) =
            std::mem::take(&mut self.held_diagnostics)
                .into_iter()
                .partition(|held| {
                    held.deadline <= now || !self.holds_dependent(&held.call.document.uri)
                });
        self.held_diagnostics = still;
        self.send_held_diagnostics(myself, ready);
        if self.held.is_empty() {
            return;
        }
        let (ready, still): (Vec<Held>, Vec<Held>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|held| !self.blocks(&held.call.request));
        self.held = still;
        for held in ready {
            self.send(myself, held.call);
        }
        self.tell_monitor_urgency();
    }

    fn send_held_diagnostics(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        held: Vec<HeldDiagnostics>,
    ) {
        let Phase::Ready(capabilities) = &self.phase else {
            return held
                .into_iter()
                .for_each(|held| self.diagnostics(myself, held.call));
        };
        let capabilities = capabilities.clone();
        for held in held {
            self.wait_for_diagnostics(myself, held.call, &capabilities);
        }
    }

    /// Sends held requests whose deadline has passed, saying what the
    /// server was still doing.
    pub(super) fn release_held(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        let now = Instant::now();
        let (due, still): (Vec<Held>, Vec<Held>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|held| held.deadline <= now);
        self.held = still;
        for held in due {
            self.send(myself, held.call);
        }
        self.release_ready(myself);
    }

    /// What an answer to `request` sent before the server was ready must
    /// carry.
    pub(super) fn unready_warning(&self, request: &ServerRequest) -> Option<String> {
        let label = self.spec.label();
        if self.readiness.is_loading() && !self.answers_while_loading(request) {
            let doing = match self.loading_work() {
                Some(work) => match work.percentage {
                    Some(percentage) => format!(" ({} {percentage}%)", work.title),
                    None => format!(" ({})", work.title),
                },
                None => String::new(),
            };
            return Some(format!(
                "warning: [{label}] is still loading{doing}; this answer may be incomplete"
            ));
        }
        if self.spec.while_loading.takes_all_in_first() || self.answers_while_settling(request) {
            return None;
        }
        self.readiness.taking().map(|taking| {
            format!(
                "warning: [{label}] is still taking in {}; this answer may be out of date",
                taking.says()
            )
        })
    }

    /// For a question about the whole project, the index the server is
    /// still building once loaded (clangd indexes in the background, and
    /// again after a header changes): what it has not reached yet is
    /// missing from the answer.
    pub(super) fn indexing_warning(&self, request: &ServerRequest) -> Option<String> {
        if !super::coverage::needs_index(request.method, &request.params) {
            return None;
        }
        let work = self.progress.indexing()?;
        let done = work
            .percentage
            .map(|percentage| format!(" {percentage}%"))
            .unwrap_or_default();
        Some(format!(
            "warning: [{}] is still indexing the project ({}{done}); this answer may be partial",
            self.spec.label(),
            work.title
        ))
    }

    /// The first loading work still running, for status and warnings.
    pub(super) fn loading_work(&self) -> Option<&super::progress::Work> {
        self.readiness
            .loading_tokens()
            .find_map(|token| self.progress.work(token))
    }
}
