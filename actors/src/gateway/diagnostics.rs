//! The `diagnostics` tool: fresh diagnostics for one file or several,
//! each file asked of its own server at once.

use super::context::Context;
use super::render;
use crate::error::{Error, Result};
use crate::lsp::position::line_at;
use crate::lsp::uri::uri_to_path;
use crate::messages::language_server::{DiagnosticsReply, read_each};
use crate::messages::router::ServerHandle;
use crate::vocabulary::diagnostics::{Diagnostic, FileDiagnostics, Severity};
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::root_set::RootSet;
use lsp_types::{Diagnostic as LspDiagnostic, DiagnosticSeverity, NumberOrString};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use tokio::task::JoinSet;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnosticsArgs {
    pub file: Option<String>,
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

/// One file's fresh diagnostics from every server of it that contributes
/// them, asked at once and merged, as data.
pub async fn file_diagnostics(context: &Context, file: &str) -> Result<FileDiagnostics> {
    let (roots, path) = context.resolve(file).await?;
    let document = context.snapshot(&path, file)?;
    let servers = context.diagnosing(&path).await?;
    let several = servers.len() > 1;
    let reports = from_each(servers, |server| {
        let (context, roots, document) = (context.clone(), roots.clone(), document.clone());
        async move { from_server(&context, &roots, &server, document, several).await }
    })
    .await;
    let settled = settled(reports, file)?;
    // A root removed during the check takes the file out of the
    // workspace, and a server letting the folder go may clear the file's
    // problems on its way: what it published then is no answer.
    if context.root_set().await?.root_of(&path).is_none() {
        return Err(Error::OutsideRoots(file.to_owned()));
    }
    let mut merged = FileDiagnostics::merge(settled.came);
    merged.notes.extend(settled.warnings);
    merged.unanswered = settled.unanswered;
    Ok(merged)
}

/// Asks every server of `servers` at once with `ask`: their answers, in
/// the servers' order, each with its server's label; a server that could
/// not be had answers why.
pub async fn from_each<T, Asked>(
    servers: Vec<(String, Result<ServerHandle>)>,
    ask: impl Fn(ServerHandle) -> Asked,
) -> Vec<(String, Result<T>)>
where
    T: Send + 'static,
    Asked: Future<Output = Result<T>> + Send + 'static,
{
    let mut asked = JoinSet::new();
    for (index, (label, server)) in servers.into_iter().enumerate() {
        let answer = server.map(&ask);
        asked.spawn(async move {
            let answer = match answer {
                Ok(answer) => answer.await,
                Err(error) => Err(error),
            };
            (index, label, answer)
        });
    }
    let mut answers = Vec::new();
    while let Some(joined) = asked.join_next().await {
        if let Ok(answer) = joined {
            answers.push(answer);
        }
    }
    answers.sort_by_key(|(index, _, _)| *index);
    answers
        .into_iter()
        .map(|(_, label, answer)| (label, answer))
        .collect()
}

/// What came of asking each of a file's servers.
pub struct Settled<T> {
    /// The answers that came.
    pub came: Vec<T>,
    /// A warning line for each server that did not answer.
    pub warnings: Vec<String>,
    /// The labels of those servers.
    pub unanswered: Vec<String>,
}

/// The servers' answers that came, and what to say of each that did not;
/// the first failure when none came.
pub fn settled<T>(answers: Vec<(String, Result<T>)>, file: &str) -> Result<Settled<T>> {
    let mut came = Vec::new();
    let mut failures = Vec::new();
    for (label, answer) in answers {
        match answer {
            Ok(answer) => came.push(answer),
            Err(error) => failures.push((label, error)),
        }
    }
    if came.is_empty() {
        let first = failures.into_iter().next().map(|(_, error)| error);
        return Err(first.unwrap_or(Error::NoServer(format!("diagnostics of {file}"))));
    }
    let warnings = failures
        .iter()
        .map(|(label, error)| match error.names_server() {
            true => format!("warning: {error}"),
            false => format!("warning: [{label}] {error}"),
        })
        .collect();
    let unanswered = failures.into_iter().map(|(label, _)| label).collect();
    Ok(Settled {
        came,
        warnings,
        unanswered,
    })
}

/// One server's fresh diagnostics of a file, those below its minimum
/// severity left out; among several servers, each problem names its
/// source.
async fn from_server(
    context: &Context,
    roots: &RootSet,
    server: &ServerHandle,
    document: DocumentSnapshot,
    several: bool,
) -> Result<FileDiagnostics> {
    let reply = context.diagnostics(server, document.clone()).await?;
    Ok(problems(roots, server, &document, &reply, several))
}

/// One server's reply as problems of `document` (whose text its positions
/// are in), those below its minimum severity left out; among several
/// servers, each problem names its source.
pub fn problems(
    roots: &RootSet,
    server: &ServerHandle,
    document: &DocumentSnapshot,
    reply: &DiagnosticsReply,
    several: bool,
) -> FileDiagnostics {
    let mut notes: Vec<String> = reply.warnings.clone();
    notes.extend(
        reply
            .file_problem
            .iter()
            .map(|problem| render::problem_line(roots, &server.label(), problem)),
    );
    let duties = &server.spec.duties;
    let diagnostics = reply.items.as_ref().map(|items| {
        let (mut found, unreadable) = read(items, &document.text, reply);
        if unreadable > 0 {
            notes.push(format!(
                "warning: [{}] sent {unreadable} diagnostics that do not follow LSP; they are not shown",
                server.label()
            ));
        }
        let file = roots.display(&document.path);
        notes.extend(stopped_at(&found, &server.label(), &file));
        found.retain(|diagnostic| duties.shows(diagnostic.severity));
        for diagnostic in &mut found {
            diagnostic.message = roots.paths_shown_in(&diagnostic.message);
        }
        if several {
            for diagnostic in &mut found {
                diagnostic.source.get_or_insert_with(|| server.label());
            }
        }
        found
    });
    FileDiagnostics {
        file: roots.display(&document.path),
        server: server.label(),
        diagnostics,
        notes,
        unanswered: Vec::new(),
    }
}

/// Clang's errors after which it checks nothing more: a file not found
/// (in the file or in one it includes), and the limit of errors reached.
const CLANG_FATAL: [&str; 2] = ["pp_file_not_found", "fatal_too_many_errors"];

/// A warning when a fatal error hides whatever follows it: the answer
/// is then no list of the file's problems, and the same answer before and
/// after an edit does not mean the edit broke nothing.
fn stopped_at(found: &[Diagnostic], label: &str, file: &str) -> Option<String> {
    let fatal = found.iter().find(|diagnostic| {
        diagnostic.source.as_deref() == Some("clang")
            && diagnostic
                .code
                .as_deref()
                .is_some_and(|code| CLANG_FATAL.contains(&code))
    })?;
    Some(format!(
        "warning: [{label}] the error at {file}:{} is fatal: the server checks nothing after it, so problems past it are not reported",
        fatal.line
    ))
}

/// The problems of `these` that `those` has not, counted by what each
/// says: a problem the edit only moved is in both.
pub(super) fn missing_from<'a>(
    these: &'a [Diagnostic],
    those: &[Diagnostic],
) -> Vec<&'a Diagnostic> {
    let mut left: HashMap<String, usize> = HashMap::new();
    for diagnostic in those {
        *left.entry(diagnostic.what()).or_default() += 1;
    }
    these
        .iter()
        .filter(|diagnostic| match left.get_mut(&diagnostic.what()) {
            Some(count) if *count > 0 => {
                *count -= 1;
                false
            }
            _ => true,
        })
        .collect()
}

/// The server's items as problems, in line order, and how many did not
/// follow LSP (left out, and said so).
fn read(items: &[Value], text: &str, reply: &DiagnosticsReply) -> (Vec<Diagnostic>, usize) {
    let (items, unreadable) = read_each::<LspDiagnostic>(items);
    let mut found: Vec<Diagnostic> = items
        .iter()
        .map(|item| diagnostic(item, text, reply))
        .collect();
    found.sort_by_key(|diagnostic| (diagnostic.line, diagnostic.column));
    (found, unreadable)
}

/// One LSP diagnostic, its position 1-based in code points.
fn diagnostic(item: &LspDiagnostic, text: &str, reply: &DiagnosticsReply) -> Diagnostic {
    let start = item.range.start;
    let line_text = line_at(text, start.line as usize).unwrap_or("");
    let column = reply.encoding.decode_column(line_text, start.character) as u64;
    let code = item.code.as_ref().map(|code| match code {
        NumberOrString::Number(code) => code.to_string(),
        NumberOrString::String(code) => code.clone(),
    });
    let mut message = item
        .message
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if let Some(original) = original_of(item) {
        message.push_str(&format!(" (part of the problem reported at {original})"));
    }
    Diagnostic {
        line: u64::from(start.line) + 1,
        column: column + 1,
        severity: severity(item.severity),
        source: item.source.clone(),
        code,
        message,
    }
}

/// Where the problem an item is one place of is, as `path:line`:
/// rust-analyzer gives each place `cargo check` names beside an error an
/// item of its own ("trait requires 1 parameter", where the error is in
/// the macro that wrote the method), which alone does not say what it
/// is part of.
fn original_of(item: &LspDiagnostic) -> Option<String> {
    let original = item
        .related_information
        .as_ref()?
        .iter()
        .find(|related| related.message == "original diagnostic")?;
    let path = uri_to_path(original.location.uri.as_str())?;
    Some(format!(
        "{}:{}",
        path.display(),
        original.location.range.start.line + 1
    ))
}

/// An unknown or missing severity counts as an error.
fn severity(severity: Option<DiagnosticSeverity>) -> Severity {
    match severity {
        Some(DiagnosticSeverity::WARNING) => Severity::Warning,
        Some(DiagnosticSeverity::INFORMATION) => Severity::Info,
        Some(DiagnosticSeverity::HINT) => Severity::Hint,
        _ => Severity::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::position::PositionEncoding;
    use serde_json::json;

    #[test]
    fn a_server_that_did_not_answer_is_named_once() {
        let timeout = Error::Timeout {
            server: "python".into(),
            method: "textDocument/diagnostic".into(),
            after: std::time::Duration::from_secs(30),
        };
        let answers = vec![
            ("python".to_owned(), Err(timeout)),
            ("ruff".to_owned(), Ok(())),
            (
                "eslint".to_owned(),
                Err(Error::NotReady {
                    after: std::time::Duration::from_secs(5),
                }),
            ),
        ];
        let settled = settled(answers, "a.py").unwrap();
        assert_eq!(settled.unanswered, ["python", "eslint"]);
        assert_eq!(
            settled.warnings,
            [
                "warning: [python] textDocument/diagnostic timed out after 30 s",
                "warning: [eslint] no language server became available within 5 s"
            ]
        );
    }

    fn reply() -> DiagnosticsReply {
        DiagnosticsReply {
            items: None,
            encoding: PositionEncoding::Utf16,
            file_problem: None,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn a_hint_that_is_a_place_of_a_problem_elsewhere_says_where() {
        let items = vec![json!({
            "range": {"start": {"line": 437, "character": 11}, "end": {"line": 437, "character": 12}},
            "severity": 4, "source": "rustc", "code": "E0050",
            "message": "trait requires 1 parameter",
            "relatedInformation": [{
                "location": {"uri": "file:///w/src/macros.rs", "range": {"start": {"line": 15, "character": 4}, "end": {"line": 15, "character": 9}}},
                "message": "original diagnostic"
            }]
        })];
        let (found, _) = read(&items, "", &reply());
        assert_eq!(
            found[0].shown(),
            "438:12 hint [rustc E0050] trait requires 1 parameter (part of the problem reported at /w/src/macros.rs:16)"
        );
    }

    #[test]
    fn reads_diagnostics_sorted_with_code_point_columns() {
        let items = vec![
            json!({"range": {"start": {"line": 1, "character": 3}, "end": {"line": 1, "character": 4}}, "severity": 2, "message": "unused\n  variable", "source": "lint"}),
            json!({"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 5}}, "severity": 1, "message": "bad", "source": "x", "code": 12}),
            json!({"message": "no range: not a diagnostic LSP knows"}),
        ];
        let (found, unreadable) = read(&items, "😀😀x\nabcd\n", &reply());
        assert_eq!(unreadable, 1);
        let shown: Vec<String> = found.iter().map(Diagnostic::shown).collect();
        assert_eq!(
            shown,
            vec!["1:3 error [x 12] bad", "2:4 warning [lint] unused variable"]
        );
    }

    #[test]
    fn a_fatal_error_says_that_what_follows_is_not_checked() {
        let reply = reply();
        let items = [
            json!({"range": {"start": {"line": 18, "character": 9}, "end": {"line": 18, "character": 20}},
                   "severity": 1, "source": "clang", "code": "pp_file_not_found",
                   "message": "In included file: 'config.h' file not found"}),
            json!({"range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 1}},
                   "severity": 1, "source": "clang", "code": "undeclared_var_use",
                   "message": "use of undeclared identifier 'x'"}),
        ];
        let (found, _) = read(&items, "", &reply);
        assert_eq!(
            stopped_at(&found, "c,cpp", "poly.h").as_deref(),
            Some(
                "warning: [c,cpp] the error at poly.h:19 is fatal: the server checks nothing after it, so problems past it are not reported"
            )
        );
        assert_eq!(
            stopped_at(&found[..1], "c,cpp", "poly.h"),
            None,
            "sorted, the fatal one is last"
        );
    }

    #[test]
    fn a_missing_or_unknown_severity_is_an_error() {
        assert_eq!(severity(None), Severity::Error);
        assert_eq!(severity(Some(DiagnosticSeverity::HINT)), Severity::Hint);
        let unknown = DiagnosticSeverity::deserialize(&json!(9)).ok();
        assert_eq!(severity(unknown), Severity::Error);
    }
}
