//! The daemon: one per user and version, owning the actor tree that every
//! attached session shares. It listens on its socket in the runtime
//! directory (the control socket, where bridges attach their sessions)
//! and, when configured, on an HTTP address (MCP streamable HTTP, see
//! [`crate::http`]); steps aside for a newer version; and stops on
//! `windlass stop`, a signal, or when it has lingered without sessions
//! (never while it serves HTTP).

use crate::config::{HttpAuth, HttpConfig, TlsFiles};
use crate::control::protocol::{Answer, Request};
use crate::control::{self, Control, client};
use crate::http::Endpoint;
use crate::runtime_dir::{RuntimeDir, version};
use crate::{logging, tree};
use anyhow::Result;
use ractor::ActorRef;
use std::path::{Path, PathBuf};
use std::time::Duration;
use windlass_actors::messages::supervisor::SupervisorMsg;
use windlass_actors::supervisor::{self, Lifetime, Mode, RestartPolicy};

/// How long another daemon may take to answer `ping` or `stop`.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the runtime directory is checked for a newer daemon of
/// another version.
const VERSION_CHECK: Duration = Duration::from_secs(2);

#[derive(clap::Args, Clone, Debug)]
pub struct DaemonArgs {
    /// Stay attached to the terminal instead of detaching.
    #[arg(long)]
    pub foreground: bool,
    /// Seconds to stay up after the last session ends.
    #[arg(long, env = "WINDLASS_LINGER", value_name = "SECS")]
    pub linger: Option<u64>,
    /// Seconds without a request after which a server stops; 0 = never.
    #[arg(long, env = "WINDLASS_SERVER_IDLE", value_name = "SECS")]
    pub server_idle: Option<u64>,
    /// The servers' total RSS above which idle ones stop, least recently
    /// used first ("4GiB", "512MiB", bytes; "0" = no budget).
    #[arg(long, env = "WINDLASS_MEMORY_BUDGET", value_name = "SIZE")]
    pub memory_budget: Option<String>,
    /// Also serve MCP streamable HTTP on this loopback address
    /// ("127.0.0.1:7345"), at the path /mcp.
    #[arg(long, env = "WINDLASS_HTTP", value_name = "ADDR")]
    pub http: Option<String>,
    /// Whether HTTP requests need the bearer token `windlass token` prints.
    #[arg(long, env = "WINDLASS_HTTP_AUTH", value_name = "AUTH")]
    pub http_auth: Option<HttpAuth>,
    /// The roots of an HTTP session whose client lists none (repeatable).
    #[arg(long = "http-root", value_name = "DIR")]
    pub http_roots: Vec<PathBuf>,
    /// Seconds without a request after which an HTTP session ends
    /// (default 1800).
    #[arg(long, env = "WINDLASS_HTTP_SESSION_IDLE", value_name = "SECS")]
    pub http_session_idle: Option<u64>,
    /// Serve HTTPS with this PEM certificate chain (with --http-tls-key).
    #[arg(long, value_name = "FILE", requires = "http_tls_key")]
    pub http_tls_cert: Option<PathBuf>,
    /// The PEM private key of --http-tls-cert.
    #[arg(long, value_name = "FILE", requires = "http_tls_cert")]
    pub http_tls_key: Option<PathBuf>,
    /// Allow an --http address other machines can reach (it needs TLS
    /// and the token).
    #[arg(long)]
    pub http_remote: bool,
    /// Log filter (error, warn, info, debug, trace) for the log file, and
    /// for stderr when given.
    #[arg(long, env = "WINDLASS_LOG")]
    pub log_level: Option<String>,
}

pub fn run(args: DaemonArgs) -> Result<()> {
    if !args.foreground {
        // Its own session: the terminal and process group of the bridge
        // that started it can go away without taking it along.
        let _already_a_leader = rustix::process::setsid();
    }
    logging::init(args.log_level.as_deref())?;
    let directory = RuntimeDir::open()?;
    let config = crate::config::daemon_config()?;
    let server_idle = args.server_idle.unwrap_or(config.server_idle);
    let http = http_config(&args, config.http)?;
    let lifetime = Lifetime {
        linger: http
            .is_none()
            .then(|| Duration::from_secs(args.linger.unwrap_or(config.linger))),
        server_idle: (server_idle > 0).then(|| Duration::from_secs(server_idle)),
        memory_budget: match &args.memory_budget {
            Some(budget) => crate::config::parse_bytes(budget)?,
            None => config.memory_budget,
        },
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let served = runtime.block_on(serve(&directory, lifetime, http));
    runtime.shutdown_timeout(Duration::from_secs(2));
    served
}

/// The HTTP endpoint the flags and the user configuration ask for, the
/// flags winning.
fn http_config(args: &DaemonArgs, configured: Option<HttpConfig>) -> Result<Option<HttpConfig>> {
    let mut http = match (&args.http, configured) {
        (Some(address), configured) => {
            let mut http = HttpConfig::at(address, HttpAuth::Token, Vec::new())?;
            if let Some(configured) = configured {
                http.auth = configured.auth;
                http.roots = configured.roots;
            }
            http
        }
        (None, Some(configured)) => configured,
        (None, None) => return Ok(None),
    };
    if let Some(auth) = args.http_auth {
        http.auth = auth;
    }
    if !args.http_roots.is_empty() {
        http.roots = args
            .http_roots
            .iter()
            .map(std::path::absolute)
            .collect::<std::io::Result<_>>()?;
    }
    if let Some(seconds) = args.http_session_idle {
        http.session_idle = Duration::from_secs(seconds.max(1));
    }
    if let (Some(cert), Some(key)) = (&args.http_tls_cert, &args.http_tls_key) {
        http.tls = Some(TlsFiles {
            cert: std::path::absolute(cert)?,
            key: std::path::absolute(key)?,
        });
    }
    http.remote |= args.http_remote;
    Ok(Some(http))
}

async fn serve(directory: &RuntimeDir, lifetime: Lifetime, http: Option<HttpConfig>) -> Result<()> {
    let socket = directory.socket();
    control::started();
    let endpoint = match http {
        Some(http) => Some(Endpoint::bind(http).await?),
        None => None,
    };
    let (listener, inode) = control::bind(&socket).await?;
    tracing::info!(socket = %socket.display(), pid = std::process::id(), version = %version(), "daemon listening");
    let arguments = |recorder| supervisor::Arguments {
        policy: RestartPolicy::default(),
        mode: Mode::Daemon(lifetime),
        first: None,
        recorder,
        index: crate::state_dir::index_path(),
        sketches: crate::state_dir::sketches_path(),
        socket: Some(socket.clone()),
    };
    let served = tree::run(arguments, |supervisor, recorder| async move {
        let control = Control {
            supervisor: supervisor.clone(),
            recorder,
            daemon: true,
        };
        let http = async {
            match endpoint {
                Some(endpoint) => endpoint.serve(supervisor.clone()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            reason = control::accept(listener, control) => reason,
            reason = http => reason,
            never = watch_versions(directory, supervisor.clone()) => never,
        }
    })
    .await;
    control::unbind(&socket, inode);
    served
}

/// Tells the Supervisor once a daemon of another version, started after
/// this one, answers in the runtime directory: this one is the old one,
/// and ends with its last session instead of lingering.
async fn watch_versions(directory: &RuntimeDir, supervisor: ActorRef<SupervisorMsg>) -> String {
    let own = directory.socket();
    let mut ticks = tokio::time::interval(VERSION_CHECK);
    loop {
        ticks.tick().await;
        for socket in directory
            .sockets()
            .into_iter()
            .filter(|socket| *socket != own)
        {
            let newer = tokio::task::spawn_blocking(move || started_at(&socket))
                .await
                .ok()
                .and_then(Result::ok)
                .is_some_and(|their_start| their_start > control::started());
            if newer {
                let _stopped = supervisor.send_message(SupervisorMsg::Superseded);
                return std::future::pending().await;
            }
        }
    }
}

/// When the daemon answering on `socket` started.
fn started_at(socket: &Path) -> Result<u128> {
    client::expect(
        socket,
        &Request::Ping,
        ANSWER_TIMEOUT,
        |answer| match answer {
            Answer::Pong { started, .. } => Some(started),
            _ => None,
        },
    )
}

/// `windlass stop`: asks every daemon in the runtime directory, of any
/// version, to stop, and waits until each has let go of its socket.
pub fn stop_all() -> Result<()> {
    let directory = RuntimeDir::open()?;
    let sockets = directory.sockets();
    let mut stopped = 0;
    for socket in &sockets {
        match stop_one(socket) {
            Ok(()) => {
                stopped += 1;
                eprintln!("stopped the daemon at {}", socket.display());
            }
            Err(error) => tracing::debug!("{}: {error:#}", socket.display()),
        }
    }
    if stopped == 0 {
        eprintln!("no daemon is running");
    }
    Ok(())
}

/// Asks the daemon on `socket` to stop and waits until it has let go of it.
fn stop_one(socket: &Path) -> Result<()> {
    client::expect(socket, &Request::Stop, ANSWER_TIMEOUT, |answer| {
        matches!(answer, Answer::Stopping).then_some(())
    })?;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while socket.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}
