//! Trust for project configuration files, recorded by content hash in the
//! state directory, as direnv's `allow` does: a changed file is untrusted
//! again until the user trusts it anew.

use anyhow::{Context as _, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn trust_file() -> Result<PathBuf> {
    Ok(crate::state_dir::path()?.join("trusted"))
}

/// `sha256  canonical-path` of a file as it is now.
fn entry(file: &Path) -> Result<String> {
    let path = file
        .canonicalize()
        .with_context(|| format!("{}", file.display()))?;
    let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    let digest = Sha256::digest(&bytes);
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    Ok(format!("{hex}  {}", path.display()))
}

pub fn is_trusted(file: &Path) -> Result<bool> {
    let wanted = entry(file)?;
    let recorded = std::fs::read_to_string(trust_file()?).unwrap_or_default();
    Ok(recorded.lines().any(|line| line == wanted))
}

/// Records the file's current content as trusted, replacing older entries
/// for the same path.
pub fn trust(file: &Path) -> Result<String> {
    let wanted = entry(file)?;
    let path_suffix = wanted
        .split_once("  ")
        .map(|(_, path)| path.to_owned())
        .unwrap_or_default();
    let trust_file = trust_file()?;
    let recorded = std::fs::read_to_string(&trust_file).unwrap_or_default();
    let mut lines: Vec<&str> = recorded
        .lines()
        .filter(|line| !line.ends_with(&format!("  {path_suffix}")))
        .collect();
    lines.push(&wanted);
    if let Some(parent) = trust_file.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(&trust_file, lines.join("\n") + "\n")
        .with_context(|| format!("writing {}", trust_file.display()))?;
    Ok(path_suffix)
}
