//! What `check_edit` and `diagnostics` answers say, read from their text,
//! and how a check is judged against the checker's errors.

use super::Verdict;
use super::checkers::Checker;
use std::collections::BTreeSet;

/// What a `check_edit` answer says: the files with new errors, the files
/// it says it did not check, and whether it warns of anything else.
#[derive(Debug, Default)]
pub struct CheckAnswer {
    pub broken: BTreeSet<String>,
    pub unchecked: BTreeSet<String>,
    /// Files it did not check beyond those it names.
    pub unnamed: bool,
    pub warned: bool,
}

impl CheckAnswer {
    pub fn read(text: &str, severities: &[&str]) -> Self {
        let mut answer = Self::default();
        let mut current: Option<String> = None;
        for line in text.lines() {
            if let Some((file, _)) = line
                .split_once(", if edited (nothing written): ")
                .or_else(|| line.split_once(", not edited, after the edit: "))
            {
                current = Some(file.to_owned());
            } else if line.starts_with("  new ")
                && severities
                    .iter()
                    .any(|severity| line.contains(&format!(" {severity} ")))
            {
                answer.broken.extend(current.clone());
            } else if line.starts_with("warning:") || line.contains("may be incomplete") {
                answer.warned = true;
                if let Some((_, listed)) = line.split_once(" not checked (") {
                    let files = listed
                        .split_once("): ")
                        .map_or("", |(_, files)| files)
                        .split(';')
                        .next()
                        .unwrap_or_default();
                    let (named, more) = files.split_once(" and ").unwrap_or((files, ""));
                    answer
                        .unchecked
                        .extend(named.split_whitespace().map(str::to_owned));
                    answer.unnamed |= !more.is_empty();
                } else if line.contains("stopped before the end")
                    || line.contains("were not looked for")
                {
                    answer.unnamed = true;
                }
            } else if line.starts_with("note:") && line.contains("are left out") {
                // A check that runs only on save (rust-analyzer's cargo
                // check) is not run: what only it finds is said missing.
                answer.warned = true;
                answer.unnamed = true;
            }
        }
        answer
    }
}

/// Judges a `check_edit` answer against the files the checker found the
/// edit breaking.
pub fn judge_check(
    answer: &CheckAnswer,
    truth: &BTreeSet<String>,
    checker: Checker,
) -> (Verdict, String) {
    let missed: Vec<&String> = truth.difference(&answer.broken).collect();
    // With nothing broken the checker saw every file.
    let judged_beyond = truth.is_empty() || checker.checks_past_broken_packages();
    let invented: Vec<&String> = match judged_beyond {
        true => answer.broken.difference(truth).collect(),
        false => Vec::new(),
    };
    if missed.is_empty() && invented.is_empty() {
        return (Verdict::Right, String::new());
    }
    let why = format!("missed {missed:?}, invented {invented:?}");
    let said = invented.is_empty()
        && missed
            .iter()
            .all(|file| answer.unchecked.contains(*file) || answer.unnamed);
    match (said, answer.warned) {
        (true, _) => (Verdict::PartialAndSaid, why),
        (false, true) => (Verdict::WrongAndSaid, why),
        (false, false) => (Verdict::WrongWithoutWarning, why),
    }
}

/// The problems of `severities` a `diagnostics` answer lists for one
/// file, each by what it says (`error [source code] message`), without
/// its position.
pub fn errors_in<'a>(answer: &'a str, severities: &[&str]) -> Vec<&'a str> {
    let mut errors: Vec<&str> = answer
        .lines()
        .filter_map(|line| line.strip_prefix("  "))
        .filter_map(|line| line.split_once(' ').map(|(_, what)| what))
        .filter(|what| {
            // A linter's finding without a rule (a parse error) ends its
            // source's brackets at once: `error [eslint] Parsing error`.
            severities.iter().any(|severity| {
                what.starts_with(&format!("{severity} "))
                    || what.starts_with(&format!("{severity}]"))
            })
        })
        .collect();
    errors.sort_unstable();
    errors
}

/// Whether `after` lists an error `before` does not.
pub fn adds_errors(before: &str, after: &str, severities: &[&str]) -> bool {
    let mut left = errors_in(before, severities);
    errors_in(after, severities)
        .into_iter()
        .any(|error| match left.binary_search(&error) {
            Ok(at) => {
                left.remove(at);
                false
            }
            Err(_) => true,
        })
}
