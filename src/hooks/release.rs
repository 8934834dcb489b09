//! `windlass release`: after an agent edited files (Claude Code
//! PostToolUse / PostToolBatch, Gemini AfterTool), tells it at once what
//! the edit broke: fresh diagnostics of each edited file, asked of its
//! session over the control socket (the `diagnostics` tool's own path),
//! errors first and capped. The first time an owner hears of a file it
//! gets every error and warning; after that, what its edit changed (new
//! problems, problems gone), whatever lines moved, and nothing when
//! nothing changed. A file whose errors are gone says "fixed". Then it
//! records the file's modification time for this owner and lets the
//! owner's lease go after `--grace`.
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
        if args.format.is_some() {
            match report(run, file) {
                Ok(report) => reports.extend(report),
                Err(error) => run.failed(json!({"file": shown}), format!("{error:#}")),
            }
        }
        let now = store::now_ms();
        hooks::set_mtime(&run.store, &owner, &shown, mtime_ns(file), now)?;
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

/// What the owner should hear about `file` now, if anything: what the
/// edit changed in its problems since it was last told, or all of them
/// the first time, or that the errors it was told of are gone.
fn report(run: &Run, file: &Path) -> Result<Option<String>> {
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
    let known = hooks::file_state(&run.store, &owner, &shown)?;
    let told_errors = known.as_ref().is_some_and(|known| known.told_errors);
    let before = known.and_then(|known| known.problems);
    // Only a single tool's input says what it wrote where.
    let edited = match (&run.input.tool_calls, &run.input.tool_input) {
        (None, Some(input)) => std::fs::read_to_string(file)
            .map(|text| edited_lines(&text, input))
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let report = found.report(&shown, before.as_deref(), told_errors, &edited);
    hooks::set_told(
        &run.store,
        &owner,
        &shown,
        &found.keys(),
        found.errors > 0,
        store::now_ms(),
    )?;
    Ok(report)
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
            match severity(item) {
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

    /// Each problem without its position: an edit above it moves it, and
    /// it is still the problem the owner was told of.
    fn keys(&self) -> Vec<String> {
        self.problems
            .iter()
            .map(|problem| key(problem).to_owned())
            .collect()
    }

    /// What to say, given the problems the owner was told of `before`
    /// (`None`: never told of this file); problems in the `edited` lines
    /// (1-based, inclusive) come first.
    fn report(
        &self,
        file: &str,
        before: Option<&[String]>,
        told_errors: bool,
        edited: &[(u64, u64)],
    ) -> Option<String> {
        if self.errors == 0 && told_errors {
            let mut fixed = format!("fixed: no errors left in {file}");
            if self.warnings > 0 {
                fixed.push_str(&format!(" ({})", counts(0, self.warnings, "")));
            }
            return Some(fixed);
        }
        let in_edit = |problem: &str| {
            let line = line_of(problem);
            edited
                .iter()
                .any(|(first, last)| (*first..=*last).contains(&line))
        };
        let mut unseen: Vec<&str> = before
            .unwrap_or_default()
            .iter()
            .map(String::as_str)
            .collect();
        let new: Vec<&String> = self
            .problems
            .iter()
            .filter(
                |problem| match unseen.iter().position(|known| *known == key(problem)) {
                    Some(at) => {
                        unseen.remove(at);
                        false
                    }
                    None => true,
                },
            )
            .collect();
        let mut new = new;
        // Stable: errors before warnings within each group.
        new.sort_by_key(|problem| !in_edit(problem));
        let carried = self.problems.len() - new.len();
        let loading = self.notes.iter().any(|note| note.contains("loading"));
        let mut lines = match (new.is_empty(), carried, unseen.len()) {
            (true, _, 0) if !loading => return None,
            (true, _, 0) => vec![format!("{file} after the edit: no new problems")],
            (true, _, gone) => vec![format!(
                "{file} after the edit: {gone} of the problems reported before gone, still {}",
                counts(self.errors, self.warnings, "")
            )],
            (false, 0, _) => {
                let mut head = format!(
                    "{file} after the edit: {}",
                    counts(self.errors, self.warnings, "")
                );
                let edited = new.iter().filter(|problem| in_edit(problem)).count();
                if edited > 0 && edited < new.len() {
                    head.push_str(&format!(
                        ", {edited} of them in the edited lines (listed first)"
                    ));
                }
                vec![head]
            }
            (false, carried, _) => {
                let new_errors = new
                    .iter()
                    .filter(|problem| severity(problem) == "error")
                    .count();
                vec![format!(
                    "{file} after the edit: {}; {} in all, {carried} of them reported before",
                    counts(new_errors, new.len() - new_errors, "new "),
                    counts(self.errors, self.warnings, "")
                )]
            }
        };
        lines.extend(new.iter().take(MAX_ITEMS).map(|item| format!("  {item}")));
        if new.len() > MAX_ITEMS {
            lines.push(format!(
                "  … {} more (the diagnostics tool lists them all)",
                new.len() - MAX_ITEMS
            ));
        }
        lines.extend(self.notes.iter().cloned());
        Some(lines.join("\n"))
    }
}

/// A problem line's 1-based line number.
fn line_of(problem: &str) -> u64 {
    problem
        .split(':')
        .next()
        .and_then(|line| line.parse().ok())
        .unwrap_or(0)
}

/// The lines (1-based, inclusive) that an edit tool's `input` wrote into
/// `text`: where each `new_string` now stands. A whole-file write, or a
/// text not found, gives none.
fn edited_lines(text: &str, input: &Value) -> Vec<(u64, u64)> {
    let mut written: Vec<&str> = input
        .get("new_string")
        .and_then(Value::as_str)
        .into_iter()
        .collect();
    if let Some(edits) = input.get("edits").and_then(Value::as_array) {
        written.extend(
            edits
                .iter()
                .filter_map(|edit| edit.get("new_string")?.as_str()),
        );
    }
    written
        .into_iter()
        .filter(|new| !new.trim().is_empty())
        .filter_map(|new| {
            let at = text.find(new)?;
            let first = text[..at].matches('\n').count() as u64 + 1;
            Some((first, first + new.matches('\n').count() as u64))
        })
        .collect()
}

/// A problem line's severity: the word after its position.
fn severity(problem: &str) -> &str {
    problem.split_whitespace().nth(1).unwrap_or_default()
}

/// A problem line without its `L:C ` position.
fn key(problem: &str) -> &str {
    problem.split_once(' ').map_or(problem, |(_, rest)| rest)
}

/// "1 error, 2 warnings", with `adjective` before each noun.
fn counts(errors: usize, warnings: usize, adjective: &str) -> String {
    let mut shown = Vec::new();
    for (count, noun) in [(errors, "error"), (warnings, "warning")] {
        match count {
            0 => {}
            1 => shown.push(format!("1 {adjective}{noun}")),
            _ => shown.push(format!("{count} {adjective}{noun}s")),
        }
    }
    if shown.is_empty() {
        return "no problems".into();
    }
    shown.join(", ")
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
        let shown = found.report("src/a.py", None, false, &[]).unwrap();
        assert!(
            shown.starts_with("src/a.py after the edit: 1 error, 2 warnings\n  5:7 error"),
            "{shown}"
        );
        assert!(shown.ends_with("note: [python] still loading"), "{shown}");
    }

    #[test]
    fn a_later_edit_reports_what_it_changed_whatever_moved() {
        let before =
            Found::parse("a.py: 2 errors\n  3:1 error [x] old one\n  9:1 error [x] old two\n");
        let told = before.keys();
        // Lines moved by the edit; one new error.
        let after = Found::parse(
            "a.py: 3 errors\n  4:1 error [x] old one\n  5:2 error [x] new one\n  10:1 error [x] old two\n",
        );
        let shown = after.report("a.py", Some(&told), true, &[]).unwrap();
        assert_eq!(
            shown,
            "a.py after the edit: 1 new error; 3 errors in all, 2 of them reported before\n  5:2 error [x] new one"
        );
        assert_eq!(
            before.report("a.py", Some(&told), true, &[]),
            None,
            "nothing changed"
        );
        let fewer = Found::parse("a.py: 1 error\n  3:1 error [x] old two\n");
        assert_eq!(
            fewer.report("a.py", Some(&told), true, &[]).unwrap(),
            "a.py after the edit: 1 of the problems reported before gone, still 1 error"
        );
        let clean = Found::parse("a.py: no problems");
        assert_eq!(
            clean.report("a.py", Some(&told), true, &[]).unwrap(),
            "fixed: no errors left in a.py"
        );
        assert_eq!(clean.report("a.py", Some(&[]), false, &[]), None);
    }

    #[test]
    fn problems_in_the_edited_lines_come_first() {
        let text = "a = 1\nb = 2\nc = broken(\n  more)\nd = 4\n";
        let input =
            serde_json::json!({"old_string": "c = 3", "new_string": "c = broken(\n  more)"});
        let edited = edited_lines(text, &input);
        assert_eq!(edited, vec![(3, 4)]);
        let found =
            Found::parse("f: 3 errors\n  1:1 error old\n  4:3 error new\n  5:1 error later\n");
        let shown = found.report("f", None, false, &edited).unwrap();
        assert_eq!(
            shown,
            "f after the edit: 3 errors, 1 of them in the edited lines (listed first)\n  4:3 error new\n  1:1 error old\n  5:1 error later"
        );
        assert!(edited_lines(text, &serde_json::json!({"content": text})).is_empty());
    }

    #[test]
    fn many_problems_are_capped_and_counted() {
        let mut answer = String::from("a.py: 30 errors\n");
        for line in 1..=30 {
            answer.push_str(&format!("  {line}:1 error bad {line}\n"));
        }
        let shown = Found::parse(&answer)
            .report("a.py", None, false, &[])
            .unwrap();
        assert_eq!(shown.lines().count(), 1 + MAX_ITEMS + 1);
        assert!(shown.contains("18 more"), "{shown}");
        let long = "x\n".repeat(MAX_CHARS);
        assert!(bounded(&long).len() < MAX_CHARS + 100);
    }
}
