//! `$/progress` work a server has announced and not yet finished.
//!
//! Two uses: readiness (requests wait while the server indexes) and the
//! Progress diagnostics strategy (a check is done when its work ends).

use serde_json::Value;
use std::collections::HashMap;

/// One piece of work in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Work {
    pub title: String,
    pub percentage: Option<u64>,
}

impl Work {
    /// Whether this is start-up work during which answers would be empty
    /// or wrong, rather than background checking.
    pub fn is_indexing(&self) -> bool {
        let title = self.title.to_lowercase();
        ["index", "loading", "scanning", "initializ", "analyzing"]
            .iter()
            .any(|word| title.contains(word))
    }
}

/// Active work by token.
#[derive(Debug, Default)]
pub struct Progress {
    active: HashMap<String, Work>,
    /// Whether the server has ever reported progress.
    pub seen: bool,
}

/// What a `$/progress` notification changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Began,
    Reported,
    Ended,
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
                self.active.insert(token, Work { title, percentage });
                self.seen = true;
                Change::Began
            }
            Some("report") => match self.active.get_mut(&token) {
                Some(work) => {
                    work.percentage = percentage.or(work.percentage);
                    Change::Reported
                }
                None => Change::Ignored,
            },
            Some("end") => match self.active.remove(&token) {
                Some(_) => Change::Ended,
                None => Change::Ignored,
            },
            _ => Change::Ignored,
        }
    }

    pub fn is_idle(&self) -> bool {
        self.active.is_empty()
    }

    /// The first indexing work still running, for readiness and status.
    pub fn indexing(&self) -> Option<&Work> {
        self.active.values().find(|work| work.is_indexing())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tracks_work_from_begin_to_end() {
        let mut progress = Progress::default();
        let begin =
            json!({"token": "t", "value": {"kind": "begin", "title": "Indexing", "percentage": 0}});
        assert_eq!(progress.apply(&begin), Change::Began);
        assert_eq!(
            progress.indexing().map(|w| w.title.as_str()),
            Some("Indexing")
        );
        let report = json!({"token": "t", "value": {"kind": "report", "percentage": 40}});
        assert_eq!(progress.apply(&report), Change::Reported);
        assert_eq!(progress.indexing().and_then(|w| w.percentage), Some(40));
        assert_eq!(
            progress.apply(&json!({"token": "t", "value": {"kind": "end"}})),
            Change::Ended
        );
        assert!(progress.is_idle() && progress.seen);
    }

    #[test]
    fn numeric_tokens_and_strays() {
        let mut progress = Progress::default();
        assert_eq!(
            progress.apply(&json!({"token": 7, "value": {"kind": "begin", "title": "checking"}})),
            Change::Began
        );
        assert!(progress.indexing().is_none(), "checking is not indexing");
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
            Change::Ended
        );
    }
}
