//! Proposed workspace edits as text: per file, each edit's 1-based range
//! with the old and the new text. Windlass never applies them.

use super::render::Sources;
use crate::lsp::position::PositionEncoding;
use crate::lsp::uri::uri_to_path;
use crate::vocabulary::counted::counted;
use lsp_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, ResourceOp, TextDocumentEdit, TextEdit, Uri,
    WorkspaceEdit,
};

/// Lines describing a `WorkspaceEdit`, `changes` or `documentChanges`.
pub fn workspace_edit_lines(
    sources: &mut Sources,
    edit: &WorkspaceEdit,
    encoding: PositionEncoding,
) -> Vec<String> {
    let mut files: Vec<(&Uri, Vec<&TextEdit>)> = Vec::new();
    let mut operations = Vec::new();
    let mut changes: Vec<_> = edit.changes.iter().flatten().collect();
    // In the order of their URIs, whatever order the server sent them in.
    changes.sort_by_key(|(uri, _)| uri.as_str());
    for (uri, edits) in changes {
        files.push((uri, edits.iter().collect()));
    }
    match &edit.document_changes {
        Some(DocumentChanges::Edits(edits)) => files.extend(edits.iter().map(document_edits)),
        Some(DocumentChanges::Operations(changes)) => {
            for change in changes {
                match change {
                    DocumentChangeOperation::Edit(edits) => files.push(document_edits(edits)),
                    DocumentChangeOperation::Op(operation) => {
                        operations.push(file_operation(sources, operation))
                    }
                }
            }
        }
        None => {}
    }
    // Edits to files outside the roots are left out, and counted.
    files.retain(|(uri, _)| uri_to_path(uri.as_str()).is_none_or(|path| sources.admit(&path)));
    let total: usize = files.iter().map(|(_, edits)| edits.len()).sum();
    let mut lines = vec![format!(
        "{} in {} (proposed, not applied)",
        counted(total, "edit"),
        counted(files.len(), "file")
    )];
    for (uri, edits) in files {
        lines.extend(file_lines(sources, uri.as_str(), &edits, encoding));
    }
    lines.extend(operations);
    lines
}

/// A document's edits, annotated or not.
fn document_edits(change: &TextDocumentEdit) -> (&Uri, Vec<&TextEdit>) {
    let edits = change
        .edits
        .iter()
        .map(|edit| match edit {
            OneOf::Left(edit) => edit,
            OneOf::Right(annotated) => &annotated.text_edit,
        })
        .collect();
    (&change.text_document.uri, edits)
}

fn file_lines(
    sources: &mut Sources,
    uri: &str,
    edits: &[&TextEdit],
    encoding: PositionEncoding,
) -> Vec<String> {
    let Some(path) = uri_to_path(uri) else {
        return vec![format!("{uri} ({} edits)", edits.len())];
    };
    let mut lines = vec![format!("{} ({})", sources.display(&path), edits.len())];
    for edit in edits {
        let (start_line, start_column) = sources.point(&path, edit.range.start, encoding);
        let (end_line, end_column) = sources.point(&path, edit.range.end, encoding);
        let old_text = sources
            .slice(&path, edit.range, encoding)
            .unwrap_or_default();
        lines.push(format!(
            "  {}:{}-{}:{}  {old_text:?} → {:?}",
            start_line + 1,
            start_column + 1,
            end_line + 1,
            end_column + 1,
            edit.new_text
        ));
    }
    lines
}

fn file_operation(sources: &mut Sources, operation: &ResourceOp) -> String {
    let mut shown = |uri: &Uri| match uri_to_path(uri.as_str()) {
        Some(path) if sources.admit(&path) => sources.display(&path),
        Some(_) => "(outside the roots)".to_owned(),
        None => uri.as_str().to_owned(),
    };
    match operation {
        ResourceOp::Create(create) => format!("create {}", shown(&create.uri)),
        ResourceOp::Delete(delete) => format!("delete {}", shown(&delete.uri)),
        ResourceOp::Rename(rename) => {
            let old = shown(&rename.old_uri);
            format!("rename {old} → {}", shown(&rename.new_uri))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocabulary::root_set::RootSet;
    use serde::Deserialize;
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
        let edit = WorkspaceEdit::deserialize(&edit).unwrap();
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
