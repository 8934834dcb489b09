//! Standalone: the whole actor tree in this process, serving one session
//! on stdio and ending with it: `serve --standalone`, and a bridge's
//! fallback when no daemon can be reached or started. The session gets a
//! control socket of its own in the runtime directory, recorded with it,
//! for `status`, `monitor` and the hosts' hooks. `serve --standalone
//! --http ADDR` serves MCP over HTTP instead, as many sessions as
//! connect, until the process is stopped; no bridge attaches to it.

use crate::config::HttpConfig;
use crate::control::{self, Control};
use crate::http::Endpoint;
use crate::runtime_dir::RuntimeDir;
use crate::tree;
use anyhow::Result;
use std::path::PathBuf;
use std::time::Duration;
use tokio::net::UnixListener;
use windlass_actors::messages::supervisor::Connection;
use windlass_actors::settings::Settings;
use windlass_actors::supervisor::{self, Lifetime, Mode, RestartPolicy};

/// Serves MCP on this process's stdio until the client goes away.
///
/// One session needs one thread: every call waits on pipes, and the work
/// that can take long (walking and searching files, the store's writes,
/// reading inotify) runs on threads of its own. A second worker answered
/// no faster and cost its stack and its malloc arena (docs/benchmarks.md).
pub fn run(settings: Settings) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(serve(settings))?;
    // Server processes are killed as their actors drop; nothing else to wait for.
    runtime.shutdown_timeout(Duration::from_secs(2));
    Ok(())
}

async fn serve(settings: Settings) -> Result<()> {
    serve_tree(Mode::Standalone, Some((settings, Connection::Stdio)), None).await
}

/// Serves MCP over HTTP until the process is stopped.
pub fn run_http(http: HttpConfig) -> Result<()> {
    let config = crate::config::daemon_config()?;
    // The daemon's limits on servers, but no lingering: the process ends
    // when it is stopped, not when its clients go.
    let lifetime = Lifetime {
        linger: None,
        server_idle: (config.server_idle > 0).then(|| Duration::from_secs(config.server_idle)),
        memory_budget: config.memory_budget,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let served = runtime.block_on(async {
        let endpoint = Endpoint::bind(http).await?;
        serve_tree(Mode::Daemon(lifetime), None, Some(endpoint)).await
    });
    runtime.shutdown_timeout(Duration::from_secs(2));
    served
}

/// The tree with its first session, or its HTTP endpoint, and the
/// process's own control socket.
async fn serve_tree(
    mode: Mode,
    first: Option<(Settings, Connection)>,
    endpoint: Option<Endpoint>,
) -> Result<()> {
    let (socket, listener) = match bind().await {
        Some((socket, listener, inode)) => (Some((socket, inode)), Some(listener)),
        None => (None, None),
    };
    let recorded = socket.as_ref().map(|(socket, _)| socket.clone());
    let arguments = |recorder| supervisor::Arguments {
        policy: RestartPolicy::default(),
        mode,
        first,
        recorder,
        index: crate::state_dir::index_path(),
        sketches: crate::state_dir::sketches_path(),
        socket: recorded,
    };
    let served = tree::run(arguments, |supervisor, recorder| async move {
        let http = async {
            match endpoint {
                Some(endpoint) => endpoint.serve(supervisor.clone()).await,
                None => std::future::pending().await,
            }
        };
        let control = async {
            match listener {
                Some(listener) => {
                    let control = Control {
                        supervisor: supervisor.clone(),
                        recorder,
                        daemon: false,
                    };
                    control::accept(listener, control).await
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            reason = http => reason,
            reason = control => reason,
        }
    })
    .await;
    if let Some((socket, inode)) = socket {
        control::unbind(&socket, inode);
    }
    served
}

/// This session's control socket, or none (said in the log) when there
/// is no runtime directory to put it in.
async fn bind() -> Option<(PathBuf, UnixListener, u64)> {
    let bound = async {
        let socket = RuntimeDir::open()?.session_socket();
        let (listener, inode) = control::bind(&socket).await?;
        anyhow::Ok((socket, listener, inode))
    };
    match bound.await {
        Ok(bound) => Some(bound),
        Err(error) => {
            tracing::warn!("this session has no control socket: {error:#}");
            None
        }
    }
}
