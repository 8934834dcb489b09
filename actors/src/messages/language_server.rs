//! The LanguageServer's inbox: the requests and diagnostics waits tools
//! send it, their params written from lsp-types, what it answers with and
//! how answers are read back into lsp-types, and what the Watcher, the
//! Monitor and the Supervisor tell it.
use crate::error::{Error, Result};
use crate::language::ProjectFiles;
use crate::lsp::message::Incoming;
use crate::lsp::position::PositionEncoding;
use crate::lsp::protocol::{Feature, WorkspaceFolder};
use crate::lsp::uri::encode_loose;
use crate::process::ProcessSample;
use crate::vocabulary::documents::{DocumentSnapshot, TextPosition};
use crate::vocabulary::file_changes::FileChange;
use crate::vocabulary::ids::SessionId;
use crate::vocabulary::root_set::RootSet;
use crate::vocabulary::server_states::{ProcessState, Strategy};
use lsp_types::{Position, TextDocumentIdentifier, TextDocumentPositionParams, Uri};
use ractor::{ActorRef, ActorStatus, RpcReplyPort};
use serde::Serialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// One LSP request a tool wants answered.
#[derive(Debug, Clone)]
pub struct ServerRequest {
    pub method: &'static str,
    /// The method's parameters. With a `document`, the actor writes their
    /// `textDocument` and `position` again, the position in the server's
    /// encoding against its own copy of the document.
    pub params: Value,
    /// The file the request is about, synced before the request is sent.
    pub document: Option<DocumentSnapshot>,
    pub position: Option<TextPosition>,
    /// What the server must have announced; refused, naming it, if not.
    pub capability: Option<Feature>,
    /// Asked by Windlass's own background work, or by a question that
    /// goes over many files: a document it opens is closed once
    /// answered, unless another question used it meanwhile.
    pub background: bool,
}

impl ServerRequest {
    /// A request of `method` with `params`, the LSP type it takes, sent
    /// only to a server that announced `capability`.
    pub fn new(method: &'static str, params: &impl Serialize, capability: Feature) -> Result<Self> {
        let params = serde_json::to_value(params).map_err(|error| {
            Error::InvalidArgument(format!("cannot write the params of {method}: {error}"))
        })?;
        Ok(Self {
            method,
            params,
            document: None,
            position: None,
            capability: Some(capability),
            background: false,
        })
    }

    /// The same request about `document`, at `position` if given.
    pub fn about(self, document: DocumentSnapshot, position: Option<TextPosition>) -> Self {
        Self {
            document: Some(document),
            position,
            ..self
        }
    }

    /// The same request, asked in the background.
    pub fn in_background(self) -> Self {
        Self {
            background: true,
            ..self
        }
    }
}

/// A document as LSP params name it.
pub fn document_identifier(document: &DocumentSnapshot) -> Result<TextDocumentIdentifier> {
    let uri = document.uri.parse::<Uri>().map_err(|error| {
        Error::InvalidArgument(format!(
            "{} has no URI a server can read: {error}",
            document.uri
        ))
    })?;
    Ok(TextDocumentIdentifier { uri })
}

/// A position in a document as LSP params give it, its column still in
/// code points: the actor converts it to the server's encoding.
pub fn position_params(
    document: &DocumentSnapshot,
    position: TextPosition,
) -> Result<TextDocumentPositionParams> {
    let number = |value: usize| u32::try_from(value).unwrap_or(u32::MAX);
    Ok(TextDocumentPositionParams {
        text_document: document_identifier(document)?,
        position: Position::new(number(position.line), number(position.column)),
    })
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
    /// The label of the server that answered: not the one asked first
    /// when that one could not answer and another of the file's did.
    pub server: String,
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
    /// Whether the server builds its index in the background (clangd,
    /// rust-analyzer), so that its index may lack files unannounced.
    pub background_index: bool,
}

impl Reply {
    /// The result as the LSP type `T` its request is answered with. A
    /// result that does not follow LSP is the server's fault, and the error
    /// names the server and what it was asked.
    pub fn read<T: DeserializeOwned>(&self, feature: Feature) -> Result<T> {
        read_one(&self.result).map_err(|error| Error::Malformed {
            server: self.server.clone(),
            detail: format!("its {} does not follow LSP: {error}", feature.name()),
        })
    }

    /// A list result, item by item: `null` is an empty list, and items
    /// that do not follow LSP are left out with a warning on the reply
    /// saying how many, as diagnostics are. A result that is no list at
    /// all is malformed.
    pub fn read_list<T: DeserializeOwned>(&mut self, feature: Feature) -> Result<Vec<T>> {
        self.read::<Option<Vec<IgnoredAny>>>(feature)?;
        let items = self.result.as_array().map_or(&[][..], Vec::as_slice);
        let (found, unreadable) = read_each(items);
        self.note_unreadable(feature, unreadable);
        Ok(found)
    }

    /// Warns that `count` items of the answer were left out as not
    /// following LSP.
    pub fn note_unreadable(&mut self, feature: Feature, count: usize) {
        let (items, verb, pronoun) = match count {
            0 => return,
            1 => ("1 item".to_owned(), "does", "it is"),
            _ => (format!("{count} items"), "do", "they are"),
        };
        self.warnings.push(format!(
            "warning: [{}] sent {items} in its {} answer that {verb} not follow LSP; {pronoun} not shown",
            self.server,
            feature.name()
        ));
    }
}

/// Each item read as `T`, and how many could not be.
pub fn read_each<T: DeserializeOwned>(items: &[Value]) -> (Vec<T>, usize) {
    let found: Vec<T> = items
        .iter()
        .filter_map(|item| read_one(item).ok())
        .collect();
    let unreadable = items.len() - found.len();
    (found, unreadable)
}

/// `value` read as `T`, again with its URIs repaired if it cannot be as
/// it came (see [`encode_loose`]).
fn read_one<T: DeserializeOwned>(value: &Value) -> Result<T, serde_json::Error> {
    T::deserialize(value)
        .or_else(|error| T::deserialize(&with_uris_encoded(value)).map_err(|_| error))
}

/// Where LSP answers keep URIs, besides the keys of `changes`.
const URI_KEYS: [&str; 5] = ["uri", "targetUri", "oldUri", "newUri", "href"];

/// `value` with every URI it holds passed through [`encode_loose`].
fn with_uris_encoded(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(with_uris_encoded).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(key, field)| {
                    let field = match (key.as_str(), field) {
                        (key, Value::String(uri)) if URI_KEYS.contains(&key) => {
                            Value::String(encode_loose(uri))
                        }
                        ("changes", Value::Object(edits)) => Value::Object(
                            edits
                                .iter()
                                .map(|(uri, edits)| (encode_loose(uri), with_uris_encoded(edits)))
                                .collect(),
                        ),
                        _ => with_uris_encoded(field),
                    };
                    (key.clone(), field)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Fresh diagnostics of one document.
#[derive(Debug, Clone)]
pub struct DiagnosticsReply {
    /// `None` when the server has never published anything.
    pub items: Option<Arc<[Value]>>,
    pub encoding: PositionEncoding,
    pub file_problem: Option<Problem>,
    /// What the server cannot have checked, shown before the problems
    /// (a GraphQL server with no schema checks syntax only).
    pub warnings: Vec<String>,
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
    /// Requests sent to the process and not answered yet.
    pub in_flight: usize,
}

/// How busy a server is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Busyness {
    /// Still loading or indexing its workspace: a workspace-wide answer
    /// would wait or be partial.
    pub loading: bool,
    /// Requests sent and not answered, waiting for their session's turn
    /// or held; diagnostics waited for, an edit's check, or a change on
    /// disk the server is taking in.
    pub working: bool,
    /// How long its workspace symbols take: the one it is working on, or
    /// else its last, if that was within the last minute.
    pub symbols: Option<SymbolsPace>,
}

/// How long a server has taken over a workspace symbols request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolsPace {
    /// It has been working on one this long so far.
    Working(Duration),
    /// Its last answer took this long.
    Answered(Duration),
    /// Its last one timed out after this long.
    TimedOut(Duration),
}

impl SymbolsPace {
    pub fn took(self) -> Duration {
        match self {
            Self::Working(took) | Self::Answered(took) | Self::TimedOut(took) => took,
        }
    }
}

/// One caller's wait for the fresh diagnostics of a document.
#[derive(Debug)]
pub struct DiagnosticsCall {
    /// Whose share of the server a question asked for it uses.
    pub session: SessionId,
    pub document: DocumentSnapshot,
    pub reply: RpcReplyPort<Result<DiagnosticsReply>>,
}

/// One caller's check of an edit before it is written, of one document
/// or of several that change together (a rename's).
#[derive(Debug)]
pub struct CheckCall {
    pub session: SessionId,
    /// At least one; each document once.
    pub edits: Vec<EditedDocument>,
    /// Files on disk that use a name the edit changes, which it may break
    /// without editing them: checked beside the edited documents, opened
    /// for the check if they are not open.
    pub users: Vec<DocumentSnapshot>,
    pub reply: RpcReplyPort<Result<CheckAnswer>>,
}

/// What a check found: a reply per edited document, in the order of the
/// call's edits, and the documents the edit touched without editing them
/// (open ones, for servers that check those again, and the call's users).
#[derive(Debug, Clone)]
pub struct CheckAnswer {
    pub edited: Vec<CheckReply>,
    pub dependents: Vec<DependentReply>,
}

/// A document the edit did not change whose diagnostics it did.
#[derive(Debug, Clone)]
pub struct DependentReply {
    pub document: DocumentSnapshot,
    pub check: CheckReply,
}

/// A document as on disk, and the text an edit would give it.
#[derive(Debug, Clone)]
pub struct EditedDocument {
    pub document: DocumentSnapshot,
    pub text: String,
}

/// Fresh diagnostics of a document as on disk, and as the edit would
/// make it.
#[derive(Debug, Clone)]
pub struct CheckReply {
    pub before: DiagnosticsReply,
    pub after: DiagnosticsReply,
}

/// A tool's work for this server, before it is sent to the process.
pub enum Work {
    Request(Call),
    Diagnostics(DiagnosticsCall),
    Check(CheckCall),
}

impl Work {
    pub fn into_message(self) -> LanguageServerMsg {
        match self {
            Self::Request(call) => LanguageServerMsg::Request(call),
            Self::Diagnostics(call) => LanguageServerMsg::Diagnostics(call),
            Self::Check(call) => LanguageServerMsg::CheckEdit(call),
        }
    }

    pub fn fail(self, error: Error) {
        match self {
            Self::Request(call) => drop(call.reply.send(Err(error))),
            Self::Diagnostics(call) => drop(call.reply.send(Err(error))),
            Self::Check(call) => drop(call.reply.send(Err(error))),
        }
    }

    /// The documents the work is about: none, one, or a check's.
    pub fn documents(&self) -> Vec<&DocumentSnapshot> {
        match self {
            Self::Request(call) => call.request.document.iter().collect(),
            Self::Diagnostics(call) => vec![&call.document],
            Self::Check(call) => call.edits.iter().map(|edit| &edit.document).collect(),
        }
    }
}

pub enum LanguageServerMsg {
    Request(Call),
    Diagnostics(DiagnosticsCall),
    CheckEdit(CheckCall),
    /// The diagnostics of `uri` at the current step of check `check`.
    CheckStep {
        check: u64,
        uri: String,
        result: Result<DiagnosticsReply>,
    },
    /// How busy the server is, for background work to keep out of the
    /// way and for `search` to know a server still loading.
    Busyness(RpcReplyPort<Busyness>),
    /// Whether the server announced a feature; `false` until it has
    /// answered `initialize`.
    Supports(Feature, RpcReplyPort<bool>),
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
    /// The window holding new requests so that the server can be seen
    /// quiet is over.
    QuietWindowEnded,
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
    Gaps(Vec<&'static ProjectFiles>),
    /// The roots changed: new workspace folders, from the Supervisor.
    Folders(FolderChange),
    /// A server that forgets the documents opened before it has its
    /// configuration has had time to take it in: they are sent again.
    SendOpenAgain,
    /// The server announced it can be asked for diagnostics but refused
    /// the question as a method it does not know: the caller waits for a
    /// publication instead, and so does everyone after it.
    PullRefused(DiagnosticsCall),
    /// tsserver could not outline a file without its being open (it is in
    /// no project tsserver has loaded; `refused`: the server cannot run
    /// the command at all): the outline is asked with the document opened.
    OutlineByOpening {
        call: Call,
        refused: bool,
    },
    /// The body of a TypeScript server's answer to the server's
    /// `tsserver/request` `id`, relayed (`null`: nothing answered it).
    TsserverAnswered {
        id: Value,
        body: Value,
    },
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

#[cfg(test)]
impl Reply {
    /// A plain UTF-16 answer with nothing to say about it, for tests.
    pub fn bare(result: Value) -> Self {
        Self {
            server: "python".into(),
            result,
            encoding: PositionEncoding::Utf16,
            warnings: Vec::new(),
            file_problem: None,
            problems: Vec::new(),
            background_index: false,
        }
    }
}

/// No diagnostics wait outlives this, whatever the server is doing.
pub const DIAGNOSTICS_HARD_LIMIT: Duration = Duration::from_secs(600);

/// Whether an actor still takes requests. One that is stopping has
/// already reported its exit, and its requests would be dropped.
pub fn is_alive(actor: &ActorRef<LanguageServerMsg>) -> bool {
    matches!(
        actor.get_status(),
        ActorStatus::Running | ActorStatus::Starting
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::Location;
    use serde_json::json;

    fn location(line: u32) -> Value {
        let at = json!({"line": line, "character": 0});
        json!({"uri": "file:///a.py", "range": {"start": at, "end": at}})
    }

    #[test]
    fn a_result_that_breaks_its_type_is_malformed_naming_the_server() {
        let error = Reply::bare(json!({"contents": 1}))
            .read::<Option<lsp_types::Hover>>(Feature::Hover)
            .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("[python] sent a malformed response: its hover does not follow LSP: "),
            "{error}"
        );
    }

    #[test]
    fn a_list_leaves_out_unreadable_items_and_says_how_many() {
        let mut answer = Reply::bare(json!([location(1), {"uri": 7}, location(2), "x"]));
        let found: Vec<Location> = answer.read_list(Feature::References).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(
            answer.warnings,
            vec![
                "warning: [python] sent 2 items in its references answer that do not follow LSP; they are not shown"
            ]
        );
        let mut one = Reply::bare(json!([location(1), {}]));
        let _: Vec<Location> = one.read_list(Feature::References).unwrap();
        assert_eq!(
            one.warnings,
            vec![
                "warning: [python] sent 1 item in its references answer that does not follow LSP; it is not shown"
            ]
        );
    }

    #[test]
    fn null_is_an_empty_list_and_anything_else_but_a_list_is_malformed() {
        let mut empty = Reply::bare(Value::Null);
        let found: Vec<Location> = empty.read_list(Feature::References).unwrap();
        assert!(found.is_empty() && empty.warnings.is_empty());
        let mut object = Reply::bare(location(1));
        assert!(matches!(
            object.read_list::<Location>(Feature::References),
            Err(Error::Malformed { .. })
        ));
    }

    #[test]
    fn uris_written_with_characters_uris_do_not_allow_are_read_repaired() {
        let at = json!({"line": 0, "character": 0});
        let range = json!({"start": at, "end": at});
        let loose = "file:///home/josé/[id]/a.ts";
        let mut answer = Reply::bare(json!([{"uri": loose, "range": range}]));
        let found: Vec<Location> = answer.read_list(Feature::References).unwrap();
        assert_eq!(
            found[0].uri.as_str(),
            "file:///home/jos%C3%A9/%5Bid%5D/a.ts"
        );
        assert!(answer.warnings.is_empty());
        let edit = Reply::bare(json!({"changes": {loose: [{"range": range, "newText": "x"}]}}));
        let edit: lsp_types::WorkspaceEdit = edit.read(Feature::Rename).unwrap();
        let uris: Vec<&str> = edit
            .changes
            .iter()
            .flatten()
            .map(|(uri, _)| uri.as_str())
            .collect();
        assert_eq!(uris, vec!["file:///home/jos%C3%A9/%5Bid%5D/a.ts"]);
    }

    #[test]
    fn typed_params_are_written_as_the_protocol_spells_them() {
        let params = lsp_types::WorkspaceSymbolParams {
            query: "Shape".into(),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        let request = ServerRequest::new("workspace/symbol", &params, Feature::WorkspaceSymbols);
        assert_eq!(request.map(|r| r.params), Ok(json!({"query": "Shape"})));
    }
}
