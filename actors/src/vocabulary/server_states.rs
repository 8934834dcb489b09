//! What a pooled server is doing, as data: its place in the pool's life
//! (the Supervisor's phase) and, while its process runs, what the process
//! is doing (the LanguageServer's state). `status` renders both.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Where a pooled server is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    NotStarted,
    /// Its binary is being run once to see that it works at all.
    Checking,
    Running,
    Backoff,
    /// It crashed too often: refused until its cooldown ends.
    Failed,
    /// Its binary does not run; it is never started.
    Unusable,
    /// Stopped on purpose (idle, over the memory budget); started again
    /// when a session needs it.
    Stopped,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Self::NotStarted => "not started",
            Self::Checking => "starting",
            Self::Running => "running",
            Self::Backoff => "restarting",
            Self::Failed => "failed",
            Self::Unusable => "unusable",
            Self::Stopped => "stopped",
        }
    }
}

/// What a running server process is doing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessState {
    /// `initialize` is in flight.
    Starting,
    /// Loading its project: the work it reported, if it reported any.
    Loading {
        title: Option<String>,
        percentage: Option<u64>,
    },
    Ready,
}

impl fmt::Display for ProcessState {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Starting => formatter.write_str("starting"),
            Self::Loading {
                title: Some(title),
                percentage: Some(percentage),
            } => write!(formatter, "loading ({title} {percentage}%)"),
            Self::Loading {
                title: Some(title),
                percentage: None,
            } => write!(formatter, "loading ({title})"),
            Self::Loading { title: None, .. } => formatter.write_str("loading"),
            Self::Ready => formatter.write_str("ready"),
        }
    }
}

/// How the end of a server's work on a change is recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// The server echoes the document version in its publications.
    Version,
    /// The server brackets its checks with `$/progress`.
    Progress,
    /// Neither: the process's CPU samples tell when it is done.
    Process,
    /// The server is asked for its diagnostics (`textDocument/diagnostic`)
    /// and computes them against the text it holds when asked.
    Pull,
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Self::Version => "version",
            Self::Progress => "progress",
            Self::Process => "process",
            Self::Pull => "pull",
        }
    }
}
