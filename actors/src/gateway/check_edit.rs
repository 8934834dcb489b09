//! The `check_edit` tool: what an edit would add to and remove from a
//! file's problems, before it is written. The edit is replacements, a
//! whole new text, or the server's own rename of a symbol (every file it
//! would edit, checked together). Every server of the file that
//! contributes diagnostics checks each file as on disk and as the edit
//! would make it (an unsaved version, given back the disk text after);
//! the two are compared by what each problem says, wherever it stands.
//! The files that use a name the edit changes (`edit_reach`) are checked
//! beside it, open or not, and those past the bound are named as not
//! checked. Nothing is written.

use super::address::Position;
use super::checked_users::{served, users};
use super::context::Context;
use super::diagnostics::{from_each, missing_from, problems, settled};
use super::proposals::{RenameProposal, proposed_rename};
use super::render::{self, Sources};
use super::workspace_edit::{applied, parts};
use crate::error::{Error, Result};
use crate::lsp::uri::uri_to_path;
use crate::messages::language_server::{DiagnosticsReply, EditedDocument};
use crate::messages::router::ServerHandle;
use crate::vocabulary::counted::counted;
use crate::vocabulary::diagnostics::{Diagnostic, FileDiagnostics, Severity};
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::root_set::RootSet;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckEditArgs {
    pub file: String,
    pub replacements: Option<Vec<Replacement>>,
    /// Whole new text, instead.
    pub text: Option<String>,
    /// Or a rename of line/symbol.
    pub new_name: Option<String>,
    /// 1-based.
    pub line: Option<u32>,
    pub symbol: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Replacement {
    pub old: String,
    pub new: String,
}

/// What is checked: each edited document, and what to say first.
struct Planned {
    edits: Vec<EditedDocument>,
    notes: Vec<String>,
}

pub async fn check_edit(context: &Context, args: &CheckEditArgs) -> Result<String> {
    let (roots, path) = context.resolve(&args.file).await?;
    let planned = match &args.new_name {
        Some(new_name) if args.replacements.is_none() && args.text.is_none() => {
            let position = Position {
                file: Some(args.file.clone()),
                line: args.line,
                column: None,
                symbol: args.symbol.clone(),
            };
            match renamed(context, &position, new_name).await? {
                Ok(planned) => planned,
                Err(candidates) => return Ok(candidates),
            }
        }
        Some(_) => {
            return Err(Error::InvalidArgument(
                "give one of `replacements`, `text` or `new_name`".into(),
            ));
        }
        None if args.line.is_some() || args.symbol.is_some() => {
            return Err(Error::InvalidArgument(
                "`line` and `symbol` address a rename: give `new_name` too".into(),
            ));
        }
        None => {
            let document = context.snapshot(&path, &args.file)?;
            let text = edited_text(&document.text, args)?;
            Planned {
                edits: vec![EditedDocument { document, text }],
                notes: Vec::new(),
            }
        }
    };
    let servers = context.diagnosing(&path).await?;
    let several = servers.len() > 1;
    let mut users = users(context, &roots, &path, &planned.edits).await;
    users.blind_if_all(&servers);
    let reports = from_each(servers, |server| {
        let (context, roots) = (context.clone(), roots.clone());
        let edits = planned.edits.clone();
        let users = served(&server, &users.checked);
        async move { check(&context, &roots, &server, &edits, users, several).await }
    })
    .await;
    let settled = settled(reports, &args.file)?;
    let (reports, warnings) = (settled.came, settled.warnings);
    let mut lines = planned.notes;
    let files = planned.edits.len();
    let (mut before, mut after) = (vec![Vec::new(); files], vec![Vec::new(); files]);
    let mut dependents: BTreeMap<PathBuf, (Vec<FileDiagnostics>, Vec<FileDiagnostics>)> =
        BTreeMap::new();
    let mut sources = Sources::new(&roots);
    for report in reports {
        for (index, (disk, edit)) in report.edited.into_iter().enumerate() {
            said_once(&mut lines, &disk.notes);
            // A warning the edit brings (a fatal error hiding the rest).
            said_once(&mut lines, &edit.notes);
            before[index].push(disk);
            after[index].push(edit);
        }
        // A shared server also holds other sessions' files open.
        for (path, disk, edit) in report.dependents {
            if sources.admit(&path) {
                let brought: Vec<String> = edit
                    .notes
                    .iter()
                    .filter(|note| !disk.notes.contains(note))
                    .cloned()
                    .collect();
                said_once(&mut lines, &brought);
                let (before, after) = dependents.entry(path).or_default();
                before.push(disk);
                after.push(edit);
            }
        }
    }
    lines.extend(warnings);
    let merged = |(before, after)| {
        (
            FileDiagnostics::merge(before),
            FileDiagnostics::merge(after),
        )
    };
    let dependents: Vec<(PathBuf, FileDiagnostics, FileDiagnostics)> = dependents
        .into_iter()
        .map(|(path, pair)| {
            let (before, after) = merged(pair);
            (path, before, after)
        })
        .collect();
    let beyond = users.beyond(&dependents);
    let files: Vec<(FileDiagnostics, FileDiagnostics, &str)> = before
        .into_iter()
        .zip(after)
        .map(merged)
        .map(|(before, after)| (before, after, EDITED))
        .chain(
            dependents
                .into_iter()
                .map(|(_, before, after)| (before, after, DEPENDENT)),
        )
        .collect();
    let masking = files
        .iter()
        .any(|(before, after, _)| adds_errors(before, after));
    for (before, after, said) in &files {
        lines.extend(compared(before, after, said, masking));
    }
    lines.extend(users.notes(&roots));
    lines.extend(beyond);
    lines.extend(sources.outside_note());
    Ok(render::bounded(&lines, context.settings.max_output_bytes))
}

/// Adds each of `notes` that `lines` does not hold yet.
fn said_once(lines: &mut Vec<String>, notes: &[String]) {
    for note in notes {
        if !lines.contains(note) {
            lines.push(note.clone());
        }
    }
}

/// What a file's comparison says of it: edited, or touched without being
/// edited.
const EDITED: &str = "if edited (nothing written)";
const DEPENDENT: &str = "not edited, after the edit";

/// One server's problems of each edited document, and of each open
/// document whose problems the edit changed, as on disk and as edited.
pub(super) struct ServerCheck {
    edited: Vec<(FileDiagnostics, FileDiagnostics)>,
    pub(super) dependents: Vec<(PathBuf, FileDiagnostics, FileDiagnostics)>,
}

pub(super) async fn check(
    context: &Context,
    roots: &RootSet,
    server: &ServerHandle,
    edits: &[EditedDocument],
    users: Vec<DocumentSnapshot>,
    several: bool,
) -> Result<ServerCheck> {
    let answer = context.check_edit(server, edits, users).await?;
    let sources = &server.spec.save_check_sources;
    let compared = |document: &DocumentSnapshot, reply: &DiagnosticsReply| {
        without(sources, problems(roots, server, document, reply, several))
    };
    let mut edited: Vec<(FileDiagnostics, FileDiagnostics)> = edits
        .iter()
        .zip(answer.edited)
        .map(|(edit, reply)| {
            let edited = edit.document.unsaved(edit.text.clone());
            (
                compared(&edit.document, &reply.before),
                compared(&edited, &reply.after),
            )
        })
        .collect();
    if let Some((before, _)) = edited.first_mut()
        && server.spec.checks_on_save()
    {
        before.notes.push(format!(
            "note: [{}] the findings of its check on save ({}) are left out: nothing is saved, so that check does not run",
            server.label(),
            sources.join(", ")
        ));
    }
    let dependents = answer
        .dependents
        .into_iter()
        .map(|dependent| {
            let document = &dependent.document;
            (
                document.path.clone(),
                compared(document, &dependent.check.before),
                compared(document, &dependent.check.after),
            )
        })
        .collect();
    Ok(ServerCheck { edited, dependents })
}

/// The problems without those from the sources of a check that runs only
/// on save: in an unsaved edit they are the last save's, so they would
/// compare the disk with itself.
fn without(sources: &[String], mut file: FileDiagnostics) -> FileDiagnostics {
    if let Some(diagnostics) = &mut file.diagnostics {
        diagnostics.retain(|diagnostic| {
            diagnostic
                .source
                .as_ref()
                .is_none_or(|source| !sources.contains(source))
        });
    }
    file
}

/// The documents the server's rename of the symbol would edit, each with
/// the text it would get; or the candidates, when the symbol is not one.
async fn renamed(
    context: &Context,
    position: &Position,
    new_name: &str,
) -> Result<std::result::Result<Planned, String>> {
    let RenameProposal {
        target,
        reply,
        edit,
    } = match proposed_rename(context, position, new_name).await? {
        Ok(proposal) => proposal,
        Err(candidates) => return Ok(Err(candidates)),
    };
    let label = target.server.label();
    let Some(edit) = edit.filter(|edit| !parts(edit).0.is_empty()) else {
        return Err(Error::InvalidArgument(format!(
            "[{label}] has nothing to rename at {}",
            target.describe()
        )));
    };
    let (files, operations) = parts(&edit);
    let mut sources = Sources::new(&target.roots);
    let mut by_path: Vec<(PathBuf, Vec<&lsp_types::TextEdit>)> = Vec::new();
    for (uri, edits) in files {
        let Some(path) = uri_to_path(uri.as_str()).filter(|path| sources.admit(path)) else {
            continue;
        };
        match by_path.iter_mut().find(|(known, _)| *known == path) {
            Some((_, known)) => known.extend(edits),
            None => by_path.push((path, edits)),
        }
    }
    let total: usize = by_path.iter().map(|(_, edits)| edits.len()).sum();
    let mut notes = render::notes(&target.roots, &reply);
    notes.push(format!(
        "rename to `{new_name}`: {} in {} (checked, nothing written)",
        counted(total, "edit"),
        counted(by_path.len(), "file")
    ));
    notes.extend(sources.outside_note());
    if !operations.is_empty() {
        notes.push(format!(
            "note: the rename would also create, rename or delete {}; those are not checked",
            counted(operations.len(), "file")
        ));
    }
    let mut edits = Vec::with_capacity(by_path.len());
    for (path, changes) in by_path {
        let display = target.roots.display(&path);
        let document = context.snapshot(&path, &display)?;
        let text = applied(&document.text, &changes, reply.encoding).map_err(|why| {
            Error::InvalidArgument(format!(
                "[{label}] proposed an edit of {display} that does not apply: {why}"
            ))
        })?;
        edits.push(EditedDocument { document, text });
    }
    Ok(Ok(Planned { edits, notes }))
}

/// The text the edit gives the file: its `replacements`, each of a text
/// that occurs once, or its whole `text`.
fn edited_text(text: &str, args: &CheckEditArgs) -> Result<String> {
    let edited = match (&args.replacements, &args.text) {
        (Some(replacements), None) => replaced(text, replacements)?,
        (None, Some(whole)) => whole.clone(),
        _ => {
            return Err(Error::InvalidArgument(
                "give one of `replacements`, `text` or `new_name`".into(),
            ));
        }
    };
    Ok(edited)
}

fn replaced(text: &str, replacements: &[Replacement]) -> Result<String> {
    if replacements.is_empty() {
        return Err(Error::InvalidArgument("`replacements` is empty".into()));
    }
    let mut edited = text.to_owned();
    for (index, replacement) in replacements.iter().enumerate() {
        let number = index + 1;
        if replacement.old.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "replacement {number}: `old` is empty"
            )));
        }
        match edited.matches(&replacement.old).count() {
            1 => edited = edited.replacen(&replacement.old, &replacement.new, 1),
            0 => {
                return Err(Error::InvalidArgument(format!(
                    "replacement {number}: `old` does not occur in the file"
                )));
            }
            count => {
                return Err(Error::InvalidArgument(format!(
                    "replacement {number}: `old` occurs {count} times; give more of the text around it"
                )));
            }
        }
    }
    Ok(edited)
}

/// Whether the edit gives the file an error it has not now.
fn adds_errors(before: &FileDiagnostics, after: &FileDiagnostics) -> bool {
    let (Some(old), Some(new)) = (&before.diagnostics, &after.diagnostics) else {
        return false;
    };
    missing_from(new, old)
        .iter()
        .any(|diagnostic| diagnostic.severity == Severity::Error)
}

/// The problems the edit adds (where they would stand) and removes (where
/// they stand now), each known by what it says. While the edit adds
/// errors anywhere (`masking`), a warning or note that goes is not called
/// fixed: servers skip their analyzers on code that does not compile
/// (gopls drops a package's vet warnings while it has a type error), so
/// its absence says nothing.
fn compared(
    before: &FileDiagnostics,
    after: &FileDiagnostics,
    said: &str,
    masking: bool,
) -> Vec<String> {
    let (Some(old), Some(new)) = (&before.diagnostics, &after.diagnostics) else {
        return vec![format!(
            "{}: no diagnostics from [{}]",
            before.file, before.server
        )];
    };
    let (added, gone, reworded) = reworded_apart(missing_from(new, old), missing_from(old, new));
    let (fixed, unreported): (Vec<&Diagnostic>, Vec<&Diagnostic>) = gone
        .into_iter()
        .partition(|diagnostic| !masking || diagnostic.severity == Severity::Error);
    let summary = match (added.len(), fixed.len(), unreported.len()) {
        (0, 0, 0) => format!(
            "{}, {said}: no new problems, none fixed ({} as now)",
            before.file,
            counted(new.len(), "problem")
        ),
        (added, fixed, 0) => format!(
            "{}, {said}: {}, {fixed} fixed",
            before.file,
            counted(added, "new problem"),
        ),
        (added, fixed, unreported) => format!(
            "{}, {said}: {}, {fixed} fixed, {unreported} no longer reported beside the new errors",
            before.file,
            counted(added, "new problem"),
        ),
    };
    let shown = |label: &'static str| {
        move |diagnostic: &&Diagnostic| format!("  {label} {}", diagnostic.shown())
    };
    let mut lines = vec![summary];
    lines.extend(added.iter().map(shown("new")));
    lines.extend(fixed.iter().map(shown("fixed")));
    lines.extend(unreported.iter().map(shown("unreported")));
    // A hint reworded (tsserver spells a deprecated signature's whole
    // type in it) is shown by count: dozens of them said nothing new.
    let (shown_reworded, hints): (Vec<&Diagnostic>, Vec<&Diagnostic>) = reworded
        .into_iter()
        .partition(|diagnostic| matches!(diagnostic.severity, Severity::Error | Severity::Warning));
    lines.extend(shown_reworded.iter().map(shown("reworded")));
    match hints.len() {
        0 => {}
        1 => lines.push("  (1 hint or note reworded)".to_owned()),
        count => lines.push(format!("  ({count} hints or notes reworded)")),
    }
    lines
}

/// The problems added and gone, without those that are one problem
/// reworded: the same place, severity, source and code, another message
/// (tsserver wrote `'1 | 2 | URL'` for `'2 | 1 | URL'` in a file the edit
/// did not break), which are given apart, as they now read.
fn reworded_apart<'a>(
    added: Vec<&'a Diagnostic>,
    mut gone: Vec<&'a Diagnostic>,
) -> (
    Vec<&'a Diagnostic>,
    Vec<&'a Diagnostic>,
    Vec<&'a Diagnostic>,
) {
    let mut reworded = Vec::new();
    let mut still_added = Vec::new();
    for diagnostic in added {
        let same = |other: &&Diagnostic| {
            (
                other.line,
                other.column,
                other.severity,
                &other.source,
                &other.code,
            ) == (
                diagnostic.line,
                diagnostic.column,
                diagnostic.severity,
                &diagnostic.source,
                &diagnostic.code,
            )
        };
        match gone.iter().position(same) {
            Some(at) => {
                gone.remove(at);
                reworded.push(diagnostic);
            }
            None => still_added.push(diagnostic),
        }
    }
    (still_added, gone, reworded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(line: u64, message: &str) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            ..warning(line, message)
        }
    }

    fn warning(line: u64, message: &str) -> Diagnostic {
        Diagnostic {
            line,
            column: 1,
            severity: Severity::Warning,
            source: Some("ts".into()),
            code: None,
            message: message.into(),
        }
    }

    fn report(diagnostics: Vec<Diagnostic>) -> FileDiagnostics {
        FileDiagnostics {
            file: "a.ts".into(),
            server: "typescript".into(),
            diagnostics: Some(diagnostics),
            notes: Vec::new(),
            unanswered: Vec::new(),
        }
    }

    #[test]
    fn replacements_must_each_be_found_once() {
        let replace = |old: &str, new: &str| Replacement {
            old: old.into(),
            new: new.into(),
        };
        assert_eq!(
            replaced("a b c", &[replace("b", "x"), replace("c", "y")]).unwrap(),
            "a x y"
        );
        let twice = replaced("a a", &[replace("a", "b")])
            .unwrap_err()
            .to_string();
        assert!(twice.contains("occurs 2 times"), "{twice}");
        let none = replaced("a", &[replace("z", "b")]).unwrap_err().to_string();
        assert!(none.contains("does not occur"), "{none}");
    }

    #[test]
    fn a_problem_only_moved_is_neither_new_nor_fixed() {
        let before = report(vec![problem(3, "old"), problem(9, "kept")]);
        let after = report(vec![problem(11, "kept"), problem(4, "new")]);
        assert_eq!(
            compared(&before, &after, EDITED, false),
            vec![
                "a.ts, if edited (nothing written): 1 new problem, 1 fixed",
                "  new 4:1 error [ts] new",
                "  fixed 3:1 error [ts] old",
            ]
        );
        let same = compared(&before, &before, EDITED, false);
        assert_eq!(
            same,
            vec![
                "a.ts, if edited (nothing written): no new problems, none fixed (2 problems as now)"
            ]
        );
    }

    #[test]
    fn a_problem_reworded_in_place_is_neither_new_nor_fixed() {
        let before = report(vec![problem(72, "not on type '2 | 1 | URL'")]);
        let after = report(vec![problem(72, "not on type '1 | 2 | URL'")]);
        assert_eq!(
            compared(&before, &after, DEPENDENT, false),
            vec![
                "a.ts, not edited, after the edit: no new problems, none fixed (1 problem as now)",
                "  reworded 72:1 error [ts] not on type '1 | 2 | URL'",
            ]
        );
    }

    #[test]
    fn hints_reworded_are_counted_not_listed() {
        let hint = |message: &str| Diagnostic {
            severity: Severity::Hint,
            ..warning(9, message)
        };
        let before = report(vec![hint("'(a: 1 | 2) => X' is deprecated")]);
        let after = report(vec![hint("'(a: 2 | 1) => X' is deprecated")]);
        assert_eq!(
            compared(&before, &after, DEPENDENT, false),
            vec![
                "a.ts, not edited, after the edit: no new problems, none fixed (1 problem as now)",
                "  (1 hint or note reworded)",
            ]
        );
    }

    #[test]
    fn warnings_gone_beside_new_errors_are_not_called_fixed() {
        let before = report(vec![problem(3, "old"), warning(7, "unused result")]);
        let after = report(vec![problem(4, "new")]);
        assert!(adds_errors(&before, &after));
        assert!(!adds_errors(&after, &after));
        assert_eq!(
            compared(&before, &after, EDITED, true),
            vec![
                "a.ts, if edited (nothing written): 1 new problem, 1 fixed, 1 no longer reported beside the new errors",
                "  new 4:1 error [ts] new",
                "  fixed 3:1 error [ts] old",
                "  unreported 7:1 warning [ts] unused result",
            ]
        );
        let fixed = compared(&before, &report(Vec::new()), DEPENDENT, false);
        assert_eq!(
            fixed[0],
            "a.ts, not edited, after the edit: 0 new problems, 2 fixed"
        );
    }
}
