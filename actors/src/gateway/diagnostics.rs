//! The `diagnostics` tool: fresh diagnostics for one file or several,
//! each file asked of its own server at once.

use super::context::Context;
use super::render;
use crate::error::{Error, Result};
use crate::language_server::DiagnosticsReply;
use crate::lsp::position::line_at;
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
        checks.spawn(async move { (index, file_report(&context, &file).await) });
    }
    let mut reports: Vec<Option<Result<Vec<String>>>> = vec![None; files.len()];
    while let Some(joined) = checks.join_next().await {
        let Ok((index, report)) = joined else {
            continue;
        };
        reports[index] = Some(report);
    }
    let mut lines = Vec::new();
    for (file, report) in files.iter().zip(reports) {
        match report {
            Some(Ok(report)) => lines.extend(report),
            // One file whose check failed is a tool error; among several,
            // its failure is one line of the report.
            Some(Err(error)) if files.len() == 1 => return Err(error),
            Some(Err(error)) => lines.push(format!("{file}: {error}")),
            None => lines.push(format!("{file}: check did not finish")),
        }
    }
    Ok(render::bounded(&lines, context.settings.max_output_bytes))
}

async fn file_report(context: &Context, file: &str) -> Result<Vec<String>> {
    let (roots, path) = context.resolve(file).await?;
    let document = context.snapshot(&path, file)?;
    let server = context.route(&path).await?;
    let text = document.text.clone();
    let reply = context.diagnostics(&server, document).await?;
    let mut lines = render::notes_of(
        &roots,
        &server.label(),
        &reply.warnings,
        reply.file_problem.as_ref(),
    );
    lines.extend(describe(
        &roots.display(&path),
        &server.label(),
        &text,
        &reply,
    ));
    Ok(lines)
}

fn describe(path: &str, server: &str, text: &str, reply: &DiagnosticsReply) -> Vec<String> {
    let Some(items) = &reply.items else {
        return vec![format!("{path}: no diagnostics from [{server}]")];
    };
    let mut found: Vec<(u64, u64, String)> = items
        .iter()
        .map(|item| line_for(item, text, reply))
        .collect();
    found.sort_by_key(|(line, column, _)| (*line, *column));
    let mut lines = vec![format!("{path}: {}", summary(items))];
    lines.extend(found.into_iter().map(|(_, _, line)| line));
    lines
}

/// `  line:column severity [source code] message`, 1-based, code points.
fn line_for(item: &Value, text: &str, reply: &DiagnosticsReply) -> (u64, u64, String) {
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
    let severity = severity(item);
    let source = item.get("source").and_then(Value::as_str);
    let code = match item.get("code") {
        Some(Value::String(code)) => Some(code.clone()),
        Some(Value::Number(code)) => Some(code.to_string()),
        _ => None,
    };
    let origin = match (source, code) {
        (Some(source), Some(code)) => format!(" [{source} {code}]"),
        (Some(source), None) => format!(" [{source}]"),
        (None, Some(code)) => format!(" [{code}]"),
        (None, None) => String::new(),
    };
    let message = item
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
    (
        line,
        column,
        format!("  {}:{} {severity}{origin} {message}", line + 1, column + 1),
    )
}

fn severity(item: &Value) -> &'static str {
    match item.get("severity").and_then(Value::as_u64) {
        Some(2) => "warning",
        Some(3) => "info",
        Some(4) => "hint",
        _ => "error",
    }
}

fn summary(items: &[Value]) -> String {
    if items.is_empty() {
        return "no problems".into();
    }
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for item in items {
        let name = severity(item);
        match counts.iter_mut().find(|(known, _)| *known == name) {
            Some((_, count)) => *count += 1,
            None => counts.push((name, 1)),
        }
    }
    counts.sort_by_key(|(name, _)| {
        ["error", "warning", "info", "hint"]
            .iter()
            .position(|known| known == name)
    });
    counts
        .iter()
        .map(|(name, count)| {
            if *count == 1 {
                format!("1 {name}")
            } else {
                format!("{count} {name}s")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::position::PositionEncoding;
    use serde_json::json;

    fn reply(items: Option<Vec<Value>>) -> DiagnosticsReply {
        DiagnosticsReply {
            items: items.map(Into::into),
            encoding: PositionEncoding::Utf16,
            warnings: Vec::new(),
            file_problem: None,
        }
    }

    #[test]
    fn describes_diagnostics_sorted_with_code_point_columns() {
        let items = vec![
            json!({"range": {"start": {"line": 1, "character": 3}}, "severity": 2, "message": "unused\n  variable", "source": "lint"}),
            json!({"range": {"start": {"line": 0, "character": 4}}, "severity": 1, "message": "bad", "source": "x", "code": 12}),
        ];
        let lines = describe("a.py", "python", "😀😀x\nabcd\n", &reply(Some(items)));
        assert_eq!(
            lines,
            vec![
                "a.py: 1 error, 1 warning",
                "  1:3 error [x 12] bad",
                "  2:4 warning [lint] unused variable",
            ]
        );
    }

    #[test]
    fn says_clean_and_silent_apart() {
        assert_eq!(
            describe("a.py", "python", "", &reply(Some(vec![]))),
            vec!["a.py: no problems"]
        );
        assert_eq!(
            describe("a.py", "python", "", &reply(None)),
            vec!["a.py: no diagnostics from [python]"]
        );
    }
}
