//! Call and type hierarchies from text: a call is an identifier followed
//! by `(` inside another function's block; a supertype is a name after
//! `(`, `:`, `extends` or `implements` on a type's definition line, or the
//! trait of an `impl Trait for Type`.

use crate::text::{Span, Symbol, Workspace, definitions_on, identifiers};

/// A symbol with the document it lives in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub uri: String,
    pub symbol: Symbol,
}

/// Every symbol of every document, nested ones included.
fn all_symbols(workspace: &Workspace) -> Vec<Item> {
    let mut items = Vec::new();
    for (uri, text) in workspace.documents() {
        let mut stack = crate::text::document_symbols(&text);
        while let Some(mut symbol) = stack.pop() {
            stack.extend(std::mem::take(&mut symbol.children));
            items.push(Item {
                uri: uri.clone(),
                symbol,
            });
        }
    }
    items.sort_by(|a, b| (&a.uri, a.symbol.line).cmp(&(&b.uri, b.symbol.line)));
    items
}

/// The definition named `name`, functions and types first.
pub fn item_named(workspace: &Workspace, name: &str) -> Option<Item> {
    all_symbols(workspace)
        .into_iter()
        .find(|item| item.symbol.name == name)
}

fn is_callable(kind: u32) -> bool {
    matches!(kind, 6 | 12)
}

/// The innermost function whose block holds `line` of `uri`.
fn enclosing(items: &[Item], uri: &str, line: usize) -> Option<Item> {
    items
        .iter()
        .filter(|item| item.uri == uri && is_callable(item.symbol.kind))
        .filter(|item| item.symbol.line < line && line <= item.symbol.end_line)
        .max_by_key(|item| item.symbol.line)
        .cloned()
}

/// Calls on one line: (callee, start, end).
fn calls_on(line: &str) -> Vec<(String, usize, usize)> {
    let characters: Vec<char> = line.chars().collect();
    let defined: Vec<String> = definitions_on(line)
        .into_iter()
        .map(|(_, name, _, _)| name)
        .collect();
    identifiers(line)
        .into_iter()
        .filter(|(word, _, end)| characters.get(*end) == Some(&'(') && !defined.contains(word))
        .collect()
}

/// Functions that call `name`, each with the ranges of its calls.
pub fn incoming(workspace: &Workspace, name: &str) -> Vec<(Item, Vec<Span>)> {
    let items = all_symbols(workspace);
    let mut callers: Vec<(Item, Vec<Span>)> = Vec::new();
    for (uri, text) in workspace.documents() {
        for (index, line) in text.lines().enumerate() {
            for (callee, start, end) in calls_on(line) {
                if callee != name {
                    continue;
                }
                let Some(caller) = enclosing(&items, &uri, index) else {
                    continue;
                };
                let span = Span {
                    uri: uri.clone(),
                    line: index,
                    start,
                    end,
                };
                match callers.iter_mut().find(|(known, _)| *known == caller) {
                    Some((_, spans)) => spans.push(span),
                    None => callers.push((caller, vec![span])),
                }
            }
        }
    }
    callers
}

/// Functions that `name` calls, each with the ranges of the calls.
pub fn outgoing(workspace: &Workspace, name: &str) -> Vec<(Item, Vec<Span>)> {
    let items = all_symbols(workspace);
    let Some(function) = items.iter().find(|item| item.symbol.name == name) else {
        return Vec::new();
    };
    let text = workspace.text(&function.uri).unwrap_or_default();
    let mut callees: Vec<(Item, Vec<Span>)> = Vec::new();
    for (index, line) in text
        .lines()
        .enumerate()
        .take(function.symbol.end_line + 1)
        .skip(function.symbol.line)
    {
        for (callee, start, end) in calls_on(line) {
            let Some(target) = items.iter().find(|item| item.symbol.name == callee) else {
                continue;
            };
            let span = Span {
                uri: function.uri.clone(),
                line: index,
                start,
                end,
            };
            match callees.iter_mut().find(|(known, _)| known == target) {
                Some((_, spans)) => spans.push(span),
                None => callees.push((target.clone(), vec![span])),
            }
        }
    }
    callees
}

/// The names a type's definition line declares as its parents.
fn parents(workspace: &Workspace, item: &Item) -> Vec<String> {
    let text = workspace.text(&item.uri).unwrap_or_default();
    let line = text.lines().nth(item.symbol.line).unwrap_or_default();
    let characters: Vec<char> = line.chars().collect();
    let after_name: String = characters[item.symbol.end.min(characters.len())..]
        .iter()
        .collect();
    let mut names: Vec<String> = identifiers(&after_name)
        .into_iter()
        .map(|(word, _, _)| word)
        .filter(|word| !matches!(word.as_str(), "extends" | "implements" | "pub" | "public"))
        .collect();
    // `impl Trait for Type` makes Trait a parent of Type.
    for (_, other) in workspace.documents() {
        for line in other.lines() {
            let words: Vec<String> = identifiers(line)
                .into_iter()
                .map(|(word, _, _)| word)
                .collect();
            if let [first, trait_name, for_word, type_name, ..] = words.as_slice()
                && first == "impl"
                && for_word == "for"
                && *type_name == item.symbol.name
            {
                names.push(trait_name.clone());
            }
        }
    }
    names
}

pub fn supertypes(workspace: &Workspace, name: &str) -> Vec<Item> {
    let Some(item) = item_named(workspace, name) else {
        return Vec::new();
    };
    parents(workspace, &item)
        .iter()
        .filter_map(|parent| item_named(workspace, parent))
        .collect()
}

pub fn subtypes(workspace: &Workspace, name: &str) -> Vec<Item> {
    all_symbols(workspace)
        .into_iter()
        .filter(|item| matches!(item.symbol.kind, 5 | 11 | 23))
        .filter(|item| parents(workspace, item).iter().any(|parent| parent == name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace(text: &str) -> Workspace {
        let mut workspace = Workspace::default();
        workspace.open.insert("file:///a.py".into(), text.into());
        workspace
    }

    const CALLS: &str = "def leaf():\n    pass\n\ndef middle():\n    leaf()\n    leaf()\n\ndef top():\n    middle()\n";

    #[test]
    fn finds_callers_and_callees() {
        let workspace = workspace(CALLS);
        let callers = incoming(&workspace, "leaf");
        assert_eq!(callers.len(), 1);
        assert_eq!(callers[0].0.symbol.name, "middle");
        assert_eq!(
            callers[0]
                .1
                .iter()
                .map(|span| span.line)
                .collect::<Vec<_>>(),
            vec![4, 5]
        );
        let callees = outgoing(&workspace, "top");
        assert_eq!(
            callees
                .iter()
                .map(|(item, _)| item.symbol.name.as_str())
                .collect::<Vec<_>>(),
            vec!["middle"]
        );
    }

    #[test]
    fn finds_supertypes_and_subtypes() {
        let workspace = workspace(
            "class Base:\n    pass\nclass Mid(Base):\n    pass\nclass Leaf(Mid):\n    pass\n",
        );
        let names = |items: Vec<Item>| {
            items
                .into_iter()
                .map(|item| item.symbol.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(names(supertypes(&workspace, "Leaf")), vec!["Mid"]);
        assert_eq!(names(subtypes(&workspace, "Base")), vec!["Mid"]);
        assert!(supertypes(&workspace, "Base").is_empty());
    }

    #[test]
    fn impl_for_makes_a_trait_a_supertype() {
        let workspace = workspace("trait Draw {}\nstruct Dot {}\nimpl Draw for Dot {}\n");
        assert_eq!(
            supertypes(&workspace, "Dot")
                .into_iter()
                .map(|item| item.symbol.name)
                .collect::<Vec<_>>(),
            vec!["Draw"]
        );
        assert_eq!(
            subtypes(&workspace, "Draw")
                .into_iter()
                .map(|item| item.symbol.name)
                .collect::<Vec<_>>(),
            vec!["Dot"]
        );
    }
}
