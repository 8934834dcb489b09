//! The SymbolIndex's inbox: outlines to keep, files changed on disk,
//! names to look up, files' top-level symbols, the background pass's questions about which files
//! it must read, and what it holds, for `status`.
use crate::store::index::{IndexedSymbol, Outline, OutlineSymbol, Stamp};
use crate::vocabulary::file_changes::FileChange;
use crate::vocabulary::status::IndexStatus;
use ractor::RpcReplyPort;
use std::path::PathBuf;
use std::sync::Arc;

pub enum SymbolIndexMsg {
    /// A file's outline as a server answered it.
    Record(Box<Outline>),
    /// Files changed on disk, from the Watcher.
    FilesChanged(Arc<[FileChange]>),
    /// The symbols named like `query` under `roots`, as far as the index
    /// can vouch for them now.
    Lookup {
        query: String,
        roots: Vec<PathBuf>,
        reply: RpcReplyPort<IndexAnswer>,
    },
    /// The top-level symbols of those of `files` the index can vouch for
    /// now (unchanged since read, and with names), in file order; the
    /// others are left out, for the asker to ask their servers.
    TopLevel {
        files: Vec<PathBuf>,
        reply: RpcReplyPort<Vec<(PathBuf, Vec<OutlineSymbol>)>>,
    },
    /// Of the files a pass found under `root` (with their stamps now),
    /// those it must read: not indexed, or changed since. Each is the
    /// asker's to read until recorded or given back, so that two passes
    /// over one root share the work.
    ToRead {
        root: PathBuf,
        files: Vec<(PathBuf, Stamp)>,
        reply: RpcReplyPort<Vec<PathBuf>>,
    },
    /// The files under `root` changed since they were read, taken as
    /// `ToRead`'s are.
    TakeChanged {
        root: PathBuf,
        reply: RpcReplyPort<Vec<PathBuf>>,
    },
    /// Files a pass took and did not read because their server is not
    /// running: offered again by the next whole pass, or when they change.
    GiveBack(Vec<PathBuf>),
    /// Files a pass took and could not read for now (their server was
    /// restarting, or the session had its share of questions waiting):
    /// still changed, offered to the next pass.
    PutBack(Vec<PathBuf>),
    /// Files whose server could not outline them: counted among the
    /// changed (their names are not known) but not offered again until
    /// they change or a whole pass walks their root.
    Unreadable(Vec<PathBuf>),
    /// A pass of `server` went over every file under `root` it serves;
    /// kept as the root's pass once no other pass has files there still
    /// taken, since a pass skips the files another has taken.
    PassDone { server: String, root: PathBuf },
    /// What the index holds for `roots`, for `status`.
    Summary {
        roots: Vec<PathBuf>,
        reply: RpcReplyPort<IndexStatus>,
    },
}

/// What the index holds for a name under some roots.
#[derive(Debug, Clone, Default)]
pub struct IndexAnswer {
    /// Symbols of files unchanged since they were read.
    pub symbols: Vec<IndexedSymbol>,
    /// Files under the roots changed since they were read, or new, whose
    /// names the index does not know until they are read again.
    pub changed: Vec<PathBuf>,
    /// The servers whose passes went over every root, with how many
    /// files each has indexed there.
    pub covered: Vec<(String, u64)>,
    /// Whether this process has compared every root's files with what the
    /// index holds: until then, files changed while no Windlass ran are
    /// found only when a name in them is looked up.
    pub checked: bool,
    /// Why the index cannot answer, if it cannot.
    pub problem: Option<String>,
}
