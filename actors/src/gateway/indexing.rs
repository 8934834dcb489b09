//! A session's share of the symbol index: the background pass that reads
//! the outline of every file under its roots that a running server
//! serves and the index lacks or holds an older stamp of, and the
//! look-up `search` makes for a server that has not answered in time.
//!
//! The pass asks one file at a time, in the background (the document is
//! closed again once answered), while the server is loaded and has no
//! one else's request to answer, and rests as long as each answer took,
//! so that it takes at most half of a server's idle time and an agent's
//! question waits behind one outline at most. A server that stays busy
//! for others is asked anyway after a few seconds, and then the pass
//! rests four times as long as the answer took. It starts no server: files
//! whose server is not running wait for a later pass. It goes over the
//! roots again when the running servers change, and otherwise reads only
//! the files changed on disk since. A TypeScript server is asked only
//! about the files of its `tsconfig.json` projects (`tsconfig.rs`): its
//! workspace symbols name no other, and each other file it is sent costs
//! it a project of its own; such a file is indexed with no names.

use super::context::Context;
use super::indexed;
use super::symbols::Found;
use crate::error::{Error, Result};
use crate::language::language_id;
use crate::listings::Listings;
use crate::lsp::protocol::Feature;
use crate::lsp::uri::path_to_uri;
use crate::messages::ask;
use crate::messages::language_server::LanguageServerMsg;
use crate::messages::router::ServerHandle;
use crate::messages::symbol_index::{IndexAnswer, SymbolIndexMsg};
use crate::store::index::{IndexedSymbol, Outline, OutlineSymbol, Stamp};
use crate::tsconfig::Projects;
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::status::IndexStatus;
use lsp_types::{Location, Position, Range};
use ractor::rpc::CallResult;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a session's first questions have the servers to themselves.
const FIRST_PASS_AFTER: Duration = Duration::from_secs(3);
/// How often the pass looks for servers started and files changed since.
const PASS_EVERY: Duration = Duration::from_secs(20);
/// The longest rest between two files.
const MAX_REST: Duration = Duration::from_secs(1);
/// How long the pass waits before asking a busy server again.
const BUSY_REST: Duration = Duration::from_millis(250);
/// How long a server that was busy must have been idle before the pass
/// asks it.
const IDLE_BEFORE: Duration = Duration::from_secs(1);
/// How long the pass waits on a loaded server that stays busy before it
/// reads anyway, at a slower pace: agents that keep a server busy for
/// good would otherwise never have the index that spares it their
/// searches (on the million-line tree, pyright was never idle for a
/// second while one agent searched every few seconds).
const CROWDED_AFTER: Duration = Duration::from_secs(5);
/// How many times an outline's own time the pass rests after reading from
/// a busy server: at most a fifth of its time goes to the pass.
const CROWDED_REST: u32 = 4;
/// The largest file the pass asks an outline of.
const MAX_INDEXED_BYTES: usize = 512 * 1024;
/// The longest line of a file the pass asks an outline of.
const MAX_INDEXED_LINE: usize = 2_000;
/// How long the index's own actor may take to answer.
const INDEX_REPLY: Duration = Duration::from_secs(30);

/// Keeps the index of the session's roots up to date while the session
/// lasts (the Gateway aborts it when the session ends).
pub async fn keep_index(context: Context) {
    tokio::time::sleep(FIRST_PASS_AFTER).await;
    let mut passed: BTreeSet<String> = BTreeSet::new();
    loop {
        if let Err(error) = pass(&context, &mut passed).await {
            tracing::debug!(session = %context.session, "index pass stopped: {error}");
        }
        tokio::time::sleep(PASS_EVERY).await;
    }
}

/// One pass: every file under the roots when the running servers are not
/// those of the last whole pass, else the files changed since.
async fn pass(context: &Context, passed: &mut BTreeSet<String>) -> Result<()> {
    let servers = searchable(context.workspace_servers().await?.running).await;
    let running: BTreeSet<String> = servers.iter().map(ServerHandle::label).collect();
    let roots = context.root_set().await?;
    let whole = running != *passed;
    for root in roots.roots() {
        let to_read = if whole {
            let files = stamped_files(
                context.shared.sketches.listings().clone(),
                root.path.clone(),
            )
            .await;
            ask(
                &context.shared.index,
                |reply| SymbolIndexMsg::ToRead {
                    root: root.path.clone(),
                    files,
                    reply,
                },
                INDEX_REPLY,
            )
            .await?
        } else {
            ask(
                &context.shared.index,
                |reply| SymbolIndexMsg::TakeChanged {
                    root: root.path.clone(),
                    reply,
                },
                INDEX_REPLY,
            )
            .await?
        };
        read_files(context, &servers, to_read).await;
        if whole {
            for server in &running {
                let _stopped = context.shared.index.send_message(SymbolIndexMsg::PassDone {
                    server: server.clone(),
                    root: root.path.clone(),
                });
            }
        }
    }
    *passed = running;
    Ok(())
}

/// Reads again the files under the roots changed since the index read
/// them: `search` asks for it when it answered from the index, rather than
/// leave those files to the next pass.
pub async fn read_changed(context: Context) {
    let Ok(servers) = context.workspace_servers().await else {
        return;
    };
    let servers = searchable(servers.running).await;
    let Ok(roots) = context.root_set().await else {
        return;
    };
    for root in roots.roots() {
        let taken = ask(
            &context.shared.index,
            |reply| SymbolIndexMsg::TakeChanged {
                root: root.path.clone(),
                reply,
            },
            INDEX_REPLY,
        )
        .await;
        if let Ok(paths) = taken {
            read_files(&context, &servers, paths).await;
        }
    }
}

/// The servers whose names can be searched (they answer workspace
/// symbols) and that outline a file: the index stands in for no other, so
/// no other's time is spent on it. The CSS server, for one, searches no
/// names and takes half a minute to outline a minified stylesheet. Nor a
/// server that sees only what open files import (TypeScript's without a
/// tsconfig.json): opening a file changes what it answers for everyone.
async fn searchable(servers: Vec<ServerHandle>) -> Vec<ServerHandle> {
    let mut searchable = Vec::new();
    for server in servers {
        let status = server
            .actor
            .call(LanguageServerMsg::Status, Some(INDEX_REPLY))
            .await;
        let mut supports =
            matches!(status, Ok(CallResult::Success(status)) if status.gaps.is_empty());
        for feature in [Feature::WorkspaceSymbols, Feature::DocumentSymbols] {
            let answer = server
                .actor
                .call(
                    |reply| LanguageServerMsg::Supports(feature, reply),
                    Some(INDEX_REPLY),
                )
                .await;
            supports &= matches!(answer, Ok(CallResult::Success(true)));
        }
        if supports {
            searchable.push(server);
        }
    }
    searchable
}

/// Every file under `root` whose language is known, with its stamp now,
/// in path order. The walk is kept as the root's listing, as a search's
/// is: besides sparing the next search its walk, it lets the Watcher tell
/// a file saved by renaming over it (`sed -i`, a host's atomic write) as
/// changed rather than new (`listings.rs`).
async fn stamped_files(listings: Arc<Listings>, root: PathBuf) -> Vec<(PathBuf, Stamp)> {
    tokio::task::spawn_blocking(move || {
        let files = Mutex::new(Vec::new());
        super::source_files::search_in_parallel(&listings, &root, |_, file| {
            if file.language.is_some()
                && let Some(stamp) = Stamp::of(&file.path)
                && let Ok(mut files) = files.lock()
            {
                files.push((file.path.clone(), stamp));
            }
        });
        let mut files = files.into_inner().unwrap_or_default();
        files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        files
    })
    .await
    .unwrap_or_default()
}

/// What became of one file the pass took.
enum Read {
    Indexed,
    /// Its server is not running, or it is gone: it waits for a later
    /// pass, or for a change.
    NotServed,
    /// Its server could not take the question now: the next pass asks
    /// again.
    Later,
    /// Its server could not outline it.
    Failed,
}

/// Reads each file's outline from its first server, if running, resting
/// between files; gives back those not read, and names those that could
/// not be.
async fn read_files(context: &Context, servers: &[ServerHandle], paths: Vec<PathBuf>) {
    let by_name: HashMap<&str, &ServerHandle> = servers
        .iter()
        .map(|server| (server.spec.name.as_str(), server))
        .collect();
    let mut not_served = Vec::new();
    let mut later = Vec::new();
    let mut unreadable = Vec::new();
    let projects = Arc::new(Mutex::new(Projects::default()));
    for path in paths {
        let started = Instant::now();
        let (read, pace) = read_file(context, &by_name, &projects, &path).await;
        match read {
            Read::Indexed => {}
            Read::NotServed => not_served.push(path),
            Read::Later => later.push(path),
            Read::Failed => unreadable.push(path),
        }
        let rest = match pace {
            Pace::Idle => started.elapsed(),
            Pace::Crowded => started.elapsed() * CROWDED_REST,
        };
        tokio::time::sleep(rest.min(MAX_REST)).await;
    }
    let index = &context.shared.index;
    if !not_served.is_empty() {
        let _stopped = index.send_message(SymbolIndexMsg::GiveBack(not_served));
    }
    if !later.is_empty() {
        let _stopped = index.send_message(SymbolIndexMsg::PutBack(later));
    }
    if !unreadable.is_empty() {
        let _stopped = index.send_message(SymbolIndexMsg::Unreadable(unreadable));
    }
}

/// Reads one file's outline, once its server can spare the time; says
/// how busy the server was.
async fn read_file(
    context: &Context,
    servers: &HashMap<&str, &ServerHandle>,
    projects: &Arc<Mutex<Projects>>,
    path: &Path,
) -> (Read, Pace) {
    let Ok(serving) = context.serving(path).await else {
        return (Read::NotServed, Pace::Idle);
    };
    let Some(server) = serving
        .first()
        .and_then(|spec| servers.get(spec.name.as_str()))
    else {
        return (Read::NotServed, Pace::Idle);
    };
    if server.spec.projects_from_tsconfig
        && let Some(stamp) = outside_projects(path.to_path_buf(), projects.clone()).await
    {
        record(context, no_names(path, stamp, server));
        return (Read::Indexed, Pace::Idle);
    }
    let pace = keep_out_of_the_way(server).await;
    (outline_file(context, server, path).await, pace)
}

/// The file's stamp when no project of `projects` holds it.
async fn outside_projects(path: PathBuf, projects: Arc<Mutex<Projects>>) -> Option<Stamp> {
    tokio::task::spawn_blocking(move || {
        // A poisoned lock leaves the choice to the server, as before.
        let outside = projects
            .lock()
            .is_ok_and(|mut projects| !projects.hold(&path));
        outside.then(|| Stamp::of(&path)).flatten()
    })
    .await
    .ok()
    .flatten()
}

/// The index's entry for a file its server names nothing in.
fn no_names(path: &Path, stamp: Stamp, server: &ServerHandle) -> Outline {
    Outline {
        path: path.to_path_buf(),
        stamp,
        server: server.label(),
        symbols: Vec::new(),
    }
}

fn record(context: &Context, outline: Outline) {
    let _stopped = context
        .shared
        .index
        .send_message(SymbolIndexMsg::Record(Box::new(outline)));
}

async fn outline_file(context: &Context, server: &ServerHandle, path: &Path) -> Read {
    let label = server.label();
    // Read only now that the server can be asked: a text read before the
    // wait would be sent as the document's, over a newer one an agent
    // has written since.
    let read = {
        let path = path.to_path_buf();
        tokio::task::spawn_blocking(move || {
            let stamp = Stamp::of(&path)?;
            let document = DocumentSnapshot::read(&path, language_id(&path)).ok()?;
            Some((stamp, document))
        })
        .await
    };
    let Ok(Some((stamp, document))) = read else {
        // Gone or unreadable since the walk: nothing to index.
        return Read::NotServed;
    };
    if is_generated(&document.text) {
        return Read::Failed;
    }
    let text = document.text.clone();
    match context.outline_in_background(server, document).await {
        Ok(mut reply) => match indexed::outline(path, stamp, &mut reply, &text) {
            Some(outline) => {
                record(context, outline);
                Read::Indexed
            }
            None => Read::Failed,
        },
        Err(error) => {
            tracing::debug!(server = %label, path = %path.display(), "no outline for the index: {error}");
            match error {
                Error::SessionBusy { .. }
                | Error::ServerExited { .. }
                | Error::NotReady { .. }
                | Error::ShuttingDown => Read::Later,
                _ => Read::Failed,
            }
        }
    }
}

/// How busy a server was when the pass asked it.
enum Pace {
    Idle,
    /// Loaded, and busy for others for [`CROWDED_AFTER`].
    Crowded,
}

/// Waits while the server is loading or working for anyone, and, once it
/// was, until it has been idle for [`IDLE_BEFORE`]: the pass uses a
/// server's idle time, and an agent's next question after a diagnostics
/// wait usually comes within that. A loaded server busy for
/// [`CROWDED_AFTER`] is asked anyway.
async fn keep_out_of_the_way(server: &ServerHandle) -> Pace {
    let waiting = Instant::now();
    let mut was_busy = false;
    loop {
        let busyness = server
            .actor
            .call(LanguageServerMsg::Busyness, Some(INDEX_REPLY))
            .await;
        let (loading, working) = match busyness {
            Ok(CallResult::Success(busyness)) => (busyness.loading, busyness.working),
            // Gone: the outline's own request says so.
            _ => (false, false),
        };
        if !loading && was_busy && waiting.elapsed() >= CROWDED_AFTER {
            return Pace::Crowded;
        }
        match (loading || working, was_busy) {
            (true, _) => {
                was_busy = true;
                tokio::time::sleep(BUSY_REST).await;
            }
            (false, true) => {
                was_busy = false;
                tokio::time::sleep(IDLE_BEFORE).await;
            }
            (false, false) => return Pace::Idle,
        }
    }
}

/// An indexed symbol as a server's workspace symbols name one, placed in
/// code points (UTF-32); `None` for a path no URI can name.
pub fn as_found(indexed: &IndexedSymbol) -> Option<Found> {
    let symbol = &indexed.symbol;
    let length = u32::try_from(symbol.name.chars().count()).unwrap_or_default();
    let uri = path_to_uri(&indexed.path).parse().ok()?;
    Some(Found {
        name: symbol.name.clone(),
        kind: indexed::kind_of(symbol.kind),
        location: Location::new(
            uri,
            Range::new(
                Position::new(symbol.line, symbol.column),
                Position::new(symbol.line, symbol.column + length),
            ),
        ),
        container: symbol.container.clone(),
    })
}

/// Whether a text is too big, or has lines too long, to be a source an
/// agent reads: a bundle, a minified file, generated data. Its outline
/// would hold the server for long, and the file is counted as not read.
fn is_generated(text: &str) -> bool {
    text.len() > MAX_INDEXED_BYTES || text.lines().any(|line| line.len() > MAX_INDEXED_LINE)
}

/// The index's symbols named like `query` under the session's roots.
pub async fn lookup(context: &Context, query: &str, roots: Vec<PathBuf>) -> IndexAnswer {
    let query = query.to_owned();
    ask(
        &context.shared.index,
        |reply| SymbolIndexMsg::Lookup {
            query,
            roots,
            reply,
        },
        INDEX_REPLY,
    )
    .await
    .unwrap_or_else(|_| IndexAnswer {
        problem: Some("the symbol index did not answer".into()),
        ..IndexAnswer::default()
    })
}

/// The top-level symbols of those of `files` the index can vouch for;
/// none when it cannot answer.
pub async fn top_level(
    context: &Context,
    files: Vec<PathBuf>,
) -> Vec<(PathBuf, Vec<OutlineSymbol>)> {
    ask(
        &context.shared.index,
        |reply| SymbolIndexMsg::TopLevel { files, reply },
        INDEX_REPLY,
    )
    .await
    .unwrap_or_default()
}

/// What the index holds for `roots`, for `status`.
pub async fn summary(context: &Context, roots: Vec<PathBuf>) -> IndexStatus {
    ask(
        &context.shared.index,
        |reply| SymbolIndexMsg::Summary { roots, reply },
        INDEX_REPLY,
    )
    .await
    .unwrap_or_else(|_| IndexStatus {
        problem: Some("the symbol index did not answer".into()),
        ..IndexStatus::default()
    })
}
