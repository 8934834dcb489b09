//! The MCP service of a transport that makes its service before any
//! session exists (rmcp's streamable HTTP server calls a factory, then
//! hands it the client's `initialize`). An [`Attaching`] service starts
//! its session at that `initialize`, through the Supervisor like any
//! other, and from then on is the session's tools; when the transport
//! drops it (the client's DELETE, or a session that timed out), the
//! session's Gateway hears that its client closed.

use super::context::Context;
use super::tools::{self, Tools};
use crate::messages::gateway::GatewayMsg;
use crate::messages::supervisor::{Connection, SessionParts, SupervisorMsg};
use crate::settings::Settings;
use ractor::ActorRef;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, InitializeRequestParams, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OnceCell, oneshot};

/// How long a new session may take to start.
const ATTACH_TIMEOUT: Duration = Duration::from_secs(10);

/// Resolves a new session's settings (configuration files are read
/// again for each): the transport's own roots and identity, or why no
/// session can start.
pub type SettingsSource = Arc<dyn Fn() -> Result<Settings, String> + Send + Sync>;

/// A session's MCP service that attaches the session at `initialize`.
pub struct Attaching {
    supervisor: ActorRef<SupervisorMsg>,
    settings: SettingsSource,
    attached: OnceCell<Attached>,
}

struct Attached {
    tools: Tools,
    gateway: ActorRef<GatewayMsg>,
}

impl Attaching {
    pub fn new(supervisor: ActorRef<SupervisorMsg>, settings: SettingsSource) -> Self {
        Self {
            supervisor,
            settings,
            attached: OnceCell::new(),
        }
    }

    async fn attach(&self) -> Result<Attached, ErrorData> {
        let source = self.settings.clone();
        let settings = tokio::task::spawn_blocking(move || source())
            .await
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?
            .map_err(|error| ErrorData::internal_error(error, None))?;
        let (handover, parts) = oneshot::channel();
        self.supervisor
            .send_message(SupervisorMsg::Attach {
                settings: Box::new(settings),
                connection: Connection::Handed(handover),
            })
            .map_err(|_| ErrorData::internal_error("Windlass is stopping", None))?;
        let parts = match tokio::time::timeout(ATTACH_TIMEOUT, parts).await {
            Ok(Ok(parts)) => parts,
            Ok(Err(_)) => {
                return Err(ErrorData::internal_error(
                    "the session could not start; the log says why",
                    None,
                ));
            }
            Err(_) => {
                return Err(ErrorData::internal_error(
                    "the session did not start in time",
                    None,
                ));
            }
        };
        Ok(Attached::from(parts))
    }

    /// The session's tools, or the error a client gets for a request
    /// before its `initialize`.
    fn tools(&self) -> Result<&Tools, ErrorData> {
        self.attached
            .get()
            .map(|attached| &attached.tools)
            .ok_or_else(|| ErrorData::invalid_request("initialize the session first", None))
    }
}

impl From<SessionParts> for Attached {
    fn from(parts: SessionParts) -> Self {
        let context = Context {
            session: parts.session,
            session_actor: parts.session_actor,
            roots: parts.roots,
            shared: parts.shared,
            settings: parts.settings,
            in_flight: parts.in_flight,
            client: parts.client,
            // Hooks reach a session through its gateway's own context.
            prepared: Default::default(),
        };
        Self {
            tools: Tools::new(context),
            gateway: parts.gateway,
        }
    }
}

impl Drop for Attaching {
    fn drop(&mut self) {
        if let Some(attached) = self.attached.get() {
            let _gone = attached.gateway.send_message(GatewayMsg::ClientClosed);
        }
    }
}

impl ServerHandler for Attaching {
    fn get_info(&self) -> ServerConfig {
        tools::server_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        tools::protocol_versions()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let attached = self.attached.get_or_try_init(|| self.attach()).await?;
        attached.tools.initialize(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.tools()?.call_tool(request, context).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.tools()?.list_tools(request, context).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().ok()?.get_tool(name)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Ok(tools) = self.tools() {
            tools.on_initialized(context).await;
        }
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        if let Ok(tools) = self.tools() {
            tools.on_roots_list_changed(context).await;
        }
    }
}
