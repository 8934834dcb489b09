//! Standalone: the whole actor tree in this process, serving one session
//! on stdio and ending with it: `serve --standalone`, and a bridge's
//! fallback when no daemon can be reached or started. The session gets a
//! control socket of its own in the runtime directory, recorded with it,
//! for `status`, `monitor` and the hosts' hooks.

use crate::control::{self, Control};
use crate::runtime_dir::RuntimeDir;
use crate::tree;
use anyhow::Result;
use std::path::PathBuf;
use std::time::Duration;
use tokio::net::UnixListener;
use windlass_actors::messages::gateway::Connection;
use windlass_actors::settings::Settings;
use windlass_actors::supervisor::{self, Mode, RestartPolicy};

/// Serves MCP on this process's stdio until the client goes away.
pub fn run(settings: Settings) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(serve(settings))?;
    // Server processes are killed as their actors drop; nothing else to wait for.
    runtime.shutdown_timeout(Duration::from_secs(2));
    Ok(())
}

async fn serve(settings: Settings) -> Result<()> {
    let (socket, listener) = match bind().await {
        Some((socket, listener, inode)) => (Some((socket, inode)), Some(listener)),
        None => (None, None),
    };
    let recorded = socket.as_ref().map(|(socket, _)| socket.clone());
    let arguments = |recorder| supervisor::Arguments {
        policy: RestartPolicy::default(),
        mode: Mode::Standalone,
        first: Some((settings, Connection::Stdio)),
        recorder,
        socket: recorded,
    };
    let served = tree::run(arguments, |supervisor, recorder| async move {
        match listener {
            Some(listener) => {
                let control = Control {
                    supervisor,
                    recorder,
                    daemon: false,
                };
                control::accept(listener, control).await
            }
            None => std::future::pending().await,
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
