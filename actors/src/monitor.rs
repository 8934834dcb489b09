//! The Monitor actor: how busy each language server process is.
//!
//! Owns the last CPU sample of every watched server process. Its inbox is
//! `messages::monitor`: LanguageServer actors have their processes watched
//! as they start and stop, and sampled urgently while someone waits on
//! their diagnostics. Sends each watched server a sample per tick: every 20 ms for servers someone waits on,
//! every second otherwise (for `status`). The readings are `process.rs`'s:
//! procfs on Linux and sysinfo on macOS; elsewhere no samples are sent and
//! the diagnostics wait relies on publications alone.

use crate::messages::language_server::LanguageServerMsg;
use crate::messages::monitor::MonitorMsg;
use crate::process::{ProcessSample, read_process};
use ractor::{Actor, ActorProcessingErr, ActorRef};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Sampling period while a caller waits on the server.
pub const URGENT_PERIOD: Duration = Duration::from_millis(20);
/// Sampling period otherwise, enough for `status`.
pub const IDLE_PERIOD: Duration = Duration::from_secs(1);

struct Watched {
    server: ActorRef<LanguageServerMsg>,
    last_ticks: Option<u64>,
    urgent: bool,
    sampled_at: Option<Instant>,
}

/// The actor type; its state lives in [`State`].
pub struct Monitor;

#[derive(Default)]
pub struct State {
    watched: HashMap<u32, Watched>,
    schedule: u64,
    urgent_scheduled: bool,
}

impl Actor for Monitor {
    type Msg = MonitorMsg;
    type State = State;
    type Arguments = ();

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        _: (),
    ) -> Result<State, ActorProcessingErr> {
        let state = State::default();
        myself.send_after(IDLE_PERIOD, || MonitorMsg::Tick(0));
        Ok(state)
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            MonitorMsg::Watch { pid, server } => {
                // The first reading is only a baseline: a delta needs two.
                let baseline = read_process(pid).map(|reading| reading.cpu_ticks);
                state.watched.insert(
                    pid,
                    Watched {
                        server,
                        last_ticks: baseline,
                        urgent: false,
                        sampled_at: None,
                    },
                );
            }
            MonitorMsg::Unwatch { pid } => {
                state.watched.remove(&pid);
            }
            MonitorMsg::Urgent { pid, urgent } => {
                if let Some(watched) = state.watched.get_mut(&pid) {
                    watched.urgent = urgent;
                }
                if urgent && !state.urgent_scheduled {
                    state.reschedule(&myself, Duration::ZERO);
                }
            }
            MonitorMsg::Tick(schedule) if schedule == state.schedule => state.tick(&myself),
            MonitorMsg::Tick(_) => {}
        }
        Ok(())
    }
}

impl State {
    fn tick(&mut self, myself: &ActorRef<MonitorMsg>) {
        let now = Instant::now();
        let mut gone = Vec::new();
        for (pid, watched) in &mut self.watched {
            let due = watched.urgent
                || watched
                    .sampled_at
                    .is_none_or(|at| now.duration_since(at) >= IDLE_PERIOD);
            if !due {
                continue;
            }
            let Some(reading) = read_process(*pid) else {
                continue;
            };
            watched.sampled_at = Some(now);
            let Some(last) = watched.last_ticks.replace(reading.cpu_ticks) else {
                continue;
            };
            let delta_ticks = reading.cpu_ticks.saturating_sub(last);
            let sample = ProcessSample {
                delta_ticks,
                ..reading
            };
            if watched
                .server
                .send_message(LanguageServerMsg::Activity(sample))
                .is_err()
            {
                gone.push(*pid);
            }
        }
        for pid in gone {
            self.watched.remove(&pid);
        }
        let urgent = self.watched.values().any(|watched| watched.urgent);
        self.reschedule(myself, if urgent { URGENT_PERIOD } else { IDLE_PERIOD });
    }

    fn reschedule(&mut self, myself: &ActorRef<MonitorMsg>, after: Duration) {
        self.schedule += 1;
        self.urgent_scheduled = after <= URGENT_PERIOD;
        let schedule = self.schedule;
        myself.send_after(after, move || MonitorMsg::Tick(schedule));
    }
}
