//! Who a session's MCP client said it is in `initialize` (`claude-code
//! 2.1.3`), kept where the session's `status` can read it at once:
//! `windlass top` shows it for a session that has just started, before
//! the store has it.

use std::sync::{Arc, OnceLock};

#[derive(Clone, Default)]
pub struct ClientName(Arc<OnceLock<String>>);

impl ClientName {
    /// Keeps the first name given: a client introduces itself once.
    pub fn set(&self, name: &str, version: &str) {
        let shown = match version.is_empty() {
            true => name.to_owned(),
            false => format!("{name} {version}"),
        };
        let _already = self.0.set(shown);
    }

    pub fn get(&self) -> Option<String> {
        self.0.get().cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_is_named_with_its_version_once() {
        let client = ClientName::default();
        assert_eq!(client.get(), None);
        client.set("codex-mcp-client", "0.9.0");
        client.clone().set("other", "");
        assert_eq!(client.get().as_deref(), Some("codex-mcp-client 0.9.0"));
    }
}
