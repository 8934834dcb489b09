//! The sweep of a daemon's servers: those idle past `server_idle` stop,
//! and while the servers' resident memory together is over the budget
//! the least recently used idle one stops (`lifetime.rs` says when it
//! runs). A daemon superseded by another version ends with its last
//! session instead of lingering.

use super::State;
use super::lifetime::{Lifetime, Mode};
use crate::messages::supervisor::SupervisorMsg;
use crate::vocabulary::ids::ServerId;
use crate::vocabulary::server_states::Phase;
use ractor::ActorRef;
use std::time::Duration;

const MIB: u64 = 1 << 20;

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
