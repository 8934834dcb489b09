//! What a filesystem event means for language servers: which files were
//! created, changed or deleted, coalesced per path until they are sent.

use crate::vocabulary::file_changes::{ChangeKind, FileChange};
use notify::event::{EventKind, ModifyKind, RenameMode};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// How an event reads, path by path; `None` for events that change no
/// content (reads, metadata).
pub fn classify(kind: &EventKind, paths: &[PathBuf]) -> Vec<(PathBuf, ChangeKind)> {
    let all = |kind: ChangeKind| paths.iter().map(|path| (path.clone(), kind)).collect();
    match kind {
        EventKind::Create(_) => all(ChangeKind::Created),
        EventKind::Remove(_) => all(ChangeKind::Deleted),
        EventKind::Modify(ModifyKind::Name(RenameMode::From)) => all(ChangeKind::Deleted),
        EventKind::Modify(ModifyKind::Name(RenameMode::To)) => all(ChangeKind::Created),
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => match paths {
            [from, to, ..] => vec![
                (from.clone(), ChangeKind::Deleted),
                (to.clone(), ChangeKind::Created),
            ],
            _ => Vec::new(),
        },
        // A rename whose direction is unknown: what is there now decides.
        EventKind::Modify(ModifyKind::Name(_)) => paths
            .iter()
            .map(|path| match path.exists() {
                true => (path.clone(), ChangeKind::Created),
                false => (path.clone(), ChangeKind::Deleted),
            })
            .collect(),
        EventKind::Modify(ModifyKind::Metadata(_)) | EventKind::Access(_) => Vec::new(),
        EventKind::Modify(_) | EventKind::Any | EventKind::Other => all(ChangeKind::Changed),
    }
}

/// Changes not yet sent, one per path: a later change to a path folds
/// into the earlier one.
#[derive(Debug, Default)]
pub struct Pending {
    changes: BTreeMap<PathBuf, ChangeKind>,
    /// Paths made and removed within this batch (an editor's temporary
    /// file renamed over its target): a late `Name(Both)` removal of one
    /// says nothing new.
    cancelled: std::collections::BTreeSet<PathBuf>,
}

impl Pending {
    pub fn add(&mut self, path: PathBuf, kind: ChangeKind) {
        use ChangeKind::{Changed, Created, Deleted};
        if kind == Deleted && !self.changes.contains_key(&path) && self.cancelled.contains(&path) {
            return;
        }
        if matches!(self.changes.get(&path), Some(Created)) && kind == Deleted {
            self.cancelled.insert(path.clone());
        }
        let merged = match (self.changes.get(&path), kind) {
            (None, kind) => Some(kind),
            // Made and removed before anyone heard of it.
            (Some(Created), Deleted) => None,
            (Some(Created), _) => Some(Created),
            (Some(Deleted), Created | Changed) => Some(Changed),
            (Some(_), kind) => Some(kind),
        };
        match merged {
            Some(kind) => self.changes.insert(path, kind),
            None => self.changes.remove(&path),
        };
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Keeps only the changes whose path `keep` accepts.
    pub fn retain(&mut self, keep: impl Fn(&std::path::Path) -> bool) {
        self.changes.retain(|path, _| keep(path));
    }

    pub fn take(&mut self) -> Vec<FileChange> {
        self.cancelled.clear();
        std::mem::take(&mut self.changes)
            .into_iter()
            .map(|(path, kind)| FileChange::new(path, kind))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{AccessKind, CreateKind, DataChange, MetadataKind, RemoveKind};

    fn paths(names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn events_read_as_created_changed_or_deleted() {
        let one = paths(&["/w/a.py"]);
        let cases = [
            (
                EventKind::Create(CreateKind::File),
                vec![ChangeKind::Created],
            ),
            (
                EventKind::Modify(ModifyKind::Data(DataChange::Content)),
                vec![ChangeKind::Changed],
            ),
            (
                EventKind::Remove(RemoveKind::File),
                vec![ChangeKind::Deleted],
            ),
            (
                EventKind::Modify(ModifyKind::Metadata(MetadataKind::Any)),
                vec![],
            ),
            (EventKind::Access(AccessKind::Any), vec![]),
        ];
        for (kind, expected) in cases {
            let found: Vec<ChangeKind> =
                classify(&kind, &one).into_iter().map(|(_, k)| k).collect();
            assert_eq!(found, expected, "{kind:?}");
        }
        let both = classify(
            &EventKind::Modify(ModifyKind::Name(RenameMode::Both)),
            &paths(&["/w/.a.py.swp", "/w/a.py"]),
        );
        assert_eq!(
            both,
            vec![
                (PathBuf::from("/w/.a.py.swp"), ChangeKind::Deleted),
                (PathBuf::from("/w/a.py"), ChangeKind::Created)
            ]
        );
    }

    #[test]
    fn a_temporary_file_renamed_over_its_target_is_a_change_of_the_target_only() {
        let mut pending = Pending::default();
        let tmp = PathBuf::from("/w/mathutil.py.tmp.41.9f2c");
        pending.add(tmp.clone(), ChangeKind::Created);
        pending.add(tmp.clone(), ChangeKind::Changed);
        pending.add(tmp.clone(), ChangeKind::Deleted);
        pending.add("/w/mathutil.py".into(), ChangeKind::Created);
        // inotify's rename pair comes back once more as one event.
        pending.add(tmp, ChangeKind::Deleted);
        let taken: Vec<(String, ChangeKind)> = pending
            .take()
            .into_iter()
            .map(|change| (change.path.display().to_string(), change.kind))
            .collect();
        assert_eq!(
            taken,
            vec![("/w/mathutil.py".to_owned(), ChangeKind::Created)]
        );
    }

    #[test]
    fn pending_changes_fold_per_path() {
        let mut pending = Pending::default();
        pending.add("/w/new.py".into(), ChangeKind::Created);
        pending.add("/w/new.py".into(), ChangeKind::Changed);
        pending.add("/w/tmp".into(), ChangeKind::Created);
        pending.add("/w/tmp".into(), ChangeKind::Deleted);
        pending.add("/w/re.py".into(), ChangeKind::Deleted);
        pending.add("/w/re.py".into(), ChangeKind::Created);
        pending.add("/w/gone.py".into(), ChangeKind::Changed);
        pending.add("/w/gone.py".into(), ChangeKind::Deleted);
        let taken: Vec<(String, ChangeKind)> = pending
            .take()
            .into_iter()
            .map(|change| (change.path.display().to_string(), change.kind))
            .collect();
        assert_eq!(
            taken,
            vec![
                ("/w/gone.py".to_owned(), ChangeKind::Deleted),
                ("/w/new.py".to_owned(), ChangeKind::Created),
                ("/w/re.py".to_owned(), ChangeKind::Changed),
            ]
        );
        assert!(pending.is_empty());
    }
}
