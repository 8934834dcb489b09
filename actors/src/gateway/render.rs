//! Compact text for a model's context: locations with their source lines,
//! grouped by file, hover text without markdown framing, outlines, and the
//! byte cap with its visible "… N more" marker and the offset that pages
//! on. Nothing that resolves outside the roots is read or shown: such
//! locations are left out and counted.

use super::words::find_word;
use crate::error::Result;
use crate::lsp::position::{PositionEncoding, line_at};
use crate::lsp::protocol::Feature;
use crate::lsp::uri::uri_to_path;
use crate::messages::language_server::{Problem, Reply};
use crate::vocabulary::counted::counted;
use crate::vocabulary::root_set::RootSet;
use lsp_types::{
    Hover, HoverContents, Location, LocationLink, MarkedString, MarkupKind, OneOf, Position, Range,
    SymbolKind,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A location in agent terms: displayed path, 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spot {
    pub path: String,
    pub line: usize,
    pub column: usize,
    /// The trimmed source line, when the file is inside the roots.
    pub source: Option<String>,
}

/// File contents read once per tool call, only from inside the roots.
/// Every path a server names is resolved, links included, before anything
/// is read or shown; what resolves outside the roots is left out and
/// counted, so a link inside a root cannot show what lies outside it.
pub struct Sources<'a> {
    roots: &'a RootSet,
    files: HashMap<PathBuf, Option<String>>,
    /// Whether each path named so far resolves inside the roots.
    inside: HashMap<PathBuf, bool>,
    /// Locations left out because they resolve outside the roots.
    outside: usize,
}

impl<'a> Sources<'a> {
    pub fn new(roots: &'a RootSet) -> Self {
        Self {
            roots,
            files: HashMap::new(),
            inside: HashMap::new(),
            outside: 0,
        }
    }

    /// Whether a path a server named may be shown: it resolves, links
    /// followed, under a root. A path that does not exist is judged as
    /// written, since nothing can be read through it. Each refusal counts.
    pub fn admit(&mut self, path: &Path) -> bool {
        let inside = match self.inside.get(path) {
            Some(known) => *known,
            None => {
                let inside = match path.canonicalize() {
                    Ok(real) => self.roots.root_of(&real).is_some(),
                    Err(_) => self.roots.root_of(path).is_some(),
                };
                self.inside.insert(path.to_path_buf(), inside);
                inside
            }
        };
        if !inside {
            self.outside += 1;
        }
        inside
    }

    /// The line saying how many locations were left out, if any were.
    pub fn outside_note(&self) -> Option<String> {
        (self.outside > 0).then(|| {
            format!(
                "note: {} outside the workspace roots left out",
                counted(self.outside, "result")
            )
        })
    }

    /// A file's text, read once; `None` outside the roots or unreadable.
    fn text(&mut self, path: &Path) -> Option<&str> {
        if !self.files.contains_key(path) {
            let inside = path
                .canonicalize()
                .ok()
                .filter(|real| self.roots.root_of(real).is_some());
            let text = inside.and_then(|real| std::fs::read_to_string(real).ok());
            self.files.insert(path.to_path_buf(), text);
        }
        self.files.get(path)?.as_deref()
    }

    fn line(&mut self, path: &Path, index: usize) -> Option<String> {
        line_at(self.text(path)?, index).map(str::to_owned)
    }

    /// A 0-based (line, code-point column) from an LSP position.
    pub fn point(
        &mut self,
        path: &Path,
        position: Position,
        encoding: PositionEncoding,
    ) -> (usize, usize) {
        let line = position.line as usize;
        let column = match self.line(path, line) {
            Some(text) => encoding.decode_column(&text, position.character),
            None => position.character as usize,
        };
        (line, column)
    }

    /// The text an LSP range covers, when the file is inside the roots.
    pub fn slice(
        &mut self,
        path: &Path,
        range: Range,
        encoding: PositionEncoding,
    ) -> Option<String> {
        let start = self.point(path, range.start, encoding);
        let end = self.point(path, range.end, encoding);
        let text = self.text(path)?;
        let offset = |(line, column): (usize, usize)| -> usize {
            let line_start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
            let line_text = text[line_start.min(text.len())..]
                .split('\n')
                .next()
                .unwrap_or("");
            line_start
                + line_text
                    .chars()
                    .take(column)
                    .map(char::len_utf8)
                    .sum::<usize>()
        };
        let (from, to) = (offset(start).min(text.len()), offset(end).min(text.len()));
        text.get(from..to.max(from)).map(str::to_owned)
    }

    pub fn display(&self, path: &Path) -> String {
        self.roots.display(path)
    }

    /// Converts an LSP `{uri, range}` pair into a spot; `None` for URIs
    /// that are not files or that resolve outside the roots.
    pub fn spot(&mut self, uri: &str, range: Range, encoding: PositionEncoding) -> Option<Spot> {
        let path = uri_to_path(uri)?;
        if !self.admit(&path) {
            return None;
        }
        let (line, column) = self.point(&path, range.start, encoding);
        let text = self.line(&path, line);
        Some(Spot {
            path: self.roots.display(&path),
            line: line + 1,
            column: column + 1,
            source: text.map(|text| text.trim().to_owned()),
        })
    }
}

impl Sources<'_> {
    /// A spot moved onto `name` when the range starts before it on the
    /// same line (a declaration's whole range rather than its name's), or
    /// on an earlier line of documentation: intelephense starts a
    /// documented method's range at its docblock's `/**`, graphql-lsp a
    /// field's at its description, and the declaration is the first line
    /// past them that holds the name (a description often names it too).
    pub fn spot_of_name(
        &mut self,
        uri: &str,
        range: Range,
        encoding: PositionEncoding,
        name: &str,
    ) -> Option<Spot> {
        let mut spot = self.spot(uri, range, encoding)?;
        let path = uri_to_path(uri)?;
        if let Some(line) = self.line(&path, spot.line - 1)
            && !is_documentation(&line)
            && let Some(column) = find_word(&line, name, spot.column - 1)
        {
            spot.column = column + 1;
            return Some(spot);
        }
        let (last, _) = self.point(&path, range.end, encoding);
        let first = spot.line - 1;
        for (index, text) in self.code_lines(&path, first, last) {
            if index == first {
                continue;
            }
            if let Some(column) = find_word(&text, name, 0) {
                return Some(Spot {
                    line: index + 1,
                    column: column + 1,
                    source: Some(text.trim().to_owned()),
                    ..spot
                });
            }
        }
        Some(spot)
    }

    /// A location's spot, moved onto a later line of its range that
    /// declares `name` when its first line does not hold `name` or is
    /// documentation: a server's range that starts at the declaration's
    /// description (GraphQL's `"…"` or `"""` block above a field or a
    /// type) points at the declaration, a line past the documentation
    /// that begins with `name` (a field) or holds it (`type Ability {`).
    pub fn spot_of_declared(
        &mut self,
        uri: &str,
        range: Range,
        encoding: PositionEncoding,
        name: &str,
    ) -> Option<Spot> {
        let spot = self.spot(uri, range, encoding)?;
        let path = uri_to_path(uri)?;
        let first = spot.line - 1;
        let named = |line: &str| find_word(line, name, 0);
        let opening = self.line(&path, first).unwrap_or_default();
        let documented = is_comment(&opening);
        if !documented && named(&opening).is_some() {
            return Some(spot);
        }
        let (last, _) = self.point(&path, range.end, encoding);
        for (index, text) in self.code_lines(&path, first, last) {
            let indent = text.chars().take_while(|c| c.is_whitespace()).count();
            let column = named(&text);
            if index > first && (column == Some(indent) || documented && column.is_some()) {
                return Some(Spot {
                    line: index + 1,
                    column: column.unwrap_or(indent) + 1,
                    source: Some(text.trim().to_owned()),
                    ..spot
                });
            }
        }
        Some(spot)
    }

    /// The lines from `first` to `last` (0-based) outside documentation:
    /// comments, and GraphQL descriptions on one line or in a `"""` block.
    fn code_lines(&mut self, path: &Path, first: usize, last: usize) -> Vec<(usize, String)> {
        let mut lines = Vec::new();
        let mut in_block = false;
        for index in first..=last {
            let Some(text) = self.line(path, index) else {
                break;
            };
            let documentation = in_block || is_comment(&text);
            if text.matches("\"\"\"").count() % 2 == 1 {
                in_block = !in_block;
            }
            if !documentation {
                lines.push((index, text));
            }
        }
        lines
    }
}

/// Whether a line is (part of) documentation that a server's range may
/// start at, above the declaration: a docblock's `/**`, ` * …` and ` */`,
/// a `//` line, or a GraphQL description (`"…"` or `"""`).
fn is_documentation(line: &str) -> bool {
    let trimmed = line.trim_start();
    ["/*", "*", "//", "\""]
        .iter()
        .any(|marker| trimmed.starts_with(marker))
}

/// Whether a line is documentation or a `#` comment; a range's first line
/// that starts with `#` may be the declaration itself (C's `#define`).
fn is_comment(line: &str) -> bool {
    is_documentation(line) || line.trim_start().starts_with('#')
}

/// Every location of a definition-style answer: one `Location`, or a
/// list of locations or links, a link standing as its target's selection
/// range. Items that do not follow LSP are left out, and said so.
pub fn locations(reply: &mut Reply, feature: Feature) -> Result<Vec<Location>> {
    if reply.result.is_object() {
        return Ok(vec![reply.read(feature)?]);
    }
    let items: Vec<OneOf<Location, LocationLink>> = reply.read_list(feature)?;
    Ok(items
        .into_iter()
        .map(|item| match item {
            OneOf::Left(location) => location,
            OneOf::Right(link) => Location {
                uri: link.target_uri,
                range: link.target_selection_range,
            },
        })
        .collect())
}

/// One line saying what a server reported about a file it could not fully
/// read, with the file named as agents see it.
pub fn problem_line(roots: &RootSet, label: &str, problem: &Problem) -> String {
    let shown =
        uri_to_path(&problem.uri).map_or_else(|| problem.uri.clone(), |path| roots.display(&path));
    let message = problem.message.replace(&problem.uri, &shown);
    format!("warning: [{label}] reported: {message}")
}

/// What a reply says about itself, first in every answer: its warnings,
/// then what the server reported about the file asked about.
pub fn notes(roots: &RootSet, reply: &Reply) -> Vec<String> {
    let mut lines = reply.warnings.clone();
    lines.extend(
        reply
            .file_problem
            .as_ref()
            .map(|problem| problem_line(roots, &reply.server, problem)),
    );
    lines
}

/// The warning for a server the roots need that could not be asked.
pub fn unavailable_warning(name: &str) -> String {
    format!("warning: [{name}] unavailable, results may be incomplete")
}

/// The warning for a server whose part of an answer failed (it timed out,
/// or answered what does not follow LSP).
pub fn failed_warning(error: &impl std::fmt::Display) -> String {
    format!("warning: {error}; results may be incomplete")
}

/// `path:line:column  source` per spot.
/// Spots on one line (rust-analyzer answers a type's implementations
/// with one spot per name in its `#[derive(…)]`) share the line's text:
/// `src/lib.rs:3:10,17,24  #[derive(Debug, Clone, Copy)]`.
pub fn spot_lines(spots: &[Spot]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut index = 0;
    while let Some(spot) = spots.get(index) {
        let same_line = spots[index..]
            .iter()
            .take_while(|other| other.path == spot.path && other.line == spot.line)
            .count();
        let columns: Vec<String> = spots[index..index + same_line]
            .iter()
            .map(|spot| spot.column.to_string())
            .collect();
        let place = format!("{}:{}:{}", spot.path, spot.line, columns.join(","));
        lines.push(match &spot.source {
            Some(source) => format!("{place}  {source}"),
            None => place,
        });
        index += same_line;
    }
    lines
}

/// Spots grouped by file, with a count per file, paths written once.
pub fn grouped_lines(spots: &[Spot]) -> Vec<String> {
    let mut lines = Vec::new();
    for (path, spots) in by_file(spots) {
        lines.push(format!("{path} ({})", spots.len()));
        for spot in spots {
            let source = spot.source.as_deref().unwrap_or("");
            lines.push(
                format!("  {}:{}  {source}", spot.line, spot.column)
                    .trim_end()
                    .to_owned(),
            );
        }
    }
    lines
}

/// Spots grouped by file as bare `line:column` positions, several to a
/// line: for result sets too large to show with their source lines but
/// that must still be complete.
pub fn compact_grouped_lines(spots: &[Spot]) -> Vec<String> {
    const WIDTH: usize = 100;
    let mut lines = Vec::new();
    for (path, spots) in by_file(spots) {
        lines.push(format!("{path} ({})", spots.len()));
        let mut current = String::from(" ");
        for spot in spots {
            let position = format!(" {}:{}", spot.line, spot.column);
            if current.len() + position.len() > WIDTH {
                lines.push(std::mem::replace(&mut current, String::from(" ")));
            }
            current.push_str(&position);
        }
        lines.push(current);
    }
    lines
}

/// Spots by file, files by path and spots by position: servers list
/// references in an order of their own that can change between two
/// asks (bash-language-server's), and a page asked by offset must follow
/// the page before it.
fn by_file(spots: &[Spot]) -> Vec<(&str, Vec<&Spot>)> {
    let mut ordered: Vec<&Spot> = spots.iter().collect();
    ordered.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
    let mut groups: Vec<(&str, Vec<&Spot>)> = Vec::new();
    for spot in ordered {
        match groups.last_mut() {
            Some((path, group)) if *path == spot.path => group.push(spot),
            _ => groups.push((&spot.path, vec![spot])),
        }
    }
    groups
}

/// Hover contents as plain text: markdown code fences and horizontal rules
/// removed, markdown's backslash escapes undone outside code, images
/// left out, MarkedStrings joined.
pub fn hover_text(hover: &Hover) -> String {
    let parts: Vec<(&str, bool)> = match &hover.contents {
        HoverContents::Scalar(marked) => vec![marked_text(marked)],
        HoverContents::Array(items) => items.iter().map(marked_text).collect(),
        HoverContents::Markup(markup) => {
            vec![(markup.value.as_str(), markup.kind == MarkupKind::Markdown)]
        }
    };
    let mut kept: Vec<String> = Vec::new();
    for (text, markdown) in parts {
        let mut in_code = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
                continue;
            }
            if line.trim() == "---" {
                continue;
            }
            match markdown && !in_code {
                true => kept.push(unescaped(&without_images(line))),
                false => kept.push(line.to_owned()),
            }
        }
    }
    kept.join("\n").trim().to_owned()
}

/// A markdown line with its backslash escapes undone (`Monolog\\Logger`
/// reads `Monolog\Logger`), but inside inline code, where a backslash is
/// itself.
fn unescaped(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    let mut characters = line.chars().peekable();
    while let Some(character) = characters.next() {
        match character {
            '`' => {
                in_code = !in_code;
                out.push(character);
            }
            '\\' if !in_code => match characters.peek() {
                Some(next) if next.is_ascii_punctuation() => {
                    out.push(*next);
                    characters.next();
                }
                _ => out.push(character),
            },
            _ => out.push(character),
        }
    }
    out
}

/// A line without its markdown images: a model cannot see them, and a
/// server may inline one as kilobytes of base64 (the CSS server's browser
/// support badge).
fn without_images(line: &str) -> String {
    let mut kept = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("![") {
        let image = &rest[start..];
        let end = image
            .find("](")
            .and_then(|target| image[target..].find(')').map(|close| target + close + 1));
        let Some(end) = end else { break };
        kept.push_str(&rest[..start]);
        rest = image[end..].trim_start();
    }
    kept.push_str(rest);
    kept
}

/// A marked string's text, and whether it is markdown (not code).
fn marked_text(marked: &MarkedString) -> (&str, bool) {
    match marked {
        MarkedString::String(text) => (text, true),
        MarkedString::LanguageString(code) => (&code.value, false),
    }
}

/// Each `SymbolKind` by the name answers show.
const SYMBOL_KINDS: [(SymbolKind, &str); 26] = [
    (SymbolKind::FILE, "file"),
    (SymbolKind::MODULE, "module"),
    (SymbolKind::NAMESPACE, "namespace"),
    (SymbolKind::PACKAGE, "package"),
    (SymbolKind::CLASS, "class"),
    (SymbolKind::METHOD, "method"),
    (SymbolKind::PROPERTY, "property"),
    (SymbolKind::FIELD, "field"),
    (SymbolKind::CONSTRUCTOR, "constructor"),
    (SymbolKind::ENUM, "enum"),
    (SymbolKind::INTERFACE, "interface"),
    (SymbolKind::FUNCTION, "function"),
    (SymbolKind::VARIABLE, "variable"),
    (SymbolKind::CONSTANT, "constant"),
    (SymbolKind::STRING, "string"),
    (SymbolKind::NUMBER, "number"),
    (SymbolKind::BOOLEAN, "boolean"),
    (SymbolKind::ARRAY, "array"),
    (SymbolKind::OBJECT, "object"),
    (SymbolKind::KEY, "key"),
    (SymbolKind::NULL, "null"),
    (SymbolKind::ENUM_MEMBER, "enum-member"),
    (SymbolKind::STRUCT, "struct"),
    (SymbolKind::EVENT, "event"),
    (SymbolKind::OPERATOR, "operator"),
    (SymbolKind::TYPE_PARAMETER, "type-parameter"),
];

/// The name of a `SymbolKind`; `symbol` for a kind LSP does not define.
pub fn symbol_kind(kind: SymbolKind) -> &'static str {
    SYMBOL_KINDS
        .iter()
        .find(|(known, _)| *known == kind)
        .map_or("symbol", |(_, name)| name)
}

/// What a path outside the caller's roots becomes in a server's own
/// words.
pub const HIDDEN_PATH: &str = "<path outside the roots>";

/// A server's own words (an error, its stderr) with every absolute path
/// outside `roots` replaced by [`HIDDEN_PATH`]: a server shared in a daemon
/// may name files of another session's roots, which this session must
/// not learn. `file://` URIs count as their paths.
pub fn hide_paths_outside(text: &str, roots: &RootSet) -> String {
    let mut shown = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('/') {
        let (before, from) = rest.split_at(start);
        // A web address is not a file; a `file:` URI is.
        let web = before.ends_with(':') && !before.ends_with("file:");
        let starts_path = !web && before.chars().last().is_none_or(|c| !is_path_char(c));
        let end = from.find(|c: char| !is_path_char(c)).unwrap_or(from.len());
        let (path, after) = from.split_at(end.max(1));
        shown.push_str(before);
        let hidden = starts_path
            && path.len() > 1
            && roots
                .root_of(Path::new(path.trim_start_matches("//")))
                .is_none();
        shown.push_str(if hidden { HIDDEN_PATH } else { path });
        rest = after;
    }
    shown.push_str(rest);
    shown
}

/// Characters a path in prose runs over; it ends at whitespace, quotes,
/// brackets, and the colon before a line number.
fn is_path_char(c: char) -> bool {
    !(c.is_whitespace() || "\"'`()[]{}<>,;:".contains(c))
}

/// Joins lines, stopping before `max_bytes` with a marker that says how
/// many lines were left out.
pub fn bounded(lines: &[String], max_bytes: usize) -> String {
    joined(lines, max_bytes, |left| format!("… {left} more lines"))
}

/// Joins lines from line `offset` on, stopping before `max_bytes` with a
/// marker that says how many lines are left and the offset that shows
/// them. `head` lines (a count, warnings) come first on every page.
pub fn paged(head: &[String], body: &[String], offset: usize, max_bytes: usize) -> String {
    let start = offset.min(body.len());
    let mut lines: Vec<String> = head.to_vec();
    if start > 0 {
        lines.push(format!("… {start} lines before (from offset={start})"));
    }
    let shown_before = lines.len();
    lines.extend(body[start..].iter().cloned());
    joined(&lines, max_bytes, |left| {
        let next = start + (lines.len() - left - shown_before);
        format!("… {left} more lines (call again with offset={next})")
    })
}

fn joined(lines: &[String], max_bytes: usize, marker: impl Fn(usize) -> String) -> String {
    // Room for the longest marker, so the output stays under the cap.
    const MARKER_ROOM: usize = 64;
    let mut out = String::new();
    for (index, line) in lines.iter().enumerate() {
        if out.len() + line.len() + 1 + MARKER_ROOM > max_bytes && index > 0 {
            out.push_str(&marker(lines.len() - index));
            return out;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.truncate(out.trim_end().len());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::{Value, json};

    #[test]
    fn a_name_in_a_description_above_its_declaration_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let schema = dir.path().join("schema.graphql");
        std::fs::write(
            &schema,
            "type Pokemon {\n  \"The species name for a Pokémon\"\n  species: String!\n}\n",
        )
        .unwrap();
        let roots = RootSet::new(&[dir.path().to_path_buf()]).unwrap();
        let mut sources = Sources::new(&roots);
        // graphql-lsp's range of a field starts at its description.
        let range = Range::new(Position::new(1, 2), Position::new(2, 18));
        let uri = crate::lsp::uri::path_to_uri(&schema);
        let spot = sources
            .spot_of_name(&uri, range, PositionEncoding::Utf16, "species")
            .unwrap();
        assert_eq!((spot.line, spot.column), (3, 3));
        assert_eq!(spot.source.as_deref(), Some("species: String!"));
    }

    #[test]
    fn a_declaration_below_its_description_is_pointed_at() {
        let dir = tempfile::tempdir().unwrap();
        let schema = dir.path().join("schema.graphql");
        std::fs::write(
            &schema,
            "\"A single Ability entry\"\ntype Ability {\n  \"\"\"\n  species name\n  \"\"\"\n  species: String!\n}\n",
        )
        .unwrap();
        let roots = RootSet::new(&[dir.path().to_path_buf()]).unwrap();
        let mut sources = Sources::new(&roots);
        let uri = crate::lsp::uri::path_to_uri(&schema);
        let mut declared = |range: Range, name: &str| {
            let spot = sources
                .spot_of_declared(&uri, range, PositionEncoding::Utf16, name)
                .unwrap();
            (spot.line, spot.column)
        };
        // A type's range and a field's start at their descriptions.
        let type_range = Range::new(Position::new(0, 0), Position::new(6, 1));
        assert_eq!(declared(type_range, "Ability"), (2, 6));
        let field_range = Range::new(Position::new(2, 2), Position::new(5, 18));
        assert_eq!(declared(field_range, "species"), (6, 3));
    }

    #[test]
    fn spots_on_one_line_share_it() {
        let spot = |line: usize, column: usize| Spot {
            path: "src/lib.rs".into(),
            line,
            column,
            source: Some("#[derive(Debug, Clone)]".into()),
        };
        assert_eq!(
            spot_lines(&[spot(3, 10), spot(3, 17), spot(9, 1)]),
            vec![
                "src/lib.rs:3:10,17  #[derive(Debug, Clone)]",
                "src/lib.rs:9:1  #[derive(Debug, Clone)]"
            ]
        );
    }

    fn uris(reply: &mut Reply) -> Result<Vec<String>> {
        let found = locations(reply, Feature::Definition)?;
        Ok(found
            .iter()
            .map(|found| found.uri.as_str().to_owned())
            .collect())
    }

    #[test]
    fn reads_locations_and_links() {
        let range =
            json!({"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 4}});
        let mut result = Reply::bare(json!([
            {"uri": "file:///a", "range": range},
            {"targetUri": "file:///b", "targetRange": range, "targetSelectionRange": range},
        ]));
        assert_eq!(
            uris(&mut result),
            Ok(vec!["file:///a".into(), "file:///b".into()])
        );
        assert_eq!(uris(&mut Reply::bare(Value::Null)), Ok(Vec::new()));
        let single = json!({"uri": "file:///c", "range": range});
        assert_eq!(uris(&mut Reply::bare(single)), Ok(vec!["file:///c".into()]));
    }

    #[test]
    fn locations_with_invalid_ranges_are_left_out_and_counted() {
        let mut result = Reply::bare(json!([
            {"uri": "file:///a", "range": {"start": {"line": 1, "character": 2}}},
            {"targetUri": "file:///b", "targetRange": {}, "targetSelectionRange": {"start": {"line": 3, "character": 0}}},
            {"uri": "file:///c", "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}},
        ]));
        assert_eq!(uris(&mut result), Ok(vec!["file:///c".into()]));
        assert_eq!(
            result.warnings,
            vec![
                "warning: [python] sent 2 items in its definition answer that do not follow LSP; they are not shown"
            ]
        );
    }

    #[test]
    fn leaves_images_out_of_hover() {
        let hover = Hover::deserialize(&json!({"contents": {"kind": "markdown", "value":
            "Sets the box.\n\n![Baseline icon](data:image/svg+xml;base64,PHN2Zz4=) _Widely available_\n![only](x.png)"}}))
        .unwrap();
        assert_eq!(hover_text(&hover), "Sets the box.\n\n_Widely available_");
    }

    #[test]
    fn markdown_escapes_are_undone_outside_code() {
        let hover = Hover::deserialize(&json!({"contents": {"kind": "markdown", "value":
            "__Monolog\\\\Logger::push\\_handler__\n```php\n$a = '\\\\';\n```\nuse `a\\_b` or c\\*"}}))
        .unwrap();
        assert_eq!(
            hover_text(&hover),
            "__Monolog\\Logger::push_handler__\n$a = '\\\\';\nuse `a\\_b` or c*"
        );
        let plain =
            Hover::deserialize(&json!({"contents": {"kind": "plaintext", "value": "a\\_b"}}))
                .unwrap();
        assert_eq!(hover_text(&plain), "a\\_b");
    }

    #[test]
    fn a_location_answer_of_the_wrong_shape_is_malformed() {
        let error = uris(&mut Reply::bare(json!({"contents": "bad"}))).unwrap_err();
        assert!(
            error.to_string().starts_with(
                "[python] sent a malformed response: its definition does not follow LSP: "
            ),
            "{error}"
        );
        assert!(uris(&mut Reply::bare(json!("file:///a"))).is_err());
    }

    #[test]
    fn strips_markdown_fences_from_hover() {
        let read = |result: Value| Hover::deserialize(&result).map(|hover| hover_text(&hover));
        let result = json!({"contents": {"kind": "markdown", "value": "```python\ndef f(x: int) -> str\n```\n---\nDocs here"}});
        assert_eq!(
            read(result).ok().as_deref(),
            Some("def f(x: int) -> str\nDocs here")
        );
        let marked = json!({"contents": [{"language": "c", "value": "int x"}, "plain"]});
        assert_eq!(read(marked).ok().as_deref(), Some("int x\nplain"));
    }

    #[test]
    fn groups_spots_by_file_in_path_and_line_order() {
        let spot = |path: &str, line| Spot {
            path: path.into(),
            line,
            column: 1,
            source: Some("x".into()),
        };
        let lines = grouped_lines(&[
            spot("b.py", 2),
            spot("a.py", 3),
            spot("c.py", 1),
            spot("a.py", 1),
        ]);
        assert_eq!(
            lines,
            vec![
                "a.py (2)", "  1:1  x", "  3:1  x", "b.py (1)", "  2:1  x", "c.py (1)", "  1:1  x"
            ]
        );
    }

    #[test]
    fn compacts_many_spots_into_position_lists() {
        let spots: Vec<Spot> = (1..=30)
            .map(|line| Spot {
                path: "a.py".into(),
                line,
                column: 5,
                source: None,
            })
            .collect();
        let lines = compact_grouped_lines(&spots);
        assert_eq!(lines[0], "a.py (30)");
        assert!(lines[1].starts_with("  1:5 2:5 3:5"), "{}", lines[1]);
        assert!(lines.iter().all(|line| line.len() <= 100));
        assert_eq!(
            lines.iter().map(|l| l.matches(':').count()).sum::<usize>(),
            30
        );
    }

    #[test]
    fn bounds_output_with_a_marker() {
        let lines: Vec<String> = (0..100).map(|n| format!("line {n:03}")).collect();
        let out = bounded(&lines, 130);
        assert!(out.len() <= 130, "{out}");
        assert!(out.ends_with("… 93 more lines"), "{out}");
        assert_eq!(bounded(&lines[..2], 100), "line 000\nline 001");
    }

    #[test]
    fn pages_through_long_output_by_offset() {
        let head = vec!["100 items".to_owned()];
        let body: Vec<String> = (0..100).map(|n| format!("line {n:03}")).collect();
        let first = paged(&head, &body, 0, 160);
        assert!(first.starts_with("100 items\nline 000\n"), "{first}");
        let next: usize = first
            .rsplit("offset=")
            .next()
            .and_then(|rest| rest.trim_end_matches(')').parse().ok())
            .unwrap();
        assert!(first.ends_with(&format!(
            "… {} more lines (call again with offset={next})",
            100 - next
        )));
        let second = paged(&head, &body, next, 160);
        assert!(
            second.starts_with(&format!(
                "100 items\n… {next} lines before (from offset={next})\nline {next:03}"
            )),
            "{second}"
        );
        let last = paged(&head, &body, 99, 160);
        assert!(last.ends_with("line 099"), "{last}");
        assert_eq!(
            paged(&head, &body, 500, 160),
            "100 items\n… 100 lines before (from offset=100)"
        );
    }

    #[test]
    fn a_servers_words_keep_only_paths_inside_the_roots() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("mine");
        std::fs::create_dir_all(&root).unwrap();
        let roots = RootSet::new(std::slice::from_ref(&root)).unwrap();
        let mine = roots.first_directory().join("src/a.py");
        let text = format!(
            "error in {}:3:1; cannot read \"/home/other/secret.py\" (file:///home/other/b.py), see https://example.com/help and src/c.py",
            mine.display()
        );
        assert_eq!(
            hide_paths_outside(&text, &roots),
            format!(
                "error in {}:3:1; cannot read \"{HIDDEN_PATH}\" (file:{HIDDEN_PATH}), see https://example.com/help and src/c.py",
                mine.display()
            )
        );
        assert_eq!(hide_paths_outside("a / b and /", &roots), "a / b and /");
    }

    #[test]
    fn locations_resolving_outside_the_roots_are_left_out_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("w");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
        std::fs::write(dir.path().join("secret.py"), "KEY = 1\n").unwrap();
        let roots = RootSet::new(std::slice::from_ref(&root)).unwrap();
        let root = roots.first_directory();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.path().join("secret.py"), root.join("leak.py")).unwrap();
        let range = Range::default();
        let mut sources = Sources::new(&roots);
        let inside = sources.spot(
            &crate::lsp::uri::path_to_uri(&root.join("a.py")),
            range,
            PositionEncoding::Utf16,
        );
        assert_eq!(inside.unwrap().source.as_deref(), Some("x = 1"));
        let outside = crate::lsp::uri::path_to_uri(&dir.path().join("secret.py"));
        assert!(
            sources
                .spot(&outside, range, PositionEncoding::Utf16)
                .is_none()
        );
        if cfg!(unix) {
            let link = crate::lsp::uri::path_to_uri(&root.join("leak.py"));
            assert!(
                sources
                    .spot(&link, range, PositionEncoding::Utf16)
                    .is_none()
            );
        }
        let expected = if cfg!(unix) { 2 } else { 1 };
        assert_eq!(
            sources.outside_note(),
            Some(format!(
                "note: {expected} results outside the workspace roots left out"
            ))
        );
    }

    #[test]
    fn names_symbol_kinds() {
        let kind = |number: u32| SymbolKind::deserialize(&json!(number)).unwrap();
        assert_eq!(symbol_kind(kind(5)), "class");
        assert_eq!(symbol_kind(kind(12)), "function");
        assert_eq!(symbol_kind(kind(0)), "symbol");
        assert_eq!(symbol_kind(kind(99)), "symbol");
    }
}
