//! notify's watcher, where the Watcher cannot read inotify itself:
//! events arrive on notify's thread, which queues them and tells the
//! Watcher. A flush is a barrier: it touches a file in a private
//! directory outside the workspace, watched by the same watcher, and is
//! answered once that touch's event is read, so every event queued
//! before it has been taken in.

use super::events::{Events, WatchError};
use crate::vocabulary::file_changes::ChangeKind;
use notify::event::{EventKind, ModifyKind, RenameMode};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

type Queue = Arc<Mutex<Vec<notify::Result<notify::Event>>>>;

pub struct Source {
    watcher: RecommendedWatcher,
    queued: Queue,
    barrier: Option<Barrier>,
}

impl Source {
    /// Starts notify's watcher; `readable` is called whenever events
    /// arrive.
    pub fn open(readable: impl Fn() -> bool + Send + 'static) -> std::io::Result<Self> {
        let queued = Queue::default();
        let queue = queued.clone();
        let mut watcher = notify::recommended_watcher(move |event| {
            queue
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(event);
            let _listening = readable();
        })
        .map_err(std::io::Error::other)?;
        let barrier = Barrier::create(&mut watcher);
        Ok(Self {
            watcher,
            queued,
            barrier,
        })
    }

    pub fn add(&mut self, directory: &Path) -> Result<(), WatchError> {
        match self.watcher.watch(directory, RecursiveMode::NonRecursive) {
            Ok(()) => Ok(()),
            Err(error) => Err(match error.kind {
                notify::ErrorKind::MaxFilesWatch => WatchError::Limit,
                notify::ErrorKind::PathNotFound => WatchError::Vanished,
                _ => WatchError::Failed(error.to_string()),
            }),
        }
    }

    pub fn remove(&mut self, directory: &Path) {
        let _gone = self.watcher.unwatch(directory);
    }

    /// Touches the next marker: its number, or `None` without a barrier.
    pub fn mark(&mut self) -> Option<u64> {
        self.barrier.as_mut().and_then(Barrier::mark)
    }

    /// Every event notify has handed over until now.
    pub fn read(&mut self) -> Events {
        let queued =
            std::mem::take(&mut *self.queued.lock().unwrap_or_else(PoisonError::into_inner));
        let mut events = Events::default();
        for event in queued {
            let event = match event {
                Ok(event) => event,
                Err(error) => {
                    tracing::warn!("file watching: {error}");
                    continue;
                }
            };
            if let Some(barrier) = self.barrier.as_mut()
                && event.paths.iter().any(|path| barrier.is_marker(path))
            {
                barrier.arrived += 1;
                continue;
            }
            events.changes.extend(classify(&event.kind, &event.paths));
        }
        events.reached = self.barrier.as_ref().map_or(0, |barrier| barrier.arrived);
        events
    }
}

/// How an event reads, path by path; `None` for events that change no
/// content (reads, metadata).
fn classify(kind: &EventKind, paths: &[PathBuf]) -> Vec<(PathBuf, ChangeKind)> {
    let all = |kind: ChangeKind| paths.iter().map(|path| (path.clone(), kind)).collect();
    match kind {
        EventKind::Create(_) => all(ChangeKind::Created),
        EventKind::Remove(_) => all(ChangeKind::Deleted),
        EventKind::Modify(ModifyKind::Name(RenameMode::From)) => all(ChangeKind::Deleted),
        EventKind::Modify(ModifyKind::Name(RenameMode::To)) => all(ChangeKind::MovedIn),
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => match paths {
            [from, to, ..] => vec![
                (from.clone(), ChangeKind::Deleted),
                (to.clone(), ChangeKind::MovedIn),
            ],
            _ => Vec::new(),
        },
        // A rename whose direction is unknown: what is there now decides.
        EventKind::Modify(ModifyKind::Name(_)) => paths
            .iter()
            .map(|path| match path.exists() {
                true => (path.clone(), ChangeKind::MovedIn),
                false => (path.clone(), ChangeKind::Deleted),
            })
            .collect(),
        EventKind::Modify(ModifyKind::Metadata(_)) | EventKind::Access(_) => Vec::new(),
        EventKind::Modify(_) | EventKind::Any | EventKind::Other => all(ChangeKind::Changed),
    }
}

/// Two files in a private directory whose events mark how far the
/// watcher has read. Each flush touches one of them, in turn: two
/// consecutive marks are never the same event, so the kernel never merges
/// them, and the n-th mark event to arrive answers the n-th flush.
struct Barrier {
    directory: PathBuf,
    markers: [std::fs::File; 2],
    /// Marks made, and mark events arrived.
    made: u64,
    arrived: u64,
}

impl Barrier {
    fn create(watcher: &mut RecommendedWatcher) -> Option<Self> {
        let parent = std::env::temp_dir().join("windlass-barriers");
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.subsec_nanos());
        let directory = parent.join(format!("{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&directory).ok()?;
        let marker = |name: &str| std::fs::File::create(directory.join(name)).ok();
        let (Some(first), Some(second)) = (marker("a"), marker("b")) else {
            let _ = std::fs::remove_dir_all(&directory);
            return None;
        };
        if let Err(error) = watcher.watch(&directory, RecursiveMode::NonRecursive) {
            tracing::debug!("no flush barrier: {error}");
            let _ = std::fs::remove_dir_all(&directory);
            return None;
        }
        Some(Self {
            directory,
            markers: [first, second],
            made: 0,
            arrived: 0,
        })
    }

    /// Touches the next marker; its number, or `None` if it failed.
    fn mark(&mut self) -> Option<u64> {
        let marker = &self.markers[usize::from(self.made % 2 == 1)];
        marker.set_modified(std::time::SystemTime::now()).ok()?;
        self.made += 1;
        Some(self.made)
    }

    fn is_marker(&self, path: &Path) -> bool {
        path.parent() == Some(self.directory.as_path())
    }
}

impl Drop for Barrier {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.directory);
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
                (PathBuf::from("/w/a.py"), ChangeKind::MovedIn)
            ]
        );
    }
}
