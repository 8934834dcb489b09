//! The symbols servers answer with, each read into one shape: a
//! document's, nested (`DocumentSymbol`) or flat (`SymbolInformation`) as
//! the server likes, and the workspace's, flat or as `WorkspaceSymbol`.

use crate::error::Result;
use crate::lsp::protocol::Feature;
use crate::messages::language_server::Reply;
use lsp_types::{
    DocumentSymbol, Location, OneOf, Range, SymbolInformation, SymbolKind, WorkspaceSymbol,
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

/// A document symbols answer.
pub fn document_symbols(reply: &mut Reply, server: &str) -> Result<Vec<Symbol>> {
    let items: Vec<DocumentItem> = reply.read_list(server, Feature::DocumentSymbols)?;
    Ok(items.into_iter().map(Symbol::from).collect())
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

/// One symbol found across the workspace.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub name: String,
    pub kind: SymbolKind,
    pub location: Location,
}

/// A workspace symbols answer. A `WorkspaceSymbol` located by its file
/// alone names no position to show, and is left out.
pub fn workspace_symbols(reply: &mut Reply, server: &str) -> Result<Vec<Found>> {
    let items: Vec<OneOf<SymbolInformation, WorkspaceSymbol>> =
        reply.read_list(server, Feature::WorkspaceSymbols)?;
    Ok(items
        .into_iter()
        .filter_map(|item| match item {
            OneOf::Left(flat) => Some(Found {
                name: flat.name,
                kind: flat.kind,
                location: flat.location,
            }),
            OneOf::Right(symbol) => match symbol.location {
                OneOf::Left(location) => Some(Found {
                    name: symbol.name,
                    kind: symbol.kind,
                    location,
                }),
                OneOf::Right(_) => None,
            },
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn range(line: u32) -> Value {
        json!({"start": {"line": line, "character": 0}, "end": {"line": line, "character": 1}})
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
        let symbols = document_symbols(&mut answer, "python").unwrap();
        let names: Vec<&str> = flatten(&symbols)
            .iter()
            .map(|symbol| symbol.name.as_str())
            .collect();
        assert_eq!(names, vec!["A", "m", "f"]);
        assert_eq!(symbols[1].selection_range.start.line, 5);
        assert_eq!(answer.warnings.len(), 1, "{:?}", answer.warnings);
    }

    #[test]
    fn workspace_symbols_without_a_range_are_left_out() {
        let mut answer = Reply::bare(json!([
            {"name": "flat", "kind": 12, "location": {"uri": "file:///a", "range": range(1)}},
            {"name": "ranged", "kind": 5, "location": {"uri": "file:///b", "range": range(2)}, "data": 1},
            {"name": "file only", "kind": 5, "location": {"uri": "file:///c"}},
        ]));
        let found = workspace_symbols(&mut answer, "python").unwrap();
        let names: Vec<&str> = found.iter().map(|found| found.name.as_str()).collect();
        assert_eq!(names, vec!["flat", "ranged"]);
        assert!(answer.warnings.is_empty(), "{:?}", answer.warnings);
    }
}
