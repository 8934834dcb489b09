//! The `check_edit` tool: what an edit would add to and remove from a
//! file's problems, before it is written. Every server of the file that
//! contributes diagnostics checks the file as on disk and as the edit
//! would make it (an unsaved version, given back the disk text after);
//! the two are compared by what each problem says, wherever it stands.
//! Nothing is written.

use super::context::Context;
use super::diagnostics::{from_each, problems, settled};
use crate::error::{Error, Result};
use crate::messages::router::ServerHandle;
use crate::vocabulary::counted::counted;
use crate::vocabulary::diagnostics::{Diagnostic, FileDiagnostics};
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::root_set::RootSet;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckEditArgs {
    pub file: String,
    pub replacements: Option<Vec<Replacement>>,
    /// The whole new text, instead.
    pub text: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Replacement {
    pub old: String,
    pub new: String,
}

pub async fn check_edit(context: &Context, args: &CheckEditArgs) -> Result<String> {
    let (roots, path) = context.resolve(&args.file).await?;
    let document = context.snapshot(&path, &args.file)?;
    let edited = edited_text(&document.text, args)?;
    let servers = context.diagnosing(&path).await?;
    let several = servers.len() > 1;
    let reports = from_each(servers, |server| {
        let (context, roots) = (context.clone(), roots.clone());
        let (document, edited) = (document.clone(), edited.clone());
        async move { check(&context, &roots, &server, document, &edited, several).await }
    })
    .await;
    let (reports, warnings) = settled(reports, &args.file)?;
    let mut notes = Vec::new();
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for (disk, edit) in reports {
        notes.extend(disk.notes.iter().cloned());
        before.push(disk);
        after.push(edit);
    }
    notes.extend(warnings);
    let before = FileDiagnostics::merge(before);
    let after = FileDiagnostics::merge(after);
    let mut lines = notes;
    lines.extend(compared(&before, &after));
    Ok(super::render::bounded(
        &lines,
        context.settings.max_output_bytes,
    ))
}

/// One server's problems of the file as on disk and as edited.
async fn check(
    context: &Context,
    roots: &RootSet,
    server: &ServerHandle,
    document: DocumentSnapshot,
    edited: &str,
    several: bool,
) -> Result<(FileDiagnostics, FileDiagnostics)> {
    let reply = context.check_edit(server, document.clone(), edited).await?;
    let edited = document.unsaved(edited.to_owned());
    Ok((
        problems(roots, server, &document, &reply.before, several),
        problems(roots, server, &edited, &reply.after, several),
    ))
}

/// The text the edit gives the file: its `replacements`, each of a text
/// that occurs once, or its whole `text`.
fn edited_text(text: &str, args: &CheckEditArgs) -> Result<String> {
    let edited = match (&args.replacements, &args.text) {
        (Some(replacements), None) => replaced(text, replacements)?,
        (None, Some(whole)) => whole.clone(),
        _ => {
            return Err(Error::InvalidArgument(
                "give `replacements` or `text`, not both".into(),
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

/// The problems the edit adds (where they would stand) and removes (where
/// they stand now), each known by what it says.
fn compared(before: &FileDiagnostics, after: &FileDiagnostics) -> Vec<String> {
    let (Some(old), Some(new)) = (&before.diagnostics, &after.diagnostics) else {
        return vec![format!(
            "{}: no diagnostics from [{}]",
            before.file, before.server
        )];
    };
    let added = missing_from(new, old);
    let fixed = missing_from(old, new);
    let summary = match (added.len(), fixed.len()) {
        (0, 0) => format!(
            "{}, if edited (nothing written): no new problems, none fixed ({} as now)",
            before.file,
            counted(new.len(), "problem")
        ),
        (added, fixed) => format!(
            "{}, if edited (nothing written): {}, {fixed} fixed",
            before.file,
            counted(added, "new problem"),
        ),
    };
    let mut lines = vec![summary];
    lines.extend(
        added
            .iter()
            .map(|diagnostic| format!("  new {}", diagnostic.shown())),
    );
    lines.extend(
        fixed
            .iter()
            .map(|diagnostic| format!("  fixed {}", diagnostic.shown())),
    );
    lines
}

/// The problems of `these` that `those` has not, counted by what each
/// says: a problem the edit only moved is in both.
fn missing_from<'a>(these: &'a [Diagnostic], those: &[Diagnostic]) -> Vec<&'a Diagnostic> {
    let mut left: HashMap<String, usize> = HashMap::new();
    for diagnostic in those {
        *left.entry(diagnostic.what()).or_default() += 1;
    }
    these
        .iter()
        .filter(|diagnostic| match left.get_mut(&diagnostic.what()) {
            Some(count) if *count > 0 => {
                *count -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::diagnostics::Severity;

    fn problem(line: u64, message: &str) -> Diagnostic {
        Diagnostic {
            line,
            column: 1,
            severity: Severity::Error,
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
            compared(&before, &after),
            vec![
                "a.ts, if edited (nothing written): 1 new problem, 1 fixed",
                "  new 4:1 error [ts] new",
                "  fixed 3:1 error [ts] old",
            ]
        );
        let same = compared(&before, &before);
        assert_eq!(
            same,
            vec![
                "a.ts, if edited (nothing written): no new problems, none fixed (2 problems as now)"
            ]
        );
    }
}
