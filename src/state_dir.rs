//! The state directory: where the event store, the logs and the trust
//! records live. `WINDLASS_STATE_DIR`, else `$XDG_STATE_HOME/windlass`,
//! else `~/.local/state/windlass`.

use anyhow::{Context as _, Result};
use std::path::PathBuf;

pub fn path() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("WINDLASS_STATE_DIR").filter(|dir| !dir.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state")))
        .context("neither WINDLASS_STATE_DIR, XDG_STATE_HOME nor HOME is set")?;
    Ok(base.join("windlass"))
}

/// The symbol index's file, if there is a state directory to put it in.
pub fn index_path() -> Option<PathBuf> {
    path()
        .ok()
        .map(|dir| windlass_actors::store::index_path(&dir))
}

/// The text searches' filters' file, if there is a state directory to
/// put it in.
pub fn sketches_path() -> Option<PathBuf> {
    path()
        .ok()
        .map(|dir| windlass_actors::store::sketches_path(&dir))
}

/// The event store's file, if there is a state directory to put it in.
pub fn store_path() -> Option<PathBuf> {
    path()
        .ok()
        .map(|dir| windlass_actors::store::database_path(&dir))
}
