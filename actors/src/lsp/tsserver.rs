//! tsserver's own protocol as typescript-language-server translates it to
//! LSP, for the answers Windlass asks of tsserver directly (through
//! `typescript.tsserverRequest`): its positions, counted from 1, and its
//! kinds of element as symbol kinds. Translated the same way, an answer
//! reads the same whichever way it was asked.

use lsp_types::SymbolKind;
use serde_json::{Value, json};

/// A tsserver location (`{line, offset}`, both from 1, offsets in UTF-16
/// units) as an LSP position.
pub fn position(location: &Value) -> Option<Value> {
    let line = location.get("line")?.as_u64()?.saturating_sub(1);
    let character = location.get("offset")?.as_u64()?.saturating_sub(1);
    Some(json!({"line": line, "character": character}))
}

/// A tsserver span (`{start, end}`) as an LSP range.
pub fn range(span: &Value) -> Option<Value> {
    Some(json!({
        "start": position(span.get("start")?)?,
        "end": position(span.get("end")?)?,
    }))
}

/// tsserver's kind of element as typescript-language-server names it a
/// symbol kind.
pub fn symbol_kind(kind: &str) -> SymbolKind {
    match kind {
        "enum member" | "const" => SymbolKind::CONSTANT,
        "JSX attribute" | "property" => SymbolKind::PROPERTY,
        "class" | "local class" => SymbolKind::CLASS,
        "function" | "local function" => SymbolKind::FUNCTION,
        "constructor" => SymbolKind::CONSTRUCTOR,
        "enum" => SymbolKind::ENUM,
        "field" => SymbolKind::FIELD,
        "file" => SymbolKind::FILE,
        "getter" | "setter" | "method" => SymbolKind::METHOD,
        "interface" => SymbolKind::INTERFACE,
        "module" => SymbolKind::MODULE,
        _ => SymbolKind::VARIABLE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_count_from_one_and_never_below_zero() {
        let span = json!({"start": {"line": 3, "offset": 14}, "end": {"line": 0, "offset": 0}});
        assert_eq!(
            range(&span),
            Some(
                json!({"start": {"line": 2, "character": 13}, "end": {"line": 0, "character": 0}})
            )
        );
        assert_eq!(range(&json!({"start": {"line": 1}})), None);
    }
}
