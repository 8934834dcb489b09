//! What kinds of event the store keeps: written by the Recorder and by
//! the hooks, matched by `query`, `monitor` and the store's server rows.
//! In the store and on the wire a kind is its snake_case name.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    SessionStart,
    SessionEnd,
    ToolCall,
    RootsChanged,
    /// A server started, became ready, exited, failed or was found unusable.
    ServerState,
    Restart,
    /// A server stopped on purpose: idle, over the memory budget, or no
    /// longer configured.
    Eviction,
    Diagnostics,
    Error,
    /// A host's hook ran (`release`, `acquire`, `sync-roots`).
    Hook,
    LockAcquired,
    LockReleased,
    LockDenied,
    /// How many events a live subscriber lost by falling behind; never
    /// stored.
    Missed,
    /// A kind this build does not know, read from a store that a newer
    /// build wrote to.
    #[serde(other)]
    Unknown,
}

impl EventKind {
    pub const ALL: [Self; 15] = [
        Self::SessionStart,
        Self::SessionEnd,
        Self::ToolCall,
        Self::RootsChanged,
        Self::ServerState,
        Self::Restart,
        Self::Eviction,
        Self::Diagnostics,
        Self::Error,
        Self::Hook,
        Self::LockAcquired,
        Self::LockReleased,
        Self::LockDenied,
        Self::Missed,
        Self::Unknown,
    ];

    /// The kinds hooks record, straight into the store.
    pub const HOOKS: [Self; 4] = [
        Self::Hook,
        Self::LockAcquired,
        Self::LockReleased,
        Self::LockDenied,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::SessionStart => "session_start",
            Self::SessionEnd => "session_end",
            Self::ToolCall => "tool_call",
            Self::RootsChanged => "roots_changed",
            Self::ServerState => "server_state",
            Self::Restart => "restart",
            Self::Eviction => "eviction",
            Self::Diagnostics => "diagnostics",
            Self::Error => "error",
            Self::Hook => "hook",
            Self::LockAcquired => "lock_acquired",
            Self::LockReleased => "lock_released",
            Self::LockDenied => "lock_denied",
            Self::Missed => "missed",
            Self::Unknown => "unknown",
        }
    }

    /// The kind named `name`; any name this build does not know is
    /// [`EventKind::Unknown`].
    pub fn named(name: &str) -> Self {
        Self::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
            .unwrap_or(Self::Unknown)
    }
}

/// Strict, for what a user types: a name this build does not know is an
/// error that lists the known ones.
impl FromStr for EventKind {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        match Self::named(name) {
            Self::Unknown => {
                let known: Vec<&str> = Self::ALL
                    .iter()
                    .filter(|kind| **kind != Self::Unknown)
                    .map(|kind| kind.name())
                    .collect();
                Err(format!(
                    "no event kind is called {name:?}; the kinds are {}",
                    known.join(", ")
                ))
            }
            kind => Ok(kind),
        }
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_what_serde_writes_and_read_back() {
        for kind in EventKind::ALL {
            let json = serde_json::to_string(&kind).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", kind.name()));
            assert_eq!(EventKind::named(kind.name()), kind);
        }
        assert_eq!(EventKind::named("from_the_future"), EventKind::Unknown);
        let read: EventKind =
            serde_json::from_str("\"from_the_future\"").unwrap_or(EventKind::Hook);
        assert_eq!(read, EventKind::Unknown);
        assert_eq!("tool_call".parse(), Ok(EventKind::ToolCall));
        let typo = "tool_cal".parse::<EventKind>().unwrap_err();
        assert!(typo.contains("tool_call, roots_changed"), "{typo}");
        assert!(!typo.contains("unknown"), "{typo}");
    }
}
