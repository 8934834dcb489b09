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

/// The processes above this one, its parent first, up to (not including)
/// init: how a hook finds the host that started it, and so the MCP
/// session that host started. Linux reads `/proc`; elsewhere `ps` answers.
pub fn ancestors() -> Vec<u32> {
    let mut chain = Vec::new();
    let mut pid = std::os::unix::process::parent_id();
    // A bound on a chain that a race could turn into a loop.
    while pid > 1 && chain.len() < 64 && !chain.contains(&pid) {
        chain.push(pid);
        match parent_of(pid) {
            Some(parent) => pid = parent,
            None => break,
        }
    }
    chain
}

/// The working directory of process `pid`, where the system says.
pub fn working_directory(pid: u32) -> Option<std::path::PathBuf> {
    if cfg!(target_os = "linux") {
        return std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
    }
    let listed = std::process::Command::new("lsof")
        .args(["-a", "-d", "cwd", "-Fn", "-p", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&listed.stdout)
        .lines()
        .find_map(|line| line.strip_prefix('n'))
        .map(std::path::PathBuf::from)
}

fn parent_of(pid: u32) -> Option<u32> {
    if cfg!(target_os = "linux") {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (_, rest) = stat.rsplit_once(')')?;
        return rest.split_whitespace().nth(1)?.parse().ok();
    }
    let listed = std::process::Command::new("ps")
        .args(["-o", "ppid=", "-p", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&listed.stdout).trim().parse().ok()
}
