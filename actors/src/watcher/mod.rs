//! The Watcher actor: changes on disk under the roots.
//!
//! Owns the watches over every directory of every session's roots that
//! git does not ignore (one non-recursive watch each, so ignored trees
//! such as `node_modules/` or `target/` cost no watches), the `.gitignore`
//! matchers, and the changes not yet sent. Its inbox is
//! `messages::watcher`: word that events wait to be read, the roots and
//! configuration directories the Supervisor tells it of as sessions come
//! and go, and a flush from each tool call about to be answered. Sends
//! each batch of changes to the Router, which hands it to every running
//! LanguageServer, and to the SymbolIndex, and tells the Supervisor which
//! `.windlass.toml` changed.
//!
//! Changes are sent 50 ms after the first one arrives, or at once when a
//! tool call flushes them: an agent's next call can come milliseconds after
//! its editor wrote a file, and must not be answered from before the write.
//! A flush is a barrier: it marks the moment, and is answered once the
//! events queued before that mark have been read. On Linux the Watcher
//! reads inotify itself (`inotify.rs`), so reading the queue to its end
//! reaches the mark at once; elsewhere notify's thread hands the events
//! over (`portable.rs`) and the mark is a file touched outside the
//! workspace, answered when its event arrives. A watcher that cannot start
//! (inotify limits) is reported in `status`; Windlass works without it.

mod changes;
mod events;
mod ignores;
#[cfg(all(target_os = "linux", not(feature = "portable")))]
mod inotify;
#[cfg(any(not(target_os = "linux"), feature = "portable"))]
mod portable;
mod watches;

#[cfg(all(target_os = "linux", not(feature = "portable")))]
use inotify::Source;
#[cfg(any(not(target_os = "linux"), feature = "portable"))]
use portable::Source;

use crate::listings::Listings;
use crate::messages::router::RouterMsg;
use crate::messages::supervisor::SupervisorMsg;
use crate::messages::symbol_index::SymbolIndexMsg;
use crate::messages::watcher::{WatcherMsg, WatcherStatus};
use crate::vocabulary::file_changes::{ChangeKind, FileChange};
use crate::vocabulary::root_set::RootSet;
use changes::Pending;
use ignores::Ignores;
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
    /// Told of every change too: an indexed file changed is read again.
    pub index: ActorRef<SymbolIndexMsg>,
    pub supervisor: ActorRef<SupervisorMsg>,
    /// Directories whose `.windlass.toml` is a configuration layer.
    pub config_directories: Vec<PathBuf>,
    /// Told of every file that comes, and of which roots are watched whole.
    pub listings: Arc<Listings>,
}

/// The watcher and what the first walk found, handed back from the
/// blocking task that set the watches up.
struct Setup {
    /// The roots the walk watched.
    roots: Vec<PathBuf>,
    watches: Watches,
    ignores: Ignores,
}

/// The actor type; its state lives in [`State`].
pub struct Watcher;

pub struct State {
    router: ActorRef<RouterMsg>,
    index: ActorRef<SymbolIndexMsg>,
    supervisor: ActorRef<SupervisorMsg>,
    listings: Arc<Listings>,
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
    /// Flushes waiting for the read that reaches their mark, by mark.
    waiting: VecDeque<(u64, RpcReplyPort<()>)>,
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
            index: args.index,
            supervisor: args.supervisor,
            listings: args.listings,
            config_directories: args.config_directories.clone(),
            config_changed: BTreeSet::new(),
            roots: roots.clone(),
            watches: None,
            ignores: Ignores::new(roots.clone()),
            pending: Pending::default(),
            flush_scheduled: false,
            failed: None,
            waiting: VecDeque::new(),
            walk: None,
        };
        let inbox = myself.clone();
        if std::env::var_os("WL_NOWATCH").is_some() {
            return Ok(state);
        }
        match Source::open(move || inbox.send_message(WatcherMsg::Readable).is_ok()) {
            Ok(source) => {
                let config_directories = args.config_directories;
                let (walked, walk) = tokio::sync::oneshot::channel();
                state.walk = Some(walk);
                tokio::task::spawn_blocking(move || {
                    let _stopped = walked.send(set_up(source, roots, &config_directories));
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
            WatcherMsg::Readable => state.read_events(&myself),
            WatcherMsg::Ready => {
                if let Some(setup) = state.walk.take().and_then(|mut walk| walk.try_recv().ok()) {
                    state.ready(setup);
                    state.read_events(&myself);
                }
            }
            WatcherMsg::Flush(reply) => state.flush_through_barrier(&myself, reply),
            WatcherMsg::FlushDue => {
                state.flush_scheduled = false;
                state.flush();
            }
            WatcherMsg::BarrierOverdue(number) => state.answer_overdue(number),
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
    /// Takes in the events waiting, answers the flushes whose marks they
    /// reach, and sends the rest of the changes after `FLUSH_DELAY`.
    fn read_events(&mut self, myself: &ActorRef<WatcherMsg>) {
        let Some(watches) = self.watches.as_mut() else {
            return;
        };
        let events = watches.read();
        if events.overflowed {
            tracing::warn!(
                "file watching missed changes: the kernel's event queue overflowed; \
                 files are read again when they are asked about"
            );
            self.listings.missed_changes();
        }
        for (path, kind) in events.changes {
            self.note(path, kind);
        }
        self.answer_flushes(events.reached);
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
        let kind = self.listings.changed(&path, kind, is_dir);
        if path.file_name().is_some_and(|name| name == ".gitignore")
            && let Some(directory) = path.parent()
        {
            self.ignores.load(directory);
        }
        if is_dir {
            if matches!(kind, ChangeKind::Created | ChangeKind::MovedIn) {
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
        self.vouch();
    }

    fn ready(&mut self, setup: Setup) {
        let mut watches = setup.watches;
        self.ignores = setup.ignores;
        self.ignores.set_roots(self.roots.clone());
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
        self.vouch();
    }

    /// Tells the listings which roots have every directory watched: none,
    /// once a directory could not be.
    fn vouch(&self) {
        let whole = self
            .watches
            .as_ref()
            .is_some_and(|watches| watches.problem.is_none());
        for root in &self.roots {
            match whole {
                true => self.listings.watching(root),
                false => self.listings.not_watching(root),
            }
        }
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
        for root in &removed {
            self.listings.not_watching(root);
        }
        let Some(watches) = self.watches.as_mut() else {
            return;
        };
        for root in &removed {
            watches.unwatch_tree(root);
        }
        for root in &added {
            watches.watch_tree(root, &mut self.ignores, |_| {});
        }
        self.vouch();
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

    /// Flushes once every event queued before now has been read: on
    /// Linux at once, elsewhere when the mark made now arrives, or after
    /// `BARRIER_TIMEOUT`.
    fn flush_through_barrier(&mut self, myself: &ActorRef<WatcherMsg>, reply: RpcReplyPort<()>) {
        let Some(number) = self.watches.as_mut().and_then(Watches::mark) else {
            // Events written before the call may still be on their way.
            self.listings.missed_changes();
            self.flush();
            let _gone = reply.send(());
            return;
        };
        self.waiting.push_back((number, reply));
        self.read_events(myself);
        if self
            .waiting
            .back()
            .is_some_and(|(waiting, _)| *waiting == number)
        {
            myself.send_after(BARRIER_TIMEOUT, move || WatcherMsg::BarrierOverdue(number));
        }
    }

    /// Answers the flushes waiting for marks up to `number` whose marks
    /// have not come: the events before them may still be on their way,
    /// so no listing of the files is trusted past this.
    fn answer_overdue(&mut self, number: u64) {
        if self
            .waiting
            .front()
            .is_some_and(|(waiting, _)| *waiting <= number)
        {
            self.listings.missed_changes();
        }
        self.answer_flushes(number);
    }

    /// Flushes, and answers the flushes waiting for marks up to `number`.
    fn answer_flushes(&mut self, number: u64) {
        let due = self
            .waiting
            .iter()
            .take_while(|(waiting, _)| *waiting <= number)
            .count();
        if due == 0 {
            return;
        }
        self.flush();
        for (_, reply) in self.waiting.drain(..due) {
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
        let _stopped = self
            .index
            .send_message(SymbolIndexMsg::FilesChanged(changes.clone()));
        if let Err(error) = self.router.send_message(RouterMsg::FilesChanged(changes)) {
            tracing::warn!("router unreachable: {error}");
        }
    }
}

/// Watches every directory git does not ignore under each root, and the
/// configuration's directories above the roots.
fn set_up(source: Source, roots: Vec<PathBuf>, config_directories: &[PathBuf]) -> Setup {
    let mut ignores = Ignores::new(roots.clone());
    let mut watches = Watches::new(source);
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
    }
}

fn is_real_directory(path: &Path) -> bool {
    path.symlink_metadata()
        .is_ok_and(|metadata| metadata.is_dir())
}
