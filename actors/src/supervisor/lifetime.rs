//! How long a daemon and its servers live unused: the daemon lingers after
//! its last session, a server without requests for `server_idle` stops,
//! and while the servers' resident memory together is over the budget the
//! least recently used idle server stops. A stopped server keeps its
//! slot, its documents and why it stopped; it starts again when a session
//! needs it.
//!
//! A server with work in hand is never stopped, nor, for the budget, the
//! one used last: that one is in use, and stopping it would only make its
//! next caller wait for it to start again.

use super::{Lifetime, Mode, State};
use crate::messages::supervisor::SupervisorMsg;
use crate::vocabulary::ids::ServerId;
use crate::vocabulary::server_states::Phase;
use ractor::ActorRef;
use std::time::Duration;

/// How often idleness is checked, at most and at least.
const SWEEP_MIN: Duration = Duration::from_millis(100);
const SWEEP_MAX: Duration = Duration::from_secs(30);
/// How often memory is checked against the budget.
const MEMORY_SWEEP: Duration = Duration::from_secs(1);
const MIB: u64 = 1 << 20;

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

/// A running server as the sweep sees it.
struct Running {
    server: ServerId,
    idle_for: Duration,
    working: bool,
    rss: u64,
}

impl State {
    /// Another version's daemon serves bridges of its version; this one
    /// ends with its last session.
    pub(super) fn superseded(&mut self, myself: &ActorRef<SupervisorMsg>) {
        if self.superseded {
            return;
        }
        self.superseded = true;
        tracing::info!("a daemon of another version runs; this one stops after its last session");
        if self.sessions.is_empty() {
            myself.stop(Some("superseded".into()));
        }
    }

    pub(super) fn sweep(&mut self) {
        let Mode::Daemon(lifetime) = self.mode else {
            return;
        };
        let running = self.running();
        self.stop_idle(&lifetime, &running);
        self.keep_to_budget(&lifetime, running);
    }

    fn running(&self) -> Vec<Running> {
        self.slots
            .iter()
            .filter(|(_, slot)| {
                slot.phase == Phase::Running && slot.actor.is_some() && slot.stopped.is_none()
            })
            .map(|(server, slot)| Running {
                server: *server,
                idle_for: slot.usage.idle_for(),
                working: slot.usage.working(),
                rss: slot
                    .usage
                    .pid()
                    .and_then(crate::process::read_process)
                    .map_or(0, |sample| sample.rss_bytes),
            })
            .collect()
    }

    fn stop_idle(&mut self, lifetime: &Lifetime, running: &[Running]) {
        let Some(limit) = lifetime.server_idle else {
            return;
        };
        for server in running
            .iter()
            .filter(|server| !server.working && server.idle_for >= limit)
        {
            self.stop_server(
                server.server,
                &format!("idle for {} s", limit.as_secs_f64().round()),
            );
        }
    }

    fn keep_to_budget(&mut self, lifetime: &Lifetime, mut running: Vec<Running>) {
        let Some(budget) = lifetime.memory_budget else {
            return;
        };
        let mut total: u64 = running.iter().map(|server| server.rss).sum();
        if total <= budget {
            return;
        }
        // Least recently used first; the one used last stays.
        running.sort_by_key(|server| std::cmp::Reverse(server.idle_for));
        running.pop();
        for server in running.iter().filter(|server| !server.working) {
            if total <= budget {
                break;
            }
            let reason = format!(
                "over the memory budget ({} MB of {} MB in use)",
                total / MIB,
                budget / MIB
            );
            self.stop_server(server.server, &reason);
            total = total.saturating_sub(server.rss);
        }
    }
}
