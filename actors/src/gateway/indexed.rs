//! What of a server's outline the symbol index keeps: every symbol, each
//! placed at its name, with the symbol that holds it as its container.
//! Locals are kept too: pyright's workspace symbols name them. A function
//! passed to a call is not kept (tsserver outlines `dual(…)`'s argument
//! as `dual() callback`, on every line that calls `dual`): it declares no
//! name, and no server's workspace symbols list it.

use super::symbols::{self, Symbol, flatten_with_holders, point};
use super::words::{find_word, own_name};
use crate::lsp::position::{PositionEncoding, line_at};
use crate::messages::language_server::Reply;
use crate::store::index::{Outline, OutlineSymbol, Stamp};
use lsp_types::SymbolKind;
use std::path::Path;

/// The outline a server answered for the file at `path` whose text,
/// with stamp `stamp` when read, is `text`; `None` when the answer is no
/// outline.
pub fn outline(path: &Path, stamp: Stamp, reply: &mut Reply, text: &str) -> Option<Outline> {
    let tree = symbols::document_symbols(reply, text).ok()?;
    Some(Outline {
        path: path.to_path_buf(),
        stamp,
        server: reply.server.clone(),
        symbols: kept(&tree, text, reply.encoding),
    })
}

fn kept(tree: &[Symbol], text: &str, encoding: PositionEncoding) -> Vec<OutlineSymbol> {
    flatten_with_holders(tree)
        .into_iter()
        .filter(|(symbol, _)| !symbol.name.ends_with(") callback"))
        .map(|(symbol, holder)| {
            let (line, column) = point(text, symbol.selection_range.start, encoding);
            // A flat outline's one range starts at the declaration, not
            // its name.
            let column = line_at(text, line)
                .and_then(|words| find_word(words, own_name(&symbol.name), column))
                .unwrap_or(column);
            let (end_line, _) = point(text, symbol.range.end, encoding);
            OutlineSymbol {
                name: symbol.name.clone(),
                kind: i64::from(kind_number(symbol.kind)),
                container: holder.map(|holder| holder.name.clone()),
                line: to_u32(line),
                column: to_u32(column),
                end_line: to_u32(end_line),
            }
        })
        .collect()
}

/// A kind as LSP numbers it.
fn kind_number(kind: SymbolKind) -> u32 {
    serde_json::to_value(kind)
        .ok()
        .and_then(|value| value.as_u64())
        .and_then(|number| u32::try_from(number).ok())
        .unwrap_or_default()
}

/// A kind from its LSP number.
pub fn kind_of(number: i64) -> SymbolKind {
    serde_json::from_value(serde_json::json!(number)).unwrap_or(SymbolKind::VARIABLE)
}

fn to_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_every_symbol_with_its_container() {
        let text = "class Shape:\n    def area(self):\n        total = 1\n";
        let range = |line: u32, start: u32, end_line: u32| json!({"start": {"line": line, "character": start}, "end": {"line": end_line, "character": 0}});
        let answer = json!([{
            "name": "Shape", "kind": 5, "range": range(0, 0, 3), "selectionRange": range(0, 6, 0),
            "children": [{
                "name": "area", "kind": 6, "range": range(1, 4, 3), "selectionRange": range(1, 8, 1),
                "children": [{"name": "total", "kind": 13, "range": range(2, 8, 2), "selectionRange": range(2, 8, 2)}]
            }]
        }]);
        let mut reply = Reply::bare(answer);
        let stamp = Stamp {
            mtime_ns: 1,
            size: 2,
        };
        let outline = outline(Path::new("/w/shape.py"), stamp, &mut reply, text).unwrap();
        let kept: Vec<(&str, Option<&str>, u32, u32, u32)> = outline
            .symbols
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.container.as_deref(),
                    s.line,
                    s.column,
                    s.kind as u32,
                )
            })
            .collect();
        assert_eq!(
            kept,
            [
                ("Shape", None, 0, 6, 5),
                ("area", Some("Shape"), 1, 8, 6),
                ("total", Some("area"), 2, 8, 13)
            ]
        );
        assert_eq!(kind_of(6), SymbolKind::METHOD);
    }

    #[test]
    fn a_function_passed_to_a_call_is_not_a_name() {
        let text = "export const zip = dual(2, (self, that) => {\n  const pairs = []\n})\n";
        let range = |line: u32, start: u32, end: u32| json!({"start": {"line": line, "character": start}, "end": {"line": line, "character": end}});
        let answer = json!([{
            "name": "zip", "kind": 14, "range": range(0, 13, 40), "selectionRange": range(0, 13, 16),
            "children": [{
                "name": "dual() callback", "kind": 12, "range": range(0, 27, 40), "selectionRange": range(0, 27, 40),
                "children": [{"name": "pairs", "kind": 14, "range": range(1, 8, 18), "selectionRange": range(1, 8, 13)}]
            }]
        }]);
        let stamp = Stamp {
            mtime_ns: 1,
            size: 2,
        };
        let outline = outline(
            Path::new("/w/zip.ts"),
            stamp,
            &mut Reply::bare(answer),
            text,
        )
        .unwrap();
        let names: Vec<&str> = outline.symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["zip", "pairs"]);
    }
}
