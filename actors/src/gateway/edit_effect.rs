//! What an edit written by a host's own tool did to the files it did not
//! edit, for the hosts' hooks. Before the edit (`prepare_edit`, from the
//! `acquire` hook) the file's text is kept with its outline as the server
//! gives it; after it (`edit_effect`, from `release`) the names the edit
//! changed are read from that outline as `check_edit` reads them, and
//! their users are checked as `check_edit` checks them, backwards: the
//! server is given the text from before the edit as an unsaved version,
//! so one check says each user's problems now and before the edit, and
//! the disk's text is given back after.

use super::check_edit::{ServerCheck, check};
use super::checked_users::{outline, served, users_of};
use super::context::Context;
use super::diagnostics::{from_each, settled};
use super::edit_reach;
use super::prepared_edits::{Outline, Prepared};
use super::render::Sources;
use super::symbols::Symbol;
use crate::error::Result;
use crate::messages::language_server::EditedDocument;
use crate::vocabulary::diagnostics::FileDiagnostics;
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::edit_effect::{EditEffect, Elsewhere};
use crate::vocabulary::root_set::RootSet;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::watch;

/// How long `prepare_edit` waits for the outline before answering: the
/// edit is written once the hook answers, and the outline must be asked
/// of the text before it. A server slower than this (still loading) is
/// asked on, and its answer checked against the disk.
const PREPARE_WAIT: Duration = Duration::from_secs(2);

/// How long an edit's effect waits for an outline still being asked.
const OUTLINE_WAIT: Duration = Duration::from_secs(10);

/// Keeps `file` as it is now, with its outline, for the effect of the
/// edit about to be written; answers once the outline is in, or after
/// [`PREPARE_WAIT`].
pub async fn prepare_edit(context: &Context, file: &Path) -> Result<()> {
    let (roots, path) = context.resolve(&file.display().to_string()).await?;
    let document = context.snapshot(&path, &roots.display(&path))?;
    let (given, mut outline_rx) = watch::channel(Outline::Asking);
    let (asking, asked) = (context.clone(), document.clone());
    tokio::spawn(async move {
        let _gone = given.send(outline_before(&asking, asked).await);
    });
    context.prepared.keep(Prepared {
        document,
        outline: outline_rx.clone(),
    });
    let given = outline_rx.wait_for(|outline| !matches!(outline, Outline::Asking));
    let _slow = tokio::time::timeout(PREPARE_WAIT, given).await;
    Ok(())
}

/// The outline of `document`, if the file is still as it was: once the
/// edit is on disk the outline would be of the edited text.
async fn outline_before(context: &Context, document: DocumentSnapshot) -> Outline {
    let Ok(server) = context.route(&document.path).await else {
        return Outline::Missing;
    };
    let unchanged = DocumentSnapshot::read(&document.path, Some(&document.language_id))
        .is_ok_and(|now| now.hash == document.hash);
    if !unchanged {
        return Outline::Missing;
    }
    match outline(context, &server, document).await {
        Some(symbols) => Outline::Given(symbols),
        None => Outline::Missing,
    }
}

/// What the edit of `file` since it was prepared did to the files that
/// use the names it changed: nothing when it was not prepared or did not
/// change it.
pub async fn edit_effect(context: &Context, file: &Path) -> Result<EditEffect> {
    let (roots, path) = context.resolve(&file.display().to_string()).await?;
    let Some(prepared) = context.prepared.take(&path) else {
        return Ok(EditEffect::default());
    };
    let display = roots.display(&path);
    let now = context.snapshot(&path, &display)?;
    let before = prepared.document;
    if now.hash == before.hash {
        return Ok(EditEffect::default());
    }
    let mut warnings = Vec::new();
    // The names before the edit reach the files it breaks; those after it
    // reach the files it fixes (a rename back).
    let mut names = match given_outline(prepared.outline).await {
        Some(outline) => edit_reach::changed_names(&before.text, &now.text, &outline),
        None => {
            warnings.push(format!(
                "warning: the files that use names the edit removed from {display} were not looked for (no outline of it as it was before)"
            ));
            Vec::new()
        }
    };
    names.extend(names_now(context, &now, &before.text).await);
    let mut users = users_of(context, &roots, &path, names, &[&path]).await;
    let servers = context.diagnosing(&path).await?;
    users.blind_if_all(&servers);
    let several = servers.len() > 1;
    let back = vec![EditedDocument {
        document: now,
        text: before.text.to_string(),
    }];
    let reports = from_each(servers, |server| {
        let (context, roots, back) = (context.clone(), roots.clone(), back.clone());
        let users = served(&server, &users.checked);
        async move { check(&context, &roots, &server, &back, users, several).await }
    })
    .await;
    let settled = settled(reports, &display)?;
    warnings.extend(settled.warnings);
    warnings.extend(users.warnings(&roots, "ask `diagnostics` of them"));
    Ok(EditEffect {
        elsewhere: elsewhere(&roots, settled.came),
        warnings,
    })
}

async fn given_outline(mut outline: watch::Receiver<Outline>) -> Option<Vec<Symbol>> {
    let given = outline.wait_for(|outline| !matches!(outline, Outline::Asking));
    match tokio::time::timeout(OUTLINE_WAIT, given).await {
        Ok(Ok(outline)) => match &*outline {
            Outline::Given(symbols) => Some(symbols.clone()),
            Outline::Asking | Outline::Missing => None,
        },
        _ => None,
    }
}

/// The names the edit changed as the file's outline now shows them: the
/// declarations it touched, by their names after it.
async fn names_now(context: &Context, now: &DocumentSnapshot, before: &str) -> Vec<String> {
    let Ok(server) = context.route(&now.path).await else {
        return Vec::new();
    };
    match outline(context, &server, now.clone()).await {
        Some(symbols) => edit_reach::changed_names(&now.text, before, &symbols),
        None => Vec::new(),
    }
}

/// The files under the roots whose problems the edit changed, each with
/// its servers' problems merged: as now (the check's disk side) and as
/// before the edit (its edited side).
fn elsewhere(roots: &RootSet, checks: Vec<ServerCheck>) -> Vec<Elsewhere> {
    let mut sources = Sources::new(roots);
    let mut files: BTreeMap<PathBuf, (Vec<FileDiagnostics>, Vec<FileDiagnostics>)> =
        BTreeMap::new();
    for check in checks {
        for (path, now, before) in check.dependents {
            if sources.admit(&path) {
                let (nows, befores) = files.entry(path).or_default();
                nows.push(now);
                befores.push(before);
            }
        }
    }
    files
        .into_iter()
        .map(|(path, (now, before))| Elsewhere {
            path,
            now: FileDiagnostics::merge(now),
            before: FileDiagnostics::merge(before),
        })
        .collect()
}
