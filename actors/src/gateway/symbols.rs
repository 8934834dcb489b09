//! The symbols servers answer with, each read into one shape: a
//! document's, nested (`DocumentSymbol`) or flat (`SymbolInformation`) as
//! the server likes, and the workspace's, flat or as `WorkspaceSymbol`.

use super::words::{SIGILS, own_name};
use crate::error::Result;
use crate::lsp::position::{PositionEncoding, last_line, line_at};
use crate::lsp::protocol::Feature;
use crate::messages::language_server::Reply;
use lsp_types::{
    DocumentSymbol, Location, OneOf, Position, Range, SymbolInformation, SymbolKind,
    WorkspaceSymbol,
};

/// One item of a document symbols answer as the server sent it: a server
/// may mix the two forms.
pub type DocumentItem = OneOf<DocumentSymbol, SymbolInformation>;

/// One symbol of a document, whichever form it came in.
#[derive(Debug, Clone, PartialEq)]
pub struct Symbol {
    pub name: String,
    pub kind: SymbolKind,
    /// The whole declaration.
    pub range: Range,
    /// Its name; a flat symbol's one range stands for both.
    pub selection_range: Range,
    pub children: Vec<Symbol>,
}

impl From<DocumentSymbol> for Symbol {
    fn from(symbol: DocumentSymbol) -> Self {
        Self {
            name: symbol.name,
            kind: symbol.kind,
            range: symbol.range,
            selection_range: symbol.selection_range,
            children: symbol
                .children
                .into_iter()
                .flatten()
                .map(Symbol::from)
                .collect(),
        }
    }
}

impl From<DocumentItem> for Symbol {
    fn from(item: DocumentItem) -> Self {
        match item {
            OneOf::Left(nested) => nested.into(),
            OneOf::Right(flat) => Self {
                name: flat.name,
                kind: flat.kind,
                range: flat.location.range,
                selection_range: flat.location.range,
                children: Vec::new(),
            },
        }
    }
}

/// A document symbols answer for the document whose text is `text`. A
/// flat one (`SymbolInformation`, as the HTML server gives) is nested by
/// its ranges, each symbol under the smallest that holds it, so that its
/// outline has levels too.
pub fn document_symbols(reply: &mut Reply, text: &str) -> Result<Vec<Symbol>> {
    let items: Vec<DocumentItem> = reply.read_list(Feature::DocumentSymbols)?;
    let flat = items.iter().all(|item| matches!(item, OneOf::Right(_)));
    let mut symbols: Vec<Symbol> = items.into_iter().map(Symbol::from).collect();
    for symbol in &mut symbols {
        widen_over_continuations(symbol, text, reply.encoding);
    }
    Ok(match flat {
        true => nest(symbols),
        false => symbols,
    })
}

/// Flat symbols as a tree by range: in start order, widest first, each
/// goes under the last one still open that holds it.
fn nest(mut flat: Vec<Symbol>) -> Vec<Symbol> {
    flat.sort_by(|a, b| {
        a.range
            .start
            .cmp(&b.range.start)
            .then(b.range.end.cmp(&a.range.end))
    });
    let mut top: Vec<Symbol> = Vec::new();
    let mut open: Vec<Symbol> = Vec::new();
    for symbol in flat {
        while let Some(last) = open.last() {
            if last.range.start <= symbol.range.start && symbol.range.end <= last.range.end {
                break;
            }
            if let Some(done) = open.pop() {
                close(done, &mut open, &mut top);
            }
        }
        open.push(symbol);
    }
    while let Some(done) = open.pop() {
        close(done, &mut open, &mut top);
    }
    top
}

/// Ends `symbol` (and each of its children) where its statement ends
/// when its range stops on a line continued by a backslash:
/// docker-langserver gives an instruction the range of its keyword
/// alone, and a `RUN` written over five lines is not its first. A line
/// ending in `\\` (TeX's line break) continues nothing.
fn widen_over_continuations(symbol: &mut Symbol, text: &str, encoding: PositionEncoding) {
    let continued = |index: u32| {
        line_at(text, index as usize).is_some_and(|line| {
            let line = line.trim_end();
            line.ends_with('\\') && !line.ends_with("\\\\")
        })
    };
    let mut last = last_line(&symbol.range);
    if continued(last) {
        while continued(last) && line_at(text, last as usize + 1).is_some() {
            last += 1;
        }
        let line = line_at(text, last as usize).unwrap_or_default();
        let end = encoding.encode_column(line, line.chars().count());
        symbol.range.end = Position::new(last, end);
    }
    for child in &mut symbol.children {
        widen_over_continuations(child, text, encoding);
    }
}

/// Hangs a finished symbol under the one that holds it, or at the top.
fn close(done: Symbol, open: &mut [Symbol], top: &mut Vec<Symbol>) {
    match open.last_mut() {
        Some(parent) => parent.children.push(done),
        None => top.push(done),
    }
}

/// Whether a symbol a server names `found` is the one asked for as
/// `asked`: the same name; the name without its sigil (`.fadeOut` for
/// `fadeOut`); or a member's own name where the server qualifies it
/// (gopls's `FlagSet.GetString`, a PHP server's `Router::addGroup`, for
/// `GetString`, `addGroup`).
pub fn names(found: &str, asked: &str) -> bool {
    if found == asked {
        return true;
    }
    if asked.is_empty() {
        return false;
    }
    found.trim_start_matches(SIGILS) == asked || own_name(found) == asked
}

/// Whether a workspace symbol named `found` inside `container` is the one
/// asked for as `asked`: named as `names` says, or asked as `Type.member`
/// (or `Type::member`, `Type#member`) where the server names the member
/// alone and its container ends with the type (intelephense's `addRoute`
/// in `FastRoute\RouteCollector` for `RouteCollector.addRoute`).
pub fn names_in(found: &str, container: Option<&str>, asked: &str) -> bool {
    if names(found, asked) {
        return true;
    }
    let (Some(container), Some((owner, _))) = (container, qualifier(asked)) else {
        return false;
    };
    let last = container
        .rsplit(['\\', '.', ':', '/'])
        .next()
        .unwrap_or(container);
    names(found, own_name(asked)) && last == owner
}

/// The type a qualified name names its member in: `FlagSet` of
/// `FlagSet.GetString`, `Router` of `Router::addGroup`.
pub fn qualifier(name: &str) -> Option<(&str, &str)> {
    let member = own_name(name);
    let owner = name
        .strip_suffix(member)?
        .trim_end_matches(['.', ':', '#'])
        .trim_start_matches(SIGILS);
    let owner = owner.rsplit(['.', ':', '#']).next().unwrap_or(owner);
    (!owner.is_empty()).then_some((owner, member))
}

/// Every symbol, nested ones included, each before its children, with
/// the symbol that holds it.
pub fn flatten_with_holders(symbols: &[Symbol]) -> Vec<(&Symbol, Option<&Symbol>)> {
    let mut out = Vec::new();
    let mut stack: Vec<(&Symbol, Option<&Symbol>)> =
        symbols.iter().rev().map(|symbol| (symbol, None)).collect();
    while let Some((symbol, holder)) = stack.pop() {
        out.push((symbol, holder));
        stack.extend(
            symbol
                .children
                .iter()
                .rev()
                .map(|child| (child, Some(symbol))),
        );
    }
    out
}

/// Every symbol, nested ones included, each before its children.
pub fn flatten(symbols: &[Symbol]) -> Vec<&Symbol> {
    let mut out = Vec::new();
    let mut stack: Vec<&Symbol> = symbols.iter().rev().collect();
    while let Some(symbol) = stack.pop() {
        out.push(symbol);
        stack.extend(symbol.children.iter().rev());
    }
    out
}

/// `position`, in the server's `encoding`, as a 0-based line and a
/// column in code points of `text`.
pub fn point(text: &str, position: Position, encoding: PositionEncoding) -> (usize, usize) {
    let line = position.line as usize;
    let column = line_at(text, line).map_or(position.character as usize, |line| {
        encoding.decode_column(line, position.character)
    });
    (line, column)
}

/// Whether `range`, in the server's `encoding`, holds `at` (a line and a
/// code-point column of `text`).
pub fn holds(range: &Range, text: &str, encoding: PositionEncoding, at: (usize, usize)) -> bool {
    point(text, range.start, encoding) <= at && at <= point(text, range.end, encoding)
}

/// Every symbol whose range holds `at`, outermost first, whether the
/// server nested them or sent them flat.
pub fn around<'a>(
    symbols: &'a [Symbol],
    text: &str,
    encoding: PositionEncoding,
    at: (usize, usize),
) -> Vec<&'a Symbol> {
    let mut found: Vec<&Symbol> = flatten(symbols)
        .into_iter()
        .filter(|symbol| holds(&symbol.range, text, encoding, at))
        .collect();
    found.sort_by_key(|symbol| {
        let (start, end) = (symbol.range.start, symbol.range.end);
        std::cmp::Reverse((
            end.line - start.line,
            end.character.saturating_sub(start.character),
        ))
    });
    found
}

/// One symbol found across the workspace.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub name: String,
    pub kind: SymbolKind,
    pub location: Location,
    /// What the server says holds it (a class, a namespace, a module).
    pub container: Option<String>,
}

/// A workspace symbols answer. A `WorkspaceSymbol` located by its file
/// alone names no position to show, and is left out.
pub fn workspace_symbols(reply: &mut Reply) -> Result<Vec<Found>> {
    let items: Vec<OneOf<SymbolInformation, WorkspaceSymbol>> =
        reply.read_list(Feature::WorkspaceSymbols)?;
    Ok(items
        .into_iter()
        .filter_map(|item| match item {
            OneOf::Left(flat) => Some(Found {
                name: flat.name,
                kind: flat.kind,
                location: flat.location,
                container: flat.container_name,
            }),
            OneOf::Right(symbol) => match symbol.location {
                OneOf::Left(location) => Some(Found {
                    name: symbol.name,
                    kind: symbol.kind,
                    location,
                    container: symbol.container_name,
                }),
                OneOf::Right(_) => None,
            },
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_symbols_nest_by_their_ranges() {
        let symbol = |name: &str, start: u32, end: u32| Symbol {
            name: name.into(),
            kind: SymbolKind::FIELD,
            range: Range::new(Position::new(start, 0), Position::new(end, 5)),
            selection_range: Range::new(Position::new(start, 0), Position::new(start, 5)),
            children: Vec::new(),
        };
        let nested = nest(vec![
            symbol("body", 24, 30),
            symbol("html", 1, 32),
            symbol("title", 5, 5),
            symbol("head", 3, 22),
            symbol("p", 26, 26),
        ]);
        let shape: Vec<(String, Vec<String>)> = nested[0]
            .children
            .iter()
            .map(|child| {
                let names = child.children.iter().map(|c| c.name.clone()).collect();
                (child.name.clone(), names)
            })
            .collect();
        assert_eq!(nested.len(), 1);
        assert_eq!(
            shape,
            vec![
                ("head".to_owned(), vec!["title".to_owned()]),
                ("body".to_owned(), vec!["p".to_owned()])
            ]
        );
    }

    #[test]
    fn names_match_without_sigils_and_by_a_members_own_name() {
        assert!(names("area", "area"));
        assert!(names(".fadeOut", "fadeOut"));
        assert!(names("$radius-base", "radius-base"));
        assert!(names("FlagSet.GetString", "GetString"));
        assert!(names("Router::addGroup", "addGroup"));
        assert!(names("FlagSet.GetString", "FlagSet.GetString"));
        assert!(!names("GetStringSlice", "GetString"));
        assert!(!names("FlagSet.GetStringSlice", "GetString"));
        assert!(!names(".", ""));
    }

    #[test]
    fn a_member_is_named_by_its_type_where_the_server_names_it_alone() {
        let collector = Some("FastRoute\\RouteCollector");
        assert!(names_in("addRoute", collector, "RouteCollector.addRoute"));
        assert!(names_in("addRoute", collector, "RouteCollector::addRoute"));
        assert!(names_in("addRoute", collector, "addRoute"));
        assert!(!names_in(
            "addRoute",
            Some("FastRoute\\DataGenerator"),
            "RouteCollector.addRoute"
        ));
        assert!(!names_in("addRoute", None, "RouteCollector.addRoute"));
        assert!(names_in(
            "FlagSet.GetString",
            Some("pflag"),
            "FlagSet.GetString"
        ));
        assert_eq!(
            qualifier("FlagSet.GetString"),
            Some(("FlagSet", "GetString"))
        );
        assert_eq!(qualifier("a.b.Type::member"), Some(("Type", "member")));
        assert_eq!(qualifier("GetString"), None);
        assert_eq!(qualifier(".fadeOut"), None);
    }
    use serde_json::{Value, json};

    fn range(line: u32) -> Value {
        json!({"start": {"line": line, "character": 0}, "end": {"line": line, "character": 1}})
    }

    #[test]
    fn the_symbols_around_a_point_come_outermost_first_nested_or_flat() {
        let span = |first: u32, last: u32| json!({"start": {"line": first, "character": 0}, "end": {"line": last, "character": 12}});
        let text = "class A:\n    def f(self):\n        pass\n    def g(self):\n        pass\n";
        let nested = json!([{"name": "A", "kind": 5, "range": span(0, 4), "selectionRange": range(0),
            "children": [
                {"name": "f", "kind": 6, "range": span(1, 2), "selectionRange": range(1)},
                {"name": "g", "kind": 6, "range": span(3, 4), "selectionRange": range(3)}]}]);
        let flat = json!([
            {"name": "f", "kind": 6, "location": {"uri": "file:///a.py", "range": span(1, 2)}},
            {"name": "A", "kind": 5, "location": {"uri": "file:///a.py", "range": span(0, 4)}},
            {"name": "g", "kind": 6, "location": {"uri": "file:///a.py", "range": span(3, 4)}}]);
        for answer in [nested, flat] {
            let symbols = document_symbols(&mut Reply::bare(answer), text).unwrap();
            let names: Vec<&str> = around(&symbols, text, PositionEncoding::Utf16, (2, 8))
                .iter()
                .map(|symbol| symbol.name.as_str())
                .collect();
            assert_eq!(names, vec!["A", "f"]);
        }
    }

    #[test]
    fn flattens_nested_symbols_in_order() {
        let mut answer = Reply::bare(json!([
            {"name": "A", "kind": 5, "range": range(0), "selectionRange": range(0), "children": [
                {"name": "m", "kind": 6, "range": range(1), "selectionRange": range(1)}
            ]},
            {"name": "f", "kind": 12, "location": {"uri": "file:///x", "range": range(5)}},
            {"name": "no range", "kind": 12},
        ]));
        let symbols = document_symbols(&mut answer, "").unwrap();
        let names: Vec<&str> = flatten(&symbols)
            .iter()
            .map(|symbol| symbol.name.as_str())
            .collect();
        assert_eq!(names, vec!["A", "m", "f"]);
        let holders: Vec<Option<&str>> = flatten_with_holders(&symbols)
            .iter()
            .map(|(_, holder)| holder.map(|holder| holder.name.as_str()))
            .collect();
        assert_eq!(holders, vec![None, Some("A"), None]);
        assert_eq!(symbols[1].selection_range.start.line, 5);
        assert_eq!(answer.warnings.len(), 1, "{:?}", answer.warnings);
    }

    #[test]
    fn an_instruction_continued_over_lines_ends_on_its_last() {
        let text = "FROM alpine\nRUN mkdir /w \\\n && cd /w \\\n && ls\nRUN echo \\\\\nEXPOSE 1\n";
        let keyword = |line: u32| json!({"start": {"line": line, "character": 0}, "end": {"line": line, "character": 3}});
        let answer = json!([
            {"name": "FROM", "kind": 12, "location": {"uri": "file:///Dockerfile", "range": keyword(0)}},
            {"name": "RUN", "kind": 12, "location": {"uri": "file:///Dockerfile", "range": keyword(1)}},
            {"name": "RUN", "kind": 12, "location": {"uri": "file:///Dockerfile", "range": keyword(4)}},
        ]);
        let symbols = document_symbols(&mut Reply::bare(answer), text).unwrap();
        let ends: Vec<(u32, u32)> = symbols
            .iter()
            .map(|symbol| (symbol.range.end.line, symbol.range.end.character))
            .collect();
        assert_eq!(ends, vec![(0, 3), (3, 6), (4, 3)]);
    }

    #[test]
    fn workspace_symbols_without_a_range_are_left_out() {
        let mut answer = Reply::bare(json!([
            {"name": "flat", "kind": 12, "location": {"uri": "file:///a", "range": range(1)}},
            {"name": "ranged", "kind": 5, "location": {"uri": "file:///b", "range": range(2)}, "data": 1},
            {"name": "file only", "kind": 5, "location": {"uri": "file:///c"}},
        ]));
        let found = workspace_symbols(&mut answer).unwrap();
        let names: Vec<&str> = found.iter().map(|found| found.name.as_str()).collect();
        assert_eq!(names, vec!["flat", "ranged"]);
        assert!(answer.warnings.is_empty(), "{:?}", answer.warnings);
    }
}
