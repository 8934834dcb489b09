//! `windlass release`: after an agent edited files (Claude Code
//! PostToolUse / PostToolBatch, Gemini AfterTool), tells it at once what
//! the edit broke: fresh diagnostics of each edited file, asked of its
//! session over the control socket (the `diagnostics` tool's own path),
//! errors first and capped. A clean file says nothing, unless this owner
//! was last told it had errors. Then it records the file's modification
//! time for this owner and lets the owner's lease go after `--grace`.
//! Without `--format` (PostToolUseFailure) it only lets the lease go.

use super::{Format, Run, mtime_ns};
use crate::control::client;
use crate::control::protocol::{Answer, Request};
use anyhow::Result;
use clap::Args;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use windlass_actors::recorder::kind;
use windlass_actors::store::{self, hooks, locks};

/// How long the session may take to give fresh diagnostics: below the
/// hook's own timeout in the plugins' hooks files (60 s).
const DIAGNOSTICS_TIMEOUT: Duration = Duration::from_secs(45);
/// Problems listed per file; the rest are counted.
const MAX_ITEMS: usize = 12;
/// The longest answer, well below Claude Code's 10,000 characters.
const MAX_CHARS: usize = 4_000;

#[derive(Args, Clone, Debug)]
pub struct ReleaseArgs {
    /// The host's JSON to answer in; without it, only the lease is let go.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Seconds the lease is kept after the edit (0: let go at once).
    #[arg(long, default_value_t = 3)]
    pub grace: u64,
}

/// The tools whose files `release` reports on.
fn edits(tool: &str) -> bool {
    matches!(
        tool,
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" | "write_file" | "replace"
    )
}

pub fn run(args: &ReleaseArgs) -> Result<()> {
    super::run("release", |run| release(run, args))
}

fn release(run: &mut Run, args: &ReleaseArgs) -> Result<Option<Value>> {
    let owner = run.input.owner();
    let files = run.input.files_of(edits);
    let mut reports = Vec::new();
    for file in &files {
        let shown = file.display().to_string();
        // A file whose diagnostics could not be had still has its lease
        // let go; the failure is recorded with the run.
        let told = match args.format {
            Some(_) => match report(run, file) {
                Ok((report, told)) => {
                    reports.extend(report);
                    Some(told)
                }
                Err(error) => {
                    run.record(
                        kind::ERROR,
                        json!({"file": shown, "error": format!("{error:#}")}),
                    );
                    None
                }
            },
            None => None,
        };
        let now = store::now_ms();
        hooks::set_file_state(&run.store, &owner, &shown, mtime_ns(file), told, now)?;
        let grace = i64::try_from(args.grace.saturating_mul(1000)).unwrap_or(i64::MAX);
        if locks::release(&mut run.store, &shown, &owner, now, grace)? {
            run.record(
                kind::LOCK_RELEASED,
                json!({"file": shown, "owner": owner, "grace_s": args.grace}),
            );
        }
    }
    Ok(match (args.format, reports.is_empty()) {
        (Some(format), false) => Some(run.context(format, &bounded(&reports.join("\n")))),
        _ => None,
    })
}

/// What the owner should hear about `file` now, if anything (its errors
/// and warnings, or that the errors it was told of are gone), and whether
/// it is now told of errors.
fn report(run: &Run, file: &Path) -> Result<(Option<String>, bool)> {
    let Some(session) = &run.session else {
        anyhow::bail!("no live windlass session for this host session or directory");
    };
    let request = Request::Diagnostics {
        file: file.to_path_buf(),
        session: Some(session.id.clone()),
    };
    let text = client::expect(
        &session.socket,
        &request,
        DIAGNOSTICS_TIMEOUT,
        |answer| match answer {
            Answer::Diagnostics(text) => Some(text),
            _ => None,
        },
    )?;
    let found = Found::parse(&text);
    let owner = run.input.owner();
    let shown = file.display().to_string();
    let told_before =
        hooks::file_state(&run.store, &owner, &shown)?.is_some_and(|state| state.told_errors);
    let has_errors = found.errors > 0;
    let report = match (found.problems.is_empty(), told_before && !has_errors) {
        (true, true) => Some(format!("fixed: no errors left in {shown}")),
        (true, false) => None,
        (false, fixed) => Some(found.render(&shown, fixed)),
    };
    Ok((report, has_errors))
}

/// The problems in a `diagnostics` answer, errors first.
#[derive(Debug, Default, PartialEq)]
struct Found {
    errors: usize,
    warnings: usize,
    /// `L:C severity [source code] message`, errors then warnings.
    problems: Vec<String>,
    /// What the answer says about itself (still loading, an incomplete
    /// index, a server's complaint about the file).
    notes: Vec<String>,
}

impl Found {
    /// Reads the tool's answer: a summary line per file, one indented
    /// line per diagnostic, notes before them.
    fn parse(text: &str) -> Self {
        let mut found = Found::default();
        let mut warnings = Vec::new();
        for line in text.lines() {
            let Some(item) = line.strip_prefix("  ") else {
                if line.starts_with("note:") || line.contains(" note:") {
                    found.notes.push(line.trim().to_owned());
                }
                continue;
            };
            let severity = item.split_whitespace().nth(1).unwrap_or_default();
            match severity {
                "error" => {
                    found.errors += 1;
                    found.problems.push(item.to_owned());
                }
                "warning" => {
                    found.warnings += 1;
                    warnings.push(item.to_owned());
                }
                _ => {}
            }
        }
        found.problems.extend(warnings);
        found
    }

    fn render(&self, file: &str, fixed_some: bool) -> String {
        let mut counts = Vec::new();
        for (count, name) in [(self.errors, "error"), (self.warnings, "warning")] {
            match count {
                0 => {}
                1 => counts.push(format!("1 {name}")),
                _ => counts.push(format!("{count} {name}s")),
            }
        }
        let mut lines = vec![format!("{file} after the edit: {}", counts.join(", "))];
        if fixed_some {
            lines[0].push_str(" (the errors reported before are gone)");
        }
        lines.extend(
            self.problems
                .iter()
                .take(MAX_ITEMS)
                .map(|item| format!("  {item}")),
        );
        if self.problems.len() > MAX_ITEMS {
            lines.push(format!(
                "  … {} more (the diagnostics tool lists them all)",
                self.problems.len() - MAX_ITEMS
            ));
        }
        lines.extend(self.notes.iter().cloned());
        lines.join("\n")
    }
}

/// `text` cut at a line boundary to [`MAX_CHARS`], saying so.
fn bounded(text: &str) -> String {
    if text.len() <= MAX_CHARS {
        return text.to_owned();
    }
    let mut cut = 0;
    for (index, _) in text.match_indices('\n') {
        if index > MAX_CHARS - 80 {
            break;
        }
        cut = index;
    }
    format!(
        "{}\n… cut at {MAX_CHARS} characters (the diagnostics tool gives the rest)",
        &text[..cut]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANSWER: &str = "note: [python] still loading\n\
        src/a.py: 1 error, 2 warnings\n  \
        2:1 warning [lint] unused import\n  \
        5:7 error [Pyright reportAttributeAccessIssue] Cannot access attribute \"x\"\n  \
        9:2 warning [lint] shadowed\n  \
        10:1 hint [lint] could be simpler";

    #[test]
    fn errors_come_first_and_hints_are_left_out() {
        let found = Found::parse(ANSWER);
        assert_eq!((found.errors, found.warnings), (1, 2));
        assert_eq!(
            found.problems[0],
            "5:7 error [Pyright reportAttributeAccessIssue] Cannot access attribute \"x\""
        );
        assert_eq!(found.problems.len(), 3);
        assert_eq!(found.notes, vec!["note: [python] still loading"]);
        let shown = found.render("src/a.py", false);
        assert!(
            shown.starts_with("src/a.py after the edit: 1 error, 2 warnings\n  5:7 error"),
            "{shown}"
        );
        assert!(shown.ends_with("note: [python] still loading"), "{shown}");
    }

    #[test]
    fn a_clean_answer_has_no_problems() {
        let found = Found::parse("src/a.py: no problems");
        assert!(found.problems.is_empty());
        assert_eq!(found.errors, 0);
    }

    #[test]
    fn many_problems_are_capped_and_counted() {
        let mut answer = String::from("a.py: 30 errors\n");
        for line in 1..=30 {
            answer.push_str(&format!("  {line}:1 error bad\n"));
        }
        let shown = Found::parse(&answer).render("a.py", false);
        assert_eq!(shown.lines().count(), 1 + MAX_ITEMS + 1);
        assert!(shown.contains("18 more"), "{shown}");
        let long = "x\n".repeat(MAX_CHARS);
        assert!(bounded(&long).len() < MAX_CHARS + 100);
    }
}
