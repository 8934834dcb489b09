//! Whether a recorded process still runs: how `list` tells a dead
//! session and logging a log nobody writes any more.

/// Whether a process with this pid exists (another user's counts) and
/// is not a zombie: a killed process nobody has reaped yet serves nothing.
pub fn alive(pid: u32) -> bool {
    let Some(raw) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    let exists = match rustix::process::test_kill_process(raw) {
        Ok(()) => true,
        Err(error) => error == rustix::io::Errno::PERM,
    };
    exists && !is_zombie(pid)
}

/// The state letter after the command name in `/proc/PID/stat` (Linux;
/// elsewhere no process counts as a zombie).
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            == Some("Z")
    })
}
