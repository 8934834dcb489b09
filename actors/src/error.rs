//! The errors the actors hand back to callers.
//!
//! A failed request is a reply carrying one of these, never an actor
//! failure. Each server-side error names its server so the agent knows whose
//! fault it is (`[python] request timed out after 30 s`).

use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum Error {
    #[error("[{server}] server exited{}", detail_suffix(.detail))]
    ServerExited { server: String, detail: String },
    #[error("[{server}] {method} timed out after {} s", .after.as_secs_f64())]
    Timeout {
        server: String,
        method: String,
        after: Duration,
    },
    #[error("[{server}] sent a malformed response: {detail}")]
    Malformed { server: String, detail: String },
    #[error("[{server}] {message} (code {code})")]
    ServerError {
        server: String,
        code: i64,
        message: String,
    },
    #[error("[{server}] `{command}` is not installed or not on PATH")]
    NotInstalled { server: String, command: String },
    #[error(
        "[{server}] `{command}` is on PATH but does not run ({detail}); install it fully or configure another server"
    )]
    Unusable {
        server: String,
        command: String,
        detail: String,
    },
    #[error("[{server}] could not start `{command}`: {detail}")]
    SpawnFailed {
        server: String,
        command: String,
        detail: String,
    },
    #[error("[{server}] failed after repeated crashes; retrying in {} s. Last output:\n{stderr}", .retry_in.as_secs())]
    Failed {
        server: String,
        retry_in: Duration,
        stderr: String,
    },
    #[error("[{server}] {detail}")]
    Diagnostics { server: String, detail: String },
    #[error("[{server}] does not support {feature}")]
    Unsupported { server: String, feature: String },
    #[error("{0} is outside the workspace roots")]
    OutsideRoots(String),
    #[error(
        "this session has no workspace roots: its MCP client lists none (roots/list) and none \
         are configured for it (`http_roots` in the user configuration)"
    )]
    NoRoots,
    #[error("{0}")]
    InvalidArgument(String),
    #[error("no language server configured for {0}")]
    NoServer(String),
    #[error("no language server became available within {} s", .after.as_secs())]
    NotReady { after: Duration },
    #[error("windlass is shutting down")]
    ShuttingDown,
    #[error(
        "[{server}] this session already has {queued} questions waiting for this server; \
         ask again once some are answered"
    )]
    SessionBusy { server: String, queued: usize },
}

impl Error {
    /// Whether the message already names its server (`[python] …`).
    pub fn names_server(&self) -> bool {
        matches!(
            self,
            Self::ServerExited { .. }
                | Self::Timeout { .. }
                | Self::Malformed { .. }
                | Self::ServerError { .. }
                | Self::NotInstalled { .. }
                | Self::Unusable { .. }
                | Self::SpawnFailed { .. }
                | Self::Failed { .. }
                | Self::Diagnostics { .. }
                | Self::Unsupported { .. }
                | Self::SessionBusy { .. }
        )
    }
}

fn detail_suffix(detail: &str) -> String {
    if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
