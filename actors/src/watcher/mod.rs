//! The Watcher actor: changes on disk under the roots.
//!
//! Owns the `notify` watcher over every directory of every session's roots
//! that git does not ignore (one non-recursive watch each, so ignored trees
//! such as `node_modules/` or `target/` cost no watches), the `.gitignore`
//! matchers, and the changes not yet sent. Its inbox is
//! `messages::watcher`: notify's events, the roots and configuration
//! directories the Supervisor tells it of as sessions come and go, and a
//! flush from each tool call about to be answered. Sends each batch of changes to the Router, which hands it to every
//! running LanguageServer, and tells the Supervisor which `.windlass.toml`
//! changed.
//!
//! Changes are sent 50 ms after the first one arrives, or at once when a
//! tool call flushes them: an agent's next call can come milliseconds after
//! its editor wrote a file, and must not be answered from before the write.
//! A flush is a barrier: it touches a file in a private directory outside
//! the workspace, watched by the same watcher, and answers once that
//! touch's event arrives, so every event the kernel queued before it has
//! been taken in. A watcher that cannot start (inotify limits) is reported
//! in `status`; Windlass works without it.

mod changes;
mod ignores;
mod watches;

use crate::messages::router::RouterMsg;
use crate::messages::supervisor::SupervisorMsg;
use crate::messages::watcher::{WatcherMsg, WatcherStatus};
use crate::vocabulary::file_changes::{ChangeKind, FileChange};
use crate::vocabulary::root_set::RootSet;
use changes::{Pending, classify};
use ignores::Ignores;
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};
use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};
use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use watches::Watches;

/// How long changes gather before they are sent unasked.
const FLUSH_DELAY: Duration = Duration::from_millis(50);
/// The project configuration file's name.
const CONFIG_FILE: &str = ".windlass.toml";
/// How long a flush waits for its barrier event before it answers anyway.
const BARRIER_TIMEOUT: Duration = Duration::from_millis(200);

pub struct Arguments {
    pub roots: RootSet,
    pub router: ActorRef<RouterMsg>,
    pub supervisor: ActorRef<SupervisorMsg>,
    /// Directories whose `.windlass.toml` is a configuration layer.
    pub config_directories: Vec<PathBuf>,
}

/// The watcher and what the first walk found, handed back from the
/// blocking task that set the watches up.
struct Setup {
    /// The roots the walk watched.
    roots: Vec<PathBuf>,
    watches: Watches,
    ignores: Ignores,
    barrier: Option<Barrier>,
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
    /// Flushes waiting for their mark's event, by mark number.
    waiting: VecDeque<(u64, RpcReplyPort<()>)>,
}

impl Barrier {
    fn create(watcher: &mut RecommendedWatcher) -> Option<Self> {
        let parent = std::env::temp_dir().join("windlass-barriers");
        remove_abandoned(&parent);
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
            waiting: VecDeque::new(),
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

    /// The flushes answered by marks up to `number`.
    fn reached(&mut self, number: u64) -> Vec<RpcReplyPort<()>> {
        let due = self
            .waiting
            .iter()
            .take_while(|(waiting, _)| *waiting <= number)
            .count();
        self.waiting.drain(..due).map(|(_, reply)| reply).collect()
    }
}

impl Drop for Barrier {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.directory);
    }
}

/// The actor type; its state lives in [`State`].
pub struct Watcher;

pub struct State {
    router: ActorRef<RouterMsg>,
    supervisor: ActorRef<SupervisorMsg>,
    config_directories: Vec<PathBuf>,
    /// Configuration files changed since the last flush.
    config_changed: BTreeSet<PathBuf>,
    roots: Vec<PathBuf>,
    /// `None` while the first walk holds them, or when watching could not
    /// start.
    watches: Option<Watches>,
    ignores: Ignores,
    pending: Pending,
    flush_scheduled: bool,
    /// Why watching could not start, if it could not.
    failed: Option<String>,
    barrier: Option<Barrier>,
    /// Where the first walk leaves what it set up, until `Ready`.
    walk: Option<tokio::sync::oneshot::Receiver<Setup>>,
}

impl Actor for Watcher {
    type Msg = WatcherMsg;
    type State = State;
    type Arguments = Arguments;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: Arguments,
    ) -> Result<State, ActorProcessingErr> {
        let roots: Vec<PathBuf> = args.roots.roots().iter().map(|r| r.path.clone()).collect();
        let mut state = State {
            router: args.router,
            supervisor: args.supervisor,
            config_directories: args.config_directories.clone(),
            config_changed: BTreeSet::new(),
            roots: roots.clone(),
            watches: None,
            ignores: Ignores::new(roots.clone()),
            pending: Pending::default(),
            flush_scheduled: false,
            failed: None,
            barrier: None,
            walk: None,
        };
        let inbox = myself.clone();
        match notify::recommended_watcher(move |event| {
            let _stopped = inbox.send_message(WatcherMsg::Event(event));
        }) {
            Ok(watcher) => {
                let config_directories = args.config_directories;
                let (walked, walk) = tokio::sync::oneshot::channel();
                state.walk = Some(walk);
                tokio::task::spawn_blocking(move || {
                    let _stopped = walked.send(set_up(watcher, roots, &config_directories));
                    let _stopped = myself.send_message(WatcherMsg::Ready);
                });
            }
            Err(error) => {
                let problem = format!("file watching could not start: {error}");
                tracing::warn!("{problem}");
                state.failed = Some(problem);
            }
        }
        Ok(state)
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            WatcherMsg::Event(event) => state.event(&myself, event),
            WatcherMsg::Ready => {
                if let Some(setup) = state.walk.take().and_then(|mut walk| walk.try_recv().ok()) {
                    state.ready(setup);
                }
            }
            WatcherMsg::Flush(reply) => state.flush_through_barrier(&myself, reply),
            WatcherMsg::FlushDue => {
                state.flush_scheduled = false;
                state.flush();
            }
            WatcherMsg::BarrierOverdue(number) => state.answer_flushes(number),
            WatcherMsg::Roots { added, removed } => state.follow_roots(added, removed),
            WatcherMsg::ConfigDirectories(directories) => state.watch_config(directories),
            WatcherMsg::Status(reply) => {
                let _gone = reply.send(state.status());
            }
        }
        Ok(())
    }
}

impl State {
    fn event(&mut self, myself: &ActorRef<WatcherMsg>, event: notify::Result<notify::Event>) {
        let event = match event {
            Ok(event) => event,
            Err(error) => {
                tracing::warn!("file watching: {error}");
                return;
            }
        };
        let marked = self
            .barrier
            .as_ref()
            .is_some_and(|barrier| event.paths.iter().any(|path| barrier.is_marker(path)));
        if marked {
            return self.mark_arrived();
        }
        for (path, kind) in classify(&event.kind, &event.paths) {
            self.note(path, kind);
        }
        if (!self.pending.is_empty() || !self.config_changed.is_empty()) && !self.flush_scheduled {
            self.flush_scheduled = true;
            myself.send_after(FLUSH_DELAY, || WatcherMsg::FlushDue);
        }
    }

    fn note(&mut self, path: PathBuf, kind: ChangeKind) {
        if self.is_config_file(&path) {
            self.config_changed.insert(path.clone());
        }
        let is_dir = kind != ChangeKind::Deleted && is_real_directory(&path);
        if self.ignores.is_ignored(&path, is_dir) {
            return;
        }
        if path.file_name().is_some_and(|name| name == ".gitignore")
            && let Some(directory) = path.parent()
        {
            self.ignores.load(directory);
        }
        if is_dir {
            if kind == ChangeKind::Created {
                self.watch_new_directory(&path);
            }
            return;
        }
        self.pending.add(path, kind);
    }

    /// A directory appeared: watch it and everything under it, and report
    /// the files already in it, which may have been written before the
    /// watch was in place.
    fn watch_new_directory(&mut self, directory: &Path) {
        let Some(watches) = self.watches.as_mut() else {
            return;
        };
        let pending = &mut self.pending;
        watches.watch_tree(directory, &mut self.ignores, |file| {
            pending.add(file.to_path_buf(), ChangeKind::Created);
        });
    }

    fn ready(&mut self, setup: Setup) {
        let mut watches = setup.watches;
        self.ignores = setup.ignores;
        self.ignores.set_roots(self.roots.clone());
        self.barrier = setup.barrier;
        // Roots changed while the first walk ran: those removed are
        // forgotten, those added walked (directories already watched are
        // skipped).
        for walked in setup.roots.iter().filter(|root| !self.roots.contains(root)) {
            watches.unwatch_tree(walked);
        }
        for root in &self.roots {
            watches.watch_tree(root, &mut self.ignores, |_| {});
        }
        self.watches = Some(watches);
        self.watch_config(self.config_directories.clone());
    }

    /// Watches the configuration directories outside the roots (those
    /// under them are watched with them).
    fn watch_config(&mut self, directories: Vec<PathBuf>) {
        if let Some(watches) = self.watches.as_mut() {
            for directory in &directories {
                if !self.roots.iter().any(|root| directory.starts_with(root)) {
                    watches.watch_one(directory);
                }
            }
        }
        self.config_directories = directories;
    }

    /// Watches the added roots and forgets the removed ones, and whatever
    /// changed under them that was not yet sent.
    fn follow_roots(&mut self, added: Vec<PathBuf>, removed: Vec<PathBuf>) {
        self.roots.retain(|root| !removed.contains(root));
        self.roots.extend(added.iter().cloned());
        self.ignores.set_roots(self.roots.clone());
        self.pending
            .retain(|path| !removed.iter().any(|root| path.starts_with(root)));
        let Some(watches) = self.watches.as_mut() else {
            return;
        };
        for root in &removed {
            watches.unwatch_tree(root);
        }
        for root in &added {
            watches.watch_tree(root, &mut self.ignores, |_| {});
        }
    }

    fn status(&self) -> WatcherStatus {
        WatcherStatus {
            ready: self.watches.is_some() || self.failed.is_some(),
            directories: self.watches.as_ref().map_or(0, Watches::count),
            problem: self.failed.clone().or_else(|| {
                self.watches
                    .as_ref()
                    .and_then(|watches| watches.problem.clone())
            }),
        }
    }

    /// Flushes once every event queued before now has arrived: the event
    /// of a mark made now comes after all of them.
    fn flush_through_barrier(&mut self, myself: &ActorRef<WatcherMsg>, reply: RpcReplyPort<()>) {
        let Some(number) = self.barrier.as_mut().and_then(Barrier::mark) else {
            self.flush();
            let _gone = reply.send(());
            return;
        };
        if let Some(barrier) = self.barrier.as_mut() {
            barrier.waiting.push_back((number, reply));
        }
        myself.send_after(BARRIER_TIMEOUT, move || WatcherMsg::BarrierOverdue(number));
    }

    /// A mark's event arrived: everything queued before that mark is in.
    fn mark_arrived(&mut self) {
        if let Some(barrier) = self.barrier.as_mut() {
            barrier.arrived += 1;
            let arrived = barrier.arrived;
            self.answer_flushes(arrived);
        }
    }

    /// Flushes, and answers the flushes waiting for marks up to `number`.
    fn answer_flushes(&mut self, number: u64) {
        let reached = match self.barrier.as_mut() {
            Some(barrier) => barrier.reached(number),
            None => return,
        };
        if reached.is_empty() {
            return;
        }
        self.flush();
        for reply in reached {
            let _gone = reply.send(());
        }
    }

    fn is_config_file(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|name| name == CONFIG_FILE)
            && path
                .parent()
                .is_some_and(|parent| self.config_directories.iter().any(|dir| dir == parent))
    }

    fn flush(&mut self) {
        for path in std::mem::take(&mut self.config_changed) {
            let _stopped = self
                .supervisor
                .send_message(SupervisorMsg::ConfigChanged(path));
        }
        if self.pending.is_empty() {
            return;
        }
        let changes: Arc<[FileChange]> = self.pending.take().into();
        tracing::debug!(count = changes.len(), "files changed on disk");
        if let Err(error) = self.router.send_message(RouterMsg::FilesChanged(changes)) {
            tracing::warn!("router unreachable: {error}");
        }
    }
}

/// Watches every directory git does not ignore under each root, and the
/// configuration's directories above the roots.
fn set_up(
    mut watcher: RecommendedWatcher,
    roots: Vec<PathBuf>,
    config_directories: &[PathBuf],
) -> Setup {
    let mut ignores = Ignores::new(roots.clone());
    let barrier = Barrier::create(&mut watcher);
    let mut watches = Watches::new(watcher);
    for directory in config_directories {
        if !roots.iter().any(|root| directory.starts_with(root)) {
            watches.watch_one(directory);
        }
    }
    for root in &roots {
        watches.watch_tree(root, &mut ignores, |_| {});
    }
    if let Some(problem) = &watches.problem {
        tracing::warn!("{problem}");
    }
    tracing::debug!(directories = watches.count(), "watching the roots");
    Setup {
        roots,
        watches,
        ignores,
        barrier,
    }
}

/// Removes the barrier directories of processes that are gone: a process
/// killed outright never removes its own.
fn remove_abandoned(parent: &Path) {
    if !cfg!(target_os = "linux") {
        return;
    }
    for entry in std::fs::read_dir(parent).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let pid = name.to_str().and_then(|name| name.split('-').next());
        if pid.is_some_and(|pid| !Path::new("/proc").join(pid).exists()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn is_real_directory(path: &Path) -> bool {
    path.symlink_metadata()
        .is_ok_and(|metadata| metadata.is_dir())
}
