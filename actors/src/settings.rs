//! The settings the actors run with, once every configuration layer has
//! been applied by the binary.

use crate::language::ServerSpec;
use crate::roots::RootSet;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Settings {
    pub roots: RootSet,
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
}
