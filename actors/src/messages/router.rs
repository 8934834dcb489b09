//! The Router's inbox: which server answers a file, and the running
//! servers and session tables it routes by.
use crate::error::Result;
use crate::language::{ServerKey, ServerSpec};
use crate::messages::language_server::LanguageServerMsg;
use crate::vocabulary::file_changes::FileChange;
use crate::vocabulary::ids::{ServerId, SessionId};
use ractor::{ActorRef, RpcReplyPort};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A running server as one session addresses it.
#[derive(Debug, Clone)]
pub struct ServerHandle {
    pub id: ServerId,
    /// The session's spec for it; its name labels errors.
    pub spec: Arc<ServerSpec>,
    pub actor: ActorRef<LanguageServerMsg>,
}

impl ServerHandle {
    pub fn label(&self) -> String {
        self.spec.label()
    }
}

/// A file to route, with its candidate languages found by the asker: an
/// extensionless file's is read from its `#!` line, which is no work for
/// the Router's own turn.
#[derive(Debug, Clone)]
pub struct RoutedFile {
    pub path: PathBuf,
    /// Its own language first (`candidate_languages`).
    pub languages: Vec<&'static str>,
}

impl RoutedFile {
    pub fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            languages: crate::language::candidate_languages(path),
        }
    }
}

pub enum RouterMsg {
    /// The server of `rank` among those serving the file (0: the first),
    /// started if it is not running.
    Route {
        file: RoutedFile,
        session: SessionId,
        rank: usize,
        reply: RpcReplyPort<Result<ServerHandle>>,
    },
    /// The session's servers of a file, in the order they serve it,
    /// running or not.
    Serving {
        file: RoutedFile,
        session: SessionId,
        reply: RpcReplyPort<Result<Vec<Arc<ServerSpec>>>>,
    },
    /// A session's server table, on attach and after a reload.
    Servers {
        session: SessionId,
        specs: Vec<ServerSpec>,
    },
    /// The session's server of this configuration is now this one.
    Bound {
        session: SessionId,
        key: ServerKey,
        server: ServerId,
    },
    SessionEnded(SessionId),
    ServerUp(ServerId, ActorRef<LanguageServerMsg>),
    ServerDown(ServerId),
    FilesChanged(Arc<[FileChange]>),
}
