//! Logs go to a file in the state directory and to stderr, never to
//! stdout, which is the MCP channel. The level comes from `--log-level`
//! or `WINDLASS_LOG` (an env-filter: `info`, `windlass_actors=debug`);
//! without one the file gets [`FILE_LEVEL`] and stderr only
//! [`STDERR_LEVEL`]: an MCP host shows everything a server writes there
//! as an error.
//!
//! Each process writes `logs/windlass-PID.log`, rotated to `.1` when it
//! passes [`FILE_LIMIT`], so one process keeps at most twice that. Logs
//! of processes that are gone are collected, oldest first, once all logs
//! together pass [`TOTAL_LIMIT`] (at every start), and by `gc`.

use anyhow::{Context as _, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, fmt};

/// Size at which a process's log file is rotated.
const FILE_LIMIT: u64 = 10 * 1024 * 1024;
/// Size of every log together above which old logs are collected.
const TOTAL_LIMIT: u64 = 100 * 1024 * 1024;

/// What the log file gets unless told otherwise.
const FILE_LEVEL: &str = "info";
/// What stderr gets unless told otherwise: real failures only. The file
/// watcher warns of races it recovers from (a watch on a directory that
/// was deleted before the watch was removed, as a build's temporary
/// directories are), which are no failure of the session.
const STDERR_LEVEL: &str = "warn,notify=error";

pub fn init(level: Option<&str>) -> Result<()> {
    let filter = |default: &str| {
        let level = level.unwrap_or(default);
        EnvFilter::try_new(level).with_context(|| format!("invalid log level {level:?}"))
    };
    let (file_filter, stderr_filter) = (filter(FILE_LEVEL)?, filter(STDERR_LEVEL)?);
    // A log file that cannot be written (a read-only or full state
    // directory) costs the file, not the session.
    let file = file_path().and_then(|path| {
        if let Some(directory) = path.parent() {
            collect(directory, TOTAL_LIMIT);
        }
        RotatingFile::create(path)
    });
    let (file, unwritable) = match file {
        Ok(file) => (Some(file), None),
        Err(error) => (None, Some(error)),
    };
    let stderr = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_filter(stderr_filter);
    let file = file.map(|file| {
        fmt::layer()
            .with_writer(Mutex::new(file))
            .with_ansi(false)
            .with_filter(file_filter)
    });
    tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .try_init()
        .context("installing the logger")?;
    if let Some(error) = unwritable {
        tracing::warn!("logging to stderr only: {error:#}");
    }
    Ok(())
}

/// This process's log file, `logs/windlass-PID.log` in the state
/// directory, whose directory is created if missing.
pub fn file_path() -> Result<PathBuf> {
    let directory = logs_directory()?;
    std::fs::create_dir_all(&directory)
        .with_context(|| format!("creating {}", directory.display()))?;
    Ok(directory.join(format!("windlass-{}.log", std::process::id())))
}

pub fn logs_directory() -> Result<PathBuf> {
    Ok(crate::state_dir::path()?.join("logs"))
}

/// Removes logs of processes that are gone, oldest first, until the logs
/// left take at most `keep` bytes; returns how many files went.
pub fn collect(directory: &Path, keep: u64) -> usize {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return 0;
    };
    let mut logs: Vec<(std::time::SystemTime, u64, PathBuf, bool)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let path = entry.path();
            let pid = log_pid(&path)?;
            let metadata = entry.metadata().ok()?;
            let modified = metadata.modified().ok()?;
            Some((modified, metadata.len(), path, crate::process::alive(pid)))
        })
        .collect();
    let mut total: u64 = logs.iter().map(|log| log.1).sum();
    logs.sort_by_key(|log| log.0);
    let mut removed = 0;
    for (_, size, path, alive) in logs {
        if total <= keep {
            break;
        }
        if !alive && std::fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(size);
            removed += 1;
        }
    }
    removed
}

/// The pid in `windlass-PID.log` or `windlass-PID.log.1`.
fn log_pid(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    let name = name.strip_suffix(".1").unwrap_or(name);
    name.strip_prefix("windlass-")?
        .strip_suffix(".log")?
        .parse()
        .ok()
}

/// A log file that moves itself to `.1` when it grows past the limit.
struct RotatingFile {
    path: PathBuf,
    file: File,
    written: u64,
}

impl RotatingFile {
    fn create(path: PathBuf) -> Result<Self> {
        let file = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(Self {
            path,
            file,
            written: 0,
        })
    }

    fn rotate(&mut self) -> std::io::Result<()> {
        let mut rotated = self.path.clone().into_os_string();
        rotated.push(".1");
        std::fs::rename(&self.path, rotated)?;
        self.file = File::create(&self.path)?;
        self.written = 0;
        Ok(())
    }
}

impl Write for RotatingFile {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        if self.written + buffer.len() as u64 > FILE_LIMIT {
            self.rotate()?;
        }
        let written = self.file.write(buffer)?;
        self.written += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_files_name_their_process() {
        assert_eq!(log_pid(Path::new("/x/windlass-42.log")), Some(42));
        assert_eq!(log_pid(Path::new("/x/windlass-42.log.1")), Some(42));
        assert_eq!(log_pid(Path::new("/x/other.log")), None);
    }

    #[test]
    fn only_logs_of_gone_processes_are_collected_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str| std::fs::write(dir.path().join(name), vec![b'x'; 100]).unwrap();
        // Pids this large are beyond Linux's limit: never alive.
        write("windlass-999999901.log");
        std::thread::sleep(std::time::Duration::from_millis(20));
        write("windlass-999999902.log");
        write(&format!("windlass-{}.log", std::process::id()));
        assert_eq!(collect(dir.path(), 250), 1);
        assert!(!dir.path().join("windlass-999999901.log").exists());
        assert!(dir.path().join("windlass-999999902.log").exists());
        assert_eq!(collect(dir.path(), 0), 1);
        assert!(
            dir.path()
                .join(format!("windlass-{}.log", std::process::id()))
                .exists()
        );
    }
}
