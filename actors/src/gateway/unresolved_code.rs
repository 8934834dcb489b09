//! Uses of a name in code a server reads without resolving it, found by
//! text:
//! - Rust's `macro_rules!` bodies: a macro's body is tokens until it is
//!   called, so rust-analyzer resolves nothing in it and lists no
//!   reference there (renaming heck's `to_title_case` breaks the
//!   `$s1.to_title_case()` in a test macro, and its references said
//!   nothing of that line);
//! - C's and C++'s preprocessor branches (`#if` … `#endif`): clangd
//!   compiles only the branches the build takes, and lists no reference
//!   in the others (LZ4's `#define LZ4LIB_STATIC_API LZ4LIB_API`, under
//!   `#ifdef LZ4_PUBLISH_STATIC_FUNCTIONS`, was missing from
//!   `LZ4LIB_API`'s references without a word).
//!
//! The lines there that name the word, and that the answer does not
//! list, are worth an agent's look, said as text.

use super::source_files;
use super::words::find_word;
use crate::sketches::{Needle, Sketches};
use crate::vocabulary::root_set::RootSet;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Lossy;
use std::collections::HashSet;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::time::Instant;

/// Lines named per file, and files named, at most.
const SHOWN: usize = 5;

/// Code a server reads without resolving it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unresolved {
    /// Rust's `macro_rules!` bodies.
    MacroBodies,
    /// C's and C++'s preprocessor branches.
    ConditionalBranches,
}

impl Unresolved {
    /// The code of files in `language` that its server does not resolve.
    pub fn of(language: &str) -> Option<Self> {
        match language {
            "rust" => Some(Self::MacroBodies),
            "c" | "cpp" => Some(Self::ConditionalBranches),
            _ => None,
        }
    }

    fn holds(self, language: &str) -> bool {
        Self::of(language) == Some(self)
    }

    /// The lines (1-based) each stretch of such code in `text` spans.
    fn regions(self, text: &str) -> Vec<RangeInclusive<usize>> {
        match self {
            Self::MacroBodies => bodies(text),
            Self::ConditionalBranches => branches(text),
        }
    }

    /// Whether 0-based line `index` of `text` is inside such code.
    pub fn holds_line(self, text: &str, index: usize) -> bool {
        self.regions(text)
            .iter()
            .any(|region| region.contains(&(index + 1)))
    }

    /// Where such a line is, said of one line.
    pub fn one_line_is(self) -> &'static str {
        match self {
            Self::MacroBodies => "inside a `macro_rules!` body, which the server does not resolve",
            Self::ConditionalBranches => {
                "inside an `#if` branch, which the server compiles only where the build takes it"
            }
        }
    }

    fn says(self) -> &'static str {
        match self {
            Self::MacroBodies => {
                "inside `macro_rules!` bodies, which the server does not resolve (uses once a macro is called)"
            }
            Self::ConditionalBranches => {
                "inside `#if` branches, which the server compiles only where the build takes them"
            }
        }
    }
}

/// The lines (1-based) of the files of `unresolved`'s language under the
/// roots that name `word` inside such code and are not in `listed` (paths
/// as the roots display them, with lines), by file; searched within
/// `budget`.
pub fn unlisted_uses(
    sketches: &Sketches,
    roots: &RootSet,
    unresolved: Unresolved,
    word: &str,
    listed: &HashSet<(String, usize)>,
    budget: std::time::Duration,
) -> Vec<(PathBuf, Vec<usize>)> {
    let Ok(matcher) = RegexMatcherBuilder::new().fixed_strings(true).build(word) else {
        return Vec::new();
    };
    let mut searcher = source_files::searcher();
    let needle = Needle::new(word);
    let deadline = Instant::now() + budget;
    let mut found = Vec::new();
    sketches.load(roots);
    source_files::each(roots, |path, language| {
        if Instant::now() > deadline {
            return false;
        }
        if !unresolved.holds(language) {
            return true;
        }
        let mut names_it = false;
        let _unreadable = sketches.search(
            &mut searcher,
            &matcher,
            path,
            &needle,
            Lossy(|_, _| {
                names_it = true;
                Ok(false)
            }),
        );
        if !names_it {
            return true;
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            return true;
        };
        let display = roots.display(path);
        let lines: Vec<usize> = uses_in(&text, &unresolved.regions(&text), word)
            .into_iter()
            .filter(|line| !listed.contains(&(display.clone(), *line)))
            .collect();
        if !lines.is_empty() {
            found.push((path.to_path_buf(), lines));
        }
        true
    });
    found
}

/// The note under a references answer on the uses found in such code.
pub fn note(
    roots: &RootSet,
    unresolved: Unresolved,
    word: &str,
    found: &[(PathBuf, Vec<usize>)],
) -> Option<String> {
    if found.is_empty() {
        return None;
    }
    let shown: Vec<String> = found
        .iter()
        .take(SHOWN)
        .map(|(path, lines)| {
            let mut numbers: Vec<String> = lines.iter().take(SHOWN).map(usize::to_string).collect();
            if lines.len() > SHOWN {
                numbers.push("…".into());
            }
            format!("{}:{}", roots.display(path), numbers.join(","))
        })
        .collect();
    let more = match found.len().saturating_sub(SHOWN) {
        0 => String::new(),
        more => format!(" and {more} more"),
    };
    Some(format!(
        "note: by text, `{word}` also appears {}: {}{more}",
        unresolved.says(),
        shown.join(" ")
    ))
}

/// The lines (1-based) inside `regions` of `text` that name `word` as a
/// whole word, past a line comment's or a block comment's mark.
fn uses_in(text: &str, regions: &[RangeInclusive<usize>], word: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line))
        .filter(|(number, _)| regions.iter().any(|region| region.contains(number)))
        .filter(|(_, line)| {
            let code = line.trim_start();
            !["//", "/*", "*"].iter().any(|mark| code.starts_with(mark))
        })
        .filter(|(_, line)| find_word(line, word, 0).is_some())
        .map(|(number, _)| number)
        .collect()
}

/// The lines (1-based) inside the preprocessor branches of `text`: from
/// each `#if`, `#ifdef` or `#ifndef` to its `#endif`, less the include
/// guard (an `#ifndef NAME` whose next directive defines `NAME`), which
/// every build takes.
fn branches(text: &str) -> Vec<RangeInclusive<usize>> {
    let directives: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter_map(|(index, line)| {
            let directive = line.trim_start().strip_prefix('#')?.trim_start();
            Some((index + 1, directive))
        })
        .collect();
    let mut open: Vec<(usize, bool)> = Vec::new();
    let mut found = Vec::new();
    for (at, &(line, directive)) in directives.iter().enumerate() {
        let word: String = directive
            .chars()
            .take_while(char::is_ascii_alphabetic)
            .collect();
        match word.as_str() {
            "if" | "ifdef" | "ifndef" => {
                let guard = word == "ifndef"
                    && directives.get(at + 1).is_some_and(|(_, next)| {
                        next.strip_prefix("define")
                            .map(str::trim_start)
                            .and_then(|rest| rest.split_whitespace().next())
                            == directive["ifndef".len()..].split_whitespace().next()
                    });
                open.push((line, guard));
            }
            "endif" => {
                if let Some((start, guard)) = open.pop()
                    && !guard
                {
                    found.push(start..=line);
                }
            }
            _ => {}
        }
    }
    let end = text.lines().count();
    found.extend(
        open.into_iter()
            .filter(|(_, guard)| !guard)
            .map(|(start, _)| start..=end),
    );
    found
}

/// The lines (1-based) each `macro_rules!` body of `text` spans: from
/// the delimiter after the macro's name to the one that closes it, with
/// strings, characters and comments skipped.
fn bodies(text: &str) -> Vec<RangeInclusive<usize>> {
    let mut bodies = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("macro_rules!") {
        let start = from + found + "macro_rules!".len();
        let Some(open) = text[start..].find(['{', '(', '[']).map(|at| start + at) else {
            break;
        };
        let end = closing(text, open).unwrap_or(text.len());
        bodies.push(line_of(text, open)..=line_of(text, end.min(text.len().saturating_sub(1))));
        from = end.max(start);
    }
    bodies
}

/// The byte offset of the delimiter that closes the one at `open`.
fn closing(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut at = open;
    while at < bytes.len() {
        match bytes[at] {
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(at);
                }
            }
            b'"' => at = skip_string(bytes, at),
            b'\'' => at = skip_character(bytes, at),
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                at = text[at..].find('\n').map_or(bytes.len(), |end| at + end);
            }
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                at = text[at + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |end| at + 2 + end + 1);
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// The offset of the quote that ends the string opening at `at`.
fn skip_string(bytes: &[u8], mut at: usize) -> usize {
    at += 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 1,
            b'"' => return at,
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

/// The offset of the quote that ends a character literal at `at` (`'{'`,
/// `'\n'`), or `at` itself for a lifetime or a label (`'a`).
fn skip_character(bytes: &[u8], at: usize) -> usize {
    match (bytes.get(at + 1), bytes.get(at + 2), bytes.get(at + 3)) {
        (Some(b'\\'), _, _) => bytes[at + 2..]
            .iter()
            .position(|byte| *byte == b'\'')
            .map_or(at, |end| at + 2 + end),
        (Some(_), Some(b'\''), _) => at + 2,
        _ => at,
    }
}

/// The 1-based line of byte `offset`, which may fall inside a character
/// (the last byte of a file whose macro body is left open).
fn line_of(text: &str, offset: usize) -> usize {
    let before = &text.as_bytes()[..offset.min(text.len())];
    before.iter().filter(|byte| **byte == b'\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "\
fn to_title_case() {}
#[cfg(test)]
mod tests {
    macro_rules! t {
        ($t:ident : $s1:expr => $s2:expr) => {
            // a '}' in a comment, and \"}\" in a string
            let brace = '}';
            assert_eq!($s1.to_title_case(), $s2)
        };
    }
    t!(test1: \"abc\" => \"Abc\");
    fn other() { to_title_case(); }
}
";

    #[test]
    fn a_macro_body_spans_to_its_closing_delimiter() {
        assert_eq!(bodies(SOURCE), vec![4..=10]);
    }

    #[test]
    fn uses_inside_a_body_are_found_and_those_outside_are_not() {
        let bodies = bodies(SOURCE);
        assert_eq!(uses_in(SOURCE, &bodies, "to_title_case"), vec![8]);
        assert_eq!(uses_in(SOURCE, &bodies, "title"), Vec::<usize>::new());
    }

    const HEADER: &str = "\
#ifndef LZ4_H
#define LZ4_H
#define LZ4LIB_API extern
#ifdef LZ4_PUBLISH_STATIC_FUNCTIONS
#define LZ4LIB_STATIC_API LZ4LIB_API
/* LZ4LIB_API in a comment */
#else
#  if defined(OTHER)
#define LZ4LIB_STATIC_API
#  endif
#endif
LZ4LIB_API int run(void);
#endif
";

    #[test]
    fn branches_are_found_and_the_include_guard_is_not_one() {
        assert_eq!(branches(HEADER), vec![8..=10, 4..=11]);
        assert_eq!(
            uses_in(HEADER, &branches(HEADER), "LZ4LIB_API"),
            vec![5],
            "a comment names nothing, and the guarded rest is taken"
        );
        assert_eq!(branches("#if A\nint x;\n"), vec![1..=2], "left open");
        let branches = Unresolved::ConditionalBranches;
        assert!(branches.holds_line(HEADER, 4) && !branches.holds_line(HEADER, 2));
    }

    #[test]
    fn a_body_left_open_runs_to_the_end() {
        assert_eq!(
            bodies("macro_rules! m {\n  ($x:expr) => { f($x) }\n"),
            vec![1..=2]
        );
        assert_eq!(bodies("macro_rules! m {\n  // naïve é"), vec![1..=2]);
    }
}
