//! The daemon's MCP streamable HTTP endpoint: one more door into the
//! actor tree that bridges attach to. rmcp's `StreamableHttpService`
//! speaks the protocol (POST, the GET stream, DELETE, `Mcp-Session-Id`,
//! resumption with `Last-Event-ID`, `Host` and `Origin` checks, the body
//! limit); axum and hyper carry it. Each HTTP session is a Windlass
//! session like a bridge's, started at its `initialize` by
//! [`Attaching`], with its roots from the client's `roots/list` or, for a
//! client without roots, `http_roots`.
//!
//! In front of rmcp, [`admit`] refuses what it must not see: a request
//! without the bearer token (unless the token is off, which only a
//! loopback address allows) and a new session beyond the limit. An
//! address other machines reach must be asked for (`http_remote`) and
//! is served over TLS only ([`tls`]).

mod tls;
pub mod token;

use crate::config::{HttpAuth, HttpConfig};
use crate::session_args;
use anyhow::{Context as _, Result, bail};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt as _;
use ractor::ActorRef;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::net::TcpListener;
use windlass_actors::gateway::{Attaching, SettingsSource};
use windlass_actors::messages::supervisor::SupervisorMsg;
use windlass_actors::settings::{Identity, Transport};

/// The path MCP is served on.
pub const MCP_PATH: &str = "/mcp";
/// Open sessions at most; a client past it is told to come back later.
const MAX_SESSIONS: usize = 256;
/// The largest request body accepted (a `check_edit` of a whole file
/// fits many times over).
const MAX_BODY_BYTES: usize = 4 << 20;

/// A bound endpoint, ready to serve.
pub struct Endpoint {
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    config: HttpConfig,
}

impl Endpoint {
    /// Binds the configured address, refusing what is not safe to serve.
    pub async fn bind(config: HttpConfig) -> Result<Self> {
        check(&config)?;
        if config.auth == HttpAuth::Token {
            // Made now, so that `windlass token` and the endpoint agree
            // from the first request.
            token::current_or_new(&token::path()?)?;
        }
        let tls = match &config.tls {
            Some(files) => Some(tls::acceptor(&files.cert, &files.key)?),
            None => None,
        };
        let listener = TcpListener::bind(config.address)
            .await
            .with_context(|| format!("binding the HTTP endpoint on {}", config.address))?;
        Ok(Self {
            listener,
            tls,
            config,
        })
    }

    pub fn address(&self) -> Result<SocketAddr> {
        Ok(self.listener.local_addr()?)
    }

    /// Serves until the process stops; returns only why it could not.
    pub async fn serve(self, supervisor: ActorRef<SupervisorMsg>) -> String {
        let address = self.address().map_or_else(
            |_| self.config.address.to_string(),
            |address| address.to_string(),
        );
        let mut sessions = LocalSessionManager::default();
        sessions.session_config.keep_alive = Some(self.config.session_idle);
        let sessions = Arc::new(sessions);
        let settings = settings_source(self.config.roots.clone());
        let service = StreamableHttpService::new(
            move || Ok(Attaching::new(supervisor.clone(), settings.clone())),
            sessions.clone(),
            protocol_config(&self.config),
        );
        let guard = Guard {
            auth: self.config.auth,
            sessions,
        };
        let router = axum::Router::new()
            .route_service(MCP_PATH, service)
            .layer(axum::middleware::from_fn_with_state(guard, admit));
        tracing::info!(%address, auth = ?self.config.auth, tls = self.tls.is_some(), "serving MCP over HTTP");
        let served = match self.tls {
            Some(acceptor) => match tls::TlsListener::new(self.listener, acceptor) {
                Ok(listener) => axum::serve(listener, router).await,
                Err(error) => Err(std::io::Error::other(error.to_string())),
            },
            // Without it, the last small write of an answer waits for
            // the client's delayed acknowledgement: 40 ms a call on Linux.
            None => {
                let listener = self.listener.tap_io(|stream| {
                    if let Err(error) = stream.set_nodelay(true) {
                        tracing::debug!("TCP_NODELAY not set on a connection: {error}");
                    }
                });
                axum::serve(listener, router).await
            }
        };
        match served {
            Ok(()) => format!("the HTTP endpoint on {address} closed"),
            Err(error) => format!("the HTTP endpoint on {address} failed: {error}"),
        }
    }
}

/// An address other machines reach only when asked for, over TLS, with
/// the token.
fn check(config: &HttpConfig) -> Result<()> {
    if config.address.ip().is_loopback() {
        return Ok(());
    }
    let address = config.address;
    if !config.remote {
        bail!(
            "http = \"{address}\" is not a loopback address: serving MCP to other machines needs \
             http_remote = true (--http-remote), TLS and the token"
        );
    }
    if config.tls.is_none() {
        bail!(
            "http = \"{address}\" is reachable from other machines and needs TLS: set \
             http_tls_cert and http_tls_key (--http-tls-cert, --http-tls-key)"
        );
    }
    if config.auth == HttpAuth::None {
        bail!("http_auth = \"none\" is refused for \"{address}\", which other machines can reach");
    }
    Ok(())
}

/// rmcp's checks: `Host` must name this machine's loopback (DNS
/// rebinding), and an `Origin`, when a browser sends one, must be a
/// loopback page's.
fn protocol_config(config: &HttpConfig) -> StreamableHttpServerConfig {
    if !config.address.ip().is_loopback() {
        // Other machines name this one as they please; DNS rebinding
        // gets nowhere against TLS and the token, which a page cannot
        // send.
        return StreamableHttpServerConfig::default()
            .disable_allowed_hosts()
            .with_max_request_body_bytes(MAX_BODY_BYTES);
    }
    let port = config.address.port();
    let hosts = ["localhost", "127.0.0.1", "[::1]", "::1"];
    let mut allowed_hosts: Vec<String> = hosts.iter().map(|host| (*host).to_owned()).collect();
    allowed_hosts.extend(hosts.iter().map(|host| format!("{host}:{port}")));
    let origins = hosts
        .iter()
        .take(3)
        .flat_map(|host| [format!("http://{host}:*"), format!("https://{host}:*")]);
    StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts)
        .with_allowed_origins(origins)
        .with_max_request_body_bytes(MAX_BODY_BYTES)
}

/// Each HTTP session's settings: every configuration layer read again,
/// its roots `http_roots` until its client lists its own.
fn settings_source(roots: Vec<PathBuf>) -> SettingsSource {
    Arc::new(move || {
        let identity = Identity {
            transport: Transport::Http,
            ..Identity::default()
        };
        session_args::resolve_without_directory(&roots, identity)
            .map_err(|error| format!("{error:#}"))
    })
}

/// What [`admit`] checks requests against.
#[derive(Clone)]
struct Guard {
    auth: HttpAuth,
    sessions: Arc<LocalSessionManager>,
}

/// Lets a request through to rmcp, or answers it: 401 without the
/// token, 503 for a new session past the limit. A session ended by
/// DELETE is answered 204.
async fn admit(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    if guard.auth == HttpAuth::Token
        && let Some(refusal) = unauthorized(&request)
    {
        return refusal;
    }
    let opens_session =
        request.method() == Method::POST && !request.headers().contains_key("mcp-session-id");
    if opens_session && guard.sessions.sessions.read().await.len() >= MAX_SESSIONS {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("Service Unavailable: {MAX_SESSIONS} sessions are open"),
        )
            .into_response();
    }
    let ends_session = request.method() == Method::DELETE;
    let mut response = next.run(request).await;
    // rmcp answers a session's end with 202, which the Python SDK
    // reports as a failed termination; nothing is left to accept.
    if ends_session && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// The refusal of a request that does not carry the current token.
fn unauthorized(request: &Request) -> Option<Response> {
    let expected = match token::path().and_then(|file| token::read(&file)) {
        Ok(expected) => expected,
        Err(error) => {
            tracing::error!("HTTP request refused: {error:#}");
            return Some(
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Internal Server Error: the endpoint has no token; see the daemon's log",
                )
                    .into_response(),
            );
        }
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    match given {
        Some(given) if token::matches(given.trim().as_bytes(), expected.as_bytes()) => None,
        _ => {
            let mut refusal = (
                StatusCode::UNAUTHORIZED,
                "Unauthorized: send `Authorization: Bearer TOKEN`; `windlass token` prints it",
            )
                .into_response();
            refusal
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            Some(refusal)
        }
    }
}
