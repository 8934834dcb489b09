//! The `status` tool: every configured server's health in a few lines.

use super::context::Context;
use super::render;
use crate::error::Result;
use crate::messages::language_server::{LanguageServerMsg, ServerStatus};
use crate::messages::roots::RootListing;
use crate::messages::supervisor::ServerRecord;
use crate::vocabulary::root_set::RootSet;
use crate::vocabulary::server_states::Phase;
use ractor::rpc::CallResult;
use std::time::Duration;

/// A server actor answers status at once; this only guards a dying one.
const STATUS_TIMEOUT: Duration = Duration::from_secs(2);

pub async fn status(context: &Context) -> Result<String> {
    let mut lines: Vec<String> = context
        .warnings()
        .await?
        .iter()
        .map(|warning| format!("warning: {warning}"))
        .collect();
    if let Some(problem) = context.recording_problem().await? {
        lines.push(format!("warning: {problem}"));
    }
    let watcher = context.watcher_status().await?;
    match (&watcher.problem, watcher.ready) {
        (Some(problem), _) => lines.push(format!("warning: {problem}")),
        (None, false) => lines.push("setting up file watching".to_owned()),
        (None, true) => lines.push(format!(
            "watching {} directories for changes",
            watcher.directories
        )),
    }
    let overview = context.servers().await?;
    if let Some(sessions) = overview.daemon_sessions {
        lines.push(format!(
            "session {} of daemon pid {} ({sessions} attached)",
            context.session,
            std::process::id()
        ));
    }
    lines.extend(root_lines(&context.roots_listing().await?));
    // A shared server's own words may name another session's files.
    let roots = match context.shared.daemon {
        true => Some(context.root_set().await?),
        false => None,
    };
    let records = overview.servers;
    if records.is_empty() {
        lines.push("no language servers configured".into());
    }
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
        lines.extend(describe(&record, live.as_ref(), roots.as_deref()));
    }
    Ok(render::bounded(&lines, context.settings.max_output_bytes))
}

/// One line per root: its name, directory, and where it came from.
fn root_lines(listing: &[RootListing]) -> Vec<String> {
    listing
        .iter()
        .map(|root| {
            let sources: Vec<&str> = root.sources.iter().map(|source| source.name()).collect();
            format!(
                "root {} {} (from {})",
                root.name,
                root.path.display(),
                sources.join(", ")
            )
        })
        .collect()
}

/// A server's lines; what the server itself said shows no path outside
/// `roots`, when given.
fn describe(
    record: &ServerRecord,
    live: Option<&ServerStatus>,
    roots: Option<&RootSet>,
) -> Vec<String> {
    let own_words = |text: &str| match roots {
        Some(roots) => render::hide_paths_outside(text, roots),
        None => text.to_owned(),
    };
    let languages = record.languages.join(",");
    let mut head = format!(
        "[{}] {} {}",
        record.name,
        record.command,
        record.phase.name()
    );
    if languages != record.name {
        head = format!(
            "[{}] ({languages}) {} {}",
            record.name,
            record.command,
            record.phase.name()
        );
    }
    if let Some(live) = live {
        head.push_str(&format!(" {}", live.state));
        if let Some(pid) = live.pid {
            head.push_str(&format!(" pid {pid}"));
        }
        head.push_str(&format!(
            " up {}s docs {}",
            live.uptime.as_secs(),
            live.open_documents
        ));
        if let Some(encoding) = live.encoding {
            head.push_str(&format!(" {}", encoding.lsp_name()));
        }
        if let Some(process) = live.process {
            let cpu = process.cpu_ticks as f64 / 100.0;
            let rss = process.rss_bytes as f64 / (1024.0 * 1024.0);
            head.push_str(&format!(" cpu {cpu:.1}s rss {rss:.1}MB"));
        }
        head.push_str(&format!(" diagnostics by {}", live.strategy.name()));
        if let (rounds @ 2.., window) = live.rounds {
            head.push_str(&format!(
                " in up to {rounds} rounds {} ms apart",
                window.as_millis()
            ));
        }
        if live.queued > 0 {
            head.push_str(&format!(" queued {}", live.queued));
        }
    }
    head.push_str(&format!(" restarts {}", record.restarts));
    if !record.shared_with.is_empty() {
        head.push_str(&format!(
            " shared by {} sessions (also {})",
            record.shared_with.len() + 1,
            record.shared_with.join(", ")
        ));
    }
    let mut lines = vec![head];
    if let Some(reason) = &record.stopped {
        lines.push(format!("  stopped: {}", own_words(reason)));
    }
    let last_error = live
        .and_then(|live| live.last_error.clone())
        .or_else(|| record.last_error.clone());
    if let Some(error) = last_error {
        lines.push(format!("  last error: {}", own_words(&error)));
    }
    for gap in live.iter().flat_map(|live| &live.gaps) {
        lines.push(format!("  note: {gap}"));
    }
    if matches!(record.phase, Phase::Failed { .. } | Phase::Backoff) && !record.stderr.is_empty() {
        lines.push("  stderr:".into());
        lines.extend(
            record
                .stderr
                .lines()
                .map(|line| format!("    {}", own_words(line))),
        );
    }
    lines
}
