//! The files a server asked to be told about: its dynamic registrations
//! of `workspace/didChangeWatchedFiles` (globs, relative patterns, kinds),
//! added by `client/registerCapability` and removed by
//! `client/unregisterCapability`, and which changes on disk match them.

use crate::lsp::uri::uri_to_path;
use crate::messages::language_server::read_each;
use crate::vocabulary::file_changes::{ChangeKind, FileChange};
use globset::{Glob, GlobBuilder, GlobMatcher};
use lsp_types::notification::{DidChangeWatchedFiles, Notification};
use lsp_types::{FileSystemWatcher, GlobPattern, OneOf, Registration, Unregistration, WatchKind};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;

/// Registrations kept per server, against a server that floods them.
const MAX_WATCHERS: usize = 1_000;

/// One glob a server registered.
#[derive(Debug, Clone)]
struct Watcher {
    glob: GlobMatcher,
    /// For a relative pattern, the directory its glob is relative to.
    base: Option<PathBuf>,
    /// What changes it is for; every kind when the server did not say.
    kinds: WatchKind,
}

/// `client/registerCapability` params, each registration before it is read.
#[derive(Deserialize)]
struct Listed {
    registrations: Vec<Value>,
}

/// The registrations of `client/registerCapability` params, each read on
/// its own: one that does not follow LSP leaves the others.
pub fn registrations(params: &Value) -> Vec<Registration> {
    Listed::deserialize(params)
        .map(|listed| read_each::<Registration>(&listed.registrations).0)
        .unwrap_or_default()
}

/// The options of a `didChangeWatchedFiles` registration, each watcher
/// before it is read.
#[derive(Deserialize)]
struct WatcherList {
    watchers: Vec<Value>,
}

/// `client/unregisterCapability` params. The protocol spells their list
/// `unregisterations`, as lsp-types does; servers that correct it are
/// heard too.
#[derive(Deserialize)]
struct Unregistrations {
    #[serde(alias = "unregistrations")]
    unregisterations: Vec<Unregistration>,
}

impl Watcher {
    /// `None` for a glob that does not compile or a base that is no file.
    fn new(watcher: &FileSystemWatcher) -> Option<Self> {
        let (text, base) = match &watcher.glob_pattern {
            GlobPattern::String(text) => (text, None),
            GlobPattern::Relative(relative) => {
                let base = match &relative.base_uri {
                    OneOf::Left(folder) => &folder.uri,
                    OneOf::Right(uri) => uri,
                };
                (&relative.pattern, Some(uri_to_path(base.as_str())?))
            }
        };
        Some(Self {
            glob: compile(text)?,
            base,
            kinds: watcher.kind.unwrap_or_else(WatchKind::all),
        })
    }

    /// Whether the watcher is for `told`, one of the events `change` is
    /// told as.
    fn matches(&self, change: &FileChange, told: WatchKind) -> bool {
        if !self.kinds.contains(told) {
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
    /// Applies `client/registerCapability` params. Registrations and
    /// watchers are read one by one: one that does not follow LSP, or
    /// whose glob does not compile, leaves the others.
    pub fn register(&mut self, params: &Value) {
        for registration in registrations(params) {
            if registration.method != DidChangeWatchedFiles::METHOD {
                continue;
            }
            let options = registration
                .register_options
                .and_then(|options| WatcherList::deserialize(options).ok());
            let (watchers, _) = read_each::<FileSystemWatcher>(
                options
                    .as_ref()
                    .map_or(&[][..], |options| &options.watchers),
            );
            let watchers: Vec<Watcher> = watchers.iter().filter_map(Watcher::new).collect();
            // A second registration under an id adds to the first, as VS
            // Code's client keeps both: pyrefly registers its project's
            // `**/*.py` and then, under the same id, its libraries'.
            if self.len() + watchers.len() <= MAX_WATCHERS {
                self.by_id
                    .entry(registration.id)
                    .or_default()
                    .extend(watchers);
            }
        }
    }

    /// Applies `client/unregisterCapability` params.
    pub fn unregister(&mut self, params: &Value) {
        if let Ok(params) = Unregistrations::deserialize(params) {
            for registration in params.unregisterations {
                self.by_id.remove(&registration.id);
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
        told_as(change.kind)
            .iter()
            .any(|&(told, _)| self.watches(change, told))
    }

    fn watches(&self, change: &FileChange, told: WatchKind) -> bool {
        self.by_id
            .values()
            .flatten()
            .any(|watcher| watcher.matches(change, told))
    }

    /// The `didChangeWatchedFiles` params for the changes that match, or
    /// `None` when none does.
    pub fn notification(&self, changes: &[FileChange]) -> Option<Value> {
        let events: Vec<Value> = changes
            .iter()
            .flat_map(|change| {
                told_as(change.kind)
                    .iter()
                    .filter(|&&(told, _)| self.watches(change, told))
                    .map(|&(_, number)| json!({"uri": change.uri, "type": number}))
            })
            .collect();
        (!events.is_empty()).then(|| json!({"changes": events}))
    }
}

/// LSP globs: `*` and `?` stay within one path segment, `**` spans any.
fn compile(pattern: &str) -> Option<GlobMatcher> {
    let glob: Glob = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()?;
    Some(glob.compile_matcher())
}

/// The events a change is told as: each the kind a watcher asks for and
/// its `FileChangeType` number. A file moved in is told as created and
/// changed.
fn told_as(kind: ChangeKind) -> &'static [(WatchKind, u64)] {
    match kind {
        ChangeKind::Created => &[(WatchKind::Create, 1)],
        ChangeKind::Changed => &[(WatchKind::Change, 2)],
        ChangeKind::Deleted => &[(WatchKind::Delete, 3)],
        ChangeKind::MovedIn => &[(WatchKind::Create, 1), (WatchKind::Change, 2)],
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
            {"id": "a", "method": DidChangeWatchedFiles::METHOD, "registerOptions": {"watchers": watchers}},
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
    fn a_watcher_that_does_not_follow_lsp_leaves_the_others() {
        let registered = registrations(json!([
            {"globPattern": 7},
            {"globPattern": {"baseUri": {"uri": "file:///w/lib"}, "pattern": "*.c"}},
            {"globPattern": "[unclosed"},
            {"globPattern": "**/*.c"},
        ]));
        assert_eq!(registered.len(), 1);
        assert!(registered.matches(&change("/w/a.c", ChangeKind::Changed)));
    }

    #[test]
    fn a_second_registration_under_one_id_keeps_the_first() {
        let mut registered = registrations(json!([
            {"globPattern": {"baseUri": "file:///w/", "pattern": "**/*.py"}},
        ]));
        registered.register(&json!({"registrations": [
            {"id": "a", "method": DidChangeWatchedFiles::METHOD, "registerOptions": {"watchers": [
                {"globPattern": {"baseUri": "file:///lib/site-packages/", "pattern": "**/*.py"}},
            ]}},
        ]}));
        assert!(registered.matches(&change("/w/pkg/util.py", ChangeKind::Changed)));
        assert!(registered.matches(&change("/lib/site-packages/x.py", ChangeKind::Changed)));
        registered.unregister(
            &json!({"unregisterations": [{"id": "a", "method": DidChangeWatchedFiles::METHOD}]}),
        );
        assert!(!registered.any());
    }

    #[test]
    fn unregistration_spelled_as_in_english_removes_too() {
        let mut registered = registrations(json!([{"globPattern": "**/*.c"}]));
        registered.unregister(
            &json!({"unregistrations": [{"id": "a", "method": DidChangeWatchedFiles::METHOD}]}),
        );
        assert!(!registered.any());
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
        registered.unregister(
            &json!({"unregisterations": [{"id": "a", "method": DidChangeWatchedFiles::METHOD}]}),
        );
        assert!(!registered.matches(&change("/w/a.c", ChangeKind::Created)));
        assert_eq!(
            registered.notification(&[change("/w/a.c", ChangeKind::Deleted)]),
            None
        );
    }
}
