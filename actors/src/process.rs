//! What the operating system says of a server's process: its CPU time,
//! run state and resident size (procfs on Linux, libproc on macOS,
//! nothing elsewhere), and whether it is dying. Pure reads with no actor
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
#[cfg(target_os = "linux")]
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
#[cfg(target_os = "linux")]
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
#[cfg(target_os = "linux")]
pub struct ProcessStat(Option<std::fs::File>);

#[cfg(target_os = "linux")]
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
#[cfg(any(target_os = "linux", test))]
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

#[cfg(not(target_os = "linux"))]
pub struct ProcessStat;

#[cfg(not(target_os = "linux"))]
impl ProcessStat {
    pub fn open(_pid: Option<u32>) -> Self {
        Self
    }

    pub fn is_dying(&self) -> bool {
        false
    }
}

/// Reads a process's CPU time, run state and resident size. The task
/// times are nanoseconds on Intel Macs; Apple silicon reports Mach
/// absolute-time units, which this does not yet convert.
#[cfg(target_os = "macos")]
pub fn read_process(pid: u32) -> Option<ProcessSample> {
    use libproc::libproc::proc_pid::pidinfo;
    use libproc::libproc::task_info::TaskInfo;
    let info = pidinfo::<TaskInfo>(i32::try_from(pid).ok()?, 0).ok()?;
    Some(ProcessSample {
        cpu_ticks: (info.pti_total_user + info.pti_total_system) / 10_000_000,
        delta_ticks: 0,
        running: info.pti_numrunning > 0,
        rss_bytes: info.pti_resident_size,
    })
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub fn read_process(_pid: u32) -> Option<ProcessSample> {
    None
}

#[cfg(all(test, target_os = "linux"))]
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
