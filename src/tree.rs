//! Running the actor tree in this process until it ends, a termination
//! signal arrives, or the caller's own stop condition fires; then stopping
//! it so that every language server process dies with it.

use anyhow::{Context as _, Result};
use ractor::{Actor, ActorRef};
use std::future::Future;
use std::time::Duration;
use windlass_actors::supervisor::{self, Supervisor, SupervisorMsg};

/// Spawns the Supervisor and runs until the tree stops by itself, a
/// signal asks the process to stop, or `until` (given the Supervisor)
/// resolves with a reason.
pub async fn run<F, Fut>(arguments: supervisor::Arguments, until: F) -> Result<()>
where
    F: FnOnce(ActorRef<SupervisorMsg>) -> Fut,
    Fut: Future<Output = String>,
{
    let (supervisor, handle) = Actor::spawn(None, Supervisor, arguments)
        .await
        .context("starting the supervisor")?;
    let reason = tokio::select! {
        ended = handle => {
            ended.context("supervisor task")?;
            return Ok(());
        }
        signal = termination() => signal.to_owned(),
        reason = until(supervisor.clone()) => reason,
    };
    tracing::info!("{reason}; shutting down");
    // Stopping the tree drops every server actor, whose processes are
    // killed with it; a signal's default action would leave them running.
    supervisor
        .stop_children_and_wait(None, Some(Duration::from_secs(2)))
        .await;
    supervisor.stop(Some(reason));
    Ok(())
}

/// Resolves when the process is asked to stop (SIGTERM, SIGINT, SIGHUP).
async fn termination() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
        _ = hup.recv() => "SIGHUP",
    }
}
