//! A session's Roots inbox: its roots asked for, listed and changed, and
//! what it tells its Session when they change.
use crate::vocabulary::root_set::RootSet;
use ractor::RpcReplyPort;
use std::path::PathBuf;
use std::sync::Arc;

/// One root as `status` lists it.
#[derive(Debug, Clone)]
pub struct RootListing {
    pub name: String,
    pub path: PathBuf,
    pub sources: Vec<Source>,
}

/// What changed in a session's root set.
#[derive(Debug, Clone)]
pub struct RootsChanged {
    pub roots: Arc<RootSet>,
    pub added: Vec<PathBuf>,
    pub removed: Vec<PathBuf>,
}

pub enum RootsMsg {
    Get(RpcReplyPort<Arc<RootSet>>),
    Listing(RpcReplyPort<Vec<RootListing>>),
    /// The MCP client said its roots changed: `Get`s wait for its new
    /// listing, so a question asked after the change is judged by it.
    ClientChanging,
    /// The MCP client's roots, `file://` URIs, replacing its earlier ones.
    Client(Vec<String>),
    /// The MCP client has no roots to give (it declares none, or its
    /// `roots/list` failed or never came): a session that started with
    /// none stops waiting for them.
    NoClientRoots,
    /// The wait for the client's roots numbered so ran out: its `Get`s
    /// are answered with the roots as they are (a later wait is not
    /// ended by an earlier one's timer).
    ClientRootsOverdue(u64),
    /// One source's roots changed; answered with the resulting set and
    /// why any root asked for was refused.
    Change {
        source: Source,
        change: Change,
        reply: RpcReplyPort<ChangeAnswer>,
    },
}

/// The root set after a change, and the roots refused, with the reason.
#[derive(Debug, Clone)]
pub struct ChangeAnswer {
    pub roots: Arc<RootSet>,
    pub refused: Vec<String>,
}

/// Where a root came from, as `status` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// `-r` on the command line: pinned.
    Flag,
    /// The current directory, when no `-r` was given.
    Default,
    /// The MCP client's `roots/list`.
    Client,
    /// A hook or the control socket (`sync-roots`).
    Hook,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Self::Flag => "-r",
            Self::Default => "current directory",
            Self::Client => "client",
            Self::Hook => "hook",
        }
    }
}

/// A change to one source's roots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Add(Vec<PathBuf>),
    Remove(Vec<PathBuf>),
    Set(Vec<PathBuf>),
}
