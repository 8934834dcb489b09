//! The bridge's few log lines (attached, the daemon lost, a fallback), to
//! stderr and to the log file `windlass` chose; never to stdout, which is
//! the MCP channel.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

static FILE: Mutex<Option<File>> = Mutex::new(None);

pub fn open(path: Option<PathBuf>) {
    let file = path.and_then(|path| File::options().create(true).append(true).open(path).ok());
    if let Ok(mut slot) = FILE.lock() {
        *slot = file;
    }
}

pub fn info(message: &str) {
    write("INFO", message);
}

pub fn warn(message: &str) {
    write("WARN", message);
}

pub fn error(message: &str) {
    write("ERROR", message);
}

fn write(level: &str, message: &str) {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let line = format!(
        "{} {level:>5} windlass-bridge: {message}\n",
        crate::clock::timestamp(since_epoch)
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
    if let Ok(mut slot) = FILE.lock()
        && let Some(file) = slot.as_mut()
    {
        let _ = file.write_all(line.as_bytes());
    }
}
