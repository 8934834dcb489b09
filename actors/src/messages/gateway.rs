//! A session's Gateway inbox, and the byte stream it serves MCP on.
use crate::vocabulary::diagnostics::FileDiagnostics;
use crate::vocabulary::status::SessionStatus;
use ractor::RpcReplyPort;
use tokio::io::{AsyncRead, AsyncWrite};

pub enum GatewayMsg {
    ClientClosed,
    /// The session's `status`, for `windlass status SESSION`.
    Status(RpcReplyPort<Result<SessionStatus, String>>),
    /// Fresh diagnostics of a file, as data, for hooks.
    Diagnostics {
        file: String,
        reply: RpcReplyPort<Result<FileDiagnostics, String>>,
    },
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
