//! The kernel's inotify, read by the Watcher itself: the inotify
//! descriptor, which watch descriptor is which directory, and a thread
//! that tells the Watcher when events arrive.
//!
//! The kernel queues an event before the system call that caused it
//! returns, so whatever an agent's editor wrote before a tool call is in
//! the queue when the call arrives, and reading the queue to its end is
//! the whole barrier a flush needs: no marker file, no other thread.
//! Opening and reading files is not watched, so servers and Windlass
//! reading the project wake nobody.

use super::events::{Events, WatchError};
use crate::vocabulary::file_changes::ChangeKind;
use rustix::buffer::spare_capacity;
use rustix::event::epoll::{self, EventData, EventFlags};
use rustix::event::{EventfdFlags, eventfd};
use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What a watched directory reports: entries made, removed, renamed or
/// written, and the directory itself going away.
const EVENTS: WatchFlags = WatchFlags::CREATE
    .union(WatchFlags::DELETE)
    .union(WatchFlags::MODIFY)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::DELETE_SELF)
    .union(WatchFlags::MOVE_SELF)
    .union(WatchFlags::ONLYDIR)
    .union(WatchFlags::DONT_FOLLOW);

/// Bytes read at a time: room for hundreds of events with long names.
const BUFFER_BYTES: usize = 64 * 1024;
/// The waiting thread's stack: it only waits and sends a message.
const THREAD_STACK_BYTES: usize = 128 * 1024;
/// What woke the waiting thread.
const ARRIVED: u64 = 0;
const STOPPED: u64 = 1;

pub struct Source {
    fd: OwnedFd,
    directories: HashMap<i32, PathBuf>,
    descriptors: HashMap<PathBuf, i32>,
    buffer: Box<[MaybeUninit<u8>]>,
    /// Flush marks made: a read after a mark has taken in everything
    /// queued before it.
    marks: u64,
    /// Written when the source goes, to end the waiting thread.
    stop: OwnedFd,
}

impl Source {
    /// Opens an inotify descriptor; `readable` is called whenever events
    /// arrive, and returns `false` once nobody listens.
    pub fn open(readable: impl Fn() -> bool + Send + 'static) -> std::io::Result<Self> {
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK)?;
        let stop = eventfd(0, EventfdFlags::CLOEXEC)?;
        let waiting = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        // Edge-triggered: one wake-up per arrival, however long the
        // Watcher takes to read.
        let arrivals = EventFlags::IN | EventFlags::ET;
        epoll::add(&waiting, &fd, EventData::new_u64(ARRIVED), arrivals)?;
        epoll::add(&waiting, &stop, EventData::new_u64(STOPPED), EventFlags::IN)?;
        // The thread keeps the stop descriptor open: closing the last one
        // would take a stop written just before out of its wait.
        let stopped = stop.try_clone()?;
        std::thread::Builder::new()
            .name("inotify".into())
            .stack_size(THREAD_STACK_BYTES)
            .spawn(move || {
                if let Err(error) = tell_when_readable(&waiting, &readable) {
                    tracing::warn!("file watching: waiting for inotify failed: {error}");
                }
                drop(stopped);
            })?;
        Ok(Self {
            fd,
            directories: HashMap::new(),
            descriptors: HashMap::new(),
            buffer: vec![MaybeUninit::uninit(); BUFFER_BYTES].into_boxed_slice(),
            marks: 0,
            stop,
        })
    }

    pub fn add(&mut self, directory: &Path) -> Result<(), WatchError> {
        match inotify::add_watch(&self.fd, directory, EVENTS) {
            Ok(descriptor) => {
                // A directory renamed and watched again under its new
                // name keeps its descriptor.
                if let Some(old) = self.directories.insert(descriptor, directory.to_path_buf()) {
                    self.descriptors.remove(&old);
                }
                self.descriptors.insert(directory.to_path_buf(), descriptor);
                Ok(())
            }
            Err(Errno::NOSPC) => Err(WatchError::Limit),
            Err(Errno::NOENT | Errno::NOTDIR) => Err(WatchError::Vanished),
            Err(error) => Err(WatchError::Failed(std::io::Error::from(error).to_string())),
        }
    }

    pub fn remove(&mut self, directory: &Path) {
        if let Some(descriptor) = self.descriptors.remove(directory) {
            self.directories.remove(&descriptor);
            let _gone = inotify::remove_watch(&self.fd, descriptor);
        }
    }

    /// Marks this moment; the next read reaches it.
    pub fn mark(&mut self) -> Option<u64> {
        self.marks += 1;
        Some(self.marks)
    }

    /// Every event queued until now.
    pub fn read(&mut self) -> Events {
        let mut events = Events {
            reached: self.marks,
            ..Events::default()
        };
        let mut reader = inotify::Reader::new(&self.fd, &mut self.buffer);
        loop {
            match reader.next() {
                Ok(event) => take(&self.fd, &mut self.directories, &event, &mut events),
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => break,
                Err(error) => {
                    tracing::warn!("file watching: reading inotify failed: {error}");
                    break;
                }
            }
        }
        for directory in &events.gone {
            self.descriptors.remove(directory);
        }
        events
    }
}

impl Drop for Source {
    fn drop(&mut self) {
        let _ended = rustix::io::write(&self.stop, &1u64.to_ne_bytes());
    }
}

/// Calls `readable` each time events arrive, until the source is dropped
/// or `readable` says nobody listens.
fn tell_when_readable(waiting: &OwnedFd, readable: &impl Fn() -> bool) -> rustix::io::Result<()> {
    let mut woken = Vec::with_capacity(2);
    loop {
        woken.clear();
        match epoll::wait(waiting, spare_capacity(&mut woken), None) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(error) => return Err(error),
        }
        let stopped = woken.iter().any(|event| {
            let data = event.data;
            data.u64() == STOPPED
        });
        if stopped || (!woken.is_empty() && !readable()) {
            return Ok(());
        }
    }
}

/// Adds one event to `events`: a change of an entry, or a watched
/// directory gone (deleted, renamed, or its watch dropped).
fn take(
    fd: &OwnedFd,
    directories: &mut HashMap<i32, PathBuf>,
    event: &inotify::Event,
    events: &mut Events,
) {
    let flags = event.events();
    if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
        events.overflowed = true;
        return;
    }
    let Some(directory) = directories.get(&event.wd()) else {
        return;
    };
    if flags.intersects(ReadFlags::IGNORED | ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF) {
        if flags.contains(ReadFlags::MOVE_SELF) {
            // Renamed: its own watch would go on reporting under the old
            // name, wherever it went. Under the roots, its new name is
            // watched afresh when its parent reports it.
            events
                .changes
                .push((directory.clone(), ChangeKind::Deleted));
            let _gone = inotify::remove_watch(fd, event.wd());
        }
        if let Some(directory) = directories.remove(&event.wd()) {
            events.gone.push(directory);
        }
        return;
    }
    let Some(name) = event.file_name() else {
        return;
    };
    let kind = if flags.contains(ReadFlags::CREATE) {
        ChangeKind::Created
    } else if flags.contains(ReadFlags::MOVED_TO) {
        ChangeKind::MovedIn
    } else if flags.intersects(ReadFlags::DELETE | ReadFlags::MOVED_FROM) {
        ChangeKind::Deleted
    } else if flags.contains(ReadFlags::MODIFY) {
        ChangeKind::Changed
    } else {
        return;
    };
    let path = directory.join(OsStr::from_bytes(name.to_bytes()));
    events.changes.push((path, kind));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watched(dir: &Path) -> Source {
        let mut source = Source::open(|| true).unwrap();
        source.add(dir).unwrap();
        source
    }

    fn named(events: &Events, dir: &Path) -> Vec<(String, ChangeKind)> {
        events
            .changes
            .iter()
            .map(|(path, kind)| {
                let name = path.strip_prefix(dir).unwrap_or(path);
                (name.display().to_string(), *kind)
            })
            .collect()
    }

    #[test]
    fn a_read_right_after_the_write_has_its_event() {
        let dir = tempfile::tempdir().unwrap();
        let mut source = watched(dir.path());
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        std::fs::rename(dir.path().join("a.py"), dir.path().join("b.py")).unwrap();
        std::fs::remove_file(dir.path().join("b.py")).unwrap();
        let mark = source.mark().unwrap();
        let events = source.read();
        assert_eq!(events.reached, mark);
        assert_eq!(
            named(&events, dir.path()),
            vec![
                ("a.py".to_owned(), ChangeKind::Created),
                ("a.py".to_owned(), ChangeKind::Changed),
                ("a.py".to_owned(), ChangeKind::Deleted),
                ("b.py".to_owned(), ChangeKind::MovedIn),
                ("b.py".to_owned(), ChangeKind::Deleted),
            ]
        );
        assert!(source.read().changes.is_empty());
    }

    #[test]
    fn reading_a_file_is_no_event() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        let mut source = watched(dir.path());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.py")).unwrap(),
            "x = 1\n"
        );
        assert!(source.read().changes.is_empty());
    }

    #[test]
    fn a_removed_directory_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let mut source = watched(dir.path());
        source.add(&sub).unwrap();
        std::fs::remove_dir(&sub).unwrap();
        let events = source.read();
        assert_eq!(events.gone, vec![sub.clone()]);
        assert_eq!(
            named(&events, dir.path()),
            vec![("sub".to_owned(), ChangeKind::Deleted)]
        );
        assert_eq!(source.add(&sub), Err(WatchError::Vanished));
    }

    #[test]
    fn a_renamed_directory_is_gone_under_its_old_name() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old");
        std::fs::create_dir(&old).unwrap();
        let mut source = watched(dir.path());
        source.add(&old).unwrap();
        std::fs::rename(&old, dir.path().join("new")).unwrap();
        let events = source.read();
        assert_eq!(events.gone, vec![old.clone()]);
        std::fs::write(dir.path().join("new/a.py"), "x = 1\n").unwrap();
        assert!(
            source.read().changes.is_empty(),
            "no watch reports under the old name"
        );
        source.add(&dir.path().join("new")).unwrap();
        std::fs::write(dir.path().join("new/b.py"), "x = 1\n").unwrap();
        assert_eq!(
            named(&source.read(), dir.path()),
            vec![
                ("new/b.py".to_owned(), ChangeKind::Created),
                ("new/b.py".to_owned(), ChangeKind::Changed),
            ]
        );
    }

    #[test]
    fn events_wake_the_reader() {
        let dir = tempfile::tempdir().unwrap();
        let (woken, wakes) = std::sync::mpsc::channel();
        let mut source = Source::open(move || woken.send(()).is_ok()).unwrap();
        source.add(dir.path()).unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        assert_eq!(
            wakes.recv_timeout(std::time::Duration::from_secs(5)),
            Ok(())
        );
        assert!(!source.read().changes.is_empty());
    }
}
