//! The Roots actor: the workspace roots and where each came from.
//!
//! Owns the roots every source asked for (`-r`, the current directory,
//! the MCP client's `roots/list`, hooks) and the root set that follows from
//! them, which every tool validates paths against. Its inbox is
//! `messages::roots`: the Gateway asks for the set (a snapshot, validated
//! against without another message) and hands over the client's roots;
//! the control socket and the `sync-roots` hook add, remove or set one
//! source's roots through its Session. When the set
//! changes it tells its Session what was added and removed; the Session
//! tells the Supervisor, which tells the Watcher and the servers.
//!
//! Invariant: a root that is refused or removed is out of the set before
//! the next `Get` is answered, so access is revoked at once. A session
//! that starts with no roots (an HTTP client's, with none configured)
//! holds `Get` until its client's roots arrive or it has none to give,
//! so a first question is not refused for a listing still on its way;
//! likewise after the client says its roots changed, so a question sent
//! after that is judged by the new roots, not answered in a root the
//! client has just removed.

mod requested;

use crate::lsp::uri::uri_to_path;
use crate::messages::roots::{Change, ChangeAnswer, RootListing, RootsChanged, RootsMsg, Source};
use crate::messages::session::SessionMsg;
use crate::vocabulary::root_set::RootSet;
use ractor::RpcReplyPort;
use ractor::{Actor, ActorProcessingErr, ActorRef};
use requested::{Effective, Requested};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How long a session that started with no roots waits for its client's.
const CLIENT_ROOTS_WAIT: Duration = Duration::from_secs(10);

/// The actor type; its state lives in [`State`].
pub struct Roots;

pub struct Arguments {
    /// The roots the session starts with.
    pub roots: RootSet,
    /// Whether they came from `-r` (pinned) or are the current directory.
    pub pinned: bool,
    pub session: ActorRef<SessionMsg>,
}

pub struct State {
    requested: Requested,
    effective: Vec<Effective>,
    set: Arc<RootSet>,
    session: ActorRef<SessionMsg>,
    /// `Get`s held until the client's roots come; `None` once they have.
    awaiting_client: Option<Vec<RpcReplyPort<Arc<RootSet>>>>,
    /// The number of the latest wait for the client's roots.
    client_wait: u64,
}

impl Actor for Roots {
    type Msg = RootsMsg;
    type State = State;
    type Arguments = Arguments;

    async fn pre_start(
        &self,
        myself: ActorRef<Self::Msg>,
        args: Arguments,
    ) -> Result<State, ActorProcessingErr> {
        let awaiting_client = args
            .roots
            .roots()
            .is_empty()
            .then(|| await_client(&myself, 0));
        let directories: Vec<PathBuf> = args
            .roots
            .roots()
            .iter()
            .map(|root| root.path.clone())
            .collect();
        let requested = Requested::new(directories, args.pinned);
        let (effective, _) = requested.effective();
        Ok(State {
            requested,
            effective,
            set: Arc::new(args.roots),
            session: args.session,
            awaiting_client,
            client_wait: 0,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            RootsMsg::ClientChanging => {
                if state.awaiting_client.is_none() {
                    state.client_wait += 1;
                    state.awaiting_client = Some(await_client(&myself, state.client_wait));
                }
            }
            RootsMsg::Get(reply) => match &mut state.awaiting_client {
                Some(waiting) => waiting.push(reply),
                None => {
                    let _gone = reply.send(state.set.clone());
                }
            },
            RootsMsg::Listing(reply) => {
                let _gone = reply.send(state.listing());
            }
            RootsMsg::Client(uris) => {
                let paths = client_paths(&uris);
                state.change(Source::Client, Change::Set(paths));
                state.stop_awaiting_client();
            }
            RootsMsg::NoClientRoots => state.stop_awaiting_client(),
            RootsMsg::ClientRootsOverdue(wait) if wait == state.client_wait => {
                state.stop_awaiting_client();
            }
            RootsMsg::ClientRootsOverdue(_) => {}
            RootsMsg::Change {
                source,
                change,
                reply,
            } => {
                let refused = state.change(source, change);
                let _gone = reply.send(ChangeAnswer {
                    roots: state.set.clone(),
                    refused,
                });
            }
        }
        Ok(())
    }
}

impl State {
    /// Applies a change and, when the set moved, tells the Session.
    /// Returns why any root asked for was refused.
    fn change(&mut self, source: Source, change: Change) -> Vec<String> {
        self.requested.apply(source, change);
        let (effective, refused) = self.requested.effective();
        for reason in &refused {
            tracing::warn!(source = source.name(), "{reason}; not a root");
        }
        let before: Vec<PathBuf> = self
            .effective
            .iter()
            .map(|root| root.path.clone())
            .collect();
        let after: Vec<PathBuf> = effective.iter().map(|root| root.path.clone()).collect();
        self.effective = effective;
        if before == after {
            return refused;
        }
        let added: Vec<PathBuf> = after
            .iter()
            .filter(|path| !before.contains(path))
            .cloned()
            .collect();
        let removed: Vec<PathBuf> = before
            .iter()
            .filter(|path| !after.contains(path))
            .cloned()
            .collect();
        self.set = Arc::new(RootSet::from_canonical(after));
        tracing::info!(?added, ?removed, "roots changed");
        let changed = RootsChanged {
            roots: self.set.clone(),
            added,
            removed,
        };
        if let Err(error) = self.session.send_message(SessionMsg::RootsChanged(changed)) {
            tracing::warn!("session unreachable: {error}");
        }
        refused
    }

    /// Answers the `Get`s held for the client's roots.
    fn stop_awaiting_client(&mut self) {
        for reply in self.awaiting_client.take().unwrap_or_default() {
            let _gone = reply.send(self.set.clone());
        }
    }

    fn listing(&self) -> Vec<RootListing> {
        self.set
            .roots()
            .iter()
            .map(|root| RootListing {
                name: root.name.clone(),
                path: root.path.clone(),
                sources: self
                    .effective
                    .iter()
                    .find(|effective| effective.path == root.path)
                    .map(|effective| effective.sources.clone())
                    .unwrap_or_default(),
            })
            .collect()
    }
}

/// Starts holding `Get`s for the client's roots, for at most
/// [`CLIENT_ROOTS_WAIT`]: a client that never lists them must not stall
/// every tool.
fn await_client(myself: &ActorRef<RootsMsg>, wait: u64) -> Vec<RpcReplyPort<Arc<RootSet>>> {
    myself.send_after(CLIENT_ROOTS_WAIT, move || {
        RootsMsg::ClientRootsOverdue(wait)
    });
    Vec::new()
}

/// The directories of `file://` URIs; any other URI is refused, saying so.
fn client_paths(uris: &[String]) -> Vec<PathBuf> {
    uris.iter()
        .filter_map(|uri| {
            let path = uri_to_path(uri);
            if path.is_none() {
                tracing::warn!(uri, "client root is not a local file:// URI; not a root");
            }
            path
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ractor::rpc::CallResult;

    /// A stand-in Session that keeps what the Roots actor tells it.
    struct Listener;

    impl Actor for Listener {
        type Msg = SessionMsg;
        type State = Vec<RootsChanged>;
        type Arguments = ();

        async fn pre_start(
            &self,
            _myself: ActorRef<Self::Msg>,
            _: (),
        ) -> Result<Self::State, ActorProcessingErr> {
            Ok(Vec::new())
        }

        async fn handle(
            &self,
            _myself: ActorRef<Self::Msg>,
            message: Self::Msg,
            heard: &mut Self::State,
        ) -> Result<(), ActorProcessingErr> {
            if let SessionMsg::RootsChanged(changed) = message {
                heard.push(changed);
            }
            Ok(())
        }
    }

    async fn change(roots: &ActorRef<RootsMsg>, change: Change) -> ChangeAnswer {
        match roots
            .call(
                |reply| RootsMsg::Change {
                    source: Source::Hook,
                    change,
                    reply,
                },
                None,
            )
            .await
        {
            Ok(CallResult::Success(answer)) => answer,
            _ => panic!("no answer"),
        }
    }

    /// Directories `a` and `b` in a new temporary directory.
    fn two_directories() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("a")).unwrap();
        std::fs::create_dir_all(base.join("b")).unwrap();
        (dir, base)
    }

    /// A Roots actor on `roots`, telling a stand-in Session.
    async fn spawned(
        roots: &[PathBuf],
        pinned: bool,
    ) -> (ActorRef<RootsMsg>, ActorRef<SessionMsg>) {
        let (listener, _) = Actor::spawn(None, Listener, ()).await.unwrap();
        let arguments = Arguments {
            roots: RootSet::new(roots).unwrap(),
            pinned,
            session: listener.clone(),
        };
        let (roots, _) = Actor::spawn(None, Roots, arguments).await.unwrap();
        (roots, listener)
    }

    #[tokio::test]
    async fn changes_from_a_hook_are_applied_and_refusals_explained() {
        let (_dir, base) = two_directories();
        let (roots, listener) = spawned(&[base.join("a")], true).await;
        let answer = change(&roots, Change::Add(vec![base.join("b")])).await;
        assert_eq!(answer.roots.roots().len(), 2);
        assert!(answer.refused.is_empty());
        let answer = change(&roots, Change::Set(vec![base.join("missing")])).await;
        assert_eq!(answer.roots.roots().len(), 1, "b is gone, a is pinned");
        assert_eq!(answer.refused.len(), 1);
        assert!(
            answer.refused[0].contains("missing"),
            "{:?}",
            answer.refused
        );
        let listing = match roots.call(RootsMsg::Listing, None).await {
            Ok(CallResult::Success(listing)) => listing,
            _ => panic!("no listing"),
        };
        assert_eq!(listing[0].sources, vec![Source::Flag]);
        roots.stop(None);
        listener.stop(None);
    }

    #[tokio::test]
    async fn a_question_after_the_client_changes_its_roots_waits_for_them() {
        let (_dir, base) = two_directories();
        let (roots, listener) = spawned(&[base.join("a"), base.join("b")], false).await;
        roots.send_message(RootsMsg::ClientChanging).unwrap();
        let asked = {
            let roots = roots.clone();
            tokio::spawn(async move { roots.call(RootsMsg::Get, None).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!asked.is_finished(), "held until the client's roots come");
        let only_a = crate::lsp::uri::path_to_uri(&base.join("a"));
        roots.send_message(RootsMsg::Client(vec![only_a])).unwrap();
        match asked.await.unwrap() {
            Ok(CallResult::Success(set)) => assert_eq!(set.roots().len(), 1),
            _ => panic!("no answer"),
        }
        roots.stop(None);
        listener.stop(None);
    }
}
