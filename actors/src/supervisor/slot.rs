//! One pooled server as the Supervisor keeps it: where it is in its life
//! (not started, checking its binary, running, backing off after a crash,
//! failed, unusable), its crash history, what waits for it, and the
//! sessions using it, whose roots together are its workspace folders.

use crate::error::Error;
use crate::language::{ServerKey, ServerSpec};
use crate::messages::language_server::{LanguageServerMsg, Work};
use crate::messages::router::ServerHandle;
use crate::settings::Timeouts;
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::ids::{ServerId, SessionId};
use crate::vocabulary::root_set::RootSet;
use crate::vocabulary::server_states::Phase;
use crate::vocabulary::usage::Usage;
use ractor::{ActorRef, RpcReplyPort};
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// When a crashed server is restarted, and when it is given up on.
#[derive(Debug, Clone, Copy)]
pub struct RestartPolicy {
    /// More crashes than this inside `window` mark the server failed.
    pub max_crashes: usize,
    pub window: Duration,
    pub first_backoff: Duration,
    pub max_backoff: Duration,
    /// How long a failed server stays failed before a request may retry it.
    pub cooldown: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        Self {
            max_crashes: 5,
            window: Duration::from_secs(180),
            first_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            cooldown: Duration::from_secs(60),
        }
    }
}

impl RestartPolicy {
    pub fn backoff(&self, recent_crashes: usize) -> Duration {
        let doublings = u32::try_from(recent_crashes.saturating_sub(1))
            .unwrap_or(u32::MAX)
            .min(16);
        (self.first_backoff * 2u32.pow(doublings)).min(self.max_backoff)
    }
}

pub struct Slot {
    /// The spec it was started from; sessions that share it resolved
    /// their configuration to the same key.
    pub spec: ServerSpec,
    pub key: ServerKey,
    /// The sessions using it, with their roots.
    pub users: BTreeMap<SessionId, Arc<RootSet>>,
    /// Its workspace folders: its users' roots together, or, while it has
    /// none, the last ones it had.
    pub folders: Vec<PathBuf>,
    /// Whether the server takes workspace folder changes; `None` until it
    /// has said. One that does not is shared only by sessions with the
    /// same roots.
    pub folder_changes: Option<bool>,
    pub phase: Phase,
    /// While it is `Failed`: when it may be tried again.
    pub failed_until: Option<Instant>,
    pub actor: Option<ActorRef<LanguageServerMsg>>,
    crashes: VecDeque<Instant>,
    pub restarts: u32,
    /// Documents to reopen on the next process.
    pub reopen: Vec<DocumentSnapshot>,
    /// A file of the server's language, opened at start so that servers
    /// which load their project only for an open file load it at once.
    pub probe: Option<DocumentSnapshot>,
    /// Callers waiting for the server to start or come back.
    pub waiters: Vec<RpcReplyPort<Result<ServerHandle, Error>>>,
    /// Requests that never reached a process that died; they go to the
    /// next one.
    pub orphans: Vec<Work>,
    pub last_error: Option<String>,
    /// Why it was last stopped on purpose.
    pub stopped: Option<String>,
    pub stderr: String,
    /// The limits it runs with, from the session that first needed it.
    pub timeouts: Timeouts,
    /// How its current process is used, written by its actor.
    pub usage: Arc<Usage>,
}

impl Slot {
    pub fn new(spec: ServerSpec, timeouts: Timeouts) -> Self {
        Self {
            key: spec.key(),
            spec,
            users: BTreeMap::new(),
            folders: Vec::new(),
            folder_changes: None,
            phase: Phase::NotStarted,
            failed_until: None,
            actor: None,
            crashes: VecDeque::new(),
            restarts: 0,
            reopen: Vec::new(),
            probe: None,
            waiters: Vec::new(),
            orphans: Vec::new(),
            last_error: None,
            stopped: None,
            stderr: String::new(),
            timeouts,
            usage: Arc::default(),
        }
    }

    pub fn handle(&self, id: ServerId, actor: ActorRef<LanguageServerMsg>) -> ServerHandle {
        ServerHandle {
            id,
            spec: Arc::new(self.spec.clone()),
            actor,
        }
    }

    /// Every user's root directories, each once, in the order users came;
    /// with no users, the folders it has.
    pub fn users_roots(&self) -> Vec<PathBuf> {
        if self.users.is_empty() {
            return self.folders.clone();
        }
        let mut paths: Vec<PathBuf> = Vec::new();
        for roots in self.users.values() {
            for root in roots.roots() {
                if !paths.contains(&root.path) {
                    paths.push(root.path.clone());
                }
            }
        }
        paths
    }

    /// Its folders as a root set (what it may keep documents open under).
    pub fn root_set(&self) -> RootSet {
        RootSet::from_canonical(self.folders.clone())
    }

    /// Whether a session with these roots may use this server: any may,
    /// unless the server cannot take new folders and its users have
    /// other roots than these.
    pub fn accepts(&self, roots: &RootSet) -> bool {
        if self.folder_changes != Some(false) || self.users.is_empty() {
            return true;
        }
        let mut theirs = self.folders.clone();
        let mut given: Vec<PathBuf> = roots.roots().iter().map(|root| root.path.clone()).collect();
        theirs.sort();
        given.sort();
        theirs == given
    }

    pub fn failed_error(&self) -> Error {
        let until = self.failed_until.unwrap_or_else(Instant::now);
        Error::Failed {
            server: self.spec.label(),
            retry_in: until.saturating_duration_since(Instant::now()),
            stderr: self.stderr.clone(),
        }
    }

    /// Records a crash and returns how many fall inside the window.
    pub fn record_crash(&mut self, window: Duration) -> usize {
        let now = Instant::now();
        self.crashes.push_back(now);
        while self
            .crashes
            .front()
            .is_some_and(|at| now.duration_since(*at) > window)
        {
            self.crashes.pop_front();
        }
        self.crashes.len()
    }

    /// Hands the new process's handle to everyone who waited for it.
    pub fn started(&mut self, id: ServerId, actor: ActorRef<LanguageServerMsg>) {
        self.phase = Phase::Running;
        self.actor = Some(actor.clone());
        let handle = self.handle(id, actor.clone());
        for waiter in self.waiters.drain(..) {
            let _gone = waiter.send(Ok(handle.clone()));
        }
        for work in self.orphans.drain(..) {
            if let Err(error) = actor.send_message(work.into_message()) {
                tracing::warn!(server = %self.spec.name, "could not hand over a request: {error}");
            }
        }
    }

    /// Answers everyone who waited with `error`.
    pub fn fail_waiting(&mut self, error: &Error) {
        for waiter in self.waiters.drain(..) {
            let _gone = waiter.send(Err(error.clone()));
        }
        for work in self.orphans.drain(..) {
            work.fail(error.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let policy = RestartPolicy::default();
        let delays: Vec<u128> = (1..=8).map(|n| policy.backoff(n).as_millis()).collect();
        assert_eq!(delays, vec![100, 200, 400, 800, 1600, 3200, 5000, 5000]);
    }
}
