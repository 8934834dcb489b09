//! `windlass sync-roots`: keeps a session's roots with the host's working
//! directories where MCP roots do not. Claude Code's `DirectoryAdded`
//! names the directory; on `UserPromptSubmit` (hosts older than MCP roots
//! support) the transcript is read on from where the last run stopped:
//! the latest environment snapshot's `additionalWorkingDirectories` (the
//! whole list), then the additions and removals written after it, by
//! `/add-dir` or `/permissions`. Either way the change goes to the
//! session's Roots actor over its control socket, as roots of source
//! `hook`, which count only while the MCP client names no roots itself.

use super::{Format, Run};
use crate::control::protocol::RootsChange;
use anyhow::{Context as _, Result};
use clap::Args;
use serde_json::Value;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use windlass_actors::store::{self, hooks};

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
        (Some(directory), _) => run.change_roots(RootsChange::Add(vec![directory.clone()]))?,
        (None, Some(transcript)) => {
            let transcript = transcript.display().to_string();
            let (changes, read_to) = read_transcript(run, Path::new(&transcript))?;
            for change in changes {
                run.change_roots(change)?;
            }
            // Only once applied: a change that failed is read again next time.
            hooks::set_transcript_offset(&run.store, &transcript, read_to, store::now_ms())?;
        }
        (None, None) => {}
    }
    Ok(None)
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
    let mut changes = Changes::default();
    for line in bytes[..complete].split(|byte| *byte == b'\n') {
        let Ok(entry) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if let Some(directories) = working_directories(&entry) {
            changes = Changes {
                set: Some(directories),
                ..Changes::default()
            };
        }
        let mut texts = Vec::new();
        strings(&entry, &mut texts);
        for text in texts {
            for (directory, is_added) in directory_changes(&without_escapes(text)) {
                changes.note(directory, is_added);
            }
        }
    }
    let read_to = offset + u64::try_from(complete).unwrap_or(0);
    Ok((changes.into_changes(), read_to))
}

/// What a transcript said of the working directories since a point.
#[derive(Default)]
struct Changes {
    /// The whole list, from the latest environment snapshot.
    set: Option<Vec<PathBuf>>,
    added: Vec<PathBuf>,
    removed: Vec<PathBuf>,
}

impl Changes {
    /// A directory added or removed after the snapshot: its last word
    /// counts.
    fn note(&mut self, directory: PathBuf, is_added: bool) {
        self.added.retain(|known| *known != directory);
        self.removed.retain(|known| *known != directory);
        match is_added {
            true => self.added.push(directory),
            false => self.removed.push(directory),
        }
    }

    fn into_changes(self) -> Vec<RootsChange> {
        let mut changes: Vec<RootsChange> = self.set.map(RootsChange::Set).into_iter().collect();
        if !self.added.is_empty() {
            changes.push(RootsChange::Add(self.added));
        }
        if !self.removed.is_empty() {
            changes.push(RootsChange::Remove(self.removed));
        }
        changes
    }
}

/// The added working directories an environment snapshot lists, at any
/// depth of a transcript entry.
fn working_directories(value: &Value) -> Option<Vec<PathBuf>> {
    match value {
        Value::Object(fields) => match fields.get("additionalWorkingDirectories") {
            Some(Value::Array(directories)) => Some(
                directories
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|path| path.starts_with('/'))
                    .map(PathBuf::from)
                    .collect(),
            ),
            _ => fields.values().find_map(working_directories),
        },
        Value::Array(items) => items.iter().find_map(working_directories),
        _ => None,
    }
}

/// `text` without terminal escape sequences: Claude Code writes a
/// command's output with the path in bold.
fn without_escapes(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut characters = text.chars();
    while let Some(character) = characters.next() {
        if character != '\u{1b}' {
            plain.push(character);
            continue;
        }
        if characters.next() == Some('[') {
            for parameter in characters.by_ref() {
                if parameter.is_ascii_alphabetic() {
                    break;
                }
            }
        }
    }
    plain
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

/// The directories a transcript text says were added (`true`) or removed,
/// in the words of `/add-dir` and of `/permissions`.
fn directory_changes(text: &str) -> Vec<(PathBuf, bool)> {
    const WORDING: [((&str, &str), bool); 3] = [
        (("Added ", " as a working directory"), true),
        (("Added directory ", " to workspace"), true),
        (("Removed directory ", " from workspace"), false),
    ];
    let mut changes = Vec::new();
    for line in text.lines() {
        for ((before, after), is_added) in WORDING {
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
    use serde_json::json;

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
        let permissions = "Removed directory /w/a from workspace\nAdded directory /w/b to workspace for this session";
        assert_eq!(
            directory_changes(permissions),
            vec![
                (PathBuf::from("/w/a"), false),
                (PathBuf::from("/w/b"), true)
            ]
        );
        let bold = "<local-command-stdout>Added \u{1b}[1m/w/c\u{1b}[22m as a working directory";
        assert_eq!(
            directory_changes(&without_escapes(bold)),
            vec![(PathBuf::from("/w/c"), true)]
        );
    }

    #[test]
    fn the_latest_environment_snapshot_lists_every_added_directory() {
        let entry = json!({"type": "attachment", "attachment": {"type": "environment",
            "snapshot": {"workingDirectory": "/w", "additionalWorkingDirectories": ["/w2", "/w3"]}}});
        assert_eq!(
            working_directories(&entry),
            Some(vec![PathBuf::from("/w2"), PathBuf::from("/w3")])
        );
        assert_eq!(working_directories(&json!({"message": "hi"})), None);
    }

    #[test]
    fn strings_are_found_at_any_depth() {
        let entry = json!({"message": {"content": [{"text": "Added /x as a working directory"}]}});
        let mut found = Vec::new();
        strings(&entry, &mut found);
        assert_eq!(found, vec!["Added /x as a working directory"]);
    }
}
