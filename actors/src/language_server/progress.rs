//! `$/progress` work a server has announced and not yet finished.
//!
//! Two uses: readiness (work begun while the server loads is loading
//! work, see `readiness`) and the Progress diagnostics strategy (a check is
//! done when its work ends).
//!
//! The notifications are read as JSON, not as lsp-types' `ProgressParams`:
//! servers built on vscode-languageserver pass on whatever percentage they
//! compute, such as elm-language-server's `100.00000000000155`, where
//! lsp-types wants a whole number and refuses the notification, and a
//! server's loading must count however it words its percentages.

use serde_json::Value;
use std::collections::HashMap;

/// One piece of work in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Work {
    pub title: String,
    pub percentage: Option<u64>,
}

/// Active work by token.
#[derive(Debug, Default)]
pub struct Progress {
    active: HashMap<String, Work>,
    /// Whether the server has ever said it was indexing the project.
    has_indexed: bool,
}

/// What a `$/progress` notification changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Began(String),
    Reported,
    Ended(String),
    Ignored,
}

impl Progress {
    /// Applies one `$/progress` notification's params.
    pub fn apply(&mut self, params: &Value) -> Change {
        let token = match params.get("token") {
            Some(Value::String(token)) => token.clone(),
            Some(Value::Number(token)) => token.to_string(),
            _ => return Change::Ignored,
        };
        let value = params.get("value").unwrap_or(&Value::Null);
        let percentage = value.get("percentage").and_then(Value::as_u64);
        match value.get("kind").and_then(Value::as_str) {
            Some("begin") => {
                let title = value
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                self.has_indexed |= is_indexing(&title);
                self.active
                    .insert(token.clone(), Work { title, percentage });
                Change::Began(token)
            }
            Some("report") => match self.active.get_mut(&token) {
                Some(work) => {
                    work.percentage = percentage.or(work.percentage);
                    Change::Reported
                }
                None => Change::Ignored,
            },
            Some("end") => match self.active.remove(&token) {
                Some(_) => Change::Ended(token),
                None => Change::Ignored,
            },
            _ => Change::Ignored,
        }
    }

    pub fn is_idle(&self) -> bool {
        self.active.is_empty()
    }

    /// The work running under `token`, if any.
    pub fn work(&self, token: &str) -> Option<&Work> {
        self.active.get(token)
    }

    /// Work that builds the server's index of the project, if any runs:
    /// clangd's "indexing", rust-analyzer's "Indexing", whenever it began.
    pub fn indexing(&self) -> Option<&Work> {
        self.active.values().find(|work| is_indexing(&work.title))
    }

    /// Whether the server builds an index of the project in the
    /// background, as it has said by indexing at least once: such an
    /// index can lack files without a word.
    pub fn indexes_in_background(&self) -> bool {
        self.has_indexed
    }
}

fn is_indexing(title: &str) -> bool {
    title.to_lowercase().contains("index")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[test]
    fn tracks_work_from_begin_to_end() {
        let mut progress = Progress::default();
        let begin =
            json!({"token": "t", "value": {"kind": "begin", "title": "Indexing", "percentage": 0}});
        assert_eq!(progress.apply(&begin), Change::Began("t".into()));
        assert_eq!(
            progress.work("t").map(|w| w.title.as_str()),
            Some("Indexing")
        );
        let report = json!({"token": "t", "value": {"kind": "report", "percentage": 40}});
        assert_eq!(progress.apply(&report), Change::Reported);
        assert_eq!(progress.work("t").and_then(|w| w.percentage), Some(40));
        assert_eq!(
            progress.apply(&json!({"token": "t", "value": {"kind": "end"}})),
            Change::Ended("t".into())
        );
        assert!(progress.is_idle());
    }

    #[test]
    fn fractional_percentages_lsp_types_refuses_still_count() {
        let begin = json!({"token": "t", "value": {"kind": "begin", "title": "Indexing", "percentage": 12.5}});
        assert!(lsp_types::ProgressParams::deserialize(&begin).is_err());
        let mut progress = Progress::default();
        assert_eq!(progress.apply(&begin), Change::Began("t".into()));
        let report =
            json!({"token": "t", "value": {"kind": "report", "percentage": 100.00000000000155}});
        assert_eq!(progress.apply(&report), Change::Reported);
        assert_eq!(
            progress.apply(&json!({"token": "t", "value": {"kind": "end"}})),
            Change::Ended("t".into())
        );
    }

    #[test]
    fn indexing_is_told_by_its_title() {
        let mut progress = Progress::default();
        progress.apply(&json!({"token": 1, "value": {"kind": "begin", "title": "cargo check"}}));
        assert_eq!(progress.indexing(), None);
        progress.apply(&json!({"token": "backgroundIndexProgress", "value": {"kind": "begin", "title": "indexing", "percentage": 20}}));
        assert_eq!(
            progress.indexing().and_then(|work| work.percentage),
            Some(20)
        );
        progress.apply(&json!({"token": "backgroundIndexProgress", "value": {"kind": "end"}}));
        assert_eq!(progress.indexing(), None);
        assert!(progress.indexes_in_background());
    }

    #[test]
    fn numeric_tokens_and_strays() {
        let mut progress = Progress::default();
        assert_eq!(
            progress.apply(&json!({"token": 7, "value": {"kind": "begin", "title": "checking"}})),
            Change::Began("7".into())
        );
        assert_eq!(
            progress.apply(&json!({"token": 8, "value": {"kind": "end"}})),
            Change::Ignored
        );
        assert_eq!(
            progress.apply(&json!({"value": {"kind": "end"}})),
            Change::Ignored
        );
        assert_eq!(
            progress.apply(&json!({"token": 7, "value": {"kind": "end"}})),
            Change::Ended("7".into())
        );
    }
}
