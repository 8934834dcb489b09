//! How long a daemon and its servers live unused: the daemon lingers after
//! its last session, a server without requests for `server_idle` stops,
//! and while the servers' resident memory together is over the budget the
//! least recently used idle server stops (the sweep, `sweep.rs`, run as
//! often as these limits ask). A stopped server keeps its slot, its
//! documents and why it stopped; it starts again when a session needs it.
//!
//! A server with work in hand is never stopped, nor, for the budget, the
//! one used last: that one is in use, and stopping it would only make its
//! next caller wait for it to start again.

use crate::messages::supervisor::SupervisorMsg;
use ractor::ActorRef;
use std::time::Duration;

/// How often idleness is checked, at most and at least.
const SWEEP_MIN: Duration = Duration::from_millis(100);
const SWEEP_MAX: Duration = Duration::from_secs(30);
/// How often memory is checked against the budget.
const MEMORY_SWEEP: Duration = Duration::from_secs(1);

/// Whether the tree serves one session or many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The process ends with its only session.
    Standalone,
    /// Sessions come and go.
    Daemon(Lifetime),
}

/// How long a daemon and its servers live unused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetime {
    /// The tree stops this long after its last session ended, when none
    /// attached since; never while it serves an HTTP endpoint (`None`),
    /// whose clients come and go without starting it.
    pub linger: Option<Duration>,
    /// A server without a request for this long stops.
    pub server_idle: Option<Duration>,
    /// When the servers' resident memory together passes this many bytes,
    /// idle servers stop, least recently used first.
    pub memory_budget: Option<u64>,
}

/// In a daemon, stops the tree after its linger unless a session attaches
/// meanwhile (`attached` counts sessions so far, plus one).
pub(super) fn linger(myself: &ActorRef<SupervisorMsg>, mode: Mode, attached: u64) {
    if let Mode::Daemon(Lifetime {
        linger: Some(linger),
        ..
    }) = mode
    {
        tracing::info!(seconds = linger.as_secs(), "no sessions; lingering");
        myself.send_after(linger, move || SupervisorMsg::Linger(attached));
    }
}

/// Starts the periodic check of idle servers and memory, if the daemon
/// has either limit.
pub(super) fn start_sweeping(myself: &ActorRef<SupervisorMsg>, mode: Mode) {
    let Mode::Daemon(lifetime) = mode else {
        return;
    };
    let idle = lifetime
        .server_idle
        .map(|idle| (idle / 4).clamp(SWEEP_MIN, SWEEP_MAX));
    let memory = lifetime.memory_budget.map(|_| MEMORY_SWEEP);
    let Some(period) = idle.into_iter().chain(memory).min() else {
        return;
    };
    myself.send_interval(period, || SupervisorMsg::Sweep);
}
