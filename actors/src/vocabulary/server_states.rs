//! What a pooled server is doing, as data: its place in the pool's life
//! (the Supervisor's phase) and, while its process runs, what the process
//! is doing (the LanguageServer's state). `status` renders both.

use std::fmt;
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    NotStarted,
    /// Its binary is being run once to see that it works at all.
    Checking,
    Running,
    Backoff,
    Failed {
        until: Instant,
    },
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
            Self::Failed { .. } => "failed",
            Self::Unusable => "unusable",
            Self::Stopped => "stopped",
        }
    }
}

/// What a running server process is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
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
