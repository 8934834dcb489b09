//! The Watcher's inbox: roots and configuration directories to watch,
//! flushes, status; and word that file events wait to be read.
use ractor::RpcReplyPort;
use std::path::PathBuf;

pub enum WatcherMsg {
    /// File events wait to be read: from the task watching inotify's
    /// descriptor, or from notify's thread.
    Readable,
    /// The first walk is done and its watches are in place: its result
    /// waits in the Watcher's own channel, since it holds the Watcher's
    /// private state.
    Ready,
    /// Sends every change seen so far before answering.
    Flush(RpcReplyPort<()>),
    FlushDue,
    /// A flush's barrier event is overdue.
    BarrierOverdue(u64),
    /// Roots were added or removed.
    Roots {
        added: Vec<PathBuf>,
        removed: Vec<PathBuf>,
    },
    /// Every directory whose `.windlass.toml` is a layer of some
    /// session's configuration, from the Supervisor as sessions come.
    ConfigDirectories(Vec<PathBuf>),
    Status(RpcReplyPort<WatcherStatus>),
}

/// What `status` says of file watching.
#[derive(Debug, Clone, Default)]
pub struct WatcherStatus {
    /// Whether the first walk has set its watches up.
    pub ready: bool,
    pub directories: usize,
    /// Why some or all changes go unseen, if they do.
    pub problem: Option<String>,
}
