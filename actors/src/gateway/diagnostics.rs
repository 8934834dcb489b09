//! The `diagnostics` tool: fresh diagnostics for one file or several,
//! each file asked of its own server at once.

use super::context::Context;
use super::render;
use crate::error::{Error, Result};
use crate::lsp::position::line_at;
use crate::messages::language_server::DiagnosticsReply;
use crate::vocabulary::diagnostics::{Diagnostic, FileDiagnostics, Severity};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::task::JoinSet;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsArgs {
    pub file: Option<String>,
    /// Several files at once.
    pub files: Option<Vec<String>>,
}

pub async fn diagnostics(context: &Context, args: &DiagnosticsArgs) -> Result<String> {
    let files: Vec<String> = args
        .file
        .iter()
        .chain(args.files.iter().flatten())
        .cloned()
        .collect();
    if files.is_empty() {
        return Err(Error::InvalidArgument("give `file` or `files`".into()));
    }
    let mut checks = JoinSet::new();
    for (index, file) in files.iter().enumerate() {
        let context = context.clone();
        let file = file.clone();
        checks.spawn(async move { (index, file_diagnostics(&context, &file).await) });
    }
    let mut reports: Vec<Option<Result<FileDiagnostics>>> = vec![None; files.len()];
    while let Some(joined) = checks.join_next().await {
        let Ok((index, report)) = joined else {
            continue;
        };
        reports[index] = Some(report);
    }
    let mut lines = Vec::new();
    for (file, report) in files.iter().zip(reports) {
        match report {
            Some(Ok(report)) => lines.extend(report.lines()),
            // One file whose check failed is a tool error; among several,
            // its failure is one line of the report.
            Some(Err(error)) if files.len() == 1 => return Err(error),
            Some(Err(error)) => lines.push(format!("{file}: {error}")),
            None => lines.push(format!("{file}: check did not finish")),
        }
    }
    Ok(render::bounded(&lines, context.settings.max_output_bytes))
}

/// One file's fresh diagnostics from its server, as data.
pub async fn file_diagnostics(context: &Context, file: &str) -> Result<FileDiagnostics> {
    let (roots, path) = context.resolve(file).await?;
    let document = context.snapshot(&path, file)?;
    let server = context.route(&path).await?;
    let text = document.text.clone();
    let reply = context.diagnostics(&server, document).await?;
    let notes = reply
        .file_problem
        .iter()
        .map(|problem| render::problem_line(&roots, &server.label(), problem))
        .collect();
    Ok(FileDiagnostics {
        file: roots.display(&path),
        server: server.label(),
        diagnostics: reply.items.as_ref().map(|items| read(items, &text, &reply)),
        notes,
    })
}

/// The server's items as problems, in line order.
fn read(items: &[Value], text: &str, reply: &DiagnosticsReply) -> Vec<Diagnostic> {
    let mut found: Vec<Diagnostic> = items
        .iter()
        .map(|item| diagnostic(item, text, reply))
        .collect();
    found.sort_by_key(|diagnostic| (diagnostic.line, diagnostic.column));
    found
}

/// One LSP diagnostic, its position 1-based in code points.
fn diagnostic(item: &Value, text: &str, reply: &DiagnosticsReply) -> Diagnostic {
    let start = item.pointer("/range/start");
    let line = start
        .and_then(|s| s.get("line"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let character = start
        .and_then(|s| s.get("character"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let line_text = line_at(text, usize::try_from(line).unwrap_or(usize::MAX)).unwrap_or("");
    let column = reply
        .encoding
        .decode_column(line_text, u32::try_from(character).unwrap_or(u32::MAX))
        as u64;
    let code = match item.get("code") {
        Some(Value::String(code)) => Some(code.clone()),
        Some(Value::Number(code)) => Some(code.to_string()),
        _ => None,
    };
    let message = item
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Diagnostic {
        line: line + 1,
        column: column + 1,
        severity: Severity::from_lsp(item.get("severity").and_then(Value::as_u64)),
        source: item
            .get("source")
            .and_then(Value::as_str)
            .map(str::to_owned),
        code,
        message: message.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::position::PositionEncoding;
    use serde_json::json;

    fn reply() -> DiagnosticsReply {
        DiagnosticsReply {
            items: None,
            encoding: PositionEncoding::Utf16,
            file_problem: None,
        }
    }

    #[test]
    fn reads_diagnostics_sorted_with_code_point_columns() {
        let items = vec![
            json!({"range": {"start": {"line": 1, "character": 3}}, "severity": 2, "message": "unused\n  variable", "source": "lint"}),
            json!({"range": {"start": {"line": 0, "character": 4}}, "severity": 1, "message": "bad", "source": "x", "code": 12}),
        ];
        let shown: Vec<String> = read(&items, "😀😀x\nabcd\n", &reply())
            .iter()
            .map(Diagnostic::shown)
            .collect();
        assert_eq!(
            shown,
            vec!["1:3 error [x 12] bad", "2:4 warning [lint] unused variable"]
        );
    }
}
