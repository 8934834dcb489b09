//! The files an edit's check looks at beside the edited ones: the users
//! of the names it changes (`edit_reach`), the first
//! [`MAX_USERS_CHECKED`] read to be checked, and what the answer says of
//! the rest (past the bound, or past what every server of the file can
//! check against an unsaved edit) and of the files beyond them (when the
//! users' new errors stand where no changed name is written).

use super::context::Context;
use super::diagnostics::missing_from;
use super::edit_reach::{self, MAX_USERS_CHECKED, Users};
use super::symbols::{self, Symbol};
use super::words::{find_word, own_name};
use crate::messages::language_server::EditedDocument;
use crate::messages::router::ServerHandle;
use crate::vocabulary::counted::counted;
use crate::vocabulary::diagnostics::{FileDiagnostics, Severity};
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::root_set::RootSet;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The files that use what an edit changes: those checked beside it, and
/// what the answer says of the search.
pub struct CheckedUsers {
    found: Users,
    pub checked: Vec<DocumentSnapshot>,
    /// Why the servers cannot check the users against an unsaved edit,
    /// when no server of the file can.
    blind: Vec<String>,
}

/// The users of the names the edits change, by the outline of each
/// edited file as it is now; the first [`MAX_USERS_CHECKED`] read to be
/// checked. A server without outlines gives no names, and none are
/// looked for.
pub async fn users(
    context: &Context,
    roots: &Arc<RootSet>,
    path: &Path,
    edits: &[EditedDocument],
) -> CheckedUsers {
    let mut names = Vec::new();
    if let Ok(server) = context.route(path).await {
        for edit in edits {
            if let Some(outline) = outline(context, &server, edit.document.clone()).await {
                names.extend(edit_reach::changed_names(
                    &edit.document.text,
                    &edit.text,
                    &outline,
                ));
            }
        }
    }
    let edited: Vec<&Path> = edits
        .iter()
        .map(|edit| edit.document.path.as_path())
        .collect();
    users_of(context, roots, path, names, &edited).await
}

/// The outline of `document` as `server` gives it, if it gives one.
pub async fn outline(
    context: &Context,
    server: &ServerHandle,
    document: DocumentSnapshot,
) -> Option<Vec<Symbol>> {
    let text = document.text.clone();
    let mut reply = context.document_symbols(server, document).await.ok()?;
    symbols::document_symbols(&mut reply, &text).ok()
}

/// The files of the languages of `path`'s server, other than `edited`,
/// that use one of `names`; the first [`MAX_USERS_CHECKED`] read to be
/// checked.
pub async fn users_of(
    context: &Context,
    roots: &Arc<RootSet>,
    path: &Path,
    mut names: Vec<String>,
    edited: &[&Path],
) -> CheckedUsers {
    let mut seen = HashSet::new();
    names.retain(|name| seen.insert(name.clone()));
    let languages = match names.is_empty() {
        true => None,
        false => context
            .route(path)
            .await
            .ok()
            .map(|server| server.spec.languages.clone()),
    };
    let found = match languages {
        Some(languages) => {
            let edited: HashSet<String> = edited.iter().map(|path| roots.display(path)).collect();
            let (sketches, roots) = (context.shared.sketches.clone(), roots.clone());
            let search = tokio::task::spawn_blocking(move || {
                edit_reach::users(&sketches, &roots, names, &languages, &edited)
            });
            search.await.unwrap_or_default()
        }
        None => Users::none(),
    };
    let checked = found
        .files
        .iter()
        .take(MAX_USERS_CHECKED)
        .filter_map(|path| context.snapshot(path, &roots.display(path)).ok())
        .collect();
    CheckedUsers {
        found,
        checked,
        blind: Vec::new(),
    }
}

/// The users `server` reads: those of its languages, if it can check
/// them against an unsaved edit.
pub fn served(server: &ServerHandle, users: &[DocumentSnapshot]) -> Vec<DocumentSnapshot> {
    if cannot_check_users(server).is_some() {
        return Vec::new();
    }
    users
        .iter()
        .filter(|user| server.spec.languages.contains(&user.language_id))
        .cloned()
        .collect()
}

/// Why `server` cannot tell what an unsaved edit does to other files, if
/// it cannot: clangd reads what a file includes as saved; rust-analyzer
/// finds most of what breaks elsewhere in its `cargo check` on save,
/// which an unsaved edit does not run, and checking the users through
/// its own analysis alone took minutes.
fn cannot_check_users(server: &ServerHandle) -> Option<String> {
    let label = server.label();
    if server.spec.reads_includes_from_disk {
        return Some(format!(
            "[{label}] checks each file against the files it includes as saved, not as edited"
        ));
    }
    server.spec.checks_on_save().then(|| {
        format!("[{label}] finds what breaks in other files in its check on save, which an unsaved edit does not run")
    })
}

impl CheckedUsers {
    /// None of the users is checked when no server of the file can check
    /// them against an unsaved edit.
    pub fn blind_if_all(&mut self, servers: &[(String, crate::error::Result<ServerHandle>)]) {
        let blind: Vec<String> = servers
            .iter()
            .filter_map(|(_, server)| cannot_check_users(server.as_ref().ok()?))
            .collect();
        if !blind.is_empty() && blind.len() == servers.len() {
            self.checked.clear();
            self.blind = blind;
        }
    }

    /// What the answer says of the users: how many were checked, and
    /// which were not.
    pub fn notes(&self, roots: &RootSet) -> Vec<String> {
        let mut notes = Vec::new();
        if !self.checked.is_empty() {
            notes.push(format!(
                "also checked: {} {} (those not named above have no new problems)",
                files_that_use(self.checked.len()),
                names_list(&self.found.names)
            ));
        }
        notes.extend(self.warnings(roots, "write the edit and ask `diagnostics` of them"));
        notes
    }

    /// A warning when users' new errors stand on lines that name none of
    /// the changed names: what those files infer from them changed (a
    /// class renamed leaves requests' `sessions.py` with `Type of "p" is
    /// unknown`), so the files that use *them*, naming nothing the edit
    /// changed, may break too. They are not looked for.
    pub fn beyond(
        &self,
        dependents: &[(PathBuf, FileDiagnostics, FileDiagnostics)],
    ) -> Option<String> {
        let names = &self.found.names;
        if names.is_empty() {
            return None;
        }
        let spread: Vec<&str> = dependents
            .iter()
            .filter(|(path, before, after)| errors_away_from(names, path, before, after))
            .map(|(_, _, after)| after.file.as_str())
            .collect();
        if spread.is_empty() {
            return None;
        }
        let shown = spread.iter().take(FILES_SHOWN).copied().collect::<Vec<_>>();
        let more = match spread.len() - shown.len() {
            0 => String::new(),
            more => format!(" and {more} more"),
        };
        Some(format!(
            "warning: the new errors of {} stand where {} is not written (what they infer from it changed); the files that use them without naming it were not checked: {}{more}",
            counted(spread.len(), "file"),
            names_list(names),
            shown.join(" ")
        ))
    }

    /// The users that were not checked, or not looked for, and why;
    /// those not checked with what to do about them (`advice`).
    pub fn warnings(&self, roots: &RootSet, advice: &str) -> Vec<String> {
        let Users {
            names,
            unsearched,
            files,
            complete,
        } = &self.found;
        let mut notes = Vec::new();
        let named = names_list(names);
        let left: Vec<String> = files
            .iter()
            .skip(self.checked.len())
            .map(|path| roots.display(path))
            .collect();
        if !left.is_empty() {
            let shown = left.iter().take(FILES_SHOWN).cloned().collect::<Vec<_>>();
            let more = match left.len() - shown.len() {
                0 => String::new(),
                more => format!(" and {more} more"),
            };
            let why = match self.blind.is_empty() {
                true => format!("(at most {MAX_USERS_CHECKED} are)"),
                false => format!("({})", self.blind.join("; ")),
            };
            notes.push(format!(
                "warning: {} {named} not checked {why}: {}{more}; {advice}",
                files_that_use(left.len()),
                shown.join(" ")
            ));
        }
        let operators = edit_reach::used_through_operators(names);
        if !operators.is_empty() {
            let operators: Vec<String> = operators.into_iter().cloned().collect();
            notes.push(format!(
                "warning: {} is used through operators, so files that apply it to values whose type they do not name were not looked for, nor checked",
                names_list(&operators)
            ));
        }
        if !unsearched.is_empty() {
            notes.push(format!(
                "warning: the files that use {} were not looked for, nor checked",
                names_list(unsearched)
            ));
        }
        if !complete {
            notes.push(format!(
                "warning: the search for files that use {named} stopped before the end of the tree; files past it were not checked"
            ));
        }
        notes
    }
}

/// "1 other file that uses", "4 other files that use".
/// Whether an error the edit adds to the file at `path` (not edited)
/// stands on a line that names none of `names`.
fn errors_away_from(
    names: &[String],
    path: &Path,
    before: &FileDiagnostics,
    after: &FileDiagnostics,
) -> bool {
    let (Some(old), Some(new)) = (&before.diagnostics, &after.diagnostics) else {
        return false;
    };
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let lines: Vec<&str> = text.lines().collect();
    missing_from(new, old)
        .iter()
        .filter(|diagnostic| diagnostic.severity == Severity::Error)
        .any(|diagnostic| {
            let line = usize::try_from(diagnostic.line)
                .ok()
                .and_then(|line| lines.get(line.checked_sub(1)?));
            line.is_some_and(|line| {
                !names
                    .iter()
                    .any(|name| find_word(line, own_name(name), 0).is_some())
            })
        })
}

fn files_that_use(count: usize) -> String {
    let verb = match count {
        1 => "uses",
        _ => "use",
    };
    format!("{} that {verb}", counted(count, "other file"))
}

/// Files named in a note on users, at most.
const FILES_SHOWN: usize = 10;

fn names_list(names: &[String]) -> String {
    let shown: Vec<String> = names
        .iter()
        .take(5)
        .map(|name| format!("`{name}`"))
        .collect();
    match names.len().saturating_sub(shown.len()) {
        0 => shown.join(", "),
        more => format!("{} and {more} more names", shown.join(", ")),
    }
}
