//! Compact text for a model's context: locations with their source lines,
//! grouped by file, hover text without markdown framing, outlines, and the
//! byte cap with its visible "… N more" marker.

use crate::lsp::position::{PositionEncoding, line_at};
use crate::lsp::uri::uri_to_path;
use crate::roots::RootSet;
use serde_json::Value;
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

/// File contents read once per tool call, only from inside the roots:
/// paths that servers name are displayed, never opened, when outside.
pub struct Sources<'a> {
    roots: &'a RootSet,
    files: HashMap<PathBuf, Option<String>>,
}

impl<'a> Sources<'a> {
    pub fn new(roots: &'a RootSet) -> Self {
        Self {
            roots,
            files: HashMap::new(),
        }
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
        position: &Value,
        encoding: PositionEncoding,
    ) -> Option<(usize, usize)> {
        let line = usize::try_from(position.get("line")?.as_u64()?).ok()?;
        let character = u32::try_from(position.get("character")?.as_u64()?).unwrap_or(u32::MAX);
        let column = match self.line(path, line) {
            Some(text) => encoding.decode_column(&text, character),
            None => character as usize,
        };
        Some((line, column))
    }

    /// The text an LSP range covers, when the file is inside the roots.
    pub fn slice(
        &mut self,
        path: &Path,
        range: &Value,
        encoding: PositionEncoding,
    ) -> Option<String> {
        let start = self.point(path, range.get("start")?, encoding)?;
        let end = self.point(path, range.get("end")?, encoding)?;
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
    /// that are not files.
    pub fn spot(&mut self, uri: &str, range: &Value, encoding: PositionEncoding) -> Option<Spot> {
        let path = uri_to_path(uri)?;
        let (line, column) = self.point(&path, range.get("start")?, encoding)?;
        let text = self.line(&path, line);
        Some(Spot {
            path: self.roots.display(&path),
            line: line + 1,
            column: column + 1,
            source: text.map(|text| text.trim().to_owned()),
        })
    }
}

/// Every `Location` or `LocationLink` in a definition-style result.
pub fn locations(result: &Value) -> Vec<(&str, &Value)> {
    let items: Vec<&Value> = match result {
        Value::Array(items) => items.iter().collect(),
        Value::Null => Vec::new(),
        single => vec![single],
    };
    items
        .into_iter()
        .filter_map(|item| {
            let link_target = item.get("targetUri").and_then(Value::as_str);
            match link_target {
                Some(uri) => Some((
                    uri,
                    item.get("targetSelectionRange")
                        .or_else(|| item.get("targetRange"))?,
                )),
                None => Some((item.get("uri")?.as_str()?, item.get("range")?)),
            }
        })
        .collect()
}

/// `path:line:column  source` per spot.
pub fn spot_lines(spots: &[Spot]) -> Vec<String> {
    spots
        .iter()
        .map(|spot| match &spot.source {
            Some(source) => format!("{}:{}:{}  {source}", spot.path, spot.line, spot.column),
            None => format!("{}:{}:{}", spot.path, spot.line, spot.column),
        })
        .collect()
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

/// Spots by file, files in order of first appearance.
fn by_file(spots: &[Spot]) -> Vec<(&str, Vec<&Spot>)> {
    let mut groups: Vec<(&str, Vec<&Spot>)> = Vec::new();
    for spot in spots {
        match groups.iter_mut().find(|(path, _)| *path == spot.path) {
            Some((_, group)) => group.push(spot),
            None => groups.push((&spot.path, vec![spot])),
        }
    }
    groups
}

/// Hover contents as plain text: markdown code fences and horizontal rules
/// removed, MarkedStrings joined.
pub fn hover_text(result: &Value) -> String {
    let contents = result.get("contents").unwrap_or(&Value::Null);
    let parts: Vec<String> = match contents {
        Value::Array(items) => items.iter().map(marked_text).collect(),
        other => vec![marked_text(other)],
    };
    let text = parts.join("\n");
    let kept: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("```") && line.trim() != "---")
        .collect();
    kept.join("\n").trim().to_owned()
}

fn marked_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Object(object) => object
            .get("value")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        _ => String::new(),
    }
}

/// The LSP name of a `SymbolKind` number.
pub fn symbol_kind(kind: u64) -> &'static str {
    const KINDS: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enum-member",
        "struct",
        "event",
        "operator",
        "type-parameter",
    ];
    usize::try_from(kind)
        .ok()
        .and_then(|kind| kind.checked_sub(1))
        .and_then(|index| KINDS.get(index))
        .copied()
        .unwrap_or("symbol")
}

/// Joins lines, stopping before `max_bytes` with a marker that says how
/// many lines were left out.
pub fn bounded(lines: &[String], max_bytes: usize) -> String {
    let mut out = String::new();
    for (index, line) in lines.iter().enumerate() {
        let marker_room = 32;
        if out.len() + line.len() + 1 + marker_room > max_bytes && index > 0 {
            out.push_str(&format!("… {} more lines", lines.len() - index));
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
    use serde_json::json;

    #[test]
    fn reads_locations_and_links() {
        let result = json!([
            {"uri": "file:///a", "range": {"start": {"line": 1, "character": 2}}},
            {"targetUri": "file:///b", "targetRange": {}, "targetSelectionRange": {"start": {"line": 3, "character": 0}}},
        ]);
        let found: Vec<&str> = locations(&result).into_iter().map(|(uri, _)| uri).collect();
        assert_eq!(found, vec!["file:///a", "file:///b"]);
        assert!(locations(&Value::Null).is_empty());
        assert_eq!(
            locations(&json!({"uri": "file:///c", "range": {}})).len(),
            1
        );
    }

    #[test]
    fn strips_markdown_fences_from_hover() {
        let result = json!({"contents": {"kind": "markdown", "value": "```python\ndef f(x: int) -> str\n```\n---\nDocs here"}});
        assert_eq!(hover_text(&result), "def f(x: int) -> str\nDocs here");
        let marked = json!({"contents": [{"language": "c", "value": "int x"}, "plain"]});
        assert_eq!(hover_text(&marked), "int x\nplain");
    }

    #[test]
    fn groups_spots_by_file() {
        let spot = |path: &str, line| Spot {
            path: path.into(),
            line,
            column: 1,
            source: Some("x".into()),
        };
        let lines = grouped_lines(&[spot("a.py", 1), spot("b.py", 2), spot("a.py", 3)]);
        assert_eq!(
            lines,
            vec!["a.py (2)", "  1:1  x", "  3:1  x", "b.py (1)", "  2:1  x"]
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
        let out = bounded(&lines, 100);
        assert!(out.len() <= 100, "{out}");
        assert!(out.ends_with("… 93 more lines"), "{out}");
        assert_eq!(bounded(&lines[..2], 100), "line 000\nline 001");
    }

    #[test]
    fn names_symbol_kinds() {
        assert_eq!(symbol_kind(5), "class");
        assert_eq!(symbol_kind(12), "function");
        assert_eq!(symbol_kind(0), "symbol");
        assert_eq!(symbol_kind(99), "symbol");
    }
}
