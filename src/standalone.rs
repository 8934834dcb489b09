//! Standalone: the whole actor tree in this process, serving one session
//! on stdio and ending with it: `serve --standalone`, and a bridge's
//! fallback when no daemon can be reached or started.

use crate::tree;
use anyhow::Result;
use std::time::Duration;
use windlass_actors::gateway::Connection;
use windlass_actors::settings::Settings;
use windlass_actors::supervisor::{self, Mode, RestartPolicy};

/// Serves MCP on this process's stdio until the client goes away.
pub fn run(settings: Settings) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let arguments = |recorder| supervisor::Arguments {
        policy: RestartPolicy::default(),
        mode: Mode::Standalone,
        first: Some((settings, Connection::Stdio)),
        recorder,
        socket: None,
    };
    runtime.block_on(tree::run(arguments, |_, _| std::future::pending()))?;
    // Server processes are killed as their actors drop; nothing else to wait for.
    runtime.shutdown_timeout(Duration::from_secs(2));
    Ok(())
}
