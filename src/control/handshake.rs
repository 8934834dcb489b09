//! The daemon's answer to a bridge's hello: the session attached, or why
//! not. A file of its own, needing serde alone, because `windlass-bridge`
//! compiles it too (`bridge/main.rs`): the bridge reads the answer as the
//! type the daemon writes it with. A refusal is spelled as the control
//! protocol's `refused` answer, which any request may get before the
//! daemon has read it as an attach.

use serde::{Deserialize, Serialize};

#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttachAnswer {
    /// The session is attached; MCP flows from here on.
    Welcome { daemon_pid: u32 },
    /// The session could not start (a root that does not exist, a broken
    /// configuration file, another version).
    Refused(String),
}
