//! Running the actor tree in this process until it ends, a termination
//! signal arrives, or the caller's own stop condition fires; then stopping
//! it so that every language server process dies with it, and letting the
//! Recorder write everything the tree said on its way out.

use anyhow::{Context as _, Result};
use ractor::{Actor, ActorRef};
use std::future::Future;
use std::time::Duration;
use windlass_actors::messages::recorder::RecorderMsg;
use windlass_actors::messages::supervisor::SupervisorMsg;
use windlass_actors::recorder::{self, Recorder};
use windlass_actors::supervisor::{self, Supervisor};

/// How long the Recorder may take to write what it was told last.
const RECORDER_DRAIN: Duration = Duration::from_secs(5);
/// How long the Supervisor may take to stop once its children have.
const SUPERVISOR_STOP: Duration = Duration::from_secs(5);

/// Spawns the Recorder and the Supervisor (with `arguments` made for that
/// Recorder), and runs until the tree stops by itself, a signal asks the
/// process to stop, or `until` (given the Supervisor and the Recorder)
/// resolves with a reason.
pub async fn run<A, F, Fut>(arguments: A, until: F) -> Result<()>
where
    A: FnOnce(ActorRef<RecorderMsg>) -> supervisor::Arguments,
    F: FnOnce(ActorRef<SupervisorMsg>, ActorRef<RecorderMsg>) -> Fut,
    Fut: Future<Output = String>,
{
    // Outside the tree, so that stopping the tree does not drop what is
    // still in its mailbox: a session's end is sent as the session stops.
    let store = recorder::Arguments {
        path: crate::state_dir::store_path(),
        limit: crate::config::store_limit()?,
    };
    let (recorder, recorded) = Actor::spawn(None, Recorder, store)
        .await
        .context("starting the recorder")?;
    let served = serve(arguments(recorder.clone()), |supervisor| {
        until(supervisor, recorder.clone())
    })
    .await;
    if recorder.drain().is_ok() {
        let _written = tokio::time::timeout(RECORDER_DRAIN, recorded).await;
    }
    served
}

async fn serve<F, Fut>(arguments: supervisor::Arguments, until: F) -> Result<()>
where
    F: FnOnce(ActorRef<SupervisorMsg>) -> Fut,
    Fut: Future<Output = String>,
{
    let (supervisor, mut handle) = Actor::spawn(None, Supervisor, arguments)
        .await
        .context("starting the supervisor")?;
    let reason = tokio::select! {
        ended = &mut handle => {
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
    // It saves what it must keep as it stops.
    let _stopped = tokio::time::timeout(SUPERVISOR_STOP, handle).await;
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
