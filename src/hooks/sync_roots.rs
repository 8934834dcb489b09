//! `windlass sync-roots`: keeps a session's roots with the host's working
//! directories where MCP roots do not. Claude Code's `DirectoryAdded`
//! names the directory; on `UserPromptSubmit` (hosts older than MCP roots
//! support) the transcript is read on from where the last run stopped for
//! `/add-dir` additions and removals. Either way the change goes to the
//! session's Roots actor over its control socket, as roots of source
//! `hook`.

use super::{Format, Run};
use crate::control::client;
use crate::control::protocol::{Answer, Request, RootsChange};
use anyhow::{Context as _, Result, bail};
use clap::Args;
use serde_json::{Value, json};
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;
use windlass_actors::recorder::kind;
use windlass_actors::store::{self, hooks};

/// How long the session may take to apply a roots change.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of a transcript read in one run.
const MAX_READ: u64 = 64 * 1024 * 1024;

#[derive(Args, Clone, Debug)]
pub struct SyncRootsArgs {
    /// The host whose input this is (both are read alike).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
}

pub fn run(_args: &SyncRootsArgs) -> Result<()> {
    super::run("sync-roots", sync_roots)
}

fn sync_roots(run: &mut Run) -> Result<Option<Value>> {
    match (&run.input.directory, &run.input.transcript_path) {
        (Some(directory), _) => apply(run, RootsChange::Add(vec![directory.clone()]))?,
        (None, Some(transcript)) => {
            let transcript = transcript.display().to_string();
            let (changes, read_to) = read_transcript(run, Path::new(&transcript))?;
            for change in changes {
                apply(run, change)?;
            }
            // Only once applied: a change that failed is read again next time.
            hooks::set_transcript_offset(&run.store, &transcript, read_to, store::now_ms())?;
        }
        (None, None) => {}
    }
    Ok(None)
}

fn apply(run: &mut Run, change: RootsChange) -> Result<()> {
    let Some(session) = &run.session else {
        bail!("no live windlass session for this host session or directory");
    };
    let request = Request::Roots {
        session: session.id.clone(),
        change: change.clone(),
    };
    let (roots, refused) =
        client::expect(
            &session.socket,
            &request,
            ROOTS_TIMEOUT,
            |answer| match answer {
                Answer::Roots { roots, refused } => Some((roots, refused)),
                _ => None,
            },
        )?;
    run.record(
        kind::ROOTS_CHANGED,
        json!({"change": change, "roots": roots, "refused": refused}),
    );
    Ok(())
}

/// The `/add-dir` changes written to the transcript since the last run,
/// each directory's last word kept, and the offset read to.
fn read_transcript(run: &Run, transcript: &Path) -> Result<(Vec<RootsChange>, u64)> {
    let shown = transcript.display().to_string();
    let mut offset = hooks::transcript_offset(&run.store, &shown)?;
    let mut file = match std::fs::File::open(transcript) {
        Ok(file) => file,
        // A session's first prompt comes before its transcript is written:
        // there is nothing to read yet.
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok((Vec::new(), offset));
        }
        Err(error) => {
            return Err(error).with_context(|| format!("opening the transcript {shown}"));
        }
    };
    let length = file.metadata()?.len();
    if offset > length {
        // A transcript written anew (after `/clear`) is read from its start.
        offset = 0;
    }
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::new();
    file.take(MAX_READ).read_to_end(&mut bytes)?;
    // Only whole lines: the last may still be being written.
    let complete = bytes
        .iter()
        .rposition(|byte| *byte == b'\n')
        .map_or(0, |at| at + 1);
    let mut added: Vec<PathBuf> = Vec::new();
    let mut removed: Vec<PathBuf> = Vec::new();
    for line in bytes[..complete].split(|byte| *byte == b'\n') {
        let Ok(entry) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let mut texts = Vec::new();
        strings(&entry, &mut texts);
        for text in texts {
            for (directory, is_added) in directory_changes(text) {
                added.retain(|known| *known != directory);
                removed.retain(|known| *known != directory);
                match is_added {
                    true => added.push(directory),
                    false => removed.push(directory),
                }
            }
        }
    }
    let read_to = offset + u64::try_from(complete).unwrap_or(0);
    let mut changes = Vec::new();
    if !added.is_empty() {
        changes.push(RootsChange::Add(added));
    }
    if !removed.is_empty() {
        changes.push(RootsChange::Remove(removed));
    }
    Ok((changes, read_to))
}

/// Every string inside `value`.
fn strings<'a>(value: &'a Value, found: &mut Vec<&'a str>) {
    match value {
        Value::String(text) => found.push(text),
        Value::Array(items) => items.iter().for_each(|item| strings(item, found)),
        Value::Object(fields) => fields.values().for_each(|item| strings(item, found)),
        _ => {}
    }
}

/// The directories a transcript text says were added (`true`) or removed.
fn directory_changes(text: &str) -> Vec<(PathBuf, bool)> {
    const ADDED: (&str, &str) = ("Added ", " as a working directory");
    const REMOVED: (&str, &str) = ("Removed directory ", " from workspace");
    let mut changes = Vec::new();
    for line in text.lines() {
        for ((before, after), is_added) in [(ADDED, true), (REMOVED, false)] {
            if let Some(start) = line.find(before) {
                let rest = &line[start + before.len()..];
                if let Some(end) = rest.find(after) {
                    let path = rest[..end].trim().trim_matches('`');
                    if path.starts_with('/') {
                        changes.push((PathBuf::from(path), is_added));
                    }
                }
            }
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn additions_and_removals_are_found_in_transcript_text() {
        let text = "Added /work/lib as a working directory.\nsomething else\nRemoved directory /work/old from workspace";
        assert_eq!(
            directory_changes(text),
            vec![
                (PathBuf::from("/work/lib"), true),
                (PathBuf::from("/work/old"), false)
            ]
        );
        assert!(directory_changes("Added a test as a working directory").is_empty());
    }

    #[test]
    fn strings_are_found_at_any_depth() {
        let entry = json!({"message": {"content": [{"text": "Added /x as a working directory"}]}});
        let mut found = Vec::new();
        strings(&entry, &mut found);
        assert_eq!(found, vec!["Added /x as a working directory"]);
    }
}
