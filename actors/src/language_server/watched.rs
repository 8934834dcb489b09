//! The files a server asked to be told about: its dynamic registrations
//! of `workspace/didChangeWatchedFiles` (globs, relative patterns, kinds),
//! added by `client/registerCapability` and removed by
//! `client/unregisterCapability`, and which changes on disk match them.

use crate::lsp::uri::uri_to_path;
use crate::vocabulary::file_changes::{ChangeKind, FileChange};
use globset::{Glob, GlobBuilder, GlobMatcher};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;

const METHOD: &str = "workspace/didChangeWatchedFiles";
/// Registrations kept per server, against a server that floods them.
const MAX_WATCHERS: usize = 1_000;

/// One glob a server registered.
#[derive(Debug, Clone)]
struct Watcher {
    glob: GlobMatcher,
    /// For a relative pattern, the directory its glob is relative to.
    base: Option<PathBuf>,
    /// LSP `WatchKind` bits: 1 create, 2 change, 4 delete.
    kinds: u64,
}

impl Watcher {
    fn matches(&self, change: &FileChange) -> bool {
        if self.kinds & kind_bit(change.kind) == 0 {
            return false;
        }
        match &self.base {
            Some(base) => change
                .path
                .strip_prefix(base)
                .is_ok_and(|relative| self.glob.is_match(relative)),
            None => self.glob.is_match(&change.path),
        }
    }
}

/// Every live registration of one server, by registration id.
#[derive(Debug, Default)]
pub struct Registrations {
    by_id: HashMap<String, Vec<Watcher>>,
}

impl Registrations {
    /// Applies `client/registerCapability` params.
    pub fn register(&mut self, params: &Value) {
        for registration in list(params, "registrations") {
            if registration.get("method").and_then(Value::as_str) != Some(METHOD) {
                continue;
            }
            let id = registration
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let watchers: Vec<Watcher> = registration
                .pointer("/registerOptions/watchers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(parse_watcher)
                .collect();
            if self.len() + watchers.len() <= MAX_WATCHERS {
                self.by_id.insert(id, watchers);
            }
        }
    }

    /// Applies `client/unregisterCapability` params (whose list the
    /// protocol spells `unregisterations`).
    pub fn unregister(&mut self, params: &Value) {
        for key in ["unregisterations", "unregistrations"] {
            for registration in list(params, key) {
                if let Some(id) = registration.get("id").and_then(Value::as_str) {
                    self.by_id.remove(id);
                }
            }
        }
    }

    /// Whether the server registered for any changes at all.
    pub fn any(&self) -> bool {
        !self.by_id.is_empty()
    }

    fn len(&self) -> usize {
        self.by_id.values().map(Vec::len).sum()
    }

    pub fn matches(&self, change: &FileChange) -> bool {
        self.by_id
            .values()
            .flatten()
            .any(|watcher| watcher.matches(change))
    }

    /// The `didChangeWatchedFiles` params for the changes that match, or
    /// `None` when none does.
    pub fn notification(&self, changes: &[FileChange]) -> Option<Value> {
        let events: Vec<Value> = changes
            .iter()
            .filter(|change| self.matches(change))
            .map(|change| json!({"uri": change.uri, "type": type_number(change.kind)}))
            .collect();
        (!events.is_empty()).then(|| json!({"changes": events}))
    }
}

fn list<'a>(params: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    params
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn parse_watcher(watcher: &Value) -> Option<Watcher> {
    let kinds = watcher.get("kind").and_then(Value::as_u64).unwrap_or(7);
    let pattern = watcher.get("globPattern")?;
    let (text, base) = match pattern {
        Value::String(text) => (text.as_str(), None),
        Value::Object(relative) => {
            let base = match relative.get("baseUri")? {
                Value::String(uri) => uri.as_str(),
                folder => folder.get("uri")?.as_str()?,
            };
            (relative.get("pattern")?.as_str()?, Some(uri_to_path(base)?))
        }
        _ => return None,
    };
    Some(Watcher {
        glob: compile(text)?,
        base,
        kinds,
    })
}

/// LSP globs: `*` and `?` stay within one path segment, `**` spans any.
fn compile(pattern: &str) -> Option<GlobMatcher> {
    let glob: Glob = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()?;
    Some(glob.compile_matcher())
}

fn kind_bit(kind: ChangeKind) -> u64 {
    match kind {
        ChangeKind::Created => 1,
        ChangeKind::Changed => 2,
        ChangeKind::Deleted => 4,
    }
}

/// The `FileChangeType` number of a change.
fn type_number(kind: ChangeKind) -> u64 {
    match kind {
        ChangeKind::Created => 1,
        ChangeKind::Changed => 2,
        ChangeKind::Deleted => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, kind: ChangeKind) -> FileChange {
        FileChange::new(PathBuf::from(path), kind)
    }

    fn registrations(watchers: Value) -> Registrations {
        let mut registrations = Registrations::default();
        registrations.register(&json!({"registrations": [
            {"id": "a", "method": METHOD, "registerOptions": {"watchers": watchers}},
            {"id": "other", "method": "textDocument/didSave"},
        ]}));
        registrations
    }

    #[test]
    fn globs_match_whole_segments_and_any_depth() {
        let registered = registrations(json!([{"globPattern": "**/*.{py,pyi}"}]));
        assert!(registered.matches(&change("/w/a.py", ChangeKind::Changed)));
        assert!(registered.matches(&change("/w/pkg/deep/b.pyi", ChangeKind::Created)));
        assert!(!registered.matches(&change("/w/a.pyc", ChangeKind::Changed)));
        let config = registrations(json!([{"globPattern": "**/pyrightconfig.json"}]));
        assert!(config.matches(&change("/w/pyrightconfig.json", ChangeKind::Deleted)));
        assert!(!config.matches(&change("/w/x/pyrightconfig.json.bak", ChangeKind::Deleted)));
        let everything = registrations(json!([{"globPattern": "**"}]));
        assert!(everything.matches(&change("/w/README", ChangeKind::Changed)));
    }

    #[test]
    fn relative_patterns_match_below_their_base_only() {
        let registered = registrations(json!([
            {"globPattern": {"baseUri": "file:///w/src", "pattern": "*.ts"}},
            {"globPattern": {"baseUri": {"uri": "file:///w/lib", "name": "lib"}, "pattern": "**/*.ts"}},
        ]));
        assert!(registered.matches(&change("/w/src/a.ts", ChangeKind::Changed)));
        assert!(!registered.matches(&change("/w/src/sub/a.ts", ChangeKind::Changed)));
        assert!(registered.matches(&change("/w/lib/x/y.ts", ChangeKind::Changed)));
        assert!(!registered.matches(&change("/w/other/a.ts", ChangeKind::Changed)));
    }

    #[test]
    fn kinds_filter_and_unregistration_removes() {
        let mut registered = registrations(json!([{"globPattern": "**/*.c", "kind": 5}]));
        assert!(registered.matches(&change("/w/a.c", ChangeKind::Created)));
        assert!(!registered.matches(&change("/w/a.c", ChangeKind::Changed)));
        let params = registered
            .notification(&[
                change("/w/a.c", ChangeKind::Deleted),
                change("/w/b.h", ChangeKind::Deleted),
            ])
            .unwrap();
        assert_eq!(
            params,
            json!({"changes": [{"uri": "file:///w/a.c", "type": 3}]})
        );
        registered.unregister(&json!({"unregisterations": [{"id": "a", "method": METHOD}]}));
        assert!(!registered.matches(&change("/w/a.c", ChangeKind::Created)));
        assert_eq!(
            registered.notification(&[change("/w/a.c", ChangeKind::Deleted)]),
            None
        );
    }
}
