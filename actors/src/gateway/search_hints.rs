//! The words agents type when they look for a tool, given to hosts that
//! hide MCP tools behind a search: Claude Code weighs a tool's
//! `_meta["anthropic/searchHint"]` beside its name and description (a
//! word of the hint counts twice a word of the description), and a short
//! word of a query ("it", "of") otherwise lands on whatever tool's name
//! happens to contain it. Other hosts ignore the field.

use rmcp::model::MetaObject;
use serde_json::{Map, Value};

/// Each tool's hint, in the words of the questions it answers.
const HINTS: &[(&str, &str)] = &[
    ("hover", "what is the type of this symbol signature docs"),
    ("definition", "where is it defined go to definition"),
    ("declaration", "where is it declared prototype header"),
    ("type_definition", "type of this variable value class"),
    (
        "implementation",
        "what implements this interface trait implementers",
    ),
    ("find_references", "who uses it where is it used usages"),
    (
        "document_symbols",
        "outline structure functions classes of this file",
    ),
    (
        "diagnostics",
        "errors warnings after my edit did my change introduce type errors",
    ),
    ("check_edit", "would this edit break anything preview"),
    ("list_directory", "files folder contents ls"),
    ("source", "source code body of this function class"),
    (
        "impact",
        "what breaks if i change this blast radius dependents",
    ),
    ("read_file", "read lines contents of a file"),
    ("search", "find symbol text in workspace grep"),
    ("codebase_map", "project overview tree structure"),
    (
        "call_hierarchy",
        "who calls this function callers callees called by",
    ),
    (
        "type_hierarchy",
        "inheritance base class superclass subclasses of this class",
    ),
    ("code_actions", "quick fix refactor"),
    ("rename", "rename this symbol everywhere"),
    ("completion", "complete this name autocomplete"),
    ("signature_help", "parameters arguments of this call"),
    ("status", "is the language server ready health"),
];

/// The `_meta` that carries `tool`'s hint, if it has one.
pub fn meta(tool: &str) -> Option<MetaObject> {
    let (_, hint) = HINTS.iter().find(|(name, _)| *name == tool)?;
    let mut meta = Map::new();
    meta.insert(
        "anthropic/searchHint".to_owned(),
        Value::String((*hint).to_owned()),
    );
    Some(MetaObject(meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hint_names_a_tool_once() {
        let mut names: Vec<&str> = HINTS.iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), HINTS.len());
        assert!(meta("hover").is_some());
        assert!(meta("no_such_tool").is_none());
    }
}
