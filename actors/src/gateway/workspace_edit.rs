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
    let (mut files, operations) = parts(edit);
    let operations: Vec<String> = operations
        .into_iter()
        .map(|operation| file_operation(sources, operation))
        .collect();
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

/// The text edits of a `WorkspaceEdit` by file (`changes` in URI order,
/// whatever order the server sent them in, then `documentChanges`), and
/// its file operations (create, rename, delete).
pub fn parts(edit: &WorkspaceEdit) -> (Vec<(&Uri, Vec<&TextEdit>)>, Vec<&ResourceOp>) {
    let mut files: Vec<(&Uri, Vec<&TextEdit>)> = Vec::new();
    let mut operations = Vec::new();
    let mut changes: Vec<_> = edit.changes.iter().flatten().collect();
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
                    DocumentChangeOperation::Op(operation) => operations.push(operation),
                }
            }
        }
        None => {}
    }
    (files, operations)
}

/// `text` with `edits` made, their ranges in `encoding`; as LSP says,
/// every range is of the text before any edit, and none overlap.
pub fn applied(
    text: &str,
    edits: &[&TextEdit],
    encoding: PositionEncoding,
) -> Result<String, String> {
    let mut spans = Vec::with_capacity(edits.len());
    for edit in edits {
        let start = byte_offset(text, edit.range.start, encoding)?;
        let end = byte_offset(text, edit.range.end, encoding)?;
        if end < start {
            return Err(format!(
                "an edit's range ends before it starts: {:?}",
                edit.range
            ));
        }
        spans.push((start, end, edit.new_text.as_str()));
    }
    // Stable: edits inserted at one place keep the order they came in.
    spans.sort_by_key(|(start, end, _)| (*start, *end));
    let mut edited = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, new_text) in spans {
        if start < at {
            return Err("two edits overlap".into());
        }
        edited.push_str(&text[at..start]);
        edited.push_str(new_text);
        at = end;
    }
    edited.push_str(&text[at..]);
    Ok(edited)
}

/// Where an LSP position falls in `text`, in bytes.
fn byte_offset(
    text: &str,
    position: lsp_types::Position,
    encoding: PositionEncoding,
) -> Result<usize, String> {
    let mut line_start = 0;
    for _ in 0..position.line {
        match text[line_start..].find('\n') {
            Some(newline) => line_start += newline + 1,
            None => return Err(format!("line {} is past the end", position.line + 1)),
        }
    }
    let rest = &text[line_start..];
    let line = rest.split('\n').next().unwrap_or_default();
    let line = line.strip_suffix('\r').unwrap_or(line);
    let code_points = encoding.decode_column(line, position.character);
    let within = line
        .char_indices()
        .nth(code_points)
        .map_or(line.len(), |(offset, _)| offset);
    Ok(line_start + within)
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

    fn text_edit(line: u32, start: u32, end: u32, new_text: &str) -> TextEdit {
        TextEdit::new(
            lsp_types::Range::new(
                lsp_types::Position::new(line, start),
                lsp_types::Position::new(line, end),
            ),
            new_text.into(),
        )
    }

    #[test]
    fn applies_edits_against_the_original_text_in_each_encoding() {
        let text = "é = Shape()\r\nprint(Shape)\n";
        let renames = [text_edit(1, 6, 11, "Figure"), text_edit(0, 4, 9, "Figure")];
        let edits: Vec<&TextEdit> = renames.iter().collect();
        assert_eq!(
            applied(text, &edits, PositionEncoding::Utf16).unwrap(),
            "é = Figure()\r\nprint(Figure)\n"
        );
        // In UTF-8, "é" is two bytes: the same name starts a column later.
        let utf8 = [text_edit(0, 5, 10, "Figure")];
        let edits: Vec<&TextEdit> = utf8.iter().collect();
        assert_eq!(
            applied(text, &edits, PositionEncoding::Utf8).unwrap(),
            "é = Figure()\r\nprint(Shape)\n"
        );
        let insert = [text_edit(2, 0, 0, "# end\n")];
        let edits: Vec<&TextEdit> = insert.iter().collect();
        assert!(
            applied(text, &edits, PositionEncoding::Utf16)
                .unwrap()
                .ends_with("# end\n")
        );
        let overlapping = [text_edit(0, 0, 5, "a"), text_edit(0, 3, 6, "b")];
        let edits: Vec<&TextEdit> = overlapping.iter().collect();
        assert!(applied(text, &edits, PositionEncoding::Utf16).is_err());
        let past = [text_edit(9, 0, 0, "x")];
        let edits: Vec<&TextEdit> = past.iter().collect();
        assert!(applied(text, &edits, PositionEncoding::Utf16).is_err());
    }
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
