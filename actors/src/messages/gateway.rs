//! A session's Gateway inbox, and the byte stream it serves MCP on.
use crate::messages::session::SessionQuestion;
use tokio::io::{AsyncRead, AsyncWrite};

pub enum GatewayMsg {
    ClientClosed,
    /// A question of the daemon's socket about this session, answered
    /// as data.
    Ask(SessionQuestion),
}

/// Where a session's MCP messages come from and go to.
pub enum Connection {
    /// The process's own stdin and stdout.
    Stdio,
    /// A bridge's socket, or any other byte stream.
    Stream(
        Box<dyn AsyncRead + Send + Unpin>,
        Box<dyn AsyncWrite + Send + Unpin>,
    ),
}
