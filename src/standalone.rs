//! Standalone: the whole actor tree in this process, serving one session
//! and ending with it: `serve --standalone`, and a bridge's fallback when
//! no daemon can be reached or started.

use crate::tree;
use anyhow::{Context as _, Result};
use std::os::unix::net::UnixStream;
use std::thread::JoinHandle;
use std::time::Duration;
use windlass_actors::gateway::Connection;
use windlass_actors::settings::Settings;
use windlass_actors::supervisor::{self, Mode, RestartPolicy};

/// Serves MCP on this process's stdio until the client goes away.
pub fn run(settings: Settings) -> Result<()> {
    serve(runtime()?, settings, Connection::Stdio)
}

/// Serves one session over a socket pair on a thread of its own, for a
/// bridge that lost its daemon and could not start another. The thread
/// ends, its servers stopped, once the returned end is closed.
pub fn spawn(settings: Settings) -> Result<(UnixStream, JoinHandle<()>)> {
    let (ours, theirs) = UnixStream::pair().context("creating a socket pair")?;
    let thread = std::thread::Builder::new()
        .name("standalone".into())
        .spawn(move || {
            if let Err(error) = serve_stream(settings, theirs) {
                tracing::error!("the standalone server failed: {error:#}");
            }
        })
        .context("starting the standalone thread")?;
    Ok((ours, thread))
}

fn serve_stream(settings: Settings, stream: UnixStream) -> Result<()> {
    stream.set_nonblocking(true)?;
    let runtime = runtime()?;
    let connection = {
        // The stream is registered with this runtime's reactor.
        let _entered = runtime.enter();
        let stream = tokio::net::UnixStream::from_std(stream)?;
        let (reader, writer) = stream.into_split();
        Connection::Stream(Box::new(reader), Box::new(writer))
    };
    serve(runtime, settings, connection)
}

fn serve(
    runtime: tokio::runtime::Runtime,
    settings: Settings,
    connection: Connection,
) -> Result<()> {
    let arguments = supervisor::Arguments {
        policy: RestartPolicy::default(),
        mode: Mode::Standalone,
        first: Some((settings, connection)),
    };
    runtime.block_on(tree::run(arguments, |_| std::future::pending()))?;
    // Server processes are killed as their actors drop; nothing else to wait for.
    runtime.shutdown_timeout(Duration::from_secs(2));
    Ok(())
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}
