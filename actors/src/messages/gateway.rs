//! A session's Gateway inbox. The connection it serves MCP on travels
//! from the Supervisor's inbox (`Connection`, in `supervisor.rs`).
use crate::messages::session::SessionQuestion;

pub enum GatewayMsg {
    ClientClosed,
    /// A question of the daemon's socket about this session, answered
    /// as data.
    Ask(SessionQuestion),
}
