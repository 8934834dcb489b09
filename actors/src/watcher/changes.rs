//! The changes on disk not yet sent to the servers: which files were
//! created, changed or deleted, coalesced per path.

use crate::vocabulary::file_changes::{ChangeKind, FileChange};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Changes not yet sent, one per path: a later change to a path folds
/// into the earlier one.
#[derive(Debug, Default)]
pub struct Pending {
    changes: BTreeMap<PathBuf, ChangeKind>,
    /// Paths made and removed within this batch (an editor's temporary
    /// file renamed over its target): a late removal of one (notify
    /// reports a rename once more as a pair) says nothing new.
    cancelled: std::collections::BTreeSet<PathBuf>,
}

impl Pending {
    pub fn add(&mut self, path: PathBuf, kind: ChangeKind) {
        use ChangeKind::{Changed, Created, Deleted, MovedIn};
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
            (Some(Deleted), Created | Changed | MovedIn) => Some(Changed),
            // Whatever came before it, a file moved in and then written
            // may be new to the server.
            (Some(MovedIn), Changed) => Some(MovedIn),
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

    #[test]
    fn a_temporary_file_renamed_over_its_target_is_a_change_of_the_target_only() {
        let mut pending = Pending::default();
        let tmp = PathBuf::from("/w/mathutil.py.tmp.41.9f2c");
        pending.add(tmp.clone(), ChangeKind::Created);
        pending.add(tmp.clone(), ChangeKind::Changed);
        pending.add(tmp.clone(), ChangeKind::Deleted);
        pending.add("/w/mathutil.py".into(), ChangeKind::Created);
        // notify's rename pair comes back once more as one event.
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
