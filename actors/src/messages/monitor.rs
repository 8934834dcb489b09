//! The Monitor's inbox: which server processes to sample, and the sample
//! it sends each server.
use crate::messages::language_server::LanguageServerMsg;
use ractor::ActorRef;

/// One reading of a process, as sent to its server actor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessSample {
    /// User plus system CPU time since the process started, in 10 ms ticks.
    pub cpu_ticks: u64,
    /// Ticks since the previous sample of this process.
    pub delta_ticks: u64,
    /// Whether the kernel had it on (or waiting for) a CPU.
    pub running: bool,
    pub rss_bytes: u64,
}

pub enum MonitorMsg {
    Watch {
        pid: u32,
        server: ActorRef<LanguageServerMsg>,
    },
    Unwatch {
        pid: u32,
    },
    Urgent {
        pid: u32,
        urgent: bool,
    },
    /// Carries the schedule it belongs to; ticks of a replaced schedule
    /// are ignored, so at most one chain of ticks runs.
    Tick(u64),
}
