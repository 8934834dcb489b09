//! A file's fresh diagnostics as data: what the `diagnostics` tool
//! renders for a model, and what the control socket gives the hosts'
//! `release` hook, which reads these fields rather than the tool's text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How bad a problem is, as the server says.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Info => "info",
            Self::Hint => "hint",
        }
    }
}

/// One problem in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// 1-based.
    pub line: u64,
    /// 1-based, in Unicode code points.
    pub column: u64,
    pub severity: Severity,
    pub source: Option<String>,
    pub code: Option<String>,
    /// On one line: the server's whitespace folded.
    pub message: String,
}

impl Diagnostic {
    /// `severity [source code] message`: the problem wherever it stands,
    /// so that one moved by an edit above it is still known.
    pub fn what(&self) -> String {
        let origin = match (&self.source, &self.code) {
            (Some(source), Some(code)) => format!(" [{source} {code}]"),
            (Some(source), None) => format!(" [{source}]"),
            (None, Some(code)) => format!(" [{code}]"),
            (None, None) => String::new(),
        };
        format!("{}{origin} {}", self.severity.name(), self.message)
    }

    /// `line:column severity [source code] message`.
    pub fn shown(&self) -> String {
        format!("{}:{} {}", self.line, self.column, self.what())
    }
}

/// A file's diagnostics after its latest change, from one server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDiagnostics {
    /// As the session's roots show it.
    pub file: String,
    /// The server's label, `python` or `c,cpp`.
    pub server: String,
    /// In line order; `None` when the server has never published
    /// anything, which is not the same as no problems.
    pub diagnostics: Option<Vec<Diagnostic>>,
    /// What the answer says about itself (the server's complaint about a
    /// file it could not fully read), shown as they are.
    pub notes: Vec<String>,
    /// The file's servers that did not answer: the verdict is the
    /// others' alone, and says so.
    #[serde(default)]
    pub unanswered: Vec<String>,
}

impl FileDiagnostics {
    /// One answer from the answers of a file's servers, in the order
    /// they serve it: their problems in line order, their notes, and a
    /// note for each that has published nothing yet while others have.
    pub fn merge(mut parts: Vec<FileDiagnostics>) -> FileDiagnostics {
        if parts.len() == 1 {
            return parts.remove(0);
        }
        let file = parts
            .first()
            .map(|part| part.file.clone())
            .unwrap_or_default();
        let server = parts
            .iter()
            .map(|part| part.server.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let published = parts.iter().any(|part| part.diagnostics.is_some());
        let mut notes = Vec::new();
        let mut unanswered = Vec::new();
        let mut found: Vec<Diagnostic> = Vec::new();
        for part in parts {
            notes.extend(part.notes);
            unanswered.extend(part.unanswered);
            match part.diagnostics {
                Some(diagnostics) => found.extend(diagnostics),
                None if published => {
                    notes.push(format!("note: no diagnostics from [{}] yet", part.server));
                }
                None => {}
            }
        }
        found.sort_by_key(|diagnostic| (diagnostic.line, diagnostic.column));
        FileDiagnostics {
            file,
            server,
            diagnostics: published.then_some(found),
            notes,
            unanswered,
        }
    }

    /// How many problems of `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .flatten()
            .filter(|diagnostic| diagnostic.severity == severity)
            .count()
    }

    /// The notes, then `path: summary` and one indented line per problem;
    /// a server that never published says so.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = self.notes.clone();
        let Some(diagnostics) = &self.diagnostics else {
            lines.push(format!(
                "{}: no diagnostics from [{}]",
                self.file, self.server
            ));
            return lines;
        };
        let verdict = match self.unanswered.is_empty() {
            true => self.summary(),
            false => format!(
                "{} from [{}]; [{}] did not answer",
                self.summary(),
                self.server,
                self.unanswered.join("], [")
            ),
        };
        lines.push(format!("{}: {verdict}", self.file));
        lines.extend(
            diagnostics
                .iter()
                .map(|diagnostic| format!("  {}", diagnostic.shown())),
        );
        lines
    }

    /// "1 error, 2 warnings", or "no problems".
    fn summary(&self) -> String {
        let counts: Vec<String> = [
            Severity::Error,
            Severity::Warning,
            Severity::Info,
            Severity::Hint,
        ]
        .into_iter()
        .filter_map(|severity| match self.count(severity) {
            0 => None,
            count => Some(super::counted::counted(count, severity.name())),
        })
        .collect();
        match counts.is_empty() {
            true => "no problems".into(),
            false => counts.join(", "),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostic(line: u64, severity: Severity, code: Option<&str>) -> Diagnostic {
        Diagnostic {
            line,
            column: 3,
            severity,
            source: Some("lint".into()),
            code: code.map(str::to_owned),
            message: "unused variable".into(),
        }
    }

    #[test]
    fn merging_keeps_line_order_and_says_who_has_not_published() {
        let part = |server: &str, diagnostics: Option<Vec<Diagnostic>>| FileDiagnostics {
            file: "a.py".into(),
            server: server.into(),
            diagnostics,
            notes: vec![format!("from {server}")],
            unanswered: Vec::new(),
        };
        let merged = FileDiagnostics::merge(vec![
            part("python", Some(vec![diagnostic(9, Severity::Error, None)])),
            part(
                "ruff",
                Some(vec![diagnostic(2, Severity::Warning, Some("F401"))]),
            ),
            part("slow", None),
        ]);
        assert_eq!(merged.server, "python, ruff, slow");
        let lines: Vec<u64> = merged
            .diagnostics
            .iter()
            .flatten()
            .map(|d| d.line)
            .collect();
        assert_eq!(lines, vec![2, 9]);
        assert_eq!(
            merged.notes,
            vec![
                "from python",
                "from ruff",
                "from slow",
                "note: no diagnostics from [slow] yet"
            ]
        );
        let silent = FileDiagnostics::merge(vec![part("python", None), part("ruff", None)]);
        assert_eq!(silent.diagnostics, None);
        assert_eq!(
            silent.lines().last().unwrap(),
            "a.py: no diagnostics from [python, ruff]"
        );
    }

    #[test]
    fn lines_summarise_then_list_and_say_silence_apart() {
        let report = FileDiagnostics {
            file: "a.py".into(),
            server: "python".into(),
            diagnostics: Some(vec![
                diagnostic(1, Severity::Error, Some("E1")),
                diagnostic(2, Severity::Warning, None),
                diagnostic(3, Severity::Warning, None),
            ]),
            notes: vec!["note: [python] sees only open files".into()],
            unanswered: Vec::new(),
        };
        assert_eq!(
            report.lines(),
            vec![
                "note: [python] sees only open files",
                "a.py: 1 error, 2 warnings",
                "  1:3 error [lint E1] unused variable",
                "  2:3 warning [lint] unused variable",
                "  3:3 warning [lint] unused variable",
            ]
        );
        let clean = FileDiagnostics {
            diagnostics: Some(Vec::new()),
            notes: Vec::new(),
            ..report.clone()
        };
        assert_eq!(clean.lines(), vec!["a.py: no problems"]);
        let half = FileDiagnostics {
            server: "ruff".into(),
            unanswered: vec!["python".into()],
            ..clean.clone()
        };
        assert_eq!(
            half.lines(),
            vec!["a.py: no problems from [ruff]; [python] did not answer"]
        );
        let silent = FileDiagnostics {
            diagnostics: None,
            notes: Vec::new(),
            ..report
        };
        assert_eq!(silent.lines(), vec!["a.py: no diagnostics from [python]"]);
    }

    #[test]
    fn severities_travel_as_words() {
        let json = serde_json::to_string(&Severity::Hint).unwrap_or_default();
        assert_eq!(json, "\"hint\"");
    }
}
