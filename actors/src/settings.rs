//! The settings the actors run with, once every configuration layer has
//! been applied by the binary.

use crate::language::ServerSpec;
use crate::vocabulary::root_set::RootSet;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Settings {
    pub roots: RootSet,
    /// Whether the roots came from `-r` (pinned) rather than being the
    /// current directory.
    pub roots_pinned: bool,
    pub servers: Vec<ServerSpec>,
    pub request_timeout: Duration,
    /// Zero keeps documents open for ever.
    pub idle_timeout: Duration,
    /// A fixed diagnostics settle window replacing the learned one; only
    /// for measuring the adaptive window against a baseline.
    pub diagnostics_settle: Option<Duration>,
    /// The cap on one tool result, in bytes.
    pub max_output_bytes: usize,
    /// Configuration problems worth showing in `status` (an untrusted
    /// project file, an unknown key).
    pub warnings: Vec<String>,
    /// Reads every layer again when the project's configuration file
    /// changes; `None` where nothing can be reloaded (tests, benchmarks).
    pub reload: Option<Reloader>,
    /// Directories whose `.windlass.toml` is a layer of this configuration
    /// (the first root and its ancestors): a change there is reloaded.
    pub config_directories: Vec<std::path::PathBuf>,
    pub identity: Identity,
}

/// Who a session is, as far as the process that started it could tell.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The host's id for the conversation (`CLAUDE_CODE_SESSION_ID`,
    /// `GEMINI_SESSION_ID`).
    pub host_session: Option<String>,
    /// The MCP client's process.
    pub client_pid: Option<u32>,
    #[serde(default)]
    pub transport: Transport,
}

/// How a session's client reaches Windlass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// Its stdio: standalone, or through a bridge to the daemon.
    #[default]
    Stdio,
    /// The daemon's streamable HTTP endpoint.
    Http,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "http",
        }
    }
}

impl Identity {
    /// This process's view: the host's session id from its environment,
    /// and its parent, the MCP client that started it.
    pub fn of_this_process() -> Self {
        let host_session = [
            "CLAUDE_CODE_SESSION_ID",
            "GEMINI_SESSION_ID",
            "COPILOT_AGENT_SESSION_ID",
            "QWEN_CODE_SESSION_ID",
        ]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|id| !id.is_empty()));
        Self {
            host_session,
            client_pid: Some(std::os::unix::process::parent_id()),
            transport: Transport::Stdio,
        }
    }
}

impl Settings {
    /// The limits each server started for these settings runs with.
    pub fn timeouts(&self) -> Timeouts {
        Timeouts {
            request: self.request_timeout,
            idle: self.idle_timeout,
            fixed_settle: self.diagnostics_settle,
        }
    }
}

/// How the binary reads the configuration again.
#[derive(Clone)]
pub struct Reloader(Arc<dyn Fn() -> Result<Settings, String> + Send + Sync>);

impl Reloader {
    pub fn new(reload: impl Fn() -> Result<Settings, String> + Send + Sync + 'static) -> Self {
        Self(Arc::new(reload))
    }

    pub fn reload(&self) -> Result<Settings, String> {
        (self.0)()
    }
}

impl std::fmt::Debug for Reloader {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Reloader")
    }
}

/// Limits that apply to one server.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub request: Duration,
    /// Zero keeps documents open for ever.
    pub idle: Duration,
    /// A fixed diagnostics settle window instead of the learned one (for
    /// baseline measurements).
    pub fixed_settle: Option<Duration>,
}
