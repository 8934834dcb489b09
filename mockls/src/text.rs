//! mockls's text intelligence: just enough understanding of any language
//! to exercise every tool. Identifiers are runs of letters, digits and `_`;
//! a definition is an identifier after one of the keywords below; nesting
//! follows indentation.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use tower_lsp_server::ls_types::Uri;

/// Keywords that introduce a definition of the identifier after them.
const DEFINING: &[&str] = &[
    "fn",
    "def",
    "function",
    "let",
    "const",
    "var",
    "class",
    "struct",
    "interface",
    "trait",
];

/// Directories never scanned for on-disk files.
const SKIPPED_DIRS: &[&str] = &["target", "node_modules", ".git"];

/// How many on-disk files a workspace-wide query reads at most.
const MAX_FILES: usize = 10_000;

/// A span on one line, columns in code points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub uri: String,
    pub line: usize,
    pub start: usize,
    pub end: usize,
}

/// A definition found by keyword, with its children by indentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub kind: u32,
    pub line: usize,
    pub end_line: usize,
    pub start: usize,
    pub end: usize,
    pub children: Vec<Symbol>,
}

/// An identifier on a line: its text and code-point columns.
pub fn identifiers(line: &str) -> Vec<(String, usize, usize)> {
    let mut found = Vec::new();
    let mut current: Option<(String, usize)> = None;
    for (column, character) in line.chars().enumerate() {
        let is_ident = character.is_alphanumeric() || character == '_';
        match (&mut current, is_ident) {
            (Some((word, _)), true) => word.push(character),
            (None, true) => current = Some((character.to_string(), column)),
            (Some(_), false) => {
                if let Some((word, start)) = current.take() {
                    let end = start + word.chars().count();
                    found.push((word, start, end));
                }
            }
            (None, false) => {}
        }
    }
    if let Some((word, start)) = current {
        let end = start + word.chars().count();
        found.push((word, start, end));
    }
    found
}

/// The identifier covering code-point `column`, with its span.
pub fn word_at(line: &str, column: usize) -> Option<(String, usize, usize)> {
    identifiers(line)
        .into_iter()
        .find(|(_, start, end)| (*start..*end).contains(&column))
}

/// Definitions on one line: (keyword, name, start, end).
pub fn definitions_on(line: &str) -> Vec<(String, String, usize, usize)> {
    let words = identifiers(line);
    let characters: Vec<char> = line.chars().collect();
    words
        .windows(2)
        .filter(|pair| DEFINING.contains(&pair[0].0.as_str()))
        .filter(|pair| {
            characters[pair[0].2..pair[1].1]
                .iter()
                .all(|c| c.is_whitespace())
        })
        .map(|pair| (pair[0].0.clone(), pair[1].0.clone(), pair[1].1, pair[1].2))
        .collect()
}

fn kind_of(keyword: &str, nested: bool) -> u32 {
    match keyword {
        "class" => 5,
        "struct" => 23,
        "interface" | "trait" => 11,
        "const" => 14,
        "let" | "var" => 13,
        _ if nested => 6,
        _ => 12,
    }
}

fn indentation(line: &str) -> usize {
    line.chars().take_while(|c| c.is_whitespace()).count()
}

/// The outline of a document, nested by indentation.
pub fn document_symbols(text: &str) -> Vec<Symbol> {
    let lines: Vec<&str> = text.lines().collect();
    // (indentation, symbol) pairs still open for children.
    let mut stack: Vec<(usize, Symbol)> = Vec::new();
    let mut roots = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some((keyword, name, start, end)) = definitions_on(line).into_iter().next() else {
            continue;
        };
        let indent = indentation(line);
        close_deeper(&mut stack, &mut roots, indent);
        let kind = kind_of(&keyword, !stack.is_empty());
        let end_line = block_end(&lines, index, indent);
        stack.push((
            indent,
            Symbol {
                name,
                kind,
                line: index,
                end_line,
                start,
                end,
                children: Vec::new(),
            },
        ));
    }
    close_deeper(&mut stack, &mut roots, 0);
    roots
}

fn close_deeper(stack: &mut Vec<(usize, Symbol)>, roots: &mut Vec<Symbol>, indent: usize) {
    while stack.last().is_some_and(|(open, _)| *open >= indent) {
        let Some((_, symbol)) = stack.pop() else {
            break;
        };
        match stack.last_mut() {
            Some((_, parent)) => parent.children.push(symbol),
            None => roots.push(symbol),
        }
    }
}

/// The last line indented deeper than `indent` after `start`.
fn block_end(lines: &[&str], start: usize, indent: usize) -> usize {
    let mut end = start;
    for (index, line) in lines.iter().enumerate().skip(start + 1) {
        if line.trim().is_empty() {
            continue;
        }
        if indentation(line) <= indent && !line.trim_start().starts_with('}') {
            break;
        }
        end = index;
    }
    end
}

/// Open documents plus the files on disk under the root.
#[derive(Debug, Default)]
pub struct Workspace {
    pub roots: Vec<PathBuf>,
    pub open: BTreeMap<String, String>,
}

impl Workspace {
    /// Every document mockls knows, open ones winning over disk.
    pub fn documents(&self) -> BTreeMap<String, String> {
        let mut documents = BTreeMap::new();
        for root in &self.roots {
            collect_files(root, &mut documents);
        }
        documents.extend(self.open.clone());
        documents
    }

    pub fn text(&self, uri: &str) -> Option<String> {
        self.open
            .get(uri)
            .cloned()
            .or_else(|| path_of(uri).and_then(|path| std::fs::read_to_string(path).ok()))
    }

    /// Definitions of `word`, the current document's first.
    pub fn definitions(&self, word: &str, current: &str) -> Vec<Span> {
        let mut spans = self.find(|line| {
            definitions_on(line)
                .into_iter()
                .filter(|(_, name, _, _)| name == word)
                .map(|(_, _, s, e)| (s, e))
                .collect()
        });
        spans.sort_by_key(|span| span.uri != current);
        spans
    }

    /// Every whole-word occurrence of `word`.
    pub fn references(&self, word: &str) -> Vec<Span> {
        self.find(|line| {
            identifiers(line)
                .into_iter()
                .filter(|(w, _, _)| w == word)
                .map(|(_, s, e)| (s, e))
                .collect()
        })
    }

    /// Occurrences of `word` right after `impl` or `implements`.
    pub fn implementations(&self, word: &str) -> Vec<Span> {
        self.find(|line| {
            identifiers(line)
                .windows(2)
                .filter(|pair| {
                    matches!(pair[0].0.as_str(), "impl" | "implements") && pair[1].0 == word
                })
                .map(|pair| (pair[1].1, pair[1].2))
                .collect()
        })
    }

    /// Definitions whose name contains `query`, case-insensitively;
    /// with `top_level`, only those no other definition holds.
    pub fn workspace_symbols(&self, query: &str, top_level: bool) -> Vec<(String, u32, Span)> {
        let query = query.to_lowercase();
        let mut found = Vec::new();
        for (uri, text) in self.documents() {
            let mut stack = document_symbols(&text);
            while let Some(symbol) = stack.pop() {
                if symbol.name.to_lowercase().contains(&query) {
                    let span = Span {
                        uri: uri.clone(),
                        line: symbol.line,
                        start: symbol.start,
                        end: symbol.end,
                    };
                    found.push((symbol.name.clone(), symbol.kind, span));
                }
                if !top_level {
                    stack.extend(symbol.children);
                }
            }
        }
        found
    }

    fn find(&self, matches: impl Fn(&str) -> Vec<(usize, usize)>) -> Vec<Span> {
        let mut spans = Vec::new();
        for (uri, text) in self.documents() {
            for (line_index, line) in text.lines().enumerate() {
                for (start, end) in matches(line) {
                    spans.push(Span {
                        uri: uri.clone(),
                        line: line_index,
                        start,
                        end,
                    });
                }
            }
        }
        spans
    }
}

/// The path a `file:` URI names.
pub fn path_of(uri: &str) -> Option<PathBuf> {
    if !uri.starts_with("file:") {
        return None;
    }
    Some(Uri::from_str(uri).ok()?.to_file_path()?.into_owned())
}

/// The `file:` URI of an absolute path.
pub fn uri_of(path: &Path) -> Option<String> {
    Uri::from_file_path(path).map(|uri| uri.as_str().to_owned())
}

fn collect_files(directory: &Path, documents: &mut BTreeMap<String, String>) {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        if documents.len() >= MAX_FILES {
            return;
        }
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && !name.starts_with('.') && !SKIPPED_DIRS.contains(&name.as_str()) {
            collect_files(&path, documents);
        } else if kind.is_file()
            && let Ok(text) = std::fs::read_to_string(&path)
            && let Some(uri) = uri_of(&path)
        {
            documents.insert(uri, text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_word_under_the_cursor() {
        assert_eq!(word_at("let café = 1;", 5), Some(("café".into(), 4, 8)));
        assert_eq!(word_at("a + b", 1), None);
    }

    #[test]
    fn finds_definitions_by_keyword() {
        let found = definitions_on("pub fn   run(x) { let y = 2; }");
        let names: Vec<&str> = found.iter().map(|(_, name, _, _)| name.as_str()).collect();
        assert_eq!(names, vec!["run", "y"]);
        assert!(definitions_on("x = fn_call()").is_empty());
    }

    #[test]
    fn nests_symbols_by_indentation() {
        let text = "class Shape:\n    def area(self):\n        return 1\n\ndef main():\n    pass\n";
        let symbols = document_symbols(text);
        assert_eq!(symbols.len(), 2);
        assert_eq!(
            (
                symbols[0].name.as_str(),
                symbols[0].kind,
                symbols[0].end_line
            ),
            ("Shape", 5, 2)
        );
        assert_eq!(symbols[0].children[0].name, "area");
        assert_eq!(symbols[0].children[0].kind, 6);
        assert_eq!(
            (symbols[1].name.as_str(), symbols[1].kind, symbols[1].line),
            ("main", 12, 4)
        );
    }

    #[test]
    fn finds_references_and_implementations_in_open_documents() {
        let mut workspace = Workspace::default();
        workspace.open.insert(
            "file:///a.rs".into(),
            "trait Draw {}\nimpl Draw for X {}\nfn f(d: &dyn Draw) {}".into(),
        );
        assert_eq!(workspace.references("Draw").len(), 3);
        assert_eq!(
            workspace.implementations("Draw"),
            vec![Span {
                uri: "file:///a.rs".into(),
                line: 1,
                start: 5,
                end: 9
            }]
        );
        assert_eq!(workspace.definitions("Draw", "file:///a.rs")[0].line, 0);
        assert_eq!(workspace.workspace_symbols("dra", false).len(), 1);
    }
}
