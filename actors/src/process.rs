//! What the operating system says of a server's process: its CPU time,
//! run state and resident size (procfs on Linux, sysinfo on macOS and in
//! a `portable` build, nothing elsewhere), and whether it is dying. Pure reads with no actor
//! behind them: the Monitor samples processes with them, a LanguageServer
//! asks whether its process still takes requests, and the Supervisor
//! weighs servers against the memory budget.

/// One reading of a process, as the Monitor sends it to its server actor.
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

/// Reads a process's CPU time, run state and resident size, its
/// descendants included: servers hand work to child processes (pyright
/// runs the Python interpreter to find its search paths), and a server
/// waiting on a busy child is busy. A process counts as running when any
/// of its threads is, since servers work on worker threads while the main
/// thread sleeps.
#[cfg(all(target_os = "linux", not(feature = "portable")))]
pub fn read_process(pid: u32) -> Option<ProcessSample> {
    let (mut total, mut pending) = read_one(i32::try_from(pid).ok()?)?;
    // Bounded, against a fork bomb among the descendants.
    for _ in 0..256 {
        let Some(child) = pending.pop() else { break };
        let Some((sample, grandchildren)) = read_one(child) else {
            continue;
        };
        total.cpu_ticks += sample.cpu_ticks;
        total.running |= sample.running;
        total.rss_bytes += sample.rss_bytes;
        pending.extend(grandchildren);
    }
    Some(total)
}

/// One process's reading and its children's pids.
#[cfg(all(target_os = "linux", not(feature = "portable")))]
fn read_one(pid: i32) -> Option<(ProcessSample, Vec<i32>)> {
    let process = procfs::process::Process::new(pid).ok()?;
    let stat = process.stat().ok()?;
    let per_tick = procfs::ticks_per_second().max(1);
    let mut running = matches!(stat.state, 'R' | 'D');
    let mut children = Vec::new();
    for task in process.tasks().into_iter().flatten().flatten() {
        if let Ok(task_stat) = task.stat() {
            running |= matches!(task_stat.state, 'R' | 'D');
        }
        let pids = task.children().unwrap_or_default();
        children.extend(
            pids.into_iter()
                .filter_map(|child| i32::try_from(child).ok()),
        );
    }
    let sample = ProcessSample {
        // Normalised to 100 ticks a second whatever the kernel's USER_HZ.
        cpu_ticks: (stat.utime + stat.stime) * 100 / per_tick,
        delta_ticks: 0,
        running,
        rss_bytes: stat.rss * procfs::page_size(),
    };
    Some((sample, children))
}

/// A process's `/proc/PID/stat`, opened once when the process starts.
/// Asked before every request whether the process is dying, it costs one
/// read, where opening it by path walked `/proc` each time; and it goes on
/// naming the same process if its PID is reused.
#[cfg(all(target_os = "linux", not(feature = "portable")))]
pub struct ProcessStat(Option<std::fs::File>);

#[cfg(all(target_os = "linux", not(feature = "portable")))]
impl ProcessStat {
    pub fn open(pid: Option<u32>) -> Self {
        Self(pid.and_then(|pid| std::fs::File::open(format!("/proc/{pid}/stat")).ok()))
    }

    /// Whether the process is dead or dying: a zombie, already in its
    /// exit, or with a SIGKILL pending. A process killed a moment ago is
    /// not yet a zombie while the kernel tears down its memory; a request
    /// written to it then would be lost, so it counts as dead already. For
    /// a few microseconds after it takes the SIGKILL and before it marks
    /// itself exiting a process shows neither; a request sent then fails
    /// when the process exits, and its caller follows the restart.
    pub fn is_dying(&self) -> bool {
        use std::os::unix::fs::FileExt;
        // The longest stat line is about 700 bytes.
        let mut line = [0u8; 1024];
        match self.0.as_ref().map(|stat| stat.read_at(&mut line, 0)) {
            Some(Ok(read)) if read > 0 => stat_says_dying(&String::from_utf8_lossy(&line[..read])),
            _ => true,
        }
    }
}

/// Reads state (field 3), flags (field 9) and pending signals (field 31)
/// of a `/proc/PID/stat` line. The command name (field 2) is in
/// parentheses and may itself hold spaces and parentheses, so fields are
/// counted from the last `)`.
#[cfg(all(target_os = "linux", not(feature = "portable")))]
fn stat_says_dying(stat: &str) -> bool {
    /// `PF_EXITING` in the task flags: the process is in `do_exit`.
    const EXITING: u64 = 0x4;
    /// SIGKILL's bit in the pending-signal mask: a group kill marks every
    /// thread at once, before the process is scheduled to die.
    const SIGKILL_BIT: u64 = 1 << (9 - 1);
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return true;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let number = |index: usize| {
        fields
            .get(index)
            .and_then(|field| field.parse::<u64>().ok())
    };
    let (Some(state), Some(flags), Some(signal)) = (fields.first(), number(6), number(28)) else {
        return true;
    };
    matches!(*state, "Z" | "X") || flags & EXITING != 0 || signal & SIGKILL_BIT != 0
}

#[cfg(any(not(target_os = "linux"), feature = "portable"))]
pub struct ProcessStat;

#[cfg(any(not(target_os = "linux"), feature = "portable"))]
impl ProcessStat {
    pub fn open(_pid: Option<u32>) -> Self {
        Self
    }

    pub fn is_dying(&self) -> bool {
        false
    }
}

/// Reads a process's CPU time, run state and resident size through
/// sysinfo, where procfs is not read: macOS, and Linux built with the
/// `portable` feature so that this code is tested. Its descendants are
/// counted too, as on Linux: typescript-language-server's work is done by
/// the tsserver it starts. Finding them reads every process, so that is
/// done once per `sampler::TREE_PERIOD`, and whenever the process looks
/// idle (a child it started since may be at work); otherwise only the
/// process and the descendants last found are read.
#[cfg(any(target_os = "macos", all(target_os = "linux", feature = "portable")))]
pub fn read_process(pid: u32) -> Option<ProcessSample> {
    use std::sync::{Mutex, PoisonError};
    static SAMPLER: Mutex<Option<sampler::Sampler>> = Mutex::new(None);
    let mut sampler = SAMPLER.lock().unwrap_or_else(PoisonError::into_inner);
    sampler.get_or_insert_with(sampler::Sampler::new).read(pid)
}

#[cfg(any(target_os = "macos", all(target_os = "linux", feature = "portable")))]
mod sampler {
    use super::ProcessSample;
    use std::collections::HashMap;
    use std::time::{Duration, Instant};
    use sysinfo::{Pid, ProcessRefreshKind, ProcessStatus, ProcessesToUpdate, System};

    /// How often the whole process table is read to find descendants.
    pub const TREE_PERIOD: Duration = Duration::from_secs(1);

    pub struct Sampler {
        system: System,
        tree_read: Option<Instant>,
        /// Each process's last total, by which it looks idle.
        last: HashMap<Pid, u64>,
    }

    impl Sampler {
        pub fn new() -> Self {
            Self {
                system: System::new(),
                tree_read: None,
                last: HashMap::new(),
            }
        }

        pub fn read(&mut self, pid: u32) -> Option<ProcessSample> {
            let root = Pid::from_u32(pid);
            let stale = self.tree_read.is_none_or(|at| at.elapsed() >= TREE_PERIOD);
            match stale {
                true => self.read_all(),
                false => self.read_known(root),
            }
            let mut sample = self.sum(root)?;
            // By its CPU time alone: a parent waiting on its child may be
            // on a CPU just as it is read.
            let looks_idle = self.last.get(&root) == Some(&sample.cpu_ticks);
            if looks_idle && !stale {
                // A child started since the table was read is not known
                // yet, and may be the one at work: a process that looks
                // idle is looked at whole before it is called so.
                self.read_all();
                sample = self.sum(root)?;
            }
            self.last.insert(root, sample.cpu_ticks);
            Some(sample)
        }

        fn read_all(&mut self) {
            self.system
                .refresh_processes_specifics(ProcessesToUpdate::All, true, Self::what());
            self.tree_read = Some(Instant::now());
            let processes = self.system.processes();
            self.last.retain(|pid, _| processes.contains_key(pid));
        }

        fn read_known(&mut self, root: Pid) {
            let mut known = self.tree(root);
            known.push(root);
            self.system.refresh_processes_specifics(
                ProcessesToUpdate::Some(&known),
                true,
                Self::what(),
            );
        }

        fn what() -> ProcessRefreshKind {
            ProcessRefreshKind::nothing().with_cpu().with_memory()
        }

        /// `root`'s reading with its descendants'.
        fn sum(&self, root: Pid) -> Option<ProcessSample> {
            let reading = |process: &sysinfo::Process| ProcessSample {
                // CPU-milliseconds, as 10 ms ticks.
                cpu_ticks: process.accumulated_cpu_time() / 10,
                delta_ticks: 0,
                running: matches!(process.status(), ProcessStatus::Run),
                rss_bytes: process.memory(),
            };
            let mut sample = reading(self.system.process(root)?);
            for descendant in self.tree(root) {
                if let Some(process) = self.system.process(descendant) {
                    let more = reading(process);
                    sample.cpu_ticks += more.cpu_ticks;
                    sample.running |= more.running;
                    sample.rss_bytes += more.rss_bytes;
                }
            }
            Some(sample)
        }

        /// The descendants of `root` in the table as last read, bounded
        /// against a fork bomb among them.
        fn tree(&self, root: Pid) -> Vec<Pid> {
            let mut found = Vec::new();
            let mut pending = vec![root];
            while let Some(parent) = pending.pop() {
                if found.len() >= 256 {
                    break;
                }
                for (pid, process) in self.system.processes() {
                    if process.parent() == Some(parent) && *pid != root {
                        found.push(*pid);
                        pending.push(*pid);
                    }
                }
            }
            found
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub fn read_process(_pid: u32) -> Option<ProcessSample> {
    None
}

#[cfg(all(test, target_os = "linux", not(feature = "portable")))]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let sample = read_process(std::process::id()).unwrap();
        assert!(sample.rss_bytes > 0);
        assert!(sample.running, "the test thread is running while it reads");
    }

    #[test]
    fn counts_the_cpu_of_child_processes() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let me = std::process::id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let children_counted = loop {
            let own = read_one(i32::try_from(me).unwrap()).unwrap().0.cpu_ticks;
            let with_children = read_process(me).unwrap().cpu_ticks;
            if with_children > own || std::time::Instant::now() > deadline {
                break with_children > own;
            }
            std::thread::yield_now();
        };
        let _ = child.kill();
        let _ = child.wait();
        assert!(children_counted, "the busy child's ticks are counted");
    }

    #[test]
    fn a_missing_process_reads_as_none() {
        assert_eq!(read_process(u32::MAX - 1), None);
        assert!(ProcessStat::open(Some(u32::MAX - 1)).is_dying());
    }

    /// A `/proc/PID/stat` line with the given state, flags and pending
    /// signals, and a command name that holds parentheses and spaces.
    fn stat_line(state: &str, flags: u64, signal: u64) -> String {
        let mut fields = vec!["0".to_owned(); 49];
        fields[0] = state.to_owned();
        fields[6] = flags.to_string();
        fields[28] = signal.to_string();
        format!("42 (node (x) y) {}", fields.join(" "))
    }

    #[test]
    fn reads_dying_from_stat_lines() {
        assert!(!stat_says_dying(&stat_line("S", 0x400100, 0)));
        assert!(stat_says_dying(&stat_line("Z", 0x400100, 0)));
        assert!(stat_says_dying(&stat_line("R", 0x400104, 0)), "exiting");
        assert!(
            stat_says_dying(&stat_line("S", 0x400100, 1 << 8)),
            "SIGKILL pending"
        );
        assert!(
            !stat_says_dying(&stat_line("S", 0x400100, 1 << 14)),
            "SIGTERM is not death"
        );
        assert!(stat_says_dying("garbage"));
    }

    #[test]
    fn a_killed_process_is_dying_before_it_is_reaped() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let stat = ProcessStat::open(Some(child.id()));
        assert!(!stat.is_dying());
        assert!(!stat.is_dying(), "read again");
        child.kill().unwrap();
        // Between taking SIGKILL and marking itself exiting, a process
        // shows neither for a few microseconds.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !stat.is_dying() && std::time::Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert!(stat.is_dying(), "killed, not yet reaped");
        child.wait().unwrap();
        assert!(stat.is_dying(), "reaped");
    }
}

#[cfg(all(test, feature = "portable"))]
mod portable_tests {
    use super::*;

    fn spin(for_how_long: std::time::Duration) {
        let started = std::time::Instant::now();
        let mut spun = 0u64;
        while started.elapsed() < for_how_long {
            spun = spun.wrapping_add(1);
        }
        std::hint::black_box(spun);
    }

    #[test]
    fn sysinfo_reads_this_process_and_its_cpu_time_grows() {
        let before = read_process(std::process::id()).unwrap();
        assert!(before.rss_bytes > 0);
        spin(std::time::Duration::from_millis(300));
        let after = read_process(std::process::id()).unwrap();
        assert!(
            after.cpu_ticks >= before.cpu_ticks + 10,
            "{before:?} {after:?}"
        );
    }

    #[test]
    fn a_busy_child_counts_for_its_parent() {
        let mut busy = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        // Past the table's period: the next reading finds the child.
        std::thread::sleep(sampler::TREE_PERIOD + std::time::Duration::from_millis(100));
        let parent = std::process::id();
        let before = read_process(parent).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(500));
        let after = read_process(parent).unwrap();
        let _killed = busy.kill();
        let _reaped = busy.wait();
        // This thread slept: what grew is the child's.
        assert!(
            after.cpu_ticks >= before.cpu_ticks + 20,
            "{before:?} {after:?}"
        );
        assert!(after.running, "{after:?}");
    }

    #[test]
    fn a_child_started_since_the_table_was_read_is_found_when_its_parent_looks_idle() {
        let parent = std::process::id();
        let _first = read_process(parent);
        let before = read_process(parent).unwrap();
        let mut busy = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        // Well within the table's period.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let after = read_process(parent).unwrap();
        let _killed = busy.kill();
        let _reaped = busy.wait();
        assert!(
            after.cpu_ticks >= before.cpu_ticks + 10,
            "{before:?} {after:?}"
        );
    }
}
