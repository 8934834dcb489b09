//! The SymbolIndex actor: the names of every indexed file, kept across
//! daemon restarts, so that a name is found before a cold server has
//! loaded its workspace.
//!
//! Owns the connection to `index.db` (`store::index`), the files changed
//! on disk since they were read, the files background passes have taken
//! to read, and the roots whose files this process has compared with
//! what the index holds. Its inbox is `messages::symbol_index`: outlines
//! from Gateways (every outline an agent's question fetched, and those of
//! the background pass, `gateway/indexing.rs`), the Watcher's changes,
//! look-ups from `search` and from names asked alone, `codebase_map`'s
//! questions for files' top-level symbols, the pass's
//! questions, and `status`'s. It writes to no other actor.
//!
//! Nothing it answers is stale: a symbol is given only from a file whose
//! stamp (modification time and size) is the one it had when read, and a
//! file changed since is named instead, for the asker to read again.
//!
//! SQLite's calls block: each runs on tokio's blocking pool, the
//! connection handed there and back, so that none stalls the runtime
//! thread a standalone process runs its whole tree on.

use crate::language::language_id;
use crate::messages::symbol_index::{IndexAnswer, SymbolIndexMsg};
use crate::store::index::{self, IndexedSymbol, Outline, OutlineSymbol, Stamp};
use crate::store::now_ms;
use crate::tsconfig;
use crate::vocabulary::file_changes::{ChangeKind, FileChange};
use crate::vocabulary::status::{IndexStatus, IndexedServer};
use ractor::{Actor, ActorProcessingErr, ActorRef};
use rusqlite::Connection;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Symbols a look-up reads from the index per root; `search` shows a
/// page of them and counts the rest.
const LOOKUP_LIMIT: usize = 2_000;

/// How long a file a pass took stays its to read: a pass that ended
/// without reading or giving it back must not keep it from the next.
const TAKEN_FOR: Duration = Duration::from_secs(600);

/// The actor type; its state lives in [`State`].
pub struct SymbolIndex;

pub struct Arguments {
    /// Where the index lives: `index.db` in the state directory, if
    /// there is one.
    pub path: Option<PathBuf>,
}

pub struct State {
    db: Option<Connection>,
    /// Why there is no index, when there is none.
    problem: Option<String>,
    /// Files changed on disk since they were read, or new.
    changed: HashSet<PathBuf>,
    /// Files a pass is reading, since when.
    taken: HashMap<PathBuf, Instant>,
    /// Changed files whose server could not outline them, not offered to
    /// a pass again until they change.
    unreadable: HashSet<PathBuf>,
    /// Roots whose files this process has compared with the index.
    checked: Vec<PathBuf>,
    /// Passes done, by server and root, not yet kept as the root's: other
    /// passes still have files there taken.
    passes: Vec<(String, PathBuf)>,
}

impl Actor for SymbolIndex {
    type Msg = SymbolIndexMsg;
    type State = State;
    type Arguments = Arguments;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: Arguments,
    ) -> Result<State, ActorProcessingErr> {
        let opened = match args.path {
            Some(path) => tokio::task::spawn_blocking(move || open(&path)).await,
            None => Ok(Err("there is no state directory to keep it in".to_owned())),
        };
        let (db, problem) = match opened {
            Ok(Ok(db)) => (Some(db), None),
            Ok(Err(problem)) => (None, Some(problem)),
            Err(_) => (None, Some("opening the symbol index failed".to_owned())),
        };
        if let Some(problem) = &problem {
            tracing::warn!("no symbol index: {problem}");
        }
        Ok(State {
            db,
            problem,
            changed: HashSet::new(),
            taken: HashMap::new(),
            unreadable: HashSet::new(),
            checked: Vec::new(),
            passes: Vec::new(),
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            SymbolIndexMsg::Record(outline) => {
                state.record(*outline).await;
                state.keep_passes().await;
            }
            SymbolIndexMsg::FilesChanged(changes) => state.files_changed(changes).await,
            SymbolIndexMsg::Lookup {
                query,
                roots,
                reply,
            } => {
                let answer = state.lookup(query, roots).await;
                let _gone = reply.send(answer);
            }
            SymbolIndexMsg::TopLevel { files, reply } => {
                let _gone = reply.send(state.top_level(files).await);
            }
            SymbolIndexMsg::ToRead { root, files, reply } => {
                let to_read = state.files_to_read(root, files).await;
                let _gone = reply.send(to_read);
            }
            SymbolIndexMsg::TakeChanged { root, reply } => {
                let changed: Vec<PathBuf> = state
                    .changed
                    .iter()
                    .filter(|path| path.starts_with(&root) && !state.unreadable.contains(*path))
                    .cloned()
                    .collect();
                let _gone = reply.send(state.take(changed));
            }
            SymbolIndexMsg::GiveBack(paths) => {
                for path in paths {
                    state.taken.remove(&path);
                    state.changed.remove(&path);
                }
                state.keep_passes().await;
            }
            SymbolIndexMsg::PutBack(paths) => {
                for path in paths {
                    state.taken.remove(&path);
                }
                state.keep_passes().await;
            }
            SymbolIndexMsg::Unreadable(paths) => {
                for path in paths {
                    state.taken.remove(&path);
                    state.unreadable.insert(path);
                }
                state.keep_passes().await;
            }
            SymbolIndexMsg::Summary { roots, reply } => {
                let _gone = reply.send(state.summary(roots).await);
            }
            SymbolIndexMsg::PassDone { server, root } => {
                if !state.passes.contains(&(server.clone(), root.clone())) {
                    state.passes.push((server, root));
                }
                state.keep_passes().await;
            }
        }
        Ok(())
    }
}

/// Whether a file is TypeScript or JavaScript, which a project's
/// configuration decides the fate of.
fn is_script(path: &Path) -> bool {
    matches!(
        language_id(path),
        Some("typescript" | "typescriptreact" | "javascript" | "javascriptreact")
    )
}

/// Opens the index, setting a damaged one aside for a new one.
fn open(path: &Path) -> Result<Connection, String> {
    match index::open(path) {
        Ok(db) => Ok(db),
        Err(error) if crate::store::is_damaged(&error) => {
            let aside = crate::store::set_aside(path).map_err(|error| error.to_string())?;
            tracing::warn!(
                "the symbol index was damaged; set aside as {}",
                aside.display()
            );
            index::open(path).map_err(|error| error.to_string())
        }
        Err(error) => Err(format!("{}: {error}", path.display())),
    }
}

impl State {
    /// Runs `work` on the connection in tokio's blocking pool; `None`
    /// when there is no index or the work failed (logged).
    async fn with_db<T: Send + 'static>(
        &mut self,
        work: impl FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Option<T> {
        let mut db = self.db.take()?;
        let joined = tokio::task::spawn_blocking(move || {
            let result = work(&mut db);
            (db, result)
        })
        .await;
        let Ok((db, result)) = joined else {
            self.problem = Some("the symbol index's connection was lost".into());
            return None;
        };
        self.db = Some(db);
        result
            .inspect_err(|error| tracing::warn!("symbol index: {error}"))
            .ok()
    }

    async fn record(&mut self, outline: Outline) {
        self.taken.remove(&outline.path);
        self.changed.remove(&outline.path);
        self.unreadable.remove(&outline.path);
        let at = now_ms();
        self.with_db(move |db| index::record(db, &outline, at))
            .await;
    }

    /// A deleted file is forgotten at once; any other change makes the
    /// file one to read again.
    async fn files_changed(&mut self, changes: Arc<[FileChange]>) {
        let configurations: Vec<PathBuf> = changes
            .iter()
            .filter(|change| tsconfig::is_configuration(&change.path))
            .map(|change| change.path.clone())
            .collect();
        let mut deleted = Vec::new();
        for change in changes.iter() {
            self.unreadable.remove(&change.path);
            if change.kind == ChangeKind::Deleted {
                self.changed.remove(&change.path);
                deleted.push(change.path.clone());
            }
        }
        // An extensionless file's language is read from its `#!` line.
        let sources = tokio::task::spawn_blocking(move || {
            changes
                .iter()
                .filter(|change| change.kind != ChangeKind::Deleted)
                .filter(|change| language_id(&change.path).is_some())
                .map(|change| change.path.clone())
                .collect::<Vec<PathBuf>>()
        })
        .await
        .unwrap_or_default();
        self.changed.extend(sources);
        if !deleted.is_empty() {
            self.with_db(move |db| index::forget(db, &deleted)).await;
        }
        for configuration in configurations {
            self.projects_changed(&configuration).await;
        }
    }

    /// A TypeScript project's configuration changed: the scripts under it
    /// indexed with no names (outside every project when read) are read
    /// again, since it may hold them now.
    async fn projects_changed(&mut self, configuration: &Path) {
        let Some(directory) = configuration.parent().map(Path::to_path_buf) else {
            return;
        };
        // Off the actor's thread: a file's language may be read from it.
        let nameless = self
            .with_db(move |db| {
                let mut nameless = index::nameless_under(db, &directory)?;
                nameless.retain(|path| is_script(path));
                Ok(nameless)
            })
            .await
            .unwrap_or_default();
        self.changed.extend(nameless);
    }

    async fn lookup(&mut self, query: String, roots: Vec<PathBuf>) -> IndexAnswer {
        if let Some(problem) = &self.problem {
            return IndexAnswer {
                problem: Some(problem.clone()),
                ..IndexAnswer::default()
            };
        }
        let changed: Vec<PathBuf> = self
            .changed
            .iter()
            .filter(|path| roots.iter().any(|root| path.starts_with(root)))
            .cloned()
            .collect();
        let checked = roots
            .iter()
            .all(|root| self.checked.iter().any(|checked| root.starts_with(checked)));
        let found = self
            .with_db(move |db| {
                let symbols = index::lookup(db, &query, &roots, LOOKUP_LIMIT)?;
                let covered = index::covering(db, &roots)?;
                Ok(vouched_for(symbols, changed, covered))
            })
            .await;
        let Some(mut answer) = found else {
            return IndexAnswer {
                problem: self
                    .problem
                    .clone()
                    .or(Some("the index could not be read".into())),
                ..IndexAnswer::default()
            };
        };
        answer.checked = checked;
        self.changed.extend(answer.changed.iter().cloned());
        answer
    }

    /// The top-level symbols of the files among `files` whose outline is
    /// the one of their text now; a file found changed is one to read
    /// again, as a look-up finds it.
    async fn top_level(&mut self, files: Vec<PathBuf>) -> Vec<(PathBuf, Vec<OutlineSymbol>)> {
        let asked: Vec<PathBuf> = files
            .into_iter()
            .filter(|path| !self.changed.contains(path))
            .collect();
        let Some((fresh, changed)) = self
            .with_db(move |db| {
                let mut fresh = Vec::new();
                let mut changed = Vec::new();
                for (path, stamp, symbols) in index::top_level(db, &asked)? {
                    match Stamp::of(&path) {
                        Some(now) if now != stamp => changed.push(path),
                        Some(_) if !symbols.is_empty() => fresh.push((path, symbols)),
                        _ => {}
                    }
                }
                Ok((fresh, changed))
            })
            .await
        else {
            return Vec::new();
        };
        self.changed.extend(changed);
        fresh
    }

    async fn summary(&mut self, roots: Vec<PathBuf>) -> IndexStatus {
        if let Some(problem) = &self.problem {
            return IndexStatus {
                problem: Some(problem.clone()),
                ..IndexStatus::default()
            };
        }
        let changed = self
            .changed
            .iter()
            .filter(|path| roots.iter().any(|root| path.starts_with(root)))
            .count();
        let counts = self
            .with_db(move |db| {
                let files = index::files_by_server(db, &roots)?;
                let covering = index::covering(db, &roots)?;
                Ok(files
                    .into_iter()
                    .map(|(server, files)| IndexedServer {
                        every_root: covering.iter().any(|(by, _)| *by == server),
                        server,
                        files,
                    })
                    .collect())
            })
            .await;
        match counts {
            Some(servers) => IndexStatus {
                servers,
                changed,
                problem: None,
            },
            None => IndexStatus {
                problem: Some("the index could not be read".into()),
                ..IndexStatus::default()
            },
        }
    }

    /// Compares a pass's files under `root` with what the index holds:
    /// the indexed files no longer there are forgotten, and those new or
    /// changed, not taken by another pass, are the asker's to read.
    async fn files_to_read(&mut self, root: PathBuf, files: Vec<(PathBuf, Stamp)>) -> Vec<PathBuf> {
        let under = root.clone();
        let Some((to_read, gone)) = self
            .with_db(move |db| {
                let indexed = index::stamps_under(db, &under)?;
                let present: HashSet<&PathBuf> = files.iter().map(|(path, _)| path).collect();
                let gone: Vec<PathBuf> = indexed
                    .keys()
                    .filter(|path| !present.contains(path))
                    .cloned()
                    .collect();
                index::forget(db, &gone)?;
                let to_read: Vec<PathBuf> = files
                    .into_iter()
                    .filter(|(path, stamp)| indexed.get(path) != Some(stamp))
                    .map(|(path, _)| path)
                    .collect();
                Ok((to_read, gone))
            })
            .await
        else {
            return Vec::new();
        };
        for path in &gone {
            self.changed.remove(path);
        }
        self.unreadable.retain(|path| !path.starts_with(&root));
        let unread: HashSet<&PathBuf> = to_read.iter().collect();
        self.changed
            .retain(|path| !path.starts_with(&root) || unread.contains(path));
        self.changed.extend(to_read.iter().cloned());
        if !self.checked.contains(&root) {
            self.checked.push(root);
        }
        self.take(to_read)
    }

    /// Keeps as done the passes over roots where no pass has files still
    /// taken: until then, the files a pass skipped as another's may be
    /// unread, and the index would stand in for a server with a part of
    /// the root's names (sixteen sessions' passes over one tree: the last
    /// to start found every file taken, and its pass was done at once).
    async fn keep_passes(&mut self) {
        if self.passes.is_empty() {
            return;
        }
        let now = Instant::now();
        let busy = |root: &PathBuf| {
            self.taken.iter().any(|(path, since)| {
                now.duration_since(*since) < TAKEN_FOR && path.starts_with(root)
            })
        };
        let (waiting, done): (Vec<_>, Vec<_>) = std::mem::take(&mut self.passes)
            .into_iter()
            .partition(|(_, root)| busy(root));
        self.passes = waiting;
        if done.is_empty() {
            return;
        }
        let at = now_ms();
        self.with_db(move |db| {
            for (server, root) in &done {
                index::record_pass(db, server, root, at)?;
            }
            Ok(())
        })
        .await;
    }

    /// Of `paths`, those no pass has taken, now taken.
    fn take(&mut self, paths: Vec<PathBuf>) -> Vec<PathBuf> {
        let now = Instant::now();
        self.taken
            .retain(|_, since| now.duration_since(*since) < TAKEN_FOR);
        let mine: Vec<PathBuf> = paths
            .into_iter()
            .filter(|path| !self.taken.contains_key(path))
            .collect();
        for path in &mine {
            self.taken.insert(path.clone(), now);
        }
        mine
    }
}

/// The symbols of files whose stamp on disk is still the one indexed;
/// the files changed since (and the ones already known changed), which
/// are left out; and what the passes cover. Runs on the blocking pool:
/// it reads each file's stamp.
fn vouched_for(
    symbols: Vec<IndexedSymbol>,
    known_changed: Vec<PathBuf>,
    covered: Vec<(String, u64)>,
) -> IndexAnswer {
    let mut stamps: HashMap<PathBuf, Option<Stamp>> = HashMap::new();
    let mut changed: HashSet<PathBuf> = known_changed.into_iter().collect();
    let mut fresh = Vec::new();
    for symbol in symbols {
        if changed.contains(&symbol.path) {
            continue;
        }
        let now = *stamps
            .entry(symbol.path.clone())
            .or_insert_with(|| Stamp::of(&symbol.path));
        if now == Some(symbol.stamp) {
            fresh.push(symbol);
        } else {
            changed.insert(symbol.path);
        }
    }
    // A file gone since has no names to read again.
    let mut changed: Vec<PathBuf> = changed.into_iter().filter(|path| path.exists()).collect();
    changed.sort();
    IndexAnswer {
        symbols: fresh,
        changed,
        covered,
        checked: false,
        problem: None,
    }
}
