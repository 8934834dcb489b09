//! The bridge's few log lines (attached, the daemon lost, a fallback), to
//! the log file `windlass` chose, and warnings and errors to stderr too;
//! never to stdout, which is the MCP channel. An MCP host shows what a
//! server writes on stderr as errors, so the rest goes there only when a
//! log level was asked for (`WINDLASS_LOG`).

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};

static FILE: Mutex<Option<File>> = Mutex::new(None);
/// Whether information lines go to stderr too.
static VERBOSE: AtomicBool = AtomicBool::new(false);

pub fn open(path: Option<PathBuf>) {
    let file = path.and_then(|path| File::options().create(true).append(true).open(path).ok());
    if let Ok(mut slot) = FILE.lock() {
        *slot = file;
    }
    let verbose = std::env::var("WINDLASS_LOG")
        .is_ok_and(|level| !matches!(level.trim(), "" | "off" | "error" | "warn"));
    VERBOSE.store(verbose, Ordering::Relaxed);
}

pub fn info(message: &str) {
    write("INFO", message, VERBOSE.load(Ordering::Relaxed));
}

pub fn warn(message: &str) {
    write("WARN", message, true);
}

pub fn error(message: &str) {
    write("ERROR", message, true);
}

fn write(level: &str, message: &str, to_stderr: bool) {
    // The clock `windlass`'s own log lines are written with, so that the
    // bridge's lines read alike in the same file.
    let mut time = String::new();
    let _ = SystemTime.format_time(&mut Writer::new(&mut time));
    let line = format!("{time} {level:>5} windlass-bridge: {message}\n");
    if to_stderr {
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
    if let Ok(mut slot) = FILE.lock()
        && let Some(file) = slot.as_mut()
    {
        let _ = file.write_all(line.as_bytes());
    }
}
