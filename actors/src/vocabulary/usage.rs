//! How a pooled server is being used: when it was last asked something,
//! whether it has work in hand, and its process. Its LanguageServer writes
//! it and the Supervisor, which hands it over at the spawn, reads it
//! without messages to stop servers that sit idle or, over the memory
//! budget, the least recently used idle one.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct Usage {
    epoch: Instant,
    /// Milliseconds after `epoch` of the last request or diagnostics call.
    last_used: AtomicU64,
    working: AtomicBool,
    /// 0 until a process runs.
    pid: AtomicU32,
}

impl Default for Usage {
    fn default() -> Self {
        Self {
            epoch: Instant::now(),
            last_used: AtomicU64::new(0),
            working: AtomicBool::new(false),
            pid: AtomicU32::new(0),
        }
    }
}

impl Usage {
    /// A caller asked the server something now.
    pub fn used(&self) {
        let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_used.store(now, Ordering::Relaxed);
    }

    pub fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_used.load(Ordering::Relaxed));
        self.epoch.elapsed().saturating_sub(last)
    }

    /// Whether requests or diagnostics waits are in hand.
    pub fn set_working(&self, working: bool) {
        self.working.store(working, Ordering::Relaxed);
    }

    pub fn working(&self) -> bool {
        self.working.load(Ordering::Relaxed)
    }

    pub fn set_pid(&self, pid: Option<u32>) {
        self.pid.store(pid.unwrap_or(0), Ordering::Relaxed);
    }

    pub fn pid(&self) -> Option<u32> {
        Some(self.pid.load(Ordering::Relaxed)).filter(|pid| *pid != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_resets_the_idle_clock() {
        let usage = Usage::default();
        std::thread::sleep(Duration::from_millis(30));
        let idle = usage.idle_for();
        assert!(idle >= Duration::from_millis(30));
        usage.used();
        assert!(usage.idle_for() < idle, "the clock starts again");
        assert_eq!(usage.pid(), None);
        usage.set_pid(Some(7));
        assert_eq!(usage.pid(), Some(7));
    }
}
