//! A session's status as data: what the `status` tool renders for a model
//! and what the control socket gives `windlass status SESSION`, which
//! renders the same lines.

use super::counted::counted;
use super::ids::SessionId;
use super::server_states::{Phase, ProcessState, Strategy};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStatus {
    /// Configuration problems and why nothing is recorded, if nothing is.
    pub warnings: Vec<String>,
    pub watching: Watching,
    /// `None` in a standalone process.
    pub daemon: Option<DaemonShare>,
    pub roots: Vec<RootStatus>,
    pub servers: Vec<ServerReport>,
    /// Its tool calls in flight (not the `status` call asking), the
    /// longest running first.
    #[serde(default)]
    pub running: Vec<RunningCall>,
    /// The MCP client's name and version, once it said them.
    #[serde(default)]
    pub client: Option<String>,
    /// What the symbol index holds for the session's roots.
    #[serde(default)]
    pub index: Option<IndexStatus>,
}

/// What the symbol index holds for some roots.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexStatus {
    /// Each server with files indexed under the roots: how many, and
    /// whether a pass of it has been over every root.
    pub servers: Vec<IndexedServer>,
    /// Files under the roots changed on disk since they were read.
    pub changed: usize,
    /// Why the index cannot be used, if it cannot.
    pub problem: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexedServer {
    pub server: String,
    pub files: u64,
    pub every_root: bool,
}

impl IndexStatus {
    fn line(&self) -> String {
        if let Some(problem) = &self.problem {
            return format!("warning: the symbol index cannot be used: {problem}");
        }
        if self.servers.is_empty() {
            return "symbol index: nothing read yet".to_owned();
        }
        let servers: Vec<String> = self
            .servers
            .iter()
            .map(|indexed| {
                let reach = match indexed.every_root {
                    true => "every root read",
                    false => "reading",
                };
                format!(
                    "[{}] {}, {reach}",
                    indexed.server,
                    counted(indexed.files, "file")
                )
            })
            .collect();
        let mut line = format!("symbol index: {}", servers.join("; "));
        if self.changed > 0 {
            line.push_str(&format!(
                "; {} changed since read, to read again",
                counted(self.changed, "file")
            ));
        }
        line
    }
}

/// A tool call in flight, and for how long so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunningCall {
    pub tool: String,
    pub seconds: f64,
}

/// Whether changes on disk are seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Watching {
    SettingUp,
    Directories(usize),
    /// Some or all changes go unseen, and why.
    Failing(String),
}

/// The session's place in a daemon.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaemonShare {
    pub session: SessionId,
    pub pid: u32,
    /// Sessions attached, this one included.
    pub sessions: usize,
    /// The servers' resident memory above which idle ones stop, in
    /// bytes, if the daemon has a budget.
    #[serde(default)]
    pub memory_budget: Option<u64>,
}

/// One root, and where it came from (`pinned`, `client`, `hook`, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootStatus {
    pub name: String,
    pub path: PathBuf,
    pub sources: Vec<String>,
}

/// One of the session's servers. In a daemon, what the server itself said
/// (why it stopped, its last error, its stderr) shows no path outside the
/// session's roots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerReport {
    pub name: String,
    pub languages: Vec<String>,
    pub command: String,
    /// How the session uses it, when it is more than a language server
    /// (`linter`, `min severity warning`).
    #[serde(default)]
    pub duties: Vec<String>,
    pub phase: Phase,
    /// While a process runs and answers.
    pub process: Option<ProcessReport>,
    pub restarts: u32,
    /// The other sessions that share it, by id.
    pub shared_with: Vec<SessionId>,
    /// Why it was stopped, while it is stopped on purpose.
    pub stopped: Option<String>,
    pub last_error: Option<String>,
    /// Shown while it is failed or restarting.
    pub stderr: String,
}

/// What a running server process is doing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessReport {
    pub state: ProcessState,
    pub pid: Option<u32>,
    pub uptime_seconds: u64,
    pub open_documents: usize,
    /// The position encoding agreed, by its LSP name.
    pub encoding: Option<String>,
    /// CPU seconds and resident bytes, once the Monitor has sampled it.
    pub usage: Option<(f64, u64)>,
    pub strategy: Strategy,
    /// How many rounds its recent checks took at most, and how long a
    /// later round is waited for after the one before.
    pub rounds: u32,
    pub round_gap_ms: u64,
    /// Requests waiting for their session's turn.
    pub queued: usize,
    /// Requests sent to it and not answered yet.
    #[serde(default)]
    pub in_flight: usize,
    /// What the server is known not to see (no compilation database).
    pub gaps: Vec<String>,
}

impl SessionStatus {
    /// The status as `status` shows it: warnings, file watching, the
    /// session's place in a daemon, roots, then a few lines per server.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .warnings
            .iter()
            .map(|warning| format!("warning: {warning}"))
            .collect();
        lines.push(match &self.watching {
            Watching::Failing(problem) => format!("warning: {problem}"),
            Watching::SettingUp => "setting up file watching".to_owned(),
            Watching::Directories(count) => format!("watching {count} directories for changes"),
        });
        if let Some(daemon) = &self.daemon {
            lines.push(format!(
                "session {} of daemon pid {} ({} attached)",
                daemon.session, daemon.pid, daemon.sessions
            ));
        }
        if !self.running.is_empty() {
            let calls: Vec<String> = self
                .running
                .iter()
                .map(|call| format!("{} for {:.1}s", call.tool, call.seconds))
                .collect();
            lines.push(format!("running: {}", calls.join(", ")));
        }
        lines.extend(self.roots.iter().map(|root| {
            format!(
                "root {} {} (from {})",
                root.name,
                root.path.display(),
                root.sources.join(", ")
            )
        }));
        if self.servers.is_empty() {
            lines.push("no language servers configured".into());
        }
        for server in &self.servers {
            lines.extend(server.lines());
        }
        lines.extend(self.index.as_ref().map(IndexStatus::line));
        lines
    }
}

impl ServerReport {
    fn lines(&self) -> Vec<String> {
        let languages = self.languages.join(",");
        let command = match self.duties.is_empty() {
            true => self.command.clone(),
            false => format!("{} ({})", self.command, self.duties.join("; ")),
        };
        let mut head = match languages == self.name {
            true => format!("[{}] {command} {}", self.name, self.phase.name()),
            false => format!(
                "[{}] ({languages}) {command} {}",
                self.name,
                self.phase.name()
            ),
        };
        if let Some(process) = &self.process {
            head.push_str(&process.summary());
        }
        head.push_str(&format!(" restarts {}", self.restarts));
        if !self.shared_with.is_empty() {
            head.push_str(&format!(
                " shared by {} sessions (also {})",
                self.shared_with.len() + 1,
                self.shared_with
                    .iter()
                    .map(SessionId::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let mut lines = vec![head];
        if let Some(reason) = &self.stopped {
            lines.push(format!("  stopped: {reason}"));
        }
        if let Some(error) = &self.last_error {
            lines.push(format!("  last error: {error}"));
        }
        for gap in self.process.iter().flat_map(|process| &process.gaps) {
            lines.push(format!("  note: {gap}"));
        }
        if matches!(self.phase, Phase::Failed | Phase::Backoff) && !self.stderr.is_empty() {
            lines.push("  stderr:".into());
            lines.extend(self.stderr.lines().map(|line| format!("    {line}")));
        }
        lines
    }
}

impl ProcessReport {
    /// ` ready pid 12 up 3s docs 2 utf-16 cpu 0.4s rss 80.1MB …`.
    fn summary(&self) -> String {
        let mut shown = format!(" {}", self.state);
        if let Some(pid) = self.pid {
            shown.push_str(&format!(" pid {pid}"));
        }
        shown.push_str(&format!(
            " up {}s docs {}",
            self.uptime_seconds, self.open_documents
        ));
        if let Some(encoding) = &self.encoding {
            shown.push_str(&format!(" {encoding}"));
        }
        if let Some((cpu, rss)) = self.usage {
            let rss = rss as f64 / (1024.0 * 1024.0);
            shown.push_str(&format!(" cpu {cpu:.1}s rss {rss:.1}MB"));
        }
        shown.push_str(&format!(" diagnostics by {}", self.strategy.name()));
        if self.rounds >= 2 {
            shown.push_str(&format!(
                " in up to {} rounds {} ms apart",
                self.rounds, self.round_gap_ms
            ));
        }
        if self.in_flight > 0 {
            shown.push_str(&format!(" in flight {}", self.in_flight));
        }
        if self.queued > 0 {
            shown.push_str(&format!(" queued {}", self.queued));
        }
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_show_a_server_its_process_and_a_failing_ones_stderr() {
        let running = ServerReport {
            name: "python".into(),
            languages: vec!["python".into()],
            command: "pyright-langserver --stdio".into(),
            duties: Vec::new(),
            phase: Phase::Running,
            process: Some(ProcessReport {
                state: ProcessState::Ready,
                pid: Some(12),
                uptime_seconds: 3,
                open_documents: 2,
                encoding: Some("utf-16".into()),
                usage: Some((0.4, 80 * 1024 * 1024)),
                strategy: Strategy::Version,
                rounds: 2,
                round_gap_ms: 150,
                queued: 0,
                in_flight: 2,
                gaps: Vec::new(),
            }),
            restarts: 0,
            shared_with: vec![SessionId(11)],
            stopped: None,
            last_error: None,
            stderr: String::new(),
        };
        let failed = ServerReport {
            name: "c,cpp".into(),
            languages: vec!["c".into(), "cpp".into()],
            command: "clangd".into(),
            duties: vec!["no diagnostics".into(), "files *.c".into()],
            phase: Phase::Failed,
            process: None,
            restarts: 5,
            shared_with: Vec::new(),
            stopped: None,
            last_error: Some("exited".into()),
            stderr: "one\ntwo".into(),
        };
        let status = SessionStatus {
            warnings: vec!["unknown key".into()],
            watching: Watching::Directories(4),
            daemon: Some(DaemonShare {
                session: SessionId(10),
                pid: 7,
                sessions: 2,
                memory_budget: None,
            }),
            roots: vec![RootStatus {
                name: "w".into(),
                path: PathBuf::from("/w"),
                sources: vec!["client".into()],
            }],
            servers: vec![running, failed],
            running: vec![RunningCall {
                tool: "hover".into(),
                seconds: 1.25,
            }],
            client: None,
            index: Some(IndexStatus {
                servers: vec![
                    IndexedServer {
                        server: "python".into(),
                        files: 475,
                        every_root: true,
                    },
                    IndexedServer {
                        server: "c".into(),
                        files: 1,
                        every_root: false,
                    },
                ],
                changed: 2,
                problem: None,
            }),
        };
        assert_eq!(
            status.lines(),
            vec![
                "warning: unknown key",
                "watching 4 directories for changes",
                "session 0000000a of daemon pid 7 (2 attached)",
                "running: hover for 1.2s",
                "root w /w (from client)",
                "[python] pyright-langserver --stdio running ready pid 12 up 3s docs 2 utf-16 cpu 0.4s rss 80.0MB diagnostics by version in up to 2 rounds 150 ms apart in flight 2 restarts 0 shared by 2 sessions (also 0000000b)",
                "[c,cpp] clangd (no diagnostics; files *.c) failed restarts 5",
                "  last error: exited",
                "  stderr:",
                "    one",
                "    two",
                "symbol index: [python] 475 files, every root read; [c] 1 file, reading; 2 files changed since read, to read again",
            ]
        );
        let json = serde_json::to_string(&status).unwrap_or_default();
        let read: Option<SessionStatus> = serde_json::from_str(&json).ok();
        assert_eq!(read, Some(status), "travels whole");
    }
}
