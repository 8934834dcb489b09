//! The hosts' hooks (`release`, `acquire`, `sync-roots`): each run is a
//! process of its own, started by Claude Code or Gemini CLI around a tool
//! use. It reads the host's JSON on stdin (unknown fields ignored), finds
//! the Windlass session it belongs to, acts over that session's control
//! socket and the store, and answers in the host's JSON on stdout. A hook
//! never breaks its host: any error of its own is logged (`logs/hooks.log`)
//! and recorded, and the hook prints nothing and exits 0.

pub mod acquire;
pub mod hosts;
mod patch;
pub mod release;
pub mod sync_roots;

pub use hosts::Format;

use crate::control::client;
use crate::control::protocol::{Answer, Request, RootsChange};
use anyhow::{Context as _, Result};
use hosts::{Host, ToolKind};
use rusqlite::Connection;
use serde::Deserialize;
use serde_json::{Value, json};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, UNIX_EPOCH};
use windlass_actors::store;
use windlass_actors::store::events::{self, Event};
use windlass_actors::store::sessions::{self, LiveSession};
use windlass_actors::vocabulary::events::EventKind;

/// Longest stdin a hook reads; a tool's input with a whole file's content
/// fits many times over.
const MAX_INPUT: u64 = 64 * 1024 * 1024;
/// Size past which `hooks.log` is rotated to `hooks.log.1`.
const LOG_LIMIT: u64 = 1024 * 1024;
/// How long the daemon may take to list its sessions.
const ATTACHED_LIMIT: Duration = Duration::from_secs(2);
/// How long a session may take to apply a roots change.
const ROOTS_LIMIT: Duration = Duration::from_secs(10);

/// What a host sends a hook; every field optional, others ignored. Hosts
/// that name fields in camelCase (Copilot CLI's own hooks) are read too.
#[derive(Debug, Default, Deserialize)]
pub struct Input {
    #[serde(alias = "sessionId")]
    pub session_id: Option<String>,
    /// Inside a Claude Code subagent.
    pub agent_id: Option<String>,
    pub cwd: Option<PathBuf>,
    #[serde(alias = "hookEventName")]
    pub hook_event_name: Option<String>,
    #[serde(alias = "toolName")]
    pub tool_name: Option<String>,
    #[serde(alias = "toolArgs", default, deserialize_with = "object_or_json_text")]
    pub tool_input: Option<Value>,
    pub transcript_path: Option<PathBuf>,
    /// Claude Code's `DirectoryAdded`.
    pub directory: Option<PathBuf>,
    /// Claude Code's `PostToolBatch`.
    pub tool_calls: Option<Vec<ToolCall>>,
}

#[derive(Debug, Default, Deserialize)]
pub struct ToolCall {
    pub tool_name: Option<String>,
    pub tool_input: Option<Value>,
}

/// A file a tool is about, absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touched {
    pub path: PathBuf,
    /// The tool only reads it.
    pub read: bool,
    /// The tool removes it (a patch that deletes or moves it away).
    pub removed: bool,
}

/// A tool's input as an object, also when the host sends it as JSON text.
fn object_or_json_text<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Value>, D::Error> {
    let value = Option::<Value>::deserialize(deserializer)?;
    Ok(value.map(|value| match value {
        Value::String(text) => serde_json::from_str(&text).unwrap_or(Value::String(text)),
        other => other,
    }))
}

impl Input {
    /// Who holds leases and is told of errors: the host's session, and
    /// the subagent within it.
    pub fn owner(&self) -> String {
        let session = self.session_id.as_deref().unwrap_or("unknown");
        match &self.agent_id {
            Some(agent) => format!("{session}:{agent}"),
            None => session.to_owned(),
        }
    }

    fn cwd(&self) -> PathBuf {
        self.cwd
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"))
    }

    /// The files the tool (or each tool of a batch that writes) is about,
    /// each once, as `host` names its tools. A tool the host description
    /// does not know is taken to write the file its path field names: the
    /// host's matcher chose to run the hook for it.
    pub fn touched(&self, host: &Host) -> Vec<Touched> {
        let mut files: Vec<Touched> = match &self.tool_calls {
            Some(calls) => calls
                .iter()
                .filter(|call| {
                    let tool = call.tool_name.as_deref().unwrap_or_default();
                    let kind = host.kind(tool, call.tool_input.as_ref());
                    matches!(kind, Some(ToolKind::Write | ToolKind::Patch))
                })
                .filter_map(|call| call.tool_input.as_ref())
                .flat_map(|input| self.files_in(input, None))
                .collect(),
            None => {
                let tool = self.tool_name.as_deref().unwrap_or_default();
                let kind = host.kind(tool, self.tool_input.as_ref());
                self.tool_input
                    .iter()
                    .flat_map(|input| self.files_in(input, kind))
                    .collect()
            }
        };
        let mut seen = std::collections::HashSet::new();
        files.retain(|file| seen.insert(file.path.clone()));
        files
    }

    /// The file a tool's path field names; else, for an input that
    /// carries a patch, every file the patch names. A path comes first: a
    /// file written may itself hold the text of a patch.
    fn files_in(&self, input: &Value, kind: Option<ToolKind>) -> Vec<Touched> {
        let path = [
            "file_path",
            "filePath",
            "file",
            "notebook_path",
            "absolute_path",
            "path",
        ]
        .iter()
        .find_map(|field| input.get(field).and_then(Value::as_str));
        if let Some(path) = path {
            return vec![Touched {
                path: self.absolute(path),
                read: kind == Some(ToolKind::Read),
                removed: false,
            }];
        }
        let Some(patch) = hosts::patch_text(input) else {
            return Vec::new();
        };
        patch::files(&patch)
            .into_iter()
            .map(|file| Touched {
                path: self.absolute(&file.path.display().to_string()),
                read: false,
                removed: file.removed,
            })
            .collect()
    }

    fn absolute(&self, path: &str) -> PathBuf {
        let path = Path::new(path.strip_prefix("file://").unwrap_or(path));
        let absolute = match path.is_absolute() {
            true => path.to_path_buf(),
            false => self.cwd().join(path),
        };
        // A file being written may not exist yet: its directory is resolved.
        if let Ok(resolved) = std::fs::canonicalize(&absolute) {
            return resolved;
        }
        match (absolute.parent(), absolute.file_name()) {
            (Some(parent), Some(name)) => std::fs::canonicalize(parent)
                .map(|parent| parent.join(name))
                .unwrap_or(absolute),
            _ => absolute,
        }
    }
}

/// One hook run: its input, the store, the session found, and the events
/// to record when it ends.
pub struct Run {
    pub name: &'static str,
    pub input: Input,
    pub store: Connection,
    pub session: Option<LiveSession>,
    events: Vec<Event>,
    /// What went wrong in a part of the run that did not stop it.
    failures: Vec<String>,
}

impl Run {
    /// Records an event of this run's session when the run ends.
    pub fn record(&mut self, kind: EventKind, detail: Value) {
        let mut event = Event::now(kind, self.session.as_ref().map(|session| session.id));
        event.tool = Some(self.name.to_owned());
        event.detail = detail;
        self.events.push(event);
    }

    /// A part of the run failed (one file of several): recorded, and the
    /// run counts as failed, while the rest of it goes on.
    pub fn failed(&mut self, detail: Value, error: String) {
        let mut detail = detail;
        detail["error"] = Value::from(error.clone());
        self.record(EventKind::Error, detail);
        self.failures.push(error);
    }

    /// The host's answer carrying `text` as context for the model.
    pub fn context(&self, format: Format, text: &str) -> Value {
        format.host().context(&self.event_name(format), text)
    }

    /// Asks the session's Roots to apply `change`, as roots of the hooks.
    pub fn change_roots(&mut self, change: RootsChange) -> Result<()> {
        let Some(session) = &self.session else {
            anyhow::bail!("no live windlass session for this host session or directory");
        };
        let request = Request::Roots {
            session: session.id,
            change: change.clone(),
        };
        let (roots, refused) =
            client::expect(
                &session.socket,
                &request,
                ROOTS_LIMIT,
                |answer| match answer {
                    Answer::Roots { roots, refused } => Some((roots, refused)),
                    _ => None,
                },
            )?;
        self.record(
            EventKind::RootsChanged,
            json!({"change": change, "roots": roots, "refused": refused}),
        );
        Ok(())
    }

    /// Adds the directory the host works in to its session's roots when
    /// none of them holds it: a host that answers `roots/list` with
    /// nothing (Codex, Copilot CLI) is followed where its hooks run. The
    /// client's own roots, where it names some, still come first.
    fn follow_directory(&mut self) {
        let cwd = self.input.cwd();
        let held = self
            .session
            .as_ref()
            .is_none_or(|session| session.roots.iter().any(|root| cwd.starts_with(root)));
        if held {
            return;
        }
        if let Err(error) = self.change_roots(RootsChange::Add(vec![cwd.clone()])) {
            self.failed(json!({"directory": cwd}), format!("{error:#}"));
        }
    }

    fn event_name(&self, format: Format) -> String {
        self.input
            .hook_event_name
            .clone()
            .unwrap_or_else(|| format.host().event(self.name == "acquire").to_owned())
    }
}

/// Runs hook `name`: `body` gets the run and says what to print. Always
/// returns `Ok`: the host must never see a hook fail.
pub fn run(name: &'static str, body: impl FnOnce(&mut Run) -> Result<Option<Value>>) -> Result<()> {
    let started = Instant::now();
    let mut run = match prepare(name) {
        Ok(run) => run,
        Err(error) => {
            log_failure(name, &format!("{error:#}"));
            return Ok(());
        }
    };
    if name != "sync-roots" {
        run.follow_directory();
    }
    let outcome = body(&mut run);
    let error = match &outcome {
        Err(error) => Some(format!("{error:#}")),
        Ok(_) if !run.failures.is_empty() => Some(run.failures.join("; ")),
        Ok(_) => None,
    };
    let mut event = Event::now(
        EventKind::Hook,
        run.session.as_ref().map(|session| session.id),
    );
    event.tool = Some(name.to_owned());
    event.duration_us = i64::try_from(started.elapsed().as_micros()).ok();
    event.ok = Some(error.is_none());
    event.detail = json!({
        "event": run.input.hook_event_name,
        "tool": run.input.tool_name,
        "owner": run.input.owner(),
        "error": error,
    });
    run.events.push(event);
    if let Err(failed) = write_events(&mut run.store, &run.events) {
        log_failure(name, &format!("recording the run: {failed}"));
    }
    match outcome {
        Ok(Some(answer)) => {
            let mut out = std::io::stdout().lock();
            let _printed = writeln!(out, "{answer}").and_then(|()| out.flush());
        }
        Ok(None) => {}
        Err(error) => log_failure(name, &format!("{error:#}")),
    }
    Ok(())
}

fn prepare(name: &'static str) -> Result<Run> {
    let mut raw = String::new();
    std::io::stdin()
        .take(MAX_INPUT)
        .read_to_string(&mut raw)
        .context("reading stdin")?;
    let input: Input = serde_json::from_str(&raw).context("stdin is not the host's JSON")?;
    let path = crate::state_dir::store_path().context("no state directory")?;
    let store = store::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let cwd = input.cwd();
    let host = input.session_id.as_deref();
    let ancestors = crate::process::ancestors();
    let session = match sessions::find_live(&store, host, &ancestors, &cwd, crate::process::alive)?
    {
        Some(session) => Some(session),
        None => attached_session(host, &ancestors, &cwd),
    };
    // A session found by its directory alone may be another host's (its
    // own session's roots not yet known): it takes this host's session
    // id only when this host started it, or nothing says who did.
    if let (Some(session), Some(host)) = (&session, host)
        && session.host_session.is_none()
        && session
            .client_pid
            .is_none_or(|client| ancestors.contains(&client))
    {
        sessions::adopt_host_session(&store, session.id, host)?;
    }
    Ok(Run {
        name,
        input,
        store,
        session,
        events: Vec::new(),
        failures: Vec::new(),
    })
}

/// The session as the daemon knows it, for a hook run before the
/// session's row reached the store, or whose store is another (a host
/// that gives its hooks an `XDG_STATE_HOME` its MCP server does not see):
/// chosen as [`sessions::choose`] does.
fn attached_session(host: Option<&str>, ancestors: &[u32], cwd: &Path) -> Option<LiveSession> {
    let socket = crate::runtime_dir::RuntimeDir::open().ok()?.socket();
    let attached = client::expect(
        &socket,
        &Request::Sessions,
        ATTACHED_LIMIT,
        |answer| match answer {
            Answer::Sessions(sessions) => Some(sessions),
            _ => None,
        },
    )
    .ok()?;
    let live = attached
        .into_iter()
        .map(|session| LiveSession {
            id: session.id,
            socket: socket.clone(),
            host_session: session.host_session,
            client_pid: session.client_pid,
            roots: session.roots,
        })
        .collect();
    sessions::choose(live, host, ancestors, cwd)
}

fn write_events(store: &mut Connection, recorded: &[Event]) -> rusqlite::Result<()> {
    let transaction = store.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    for event in recorded {
        events::insert(&transaction, event)?;
    }
    transaction.commit()
}

/// Appends one line to `logs/hooks.log` in the state directory: hooks are
/// a process per tool use, too many for a log file each.
fn log_failure(hook: &str, message: &str) {
    let Ok(directory) = crate::logging::logs_directory() else {
        return;
    };
    let _created = std::fs::create_dir_all(&directory);
    let path = directory.join("hooks.log");
    if std::fs::metadata(&path).is_ok_and(|metadata| metadata.len() > LOG_LIMIT) {
        let _rotated = std::fs::rename(&path, directory.join("hooks.log.1"));
    }
    let line = format!(
        "{} {hook} pid {}: {}\n",
        crate::clock::shown_time(store::now_ms()),
        std::process::id(),
        message.replace('\n', " ")
    );
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _written = file.write_all(line.as_bytes());
    }
}

/// A file's modification time in nanoseconds since the epoch, if it
/// exists.
pub fn mtime_ns(path: &Path) -> Option<i64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let since = modified.duration_since(UNIX_EPOCH).ok()?;
    i64::try_from(since.as_nanos()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_names_each_edited_file_once_and_relative_paths_from_cwd() {
        let input: Input = serde_json::from_value(json!({
            "session_id": "s",
            "agent_id": "a",
            "cwd": "/nonexistent/project",
            "tool_calls": [
                {"tool_name": "Edit", "tool_input": {"file_path": "/nonexistent/project/a.py"}},
                {"tool_name": "Write", "tool_input": {"file_path": "b.py"}},
                {"tool_name": "Edit", "tool_input": {"file_path": "/nonexistent/project/a.py"}},
                {"tool_name": "Read", "tool_input": {"file_path": "c.py"}},
            ],
            "a_later_field": 1,
        }))
        .unwrap();
        assert_eq!(input.owner(), "s:a");
        let files: Vec<PathBuf> = input
            .touched(Format::Claude.host())
            .into_iter()
            .map(|file| file.path)
            .collect();
        assert_eq!(
            files,
            vec![
                PathBuf::from("/nonexistent/project/a.py"),
                PathBuf::from("/nonexistent/project/b.py")
            ]
        );
    }

    #[test]
    fn a_patch_names_every_file_and_camel_case_input_is_read() {
        let patch = "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n*** Delete File: /nonexistent/c.py\n*** End Patch";
        let input: Input = serde_json::from_value(json!({
            "sessionId": "s",
            "cwd": "/nonexistent/project",
            "toolName": "apply_patch",
            "toolArgs": json!({"input": patch}).to_string(),
        }))
        .unwrap();
        let touched = input.touched(Format::Copilot.host());
        let shown: Vec<(String, bool)> = touched
            .iter()
            .map(|file| (file.path.display().to_string(), file.removed))
            .collect();
        assert_eq!(
            shown,
            vec![
                ("/nonexistent/project/a.py".to_owned(), true),
                ("/nonexistent/project/b.py".to_owned(), false),
                ("/nonexistent/c.py".to_owned(), true),
            ]
        );
        assert_eq!(input.owner(), "s");
    }

    #[test]
    fn a_written_file_that_holds_a_patch_is_that_file() {
        let input: Input = serde_json::from_value(json!({
            "tool_name": "Write",
            "tool_input": {
                "file_path": "/nonexistent/notes.md",
                "content": "*** Begin Patch\n*** Delete File: /nonexistent/a.py\n*** End Patch\n",
            },
        }))
        .unwrap();
        let touched = input.touched(Format::Claude.host());
        assert_eq!(touched.len(), 1);
        assert_eq!(touched[0].path, PathBuf::from("/nonexistent/notes.md"));
        assert!(!touched[0].removed);
    }

    #[test]
    fn a_read_is_a_read_only_where_the_host_says_so() {
        let input = |tool: &str| -> Input {
            serde_json::from_value(json!({
                "tool_name": tool,
                "tool_input": {"file_path": "/nonexistent/a.py"},
            }))
            .unwrap()
        };
        assert!(input("Read").touched(Format::Claude.host())[0].read);
        assert!(input("view").touched(Format::Copilot.host())[0].read);
        assert!(!input("replace").touched(Format::Gemini.host())[0].read);
    }
}
