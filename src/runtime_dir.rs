//! Where a user's daemons are found: the runtime directory (0700, owned by
//! the user), and in it each version's socket and start lock. A socket's
//! name carries its version, so a bridge never attaches to a daemon of
//! another version.
//!
//! The directory depends only on what every process of the user has, its
//! uid and home directory, never on variables a host may strip: Codex
//! gives its MCP servers a short list of variables without
//! `XDG_RUNTIME_DIR` while its hooks get them all, and a daemon found
//! through that variable would be a different one for each
//! (docs/decisions.md). `WINDLASS_RUNTIME_DIR` chooses another directory
//! explicitly, for every process that is given it.

use anyhow::{Context as _, Result, bail};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// How a standalone session's control socket is named, before its pid.
const SESSION_SOCKET: &str = "session-";

/// Unix socket paths longer than this do not fit `sun_path` everywhere.
const MAX_SOCKET_PATH: usize = 100;

/// The version daemons and bridges announce: the package's, unless
/// `WINDLASS_VERSION` overrides it (to test upgrades without a rebuild).
pub fn version() -> String {
    let version = std::env::var("WINDLASS_VERSION")
        .ok()
        .filter(|version| !version.is_empty())
        .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned());
    version
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

pub struct RuntimeDir {
    directory: PathBuf,
}

impl RuntimeDir {
    /// `WINDLASS_RUNTIME_DIR`, else `~/.local/state/windlass/run` of the
    /// user's home directory (`HOME`, else the password database's);
    /// `/tmp/windlass-UID-HASH` (the hash of that directory) when it would
    /// make socket paths too long. Created 0700 if missing; refused if
    /// another user owns it.
    pub fn open() -> Result<Self> {
        let preferred = match std::env::var_os("WINDLASS_RUNTIME_DIR").filter(|dir| !dir.is_empty())
        {
            Some(explicit) => PathBuf::from(explicit),
            None => std::env::home_dir()
                .context("the user has no home directory")?
                .join(".local/state/windlass/run"),
        };
        let longest = preferred.join(socket_name(&format!("{}-x", version())));
        let directory = if longest.as_os_str().len() > MAX_SOCKET_PATH {
            PathBuf::from(format!(
                "/tmp/windlass-{}-{}",
                rustix::process::getuid().as_raw(),
                short_hash(&preferred)
            ))
        } else {
            preferred
        };
        make_private(&directory)?;
        Ok(Self { directory })
    }

    /// The socket of this version's daemon.
    pub fn socket(&self) -> PathBuf {
        self.directory.join(socket_name(&version()))
    }

    /// Held by a bridge while it starts this version's daemon.
    pub fn start_lock(&self) -> PathBuf {
        self.directory.join(format!("windlass-{}.lock", version()))
    }

    /// The control socket of the standalone session served by this
    /// process. Sockets left by standalone processes that are gone are
    /// removed on the way.
    pub fn session_socket(&self) -> PathBuf {
        for (pid, socket) in self.session_sockets() {
            if !crate::process::alive(pid) {
                let _gone = std::fs::remove_file(socket);
            }
        }
        self.directory
            .join(format!("{SESSION_SOCKET}{}.sock", std::process::id()))
    }

    /// Standalone sessions' control sockets, with their process ids.
    fn session_sockets(&self) -> Vec<(u32, PathBuf)> {
        let Ok(entries) = std::fs::read_dir(&self.directory) else {
            return Vec::new();
        };
        entries
            .filter_map(std::result::Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name();
                let pid = name
                    .to_str()?
                    .strip_prefix(SESSION_SOCKET)?
                    .strip_suffix(".sock")?
                    .parse()
                    .ok()?;
                Some((pid, entry.path()))
            })
            .collect()
    }

    /// Every daemon socket in the directory, of any version.
    pub fn sockets(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(&self.directory) else {
            return Vec::new();
        };
        let mut sockets: Vec<PathBuf> = entries
            .filter_map(std::result::Result::ok)
            .map(|entry| entry.path())
            .filter(|path| {
                path.file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(|name| name.starts_with("windlass-") && name.ends_with(".sock"))
            })
            .collect();
        sockets.sort();
        sockets
    }
}

/// Eight hex digits naming a directory too long for a socket path: the
/// same directory always gives the same digits.
fn short_hash(directory: &Path) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(directory.as_os_str().as_encoded_bytes());
    digest[..4]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn socket_name(version: &str) -> String {
    format!("windlass-{version}.sock")
}

/// Creates `directory` 0700, or checks that the existing one is ours and
/// closes it to others.
fn make_private(directory: &Path) -> Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(directory)
        .with_context(|| format!("creating {}", directory.display()))?;
    let metadata = std::fs::symlink_metadata(directory)
        .with_context(|| format!("reading {}", directory.display()))?;
    if !metadata.is_dir() {
        bail!("{} is not a directory", directory.display());
    }
    if metadata.uid() != rustix::process::getuid().as_raw() {
        bail!("{} belongs to another user", directory.display());
    }
    if metadata.mode() & 0o077 != 0 {
        std::fs::set_permissions(directory, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("closing {} to other users", directory.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_directory_is_closed_to_others() {
        let base = tempfile::tempdir().unwrap();
        let directory = base.path().join("run");
        std::fs::create_dir(&directory).unwrap();
        std::fs::set_permissions(&directory, std::fs::Permissions::from_mode(0o755)).unwrap();
        make_private(&directory).unwrap();
        let mode = std::fs::metadata(&directory).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}
