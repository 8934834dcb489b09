//! The `status` tool: every configured server's health in a few lines,
//! gathered as a [`SessionStatus`] (which the control socket also gives
//! `windlass status`) and rendered by it; and the reports of the whole
//! pool's servers that the control socket gives `windlass top`.

use super::context::Context;
use super::indexing;
use super::render;
use crate::error::Result;
use crate::messages::language_server::{LanguageServerMsg, ServerStatus};
use crate::messages::roots::RootListing;
use crate::messages::supervisor::ServerRecord;
use crate::vocabulary::root_set::RootSet;
use crate::vocabulary::status::{
    DaemonShare, ProcessReport, RootStatus, ServerReport, SessionStatus, Watching,
};
use ractor::rpc::CallResult;
use std::time::Duration;

/// A server actor answers status at once; this only guards a dying one.
const STATUS_TIMEOUT: Duration = Duration::from_secs(2);

pub async fn status(context: &Context) -> Result<String> {
    let status = session_status(context).await?;
    Ok(render::bounded(
        &status.lines(),
        context.settings.max_output_bytes,
    ))
}

/// The session's status, as data.
pub async fn session_status(context: &Context) -> Result<SessionStatus> {
    let mut warnings = context.warnings().await?;
    warnings.extend(context.recording_problem().await?);
    let watcher = context.watcher_status().await?;
    let watching = match (watcher.problem, watcher.ready) {
        (Some(problem), _) => Watching::Failing(problem),
        (None, false) => Watching::SettingUp,
        (None, true) => Watching::Directories(watcher.directories),
    };
    let overview = context.servers().await?;
    let daemon = overview.daemon_sessions.map(|sessions| DaemonShare {
        session: context.session,
        pid: std::process::id(),
        sessions,
        memory_budget: overview.memory_budget,
    });
    let roots = context
        .roots_listing()
        .await?
        .iter()
        .map(root_status)
        .collect();
    // A shared server's own words may name another session's files.
    let own_roots = match context.shared.daemon {
        true => Some(context.root_set().await?),
        false => None,
    };
    let servers = server_reports(overview.servers, own_roots.as_deref()).await;
    let index = {
        let roots = context.root_set().await?;
        let paths = roots.roots().iter().map(|root| root.path.clone()).collect();
        indexing::summary(context, paths).await
    };
    // The `status` call asking is in flight too; it is not news.
    let running = context
        .in_flight
        .calls()
        .into_iter()
        .filter(|call| call.tool != "status")
        .collect();
    Ok(SessionStatus {
        warnings,
        watching,
        daemon,
        roots,
        servers,
        running,
        client: context.client.get(),
        index: Some(index),
    })
}

/// Each server's report, with what its actor says of its process; what
/// the server itself said shows no path outside `roots`, when given.
pub async fn server_reports(
    records: Vec<ServerRecord>,
    roots: Option<&RootSet>,
) -> Vec<ServerReport> {
    let mut reports = Vec::with_capacity(records.len());
    for record in records {
        let live = match &record.actor {
            Some(actor) => match actor
                .call(LanguageServerMsg::Status, Some(STATUS_TIMEOUT))
                .await
            {
                Ok(CallResult::Success(status)) => Some(status),
                _ => None,
            },
            None => None,
        };
        reports.push(report(record, live, roots));
    }
    reports
}

fn root_status(root: &RootListing) -> RootStatus {
    RootStatus {
        name: root.name.clone(),
        path: root.path.clone(),
        sources: root
            .sources
            .iter()
            .map(|source| source.name().to_owned())
            .collect(),
    }
}

fn report(
    record: ServerRecord,
    live: Option<ServerStatus>,
    roots: Option<&RootSet>,
) -> ServerReport {
    let own_words = |text: &str| match roots {
        Some(roots) => render::hide_paths_outside(text, roots),
        None => text.to_owned(),
    };
    let last_error = live
        .as_ref()
        .and_then(|live| live.last_error.clone())
        .or(record.last_error);
    ServerReport {
        languages: record.languages,
        command: record.command,
        duties: record.duties,
        phase: record.phase,
        process: live.map(process_report),
        restarts: record.restarts,
        shared_with: record.shared_with,
        stopped: record.stopped.as_deref().map(own_words),
        last_error: last_error.as_deref().map(own_words),
        stderr: record
            .stderr
            .lines()
            .map(own_words)
            .collect::<Vec<_>>()
            .join("\n"),
        name: record.name,
    }
}

fn process_report(live: ServerStatus) -> ProcessReport {
    let (rounds, gap) = live.rounds;
    ProcessReport {
        state: live.state,
        pid: live.pid,
        uptime_seconds: live.uptime.as_secs(),
        open_documents: live.open_documents,
        encoding: live.encoding.map(|encoding| encoding.lsp_name().to_owned()),
        usage: live
            .process
            .map(|sample| (sample.cpu_ticks as f64 / 100.0, sample.rss_bytes)),
        strategy: live.strategy,
        rounds,
        round_gap_ms: u64::try_from(gap.as_millis()).unwrap_or(u64::MAX),
        queued: live.queued,
        in_flight: live.in_flight,
        gaps: live.gaps,
    }
}
