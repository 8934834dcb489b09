//! Proposed workspace edits as text: per file, each edit's 1-based range
//! with the old and the new text. Windlass never applies them.

use super::render::Sources;
use crate::lsp::position::PositionEncoding;
use crate::lsp::uri::uri_to_path;
use serde_json::Value;

/// Lines describing a `WorkspaceEdit`, `changes` or `documentChanges`.
pub fn workspace_edit_lines(
    sources: &mut Sources,
    edit: &Value,
    encoding: PositionEncoding,
) -> Vec<String> {
    let mut files: Vec<(String, Vec<Value>)> = Vec::new();
    let mut operations = Vec::new();
    if let Some(changes) = edit.get("changes").and_then(Value::as_object) {
        for (uri, edits) in changes {
            files.push((uri.clone(), edits.as_array().cloned().unwrap_or_default()));
        }
    }
    for change in edit
        .get("documentChanges")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match change.get("kind").and_then(Value::as_str) {
            Some(kind) => operations.push(file_operation(sources, kind, change)),
            None => {
                let uri = change
                    .pointer("/textDocument/uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                files.push((
                    uri.to_owned(),
                    change
                        .get("edits")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                ));
            }
        }
    }
    // Edits to files outside the roots are left out, and counted.
    files.retain(|(uri, _)| uri_to_path(uri).is_none_or(|path| sources.admit(&path)));
    let total: usize = files.iter().map(|(_, edits)| edits.len()).sum();
    let mut lines = vec![format!(
        "{total} edits in {} files (proposed, not applied)",
        files.len()
    )];
    for (uri, edits) in files {
        lines.extend(file_lines(sources, &uri, &edits, encoding));
    }
    lines.extend(operations);
    lines
}

fn file_lines(
    sources: &mut Sources,
    uri: &str,
    edits: &[Value],
    encoding: PositionEncoding,
) -> Vec<String> {
    let Some(path) = uri_to_path(uri) else {
        return vec![format!("{uri} ({} edits)", edits.len())];
    };
    let mut lines = vec![format!("{} ({})", sources.display(&path), edits.len())];
    for edit in edits {
        let range = edit.get("range").unwrap_or(&Value::Null);
        let start = range
            .get("start")
            .and_then(|p| sources.point(&path, p, encoding));
        let end = range
            .get("end")
            .and_then(|p| sources.point(&path, p, encoding));
        let (Some((start_line, start_column)), Some((end_line, end_column))) = (start, end) else {
            continue;
        };
        let new_text = edit
            .get("newText")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let old_text = sources.slice(&path, range, encoding).unwrap_or_default();
        lines.push(format!(
            "  {}:{}-{}:{}  {old_text:?} → {new_text:?}",
            start_line + 1,
            start_column + 1,
            end_line + 1,
            end_column + 1
        ));
    }
    lines
}

fn file_operation(sources: &mut Sources, kind: &str, change: &Value) -> String {
    let mut shown = |key: &str| {
        let uri = change.get(key).and_then(Value::as_str).unwrap_or_default();
        match uri_to_path(uri) {
            Some(path) if sources.admit(&path) => sources.display(&path),
            Some(_) => "(outside the roots)".to_owned(),
            None => uri.to_owned(),
        }
    };
    match kind {
        "create" => format!("create {}", shown("uri")),
        "delete" => format!("delete {}", shown("uri")),
        "rename" => format!("rename {} → {}", shown("oldUri"), shown("newUri")),
        other => format!("{other} (unknown file operation)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::root_set::RootSet;
    use serde_json::json;

    #[test]
    fn renders_changes_and_document_changes_with_old_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "é = Shape()\nShape\n").unwrap();
        let roots = RootSet::new(&[dir.path().to_path_buf()]).unwrap();
        let root = roots.first_directory();
        let uri = crate::lsp::uri::path_to_uri(&root.join("a.py"));
        let range = |line: u32, start: u32, end: u32| json!({"start": {"line": line, "character": start}, "end": {"line": line, "character": end}});
        let edit = json!({
            "changes": {uri.clone(): [{"range": range(0, 4, 9), "newText": "Figure"}]},
            "documentChanges": [
                {"textDocument": {"uri": uri, "version": 1}, "edits": [{"range": range(1, 0, 5), "newText": "Figure"}]},
                {"kind": "rename", "oldUri": "file:///elsewhere/x.py", "newUri": "file:///elsewhere/y.py"}
            ]
        });
        let mut sources = Sources::new(&roots);
        let lines = workspace_edit_lines(&mut sources, &edit, PositionEncoding::Utf16);
        assert_eq!(
            lines,
            vec![
                "2 edits in 2 files (proposed, not applied)",
                "a.py (1)",
                "  1:5-1:10  \"Shape\" → \"Figure\"",
                "a.py (1)",
                "  2:1-2:6  \"Shape\" → \"Figure\"",
                "rename (outside the roots) → (outside the roots)",
            ]
        );
        assert_eq!(
            sources.outside_note().as_deref(),
            Some("note: 2 results outside the workspace roots left out")
        );
    }
}
