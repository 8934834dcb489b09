//! The LanguageServer's inbox: the requests and diagnostics waits tools
//! send it, what it answers with, and what the Watcher, the Monitor and the
//! Supervisor tell it.
use crate::error::{Error, Result};
use crate::lsp::message::Incoming;
use crate::lsp::position::PositionEncoding;
use crate::lsp::protocol::{Feature, WorkspaceFolder};
use crate::messages::monitor::ProcessSample;
use crate::vocabulary::documents::{DocumentSnapshot, TextPosition};
use crate::vocabulary::file_changes::FileChange;
use crate::vocabulary::ids::SessionId;
use crate::vocabulary::root_set::RootSet;
use crate::vocabulary::server_states::{ProcessState, Strategy};
use ractor::RpcReplyPort;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// One LSP request a tool wants answered.
#[derive(Debug, Clone)]
pub struct ServerRequest {
    pub method: &'static str,
    /// Parameters besides `textDocument` and `position`, which the actor
    /// fills in from `document` and `position`.
    pub params: Value,
    /// The file the request is about, synced before the request is sent.
    pub document: Option<DocumentSnapshot>,
    pub position: Option<TextPosition>,
    /// What the server must have announced; refused, naming it, if not.
    pub capability: Option<Feature>,
}

/// One caller's request: what is asked, by which session, and where the
/// answer goes.
#[derive(Debug)]
pub struct Call {
    pub session: SessionId,
    pub request: ServerRequest,
    pub reply: RpcReplyPort<Result<Reply>>,
}

/// A server's answer, with the encoding its positions are in.
#[derive(Debug, Clone)]
pub struct Reply {
    pub result: Value,
    pub encoding: PositionEncoding,
    /// What the caller should know about how complete the answer is: an
    /// index the server lacks, a server still loading.
    pub warnings: Vec<String>,
    /// What the server said about the request's file, if it could not
    /// fully read it.
    pub file_problem: Option<Problem>,
    /// For a workspace-wide request: every file the server said it could
    /// not fully read, so that what it did not find can be explained.
    pub problems: Vec<Problem>,
}

/// Fresh diagnostics of one document.
#[derive(Debug, Clone)]
pub struct DiagnosticsReply {
    /// `None` when the server has never published anything.
    pub items: Option<Arc<[Value]>>,
    pub encoding: PositionEncoding,
    pub file_problem: Option<Problem>,
}

/// One server's health, as `status` shows it.
#[derive(Debug, Clone)]
pub struct ServerStatus {
    pub state: ProcessState,
    pub pid: Option<u32>,
    pub uptime: Duration,
    pub open_documents: usize,
    pub encoding: Option<PositionEncoding>,
    pub strategy: Strategy,
    /// How many rounds its recent checks took at most, and how long a
    /// later round is waited for after the one before.
    pub rounds: (u32, Duration),
    pub process: Option<ProcessSample>,
    pub last_error: Option<String>,
    /// What the server is known not to see (no compilation database).
    pub gaps: Vec<String>,
    /// Requests waiting for their session's turn.
    pub queued: usize,
}

/// A tool's work for this server, before it is sent to the process.
pub enum Work {
    Request(Call),
    Diagnostics(DocumentSnapshot, RpcReplyPort<Result<DiagnosticsReply>>),
}

impl Work {
    pub fn into_message(self) -> LanguageServerMsg {
        match self {
            Self::Request(call) => LanguageServerMsg::Request(call),
            Self::Diagnostics(document, reply) => LanguageServerMsg::Diagnostics(document, reply),
        }
    }

    pub fn fail(self, error: Error) {
        match self {
            Self::Request(call) => drop(call.reply.send(Err(error))),
            Self::Diagnostics(_, reply) => drop(reply.send(Err(error))),
        }
    }
}

pub enum LanguageServerMsg {
    Request(Call),
    Diagnostics(DocumentSnapshot, RpcReplyPort<Result<DiagnosticsReply>>),
    Status(RpcReplyPort<ServerStatus>),
    /// Files changed on disk, from the Watcher.
    FilesChanged(Arc<[FileChange]>),
    /// A message from the reader task.
    Incoming(Incoming),
    /// A CPU sample of the process, from the Monitor.
    Activity(ProcessSample),
    /// The earliest deadline of a request in flight may have passed.
    DeadlinesDue,
    /// A diagnostics wait may be due.
    CheckDiagnostics,
    /// A held request may have waited long enough.
    ReleaseHeld,
    /// Periodic sweep of documents idle past the idle timeout.
    CloseIdle,
    /// New settings for `workspace/configuration`, after a reload.
    Configure(Value),
    /// Stop the process on purpose: its configuration changed (`restart`)
    /// or it was removed from it.
    Retire {
        reason: String,
        restart: bool,
    },
    /// The project files the server lacks, found off the actor's thread.
    Gaps(Vec<String>),
    /// The roots changed: new workspace folders, from the Supervisor.
    Folders(FolderChange),
}

/// A file a server said it could not fully read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub uri: String,
    pub message: String,
}

/// New workspace folders, from the Supervisor.
#[derive(Debug, Clone)]
pub struct FolderChange {
    /// Every folder now.
    pub folders: Vec<WorkspaceFolder>,
    /// The same, as roots: documents outside them are closed.
    pub roots: Arc<RootSet>,
}

/// No diagnostics wait outlives this, whatever the server is doing.
pub const DIAGNOSTICS_HARD_LIMIT: Duration = Duration::from_secs(600);
