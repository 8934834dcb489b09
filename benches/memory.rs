//! Resident memory of processes, shared by the benchmarks.

use std::collections::HashMap;

/// Resident memory in bytes: RSS counts each shared page in every process
/// that maps it, PSS divides it among them, USS counts only the pages no
/// other process maps (what the process's exit would free).
#[derive(Clone, Copy, Default)]
pub struct Memory {
    pub rss: u64,
    pub pss: u64,
    pub uss: u64,
}

impl Memory {
    pub fn of(pid: u32) -> Memory {
        let rollup = |key: &str| super::common::proc_kib(&format!("/proc/{pid}/smaps_rollup"), key);
        Memory {
            rss: super::common::rss_kib(pid) * 1024,
            pss: rollup("Pss:") * 1024,
            uss: (rollup("Private_Clean:") + rollup("Private_Dirty:")) * 1024,
        }
    }

    pub fn minus(self, other: Memory) -> Memory {
        Memory {
            rss: self.rss.saturating_sub(other.rss),
            pss: self.pss.saturating_sub(other.pss),
            uss: self.uss.saturating_sub(other.uss),
        }
    }

    pub fn add(self, other: Memory) -> Memory {
        Memory {
            rss: self.rss + other.rss,
            pss: self.pss + other.pss,
            uss: self.uss + other.uss,
        }
    }
}

/// Resident memory of a process and all its descendants.
pub fn tree_memory(root: u32) -> Memory {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let parent = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|ppid| ppid.parse::<u32>().ok());
        if let Some(parent) = parent {
            children.entry(parent).or_default().push(pid);
        }
    }
    let mut total = Memory::default();
    let mut pending = vec![root];
    while let Some(pid) = pending.pop() {
        total = total.add(Memory::of(pid));
        pending.extend(children.get(&pid).into_iter().flatten());
    }
    total
}

pub fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
