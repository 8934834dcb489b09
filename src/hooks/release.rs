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
use std::time::{Duration, Instant};
use windlass_actors::store::{self, hooks, locks};
use windlass_actors::vocabulary::counted::counted;
use windlass_actors::vocabulary::diagnostics::{Diagnostic, FileDiagnostics, Severity};
use windlass_actors::vocabulary::events::EventKind;

/// How long the session may take to give fresh diagnostics: below the
/// hook's own timeout in the plugins' hooks files (60 s).
const DIAGNOSTICS_TIMEOUT: Duration = Duration::from_secs(45);
/// When the last edit's effect on other files must be in, from the
/// hook's start: the edited files' own diagnostics come first, and the
/// whole answer within the hook's timeout.
const EFFECT_DEADLINE: Duration = Duration::from_secs(50);
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

pub fn run(args: &ReleaseArgs) -> Result<()> {
    super::run("release", |run| release(run, args))
}

fn release(run: &mut Run, args: &ReleaseArgs) -> Result<Option<Value>> {
    let owner = run.input.owner();
    let format = args.format.map(Format::running);
    // Without a format only leases are let go: any host names its files so.
    let host = format.unwrap_or(Format::Claude).host();
    let files = run.input.touched(host);
    let started = Instant::now();
    let mut reports = Vec::new();
    for file in files.iter().filter(|file| !file.read) {
        let shown = file.path.display().to_string();
        // A file whose diagnostics could not be had still has its lease
        // let go; the failure is recorded with the run. A removed file
        // has none to give.
        if format.is_some() && !file.removed {
            match report(run, &file.path) {
                Ok(report) => reports.extend(report),
                Err(error) => run.failed(json!({"file": shown}), format!("{error:#}")),
            }
            let left = EFFECT_DEADLINE.saturating_sub(started.elapsed());
            match effect(run, &file.path, left) {
                Ok(effect) => reports.extend(effect),
                Err(error) => {
                    run.failed(json!({"file": shown, "effect": true}), format!("{error:#}"))
                }
            }
        }
        let now = store::now_ms();
        hooks::set_mtime(&run.store, &owner, &shown, mtime_ns(&file.path), now)?;
        let grace = match file.removed {
            true => 0,
            false => i64::try_from(args.grace.saturating_mul(1000)).unwrap_or(i64::MAX),
        };
        if locks::release(&mut run.store, &shown, &owner, now, grace)? {
            run.record(
                EventKind::LockReleased,
                json!({"file": shown, "owner": owner, "grace_s": grace / 1000}),
            );
        }
    }
    Ok(match (format, reports.is_empty()) {
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
        session: Some(session.id),
    };
    let answer =
        client::expect(
            &session.socket,
            &request,
            DIAGNOSTICS_TIMEOUT,
            |answer| match answer {
                Answer::Diagnostics(answer) => Some(answer),
                _ => None,
            },
        )?;
    let found = Found::of(answer);
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
    found.told(run, &owner, &shown)?;
    Ok(report)
}

/// What the edit of `file` did to the files that use what it changed
/// (the `acquire` hook had the session keep the file as it was): the
/// problems it gave each, or took away, and which it could not check.
fn effect(run: &Run, file: &Path, left: Duration) -> Result<Vec<String>> {
    let Some(session) = &run.session else {
        return Ok(Vec::new());
    };
    let request = Request::EditEffect {
        file: file.to_path_buf(),
        session: Some(session.id),
    };
    let effect = client::expect(&session.socket, &request, left, |answer| match answer {
        Answer::EditEffect(effect) => Some(effect),
        _ => None,
    })?;
    let owner = run.input.owner();
    let edited = file.display().to_string();
    let mut lines = Vec::new();
    for other in effect.elsewhere {
        let shown = other.path.display().to_string();
        let told_errors =
            hooks::file_state(&run.store, &owner, &shown)?.is_some_and(|known| known.told_errors);
        let before = Found::of(other.before).keys();
        let found = Found::of(other.now);
        lines.extend(found.report_elsewhere(&shown, &edited, &before, told_errors));
        found.told(run, &owner, &shown)?;
    }
    lines.extend(effect.warnings);
    Ok(lines)
}

/// The problems in a file's diagnostics that an agent hears of: errors,
/// then warnings.
#[derive(Debug, Default, PartialEq)]
struct Found {
    errors: usize,
    warnings: usize,
    /// Errors then warnings, each in line order.
    problems: Vec<Diagnostic>,
    /// What the answer says about itself (an incomplete index, a server's
    /// complaint about the file), passed on as they are.
    notes: Vec<String>,
}

impl Found {
    fn of(answer: FileDiagnostics) -> Self {
        let mut problems: Vec<Diagnostic> = answer
            .diagnostics
            .into_iter()
            .flatten()
            .filter(|problem| matches!(problem.severity, Severity::Error | Severity::Warning))
            .collect();
        // Stable: line order within each severity.
        problems.sort_by_key(|problem| problem.severity);
        Found {
            errors: count(&problems, Severity::Error),
            warnings: count(&problems, Severity::Warning),
            problems,
            notes: answer.notes,
        }
    }

    /// Records that `owner` has now been told of these problems of `file`.
    fn told(&self, run: &Run, owner: &str, file: &str) -> Result<()> {
        hooks::set_told(
            &run.store,
            owner,
            file,
            &self.keys(),
            self.errors > 0,
            store::now_ms(),
        )?;
        Ok(())
    }

    /// Each problem without its position: an edit above it moves it, and
    /// it is still the problem the owner was told of.
    fn keys(&self) -> Vec<String> {
        self.problems.iter().map(Diagnostic::what).collect()
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
        let in_edit = |problem: &Diagnostic| {
            edited
                .iter()
                .any(|(first, last)| (*first..=*last).contains(&problem.line))
        };
        let (mut new, gone) = self.new_since(before.unwrap_or_default());
        // Stable: errors before warnings within each group.
        new.sort_by_key(|problem| !in_edit(problem));
        let carried = self.problems.len() - new.len();
        let mut lines = match (new.is_empty(), carried, gone) {
            (true, _, 0) => return None,
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
                    .filter(|problem| problem.severity == Severity::Error)
                    .count();
                vec![format!(
                    "{file} after the edit: {}; {} in all, {carried} of them reported before",
                    counts(new_errors, new.len() - new_errors, "new "),
                    counts(self.errors, self.warnings, "")
                )]
            }
        };
        lines.extend(listed(&new));
        lines.extend(self.notes.iter().cloned());
        Some(lines.join("\n"))
    }

    /// What to say of a file the edit of `edited` did not touch, given
    /// its problems `before` the edit: the problems the edit gave it, or
    /// those it took away, or that the errors the owner was told of there
    /// are gone.
    fn report_elsewhere(
        &self,
        file: &str,
        edited: &str,
        before: &[String],
        told_errors: bool,
    ) -> Option<String> {
        let (new, gone) = self.new_since(before);
        if self.errors == 0 && told_errors && (gone > 0 || new.is_empty()) {
            return Some(format!(
                "fixed: no errors left in {file} (not edited) after the edit of {edited}"
            ));
        }
        let head = match (new.is_empty(), gone) {
            (true, 0) => return None,
            (true, gone) => format!(
                "{file} (not edited): {} gone with the edit of {edited}, still {}",
                counted(gone, "problem"),
                counts(self.errors, self.warnings, "")
            ),
            (false, _) => {
                let new_errors = new
                    .iter()
                    .filter(|problem| problem.severity == Severity::Error)
                    .count();
                format!(
                    "{file} (not edited) after the edit of {edited}: {}",
                    counts(new_errors, new.len() - new_errors, "new ")
                )
            }
        };
        let mut lines = vec![head];
        lines.extend(listed(&new));
        Some(lines.join("\n"))
    }

    /// The problems not among `before` (each known by what it says,
    /// wherever it stands), and how many of `before` are gone.
    fn new_since(&self, before: &[String]) -> (Vec<&Diagnostic>, usize) {
        let mut unseen: Vec<&str> = before.iter().map(String::as_str).collect();
        let new = self
            .problems
            .iter()
            .filter(|problem| {
                let what = problem.what();
                match unseen.iter().position(|known| *known == what) {
                    Some(at) => {
                        unseen.remove(at);
                        false
                    }
                    None => true,
                }
            })
            .collect();
        (new, unseen.len())
    }
}

/// The problems as listed under a file's line, capped at [`MAX_ITEMS`].
fn listed(problems: &[&Diagnostic]) -> Vec<String> {
    let mut lines: Vec<String> = problems
        .iter()
        .take(MAX_ITEMS)
        .map(|problem| format!("  {}", problem.shown()))
        .collect();
    if problems.len() > MAX_ITEMS {
        lines.push(format!(
            "  … {} more (the diagnostics tool lists them all)",
            problems.len() - MAX_ITEMS
        ));
    }
    lines
}

fn count(problems: &[Diagnostic], severity: Severity) -> usize {
    problems
        .iter()
        .filter(|problem| problem.severity == severity)
        .count()
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

    fn problem(line: u64, severity: Severity, message: &str) -> Diagnostic {
        Diagnostic {
            line,
            column: 1,
            severity,
            source: Some("x".into()),
            code: None,
            message: message.into(),
        }
    }

    /// A file's diagnostics as the session answers them.
    fn found(problems: Vec<Diagnostic>) -> Found {
        Found::of(FileDiagnostics {
            file: "a.py".into(),
            server: "python".into(),
            diagnostics: Some(problems),
            notes: Vec::new(),
            unanswered: Vec::new(),
        })
    }

    #[test]
    fn errors_come_first_and_hints_are_left_out() {
        let answer = FileDiagnostics {
            file: "src/a.py".into(),
            server: "python".into(),
            diagnostics: Some(vec![
                problem(2, Severity::Warning, "unused import"),
                problem(5, Severity::Error, "Cannot access attribute \"x\""),
                problem(9, Severity::Warning, "shadowed"),
                problem(10, Severity::Hint, "could be simpler"),
            ]),
            notes: vec!["note: [python] sees only open files".into()],
            unanswered: Vec::new(),
        };
        let found = Found::of(answer);
        assert_eq!((found.errors, found.warnings), (1, 2));
        assert_eq!(found.problems.len(), 3);
        let shown = found.report("src/a.py", None, false, &[]).unwrap();
        assert!(
            shown.starts_with(
                "src/a.py after the edit: 1 error, 2 warnings\n  5:1 error [x] Cannot access attribute \"x\"\n  2:1 warning"
            ),
            "{shown}"
        );
        assert!(
            shown.ends_with("note: [python] sees only open files"),
            "{shown}"
        );
    }

    #[test]
    fn a_later_edit_reports_what_it_changed_whatever_moved() {
        let before = found(vec![
            problem(3, Severity::Error, "old one"),
            problem(9, Severity::Error, "old two"),
        ]);
        let told = before.keys();
        // Lines moved by the edit; one new error.
        let after = found(vec![
            problem(4, Severity::Error, "old one"),
            problem(5, Severity::Error, "new one"),
            problem(10, Severity::Error, "old two"),
        ]);
        let shown = after.report("a.py", Some(&told), true, &[]).unwrap();
        assert_eq!(
            shown,
            "a.py after the edit: 1 new error; 3 errors in all, 2 of them reported before\n  5:1 error [x] new one"
        );
        assert_eq!(
            before.report("a.py", Some(&told), true, &[]),
            None,
            "nothing changed"
        );
        let fewer = found(vec![problem(3, Severity::Error, "old two")]);
        assert_eq!(
            fewer.report("a.py", Some(&told), true, &[]).unwrap(),
            "a.py after the edit: 1 of the problems reported before gone, still 1 error"
        );
        let clean = found(Vec::new());
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
        let found = found(vec![
            problem(1, Severity::Error, "old"),
            problem(4, Severity::Error, "new"),
            problem(5, Severity::Error, "later"),
        ]);
        let shown = found.report("f", None, false, &edited).unwrap();
        assert_eq!(
            shown,
            "f after the edit: 3 errors, 1 of them in the edited lines (listed first)\n  4:1 error [x] new\n  1:1 error [x] old\n  5:1 error [x] later"
        );
        assert!(edited_lines(text, &serde_json::json!({"content": text})).is_empty());
    }

    #[test]
    fn another_file_hears_what_the_edit_gave_it_and_that_its_errors_are_gone() {
        let before = found(vec![problem(2, Severity::Warning, "unused")]).keys();
        let broken = found(vec![
            problem(2, Severity::Warning, "unused"),
            problem(3, Severity::Error, "no attribute \"area\""),
        ]);
        assert_eq!(
            broken
                .report_elsewhere("main.py", "shapes.py", &before, false)
                .unwrap(),
            "main.py (not edited) after the edit of shapes.py: 1 new error\n  3:1 error [x] no attribute \"area\""
        );
        let calm = found(vec![problem(2, Severity::Warning, "unused")]);
        assert_eq!(
            calm.report_elsewhere("main.py", "shapes.py", &broken.keys(), true)
                .unwrap(),
            "fixed: no errors left in main.py (not edited) after the edit of shapes.py"
        );
        assert_eq!(
            calm.report_elsewhere("main.py", "shapes.py", &calm.keys(), false),
            None,
            "unchanged"
        );
        assert_eq!(
            calm.report_elsewhere("main.py", "shapes.py", &broken.keys(), false)
                .unwrap(),
            "main.py (not edited): 1 problem gone with the edit of shapes.py, still 1 warning"
        );
    }

    #[test]
    fn many_problems_are_capped_and_counted() {
        let problems = (1..=30)
            .map(|line| problem(line, Severity::Error, &format!("bad {line}")))
            .collect();
        let shown = found(problems).report("a.py", None, false, &[]).unwrap();
        assert_eq!(shown.lines().count(), 1 + MAX_ITEMS + 1);
        assert!(shown.contains("18 more"), "{shown}");
        let long = "x\n".repeat(MAX_CHARS);
        assert!(bounded(&long).len() < MAX_CHARS + 100);
    }
}
