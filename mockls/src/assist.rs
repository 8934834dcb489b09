//! Completion, signature help, code actions and rename, from text.

use crate::text::{Span, Workspace, definitions_on, identifiers};
use std::collections::BTreeMap;

/// Identifiers of the workspace that start with `prefix`, with whether
/// each is defined as a function.
pub fn completions(workspace: &Workspace, prefix: &str) -> Vec<(String, bool)> {
    let mut found: BTreeMap<String, bool> = BTreeMap::new();
    for (_, text) in workspace.documents() {
        for line in text.lines() {
            for (keyword, name, _, _) in definitions_on(line) {
                let function = matches!(keyword.as_str(), "fn" | "def" | "function");
                found
                    .entry(name)
                    .and_modify(|f| *f |= function)
                    .or_insert(function);
            }
            for (word, _, _) in identifiers(line) {
                found.entry(word).or_insert(false);
            }
        }
    }
    found
        .into_iter()
        .filter(|(word, _)| word.starts_with(prefix) && word != prefix)
        .collect()
}

/// The call around code-point `column` of `line`: the callee's name and
/// the index of the argument the cursor is in.
pub fn call_at(line: &str, column: usize) -> Option<(String, usize)> {
    let characters: Vec<char> = line.chars().take(column).collect();
    let mut depth = 0usize;
    let mut commas = 0usize;
    for index in (0..characters.len()).rev() {
        match characters[index] {
            ')' => depth += 1,
            '(' if depth > 0 => depth -= 1,
            '(' => {
                let before: String = characters[..index].iter().collect();
                let (name, _, end) = identifiers(&before).into_iter().last()?;
                return (end == index).then_some((name, commas));
            }
            ',' if depth == 0 => commas += 1,
            _ => {}
        }
    }
    None
}

/// The parameter list written after `name` on its definition line.
pub fn parameters(workspace: &Workspace, name: &str) -> Option<Vec<String>> {
    let span = workspace.definitions(name, "").into_iter().next()?;
    let text = workspace.text(&span.uri)?;
    let line = text.lines().nth(span.line)?;
    let after: String = line.chars().skip(span.end).collect();
    let inner = after.strip_prefix('(')?;
    let close = inner.find(')')?;
    Some(
        inner[..close]
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect(),
    )
}

/// Where `ERROR` stands on the lines `first..=last` of `text`.
pub fn error_spans(uri: &str, text: &str, first: usize, last: usize) -> Vec<Span> {
    text.lines()
        .enumerate()
        .skip(first)
        .take(last.saturating_sub(first) + 1)
        .filter_map(|(index, line)| {
            let byte = line.find("ERROR")?;
            let start = line[..byte].chars().count();
            Some(Span {
                uri: uri.to_owned(),
                line: index,
                start,
                end: start + 5,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_call_and_argument_under_the_cursor() {
        assert_eq!(
            call_at("x = add(1, mul(2, 3), ", 22),
            Some(("add".into(), 2))
        );
        assert_eq!(call_at("x = add(1, mul(2, ", 18), Some(("mul".into(), 1)));
        assert_eq!(call_at("x = (1, 2", 9), None);
        assert_eq!(call_at("plain", 3), None);
    }

    #[test]
    fn reads_parameters_and_completions() {
        let mut workspace = Workspace::default();
        workspace.open.insert(
            "file:///a.py".into(),
            "def add(a, b):\n    return a\nadder = add(1, 2)\n".into(),
        );
        assert_eq!(
            parameters(&workspace, "add"),
            Some(vec!["a".to_owned(), "b".to_owned()])
        );
        assert_eq!(
            completions(&workspace, "ad"),
            vec![("add".to_owned(), true), ("adder".to_owned(), false)]
        );
    }

    #[test]
    fn finds_errors_in_a_range() {
        let spans = error_spans("u", "ok\né ERROR\nERROR\n", 0, 1);
        assert_eq!(
            spans,
            vec![Span {
                uri: "u".into(),
                line: 1,
                start: 2,
                end: 7
            }]
        );
    }
}
