//! Logs go to stderr and to a file in the state directory, never to
//! stdout, which is the MCP channel.

use anyhow::{Context as _, Result};
use std::fs::File;
use std::sync::Mutex;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, fmt};

pub fn init(level: &str) -> Result<()> {
    let filter =
        EnvFilter::try_new(level).with_context(|| format!("invalid log level {level:?}"))?;
    let path = file_path()?;
    let file = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    tracing_subscriber::registry()
        .with(filter)
        .with(fmt::layer().with_writer(std::io::stderr).with_ansi(false))
        .with(fmt::layer().with_writer(Mutex::new(file)).with_ansi(false))
        .try_init()
        .context("installing the logger")
}

/// This process's log file, `logs/windlass-PID.log` in the state
/// directory, whose directory is created if missing.
pub fn file_path() -> Result<std::path::PathBuf> {
    let directory = crate::state_dir::path()?.join("logs");
    std::fs::create_dir_all(&directory)
        .with_context(|| format!("creating {}", directory.display()))?;
    Ok(directory.join(format!("windlass-{}.log", std::process::id())))
}
