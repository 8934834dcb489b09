//! A name's occurrences in a project's code: the lines where it is
//! written as a word outside comments and strings. They are the uses
//! `find_references` is checked against on every edit, not only where a
//! rename's checker errors show them: each occurrence the answer leaves
//! out is asked `definition`, and one that leads back to the definition
//! is a reference the answer missed.

use super::edits::files;
use regex::Regex;
use std::collections::BTreeSet;
use std::path::Path;

/// The lines (1-based, by file as the roots display it) of the files
/// with one of `extensions` under `root` where `name` is written as a
/// word in code.
pub fn occurrences(root: &Path, extensions: &[&str], name: &str) -> BTreeSet<(String, usize)> {
    let word = Regex::new(&format!(r"(?:^|[^\w$]){}(?:$|[^\w$])", regex::escape(name))).unwrap();
    let mut found = BTreeSet::new();
    for path in files(root, extensions) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if !text.contains(name) {
            continue;
        }
        let Ok(file) = path.strip_prefix(root) else {
            continue;
        };
        let file = file.to_string_lossy().into_owned();
        let extension = path.extension().unwrap_or_default().to_string_lossy();
        for (index, line) in code_only(&text, &extension).lines().enumerate() {
            if word.is_match(line) {
                found.insert((file.clone(), index + 1));
            }
        }
    }
    found
}

/// How a language writes comments and strings, by a file's extension.
struct Lexicon {
    line_comments: &'static [&'static str],
    block_comment: Option<(&'static str, &'static str)>,
    /// Openings of strings, each closed by itself; longest first.
    quotes: &'static [&'static str],
}

fn lexicon(extension: &str) -> Lexicon {
    const C_BLOCK: Option<(&str, &str)> = Some(("/*", "*/"));
    match extension {
        "py" => Lexicon {
            line_comments: &["#"],
            block_comment: None,
            quotes: &["\"\"\"", "'''", "\"", "'"],
        },
        "php" => Lexicon {
            line_comments: &["//", "#"],
            block_comment: C_BLOCK,
            quotes: &["\"", "'"],
        },
        "ts" | "tsx" | "js" | "jsx" | "mts" | "cts" => Lexicon {
            line_comments: &["//"],
            block_comment: C_BLOCK,
            quotes: &["\"", "'", "`"],
        },
        "go" => Lexicon {
            line_comments: &["//"],
            block_comment: C_BLOCK,
            quotes: &["\"", "`"],
        },
        // C, C++ and Rust: a `'` may open a character or, in Rust, name
        // a lifetime; neither holds a name worth finding.
        _ => Lexicon {
            line_comments: &["//"],
            block_comment: C_BLOCK,
            quotes: &["\""],
        },
    }
}

/// `text` with its comments and strings blanked out, every line where
/// it was: lines and columns still count as in `text`.
pub fn code_only(text: &str, extension: &str) -> String {
    let lexicon = lexicon(extension);
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    // Blanks `taken` (newlines kept) and moves past it.
    let blank = |rest: &mut &str, length: usize, kept: &mut String| {
        let (taken, after) = rest.split_at(length.min(rest.len()));
        kept.extend(
            taken
                .chars()
                .map(|character| if character == '\n' { '\n' } else { ' ' }),
        );
        *rest = after;
    };
    while let Some(character) = rest.chars().next() {
        // PHP's attributes (`#[Route]`) are code.
        let comment = lexicon.line_comments.iter().find(|mark| {
            rest.starts_with(**mark) && !(extension == "php" && rest.starts_with("#["))
        });
        if comment.is_some() {
            let length = rest.find('\n').unwrap_or(rest.len());
            blank(&mut rest, length, &mut kept);
            continue;
        }
        if let Some((open, close)) = lexicon.block_comment
            && rest.starts_with(open)
        {
            let length = rest[open.len()..]
                .find(close)
                .map_or(rest.len(), |at| open.len() + at + close.len());
            blank(&mut rest, length, &mut kept);
            continue;
        }
        if let Some(quote) = lexicon
            .quotes
            .iter()
            .find(|quote| rest.starts_with(**quote))
        {
            let length = quote.len() + closing(&rest[quote.len()..], quote);
            blank(&mut rest, length, &mut kept);
            continue;
        }
        kept.push(character);
        rest = &rest[character.len_utf8()..];
    }
    kept
}

/// The length of a string's body and its closing quote, a backslash
/// escaping the character after it; a one-character quote's string ends
/// at its line's end at the latest, but for a backtick's.
fn closing(body: &str, quote: &str) -> usize {
    let one_line = quote.len() == 1 && quote != "`";
    let mut characters = body.char_indices();
    while let Some((at, character)) = characters.next() {
        if character == '\\' {
            characters.next();
        } else if body[at..].starts_with(quote) {
            return at + quote.len();
        } else if one_line && character == '\n' {
            return at;
        }
    }
    body.len()
}
