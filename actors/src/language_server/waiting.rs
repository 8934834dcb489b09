//! Callers who wait: for fresh diagnostics after a change, and for a
//! server to finish indexing before it is asked anything.
//!
//! Each diagnostics caller is parked with a [`Wait`]; every event that
//! could settle it (a publication, progress, a CPU sample, a timer) runs
//! [`State::check_waits`], which asks each wait for its verdict. While any
//! caller waits, the Monitor samples this server fast.

use super::diagnostics::{Rules, Verdict, Wait};
use super::{DiagnosticsReply, LanguageServerMsg, Phase, Queued, Reply, ServerRequest, State};
use crate::error::{Error, Result};
use crate::language_server::documents::DocumentSnapshot;
use crate::monitor::{MonitorMsg, ProcessSample};
use ractor::{ActorRef, RpcReplyPort};
use std::time::{Duration, Instant};

/// How long a new server must sit idle before it counts as done loading.
/// Servers pause between start-up phases (pyright waits on timers before
/// it discovers files), so one idle sample is not enough.
const WARM_UP_IDLE: Duration = Duration::from_millis(400);

/// No diagnostics wait outlives this, whatever the server is doing.
pub const HARD_LIMIT: Duration = Duration::from_secs(600);

/// A diagnostics caller and what it waits for.
pub struct Parked {
    wait: Wait,
    pub(super) reply: RpcReplyPort<Result<DiagnosticsReply>>,
}

impl State {
    pub(super) fn diagnostics(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        document: DocumentSnapshot,
        reply: RpcReplyPort<Result<DiagnosticsReply>>,
    ) {
        let capabilities = match &mut self.phase {
            Phase::Initializing(queued) => {
                return queued.push(Queued::Diagnostics(document, reply));
            }
            Phase::Ready(capabilities) => capabilities.clone(),
        };
        let uri = document.uri.clone();
        self.sync_document(document, &capabilities);
        let id = self.next_wait;
        self.next_wait += 1;
        self.waits.insert(
            id,
            Parked {
                wait: Wait::new(uri, self.strategy(), Instant::now()),
                reply,
            },
        );
        myself.send_after(HARD_LIMIT, move || {
            LanguageServerMsg::DiagnosticsExpired(id)
        });
        self.check_waits(myself);
    }

    pub(super) fn activity(&mut self, myself: &ActorRef<LanguageServerMsg>, sample: ProcessSample) {
        let now = Instant::now();
        self.last_sample = Some(sample);
        self.diagnostics.observations.sampled = true;
        let idle = sample.delta_ticks == 0 && !sample.running;
        self.idle_since = if idle {
            Some(self.idle_since.unwrap_or(now))
        } else {
            None
        };
        let idle_long_enough = self
            .idle_since
            .is_some_and(|since| now.duration_since(since) >= WARM_UP_IDLE);
        if !self.warmed_up && idle_long_enough {
            self.warmed_up = true;
            if self.progress.indexing().is_none() {
                self.release_held(myself);
            }
        }
        let progress_idle = self.progress.is_idle();
        for parked in self.waits.values_mut() {
            parked.wait.observe(&sample, progress_idle, now);
        }
        self.check_waits(myself);
    }

    /// Answers every wait whose verdict is in, and arranges to look again
    /// when the earliest remaining one falls due.
    pub(super) fn check_waits(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        let now = Instant::now();
        let rules = Rules {
            fixed_settle: self.timeouts.fixed_settle,
            idle_limit: self.timeouts.request,
        };
        let progress_idle = self.progress.is_idle();
        let mut settled = Vec::new();
        let mut earliest: Option<Instant> = None;
        for (id, parked) in &self.waits {
            let entry = self.diagnostics.entry(&parked.wait.uri);
            match parked.wait.verdict(
                entry,
                &self.diagnostics.observations,
                progress_idle,
                &rules,
                now,
            ) {
                Verdict::Wait => {}
                Verdict::WaitUntil(due) => earliest = Some(earliest.map_or(due, |e| e.min(due))),
                verdict => settled.push((*id, verdict)),
            }
        }
        for (id, verdict) in settled {
            if let Some(parked) = self.waits.remove(&id) {
                let answer = self.diagnostics_answer(verdict);
                let _gone = parked.reply.send(answer);
            }
        }
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

    fn diagnostics_answer(&self, verdict: Verdict) -> Result<DiagnosticsReply> {
        let reply = |items| DiagnosticsReply {
            items,
            encoding: self.encoding(),
        };
        let server = self.spec.label();
        match verdict {
            Verdict::Done(items) => Ok(reply(Some(items))),
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
            Verdict::Wait | Verdict::WaitUntil(_) => Err(Error::ShuttingDown),
        }
    }

    pub(super) fn expire_wait(&mut self, id: u64) {
        if let Some(parked) = self.waits.remove(&id) {
            let detail = format!(
                "was still working on diagnostics after {} s",
                HARD_LIMIT.as_secs()
            );
            let _gone = parked.reply.send(Err(Error::Diagnostics {
                server: self.spec.label(),
                detail,
            }));
            self.tell_monitor_urgency();
        }
    }

    pub(super) fn tell_monitor_urgency(&self) {
        if let Some(pid) = self.transport.pid() {
            let urgent = !self.waits.is_empty() || !self.held.is_empty();
            let _gone = self
                .monitor
                .send_message(MonitorMsg::Urgent { pid, urgent });
        }
    }

    /// Parks a request until the server's indexing ends, or for at most
    /// the request timeout, after which it is sent anyway.
    pub(super) fn hold(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        request: ServerRequest,
        reply: RpcReplyPort<Result<Reply>>,
    ) {
        if self.held.is_empty() {
            myself.send_after(self.timeouts.request, || LanguageServerMsg::ReleaseHeld);
        }
        tracing::debug!(server = %self.spec.name, method = request.method, "request held while the server loads");
        self.held.push((request, reply));
        self.tell_monitor_urgency();
    }

    pub(super) fn release_held(&mut self, myself: &ActorRef<LanguageServerMsg>) {
        for (request, reply) in std::mem::take(&mut self.held) {
            self.send(myself, request, reply, false);
        }
        self.tell_monitor_urgency();
    }

    /// Whether the server may still be loading: it reports indexing, or it
    /// has not been idle once since it started.
    pub(super) fn may_be_loading(&self) -> bool {
        self.progress.indexing().is_some() || !self.warmed_up
    }
}
