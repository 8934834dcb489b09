//! The control protocol: one JSON line from the connecting process (a
//! bridge attaching a session, a command such as `windlass status`, a
//! host's hook), one JSON line back; MCP follows an `attach`, events a
//! `subscribe`. Every request carries the protocol version it speaks, so
//! that a serving process can refuse, saying why, a request from a newer
//! windlass instead of misreading it.

use crate::session_args::ServeArgs;
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::PathBuf;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use windlass_actors::messages::roots::Change;
use windlass_actors::messages::supervisor::AttachedSession;
use windlass_actors::settings::Identity;
use windlass_actors::vocabulary::diagnostics::FileDiagnostics;
use windlass_actors::vocabulary::edit_effect::EditEffect;
use windlass_actors::vocabulary::events::EventKind;
use windlass_actors::vocabulary::ids::SessionId;
use windlass_actors::vocabulary::status::{ServerReport, SessionStatus};

/// Longest handshake line read; a hello is a few hundred bytes.
const MAX_LINE: usize = 1 << 20;

/// The version of the requests and answers below. A change that an older
/// serving process, or an older client, would misread takes the next
/// number. 2: `diagnostics` and `status` are answered with data, not
/// the tools' text.
pub const PROTOCOL: u64 = 2;

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// Attach a session; MCP follows the answer.
    Attach(Box<Hello>),
    /// Stop the daemon and its servers.
    Stop,
    /// Whether a daemon answers, and which version it is.
    Ping,
    /// Live events from now on (`windlass monitor`), as JSON lines after
    /// the answer, until the connection closes.
    Subscribe {
        /// One session's events and its servers'; all when absent.
        session: Option<SessionId>,
        kind: Option<EventKind>,
    },
    /// What the `status` tool would tell that session.
    Status { session: SessionId },
    /// Fresh diagnostics of `file` (absolute), as data, through the
    /// session named or else the most recently attached one whose roots
    /// hold the file.
    Diagnostics {
        file: PathBuf,
        session: Option<SessionId>,
    },
    /// A file a host's tool is about to edit, kept as it is for the
    /// edit's effect; addressed as `diagnostics` is.
    PrepareEdit {
        file: PathBuf,
        session: Option<SessionId>,
    },
    /// What the edit of a prepared file did to the files that use what it
    /// changed.
    EditEffect {
        file: PathBuf,
        session: Option<SessionId>,
    },
    /// Roots added, removed or set for a session, as a host's hook asks:
    /// `{"roots": {"session": ID, "add": [DIR, …]}}`.
    Roots {
        session: SessionId,
        #[serde(flatten)]
        change: RootsChange,
    },
    /// Every session attached to the daemon, most recent first.
    Sessions,
    /// Every server the daemon has started, whether a session uses it or
    /// it waits for the next, in name order; each report's `shared_with`
    /// names all its sessions.
    Servers,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RootsChange {
    Add(Vec<PathBuf>),
    Remove(Vec<PathBuf>),
    Set(Vec<PathBuf>),
}

impl From<RootsChange> for Change {
    fn from(change: RootsChange) -> Self {
        match change {
            RootsChange::Add(paths) => Change::Add(paths),
            RootsChange::Remove(paths) => Change::Remove(paths),
            RootsChange::Set(paths) => Change::Set(paths),
        }
    }
}

/// What a bridge tells the daemon about its session.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hello {
    pub version: String,
    /// The directory the MCP client started the bridge in.
    pub cwd: PathBuf,
    /// Its `serve` flags and `WINDLASS_*` variables.
    pub args: ServeArgs,
    pub identity: Identity,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// The request is refused, with why. Spelled as a bridge's
    /// `AttachAnswer::Refused` (`handshake.rs`), so that a hello refused
    /// before it is read (a newer protocol) reaches the bridge as its own
    /// answer; a hello read is answered with an `AttachAnswer`.
    Refused(String),
    Stopping,
    /// Events follow, one JSON line each.
    Subscribed,
    /// A session's status, as data: its `status` tool renders the same.
    Status(SessionStatus),
    /// A file's diagnostics, as data: the `diagnostics` tool renders the
    /// same.
    Diagnostics(FileDiagnostics),
    /// The file is kept for its edit's effect.
    Prepared,
    /// What an edit did to the files it did not edit, as data.
    EditEffect(EditEffect),
    /// A session's roots after a change, and the roots refused, with why.
    Roots {
        roots: Vec<PathBuf>,
        refused: Vec<String>,
    },
    Sessions(Vec<AttachedSession>),
    Servers(Vec<ServerReport>),
    Pong {
        version: String,
        /// When the daemon started, in milliseconds since the Unix epoch.
        started: u128,
        /// The control protocol it speaks.
        #[serde(default)]
        protocol: u64,
        /// Why its events are not being recorded, when they are not.
        #[serde(default)]
        store: Option<String>,
    },
}

/// `request` as one line: `{"protocol": 1, "status": {…}}`.
pub fn encode(request: &Request) -> Result<Vec<u8>> {
    let mut object = match serde_json::to_value(request)? {
        Value::Object(object) => object,
        // A request without fields ("stop") is written as one with none.
        Value::String(name) => Map::from_iter([(name, Value::Null)]),
        other => bail!("a request that is not an object: {other}"),
    };
    object.insert("protocol".into(), PROTOCOL.into());
    let mut line = serde_json::to_vec(&object)?;
    line.push(b'\n');
    Ok(line)
}

/// The request on `line`, or why this process cannot take it: a newer
/// protocol, a request it does not know, or not JSON at all.
pub fn decode(line: &[u8]) -> std::result::Result<Request, String> {
    let refused = |why: String| {
        format!(
            "this windlass (version {}, control protocol {PROTOCOL}) cannot take this request: {why}",
            env!("CARGO_PKG_VERSION")
        )
    };
    let value: Value = serde_json::from_slice(line).map_err(|error| refused(error.to_string()))?;
    let request = match value {
        Value::Object(mut object) => {
            let protocol = match object.remove("protocol") {
                None => 1,
                Some(protocol) => protocol
                    .as_u64()
                    .ok_or_else(|| refused(format!("the protocol {protocol} is not a number")))?,
            };
            if protocol > PROTOCOL {
                return Err(refused(format!(
                    "it speaks protocol {protocol}; update this windlass"
                )));
            }
            let answered_as_data = ["diagnostics", "status"]
                .into_iter()
                .find(|request| object.contains_key(*request));
            if let Some(request) = answered_as_data
                && protocol < 2
            {
                return Err(refused(format!(
                    "since protocol 2 {request} is answered as data, which a protocol 1 client would misread"
                )));
            }
            Value::Object(object)
        }
        plain => plain,
    };
    serde_json::from_value(request).map_err(|error| refused(error.to_string()))
}

/// Writes one message as a line.
pub async fn send<W, T>(writer: &mut W, message: &T) -> Result<()>
where
    W: AsyncWrite + Unpin,
    T: Serialize,
{
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    writer.write_all(&line).await?;
    writer.flush().await?;
    Ok(())
}

/// Reads one handshake line, newline included.
pub async fn receive_line<R>(reader: &mut R) -> Result<Vec<u8>>
where
    R: AsyncBufRead + Unpin,
{
    let mut line = Vec::new();
    let mut limited = (&mut *reader).take(MAX_LINE as u64);
    let read = limited.read_until(b'\n', &mut line).await?;
    if read == 0 {
        bail!("the connection closed before the handshake");
    }
    if !line.ends_with(b"\n") {
        bail!("the handshake line is too long or cut off");
    }
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::handshake::AttachAnswer;

    #[test]
    fn a_bridge_reads_a_refusal_of_any_request_as_its_own() {
        let refused = serde_json::to_vec(&Answer::Refused("too new".into())).unwrap();
        assert_eq!(
            serde_json::from_slice::<AttachAnswer>(&refused).unwrap(),
            AttachAnswer::Refused("too new".into())
        );
        let welcome = AttachAnswer::Welcome { daemon_pid: 7 };
        assert_eq!(
            serde_json::to_string(&welcome).unwrap(),
            r#"{"welcome":{"daemon_pid":7}}"#
        );
    }

    #[tokio::test]
    async fn a_hello_crosses_the_socket_intact() {
        let (client, server) = tokio::io::duplex(4096);
        let (_, mut writer) = tokio::io::split(client);
        let (reader, _) = tokio::io::split(server);
        let hello = Hello {
            version: "1.2.3".into(),
            cwd: "/work".into(),
            args: ServeArgs {
                roots: vec!["/work/a".into()],
                ..ServeArgs::default()
            },
            identity: Identity {
                host_session: Some("abc".into()),
                client_pid: Some(7),
                ..Identity::default()
            },
        };
        let line = encode(&Request::Attach(Box::new(hello))).unwrap();
        writer.write_all(&line).await.unwrap();
        let mut reader = tokio::io::BufReader::new(reader);
        let line = receive_line(&mut reader).await.unwrap();
        let Request::Attach(got) = decode(&line).unwrap() else {
            panic!("not an attach");
        };
        assert_eq!(got.cwd, PathBuf::from("/work"));
        assert_eq!(got.args.roots, vec![PathBuf::from("/work/a")]);
        assert_eq!(got.identity.host_session.as_deref(), Some("abc"));
    }

    #[test]
    fn every_request_carries_the_protocol_and_decodes_back() {
        for request in [
            Request::Stop,
            Request::Sessions,
            Request::Servers,
            Request::Status {
                session: SessionId(42),
            },
        ] {
            let line = encode(&request).unwrap();
            let value: Value = serde_json::from_slice(&line).unwrap();
            assert_eq!(value["protocol"], PROTOCOL);
            let back = decode(&line).unwrap();
            assert_eq!(format!("{back:?}"), format!("{request:?}"));
        }
        // Hand-written requests may leave the protocol out.
        assert!(matches!(decode(b"\"ping\""), Ok(Request::Ping)));
        assert!(matches!(
            decode(br#"{"subscribe": {"session": "0000000x", "kind": null}}"#),
            Ok(Request::Subscribe { .. })
        ));
        // A session is named by its id as shown, nothing else.
        let unnamed = decode(br#"{"protocol": 2, "status": {"session": "x"}}"#).unwrap_err();
        assert!(unnamed.contains("\"x\" is not a session id"), "{unnamed}");
        // Except those a protocol 1 client would misread the answer of.
        let status = decode(br#"{"status": {"session": "x"}}"#).unwrap_err();
        assert!(status.contains("status is answered as data"), "{status}");
    }

    #[test]
    fn a_newer_protocol_or_an_unknown_request_is_refused_saying_which() {
        let line = format!(
            r#"{{"protocol": {}, "status": {{"session": "x"}}}}"#,
            PROTOCOL + 1
        );
        let newer = decode(line.as_bytes()).unwrap_err();
        assert!(
            newer.contains(&format!("protocol {}", PROTOCOL + 1)),
            "{newer}"
        );
        let older = decode(br#"{"protocol": 1, "diagnostics": {"file": "/a.py"}}"#).unwrap_err();
        assert!(older.contains("answered as data"), "{older}");
        let unknown = decode(br#"{"protocol": 1, "frobnicate": {}}"#).unwrap_err();
        assert!(unknown.contains("frobnicate"), "{unknown}");
        assert!(unknown.contains("status"), "lists what it knows: {unknown}");
        assert!(decode(b"{not json").is_err());
    }

    #[tokio::test]
    async fn garbage_is_an_error_not_a_panic() {
        let mut reader = tokio::io::BufReader::new(&b"{not json\n"[..]);
        let line = receive_line(&mut reader).await.unwrap();
        assert!(decode(&line).is_err());
        let mut reader = tokio::io::BufReader::new(&b""[..]);
        assert!(receive_line(&mut reader).await.is_err());
        let mut reader = tokio::io::BufReader::new(&[b'x'; MAX_LINE + 1][..]);
        assert!(receive_line(&mut reader).await.is_err());
    }
}
