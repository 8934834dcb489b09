//! The HTTP endpoint's bearer token: 32 random bytes in hex, in
//! `http-token` in the state directory, readable by this user only.
//! `windlass token` prints it, making one if there is none; `--rotate`
//! replaces it, and the endpoint reads the file on each request, so the
//! old token stops working at once.

use anyhow::{Context as _, Result};
use std::io::{Read as _, Write as _};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

const TOKEN_BYTES: usize = 32;

pub fn path() -> Result<PathBuf> {
    Ok(crate::state_dir::path()?.join("http-token"))
}

/// `windlass token [--rotate]`.
pub fn run(rotate: bool) -> Result<()> {
    let file = path()?;
    let token = if rotate {
        write_new(&file)?
    } else {
        current_or_new(&file)?
    };
    writeln!(std::io::stdout().lock(), "{token}")?;
    Ok(())
}

/// The token in `file`, written first if there is none.
pub fn current_or_new(file: &Path) -> Result<String> {
    match read(file) {
        Ok(token) => Ok(token),
        Err(_) if !file.exists() => write_new(file),
        Err(error) => Err(error),
    }
}

/// The token in `file`; an empty or unreadable file is an error, never an
/// empty token that every request would match.
pub fn read(file: &Path) -> Result<String> {
    let token = std::fs::read_to_string(file)
        .with_context(|| format!("reading the HTTP token in {}", file.display()))?;
    let token = token.trim();
    anyhow::ensure!(
        token.len() >= TOKEN_BYTES,
        "{} holds no usable token; `windlass token --rotate` makes one",
        file.display()
    );
    Ok(token.to_owned())
}

fn write_new(file: &Path) -> Result<String> {
    let token = random_hex()?;
    if let Some(directory) = file.parent() {
        std::fs::create_dir_all(directory)
            .with_context(|| format!("creating {}", directory.display()))?;
    }
    // Written beside and renamed over: a reader never sees half a token.
    let partial = file.with_extension("new");
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&partial)
        .with_context(|| format!("writing {}", partial.display()))?;
    writeln!(out, "{token}")?;
    out.sync_all()?;
    std::fs::rename(&partial, file).with_context(|| format!("writing {}", file.display()))?;
    Ok(token)
}

fn random_hex() -> Result<String> {
    let mut bytes = [0u8; TOKEN_BYTES];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .context("reading /dev/urandom")?;
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// Whether `given` is `expected`, in time that does not depend on where
/// they differ.
pub fn matches(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_token_is_made_once_private_and_replaced_on_rotation() {
        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("state/http-token");
        let first = current_or_new(&file).unwrap();
        assert_eq!(first.len(), TOKEN_BYTES * 2);
        assert_eq!(current_or_new(&file).unwrap(), first);
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let rotated = write_new(&file).unwrap();
        assert_ne!(rotated, first);
        assert_eq!(read(&file).unwrap(), rotated);
    }

    #[test]
    fn an_empty_file_is_no_token() {
        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("http-token");
        std::fs::write(&file, "\n").unwrap();
        assert!(read(&file).is_err());
        assert!(current_or_new(&file).is_err());
    }

    #[test]
    fn tokens_match_only_in_full() {
        assert!(matches(b"abc", b"abc"));
        assert!(!matches(b"abd", b"abc"));
        assert!(!matches(b"ab", b"abc"));
        assert!(!matches(b"", b"abc"));
    }
}
