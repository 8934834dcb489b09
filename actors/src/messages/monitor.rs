//! The Monitor's inbox: which server processes to sample, and how
//! urgently. The samples it sends each server are `process.rs`'s.
use crate::messages::language_server::LanguageServerMsg;
use ractor::ActorRef;

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
