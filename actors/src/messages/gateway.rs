//! A session's Gateway inbox, and the connection it serves MCP on.
use crate::messages::roots::RootsMsg;
use crate::messages::session::{SessionMsg, SessionQuestion, Shared};
use crate::settings::Settings;
use crate::vocabulary::ids::SessionId;
use crate::vocabulary::running::InFlight;
use ractor::ActorRef;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;

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
    /// A transport that runs its MCP service itself (the HTTP endpoint,
    /// whose sessions start with the client's `initialize`): the Gateway
    /// serves nothing and hands over what the session's tools need.
    Handed(oneshot::Sender<SessionParts>),
}

/// What a session's tools are made of, for a transport that serves them.
pub struct SessionParts {
    pub session: SessionId,
    pub session_actor: ActorRef<SessionMsg>,
    pub roots: ActorRef<RootsMsg>,
    pub shared: Shared,
    pub settings: Settings,
    /// The session's calls in flight, which its `status` reports.
    pub in_flight: InFlight,
    /// Told [`GatewayMsg::ClientClosed`] when the transport's session ends.
    pub gateway: ActorRef<GatewayMsg>,
}
