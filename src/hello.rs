//! The first words on a daemon socket, before any MCP: one JSON line from
//! the connecting process (a bridge attaching a session, or `windlass
//! stop`), one JSON line back from the daemon.

use crate::session_args::ServeArgs;
use anyhow::{Context as _, Result, bail};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use windlass_actors::roots::Change;
use windlass_actors::settings::Identity;
use windlass_actors::supervisor::AttachedSession;

/// Longest handshake line read; a hello is a few hundred bytes.
const MAX_LINE: usize = 1 << 20;

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
        session: Option<String>,
        kind: Option<String>,
    },
    /// What the `status` tool would tell that session.
    Status { session: String },
    /// Fresh diagnostics of `file` (absolute), as the `diagnostics` tool
    /// gives them, through the session named or else the most recently
    /// attached one whose roots hold the file.
    Diagnostics {
        file: PathBuf,
        session: Option<String>,
    },
    /// Roots added, removed or set for a session, as a host's hook asks:
    /// `{"roots": {"session": ID, "add": [DIR, …]}}`.
    Roots {
        session: String,
        #[serde(flatten)]
        change: RootsChange,
    },
    /// Every session attached to the daemon, most recent first.
    Sessions,
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
    /// The session is attached; MCP flows from here on.
    Welcome {
        daemon_pid: u32,
    },
    /// The session could not start (a root that does not exist, a broken
    /// configuration file, another version).
    Refused(String),
    Stopping,
    /// Events follow, one JSON line each.
    Subscribed,
    /// A session's status, as its `status` tool shows it.
    Status(String),
    /// A file's diagnostics, as the `diagnostics` tool shows them.
    Diagnostics(String),
    /// A session's roots after a change, and the roots refused, with why.
    Roots {
        roots: Vec<PathBuf>,
        refused: Vec<String>,
    },
    Sessions(Vec<AttachedSession>),
    Pong {
        version: String,
        /// When the daemon started, in milliseconds since the Unix epoch.
        started: u128,
    },
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

/// Reads one message from a line, refusing lines too long to be one.
pub async fn receive<R, T>(reader: &mut R) -> Result<T>
where
    R: AsyncBufRead + Unpin,
    T: for<'de> Deserialize<'de>,
{
    let line = receive_line(reader).await?;
    serde_json::from_slice(&line).context("a malformed handshake line")
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
            },
        };
        send(&mut writer, &Request::Attach(Box::new(hello)))
            .await
            .unwrap();
        let mut reader = tokio::io::BufReader::new(reader);
        let Request::Attach(got) = receive(&mut reader).await.unwrap() else {
            panic!("not an attach");
        };
        assert_eq!(got.cwd, PathBuf::from("/work"));
        assert_eq!(got.args.roots, vec![PathBuf::from("/work/a")]);
        assert_eq!(got.identity.host_session.as_deref(), Some("abc"));
    }

    #[tokio::test]
    async fn garbage_is_an_error_not_a_panic() {
        let mut reader = tokio::io::BufReader::new(&b"{not json\n"[..]);
        assert!(receive::<_, Request>(&mut reader).await.is_err());
        let mut reader = tokio::io::BufReader::new(&b""[..]);
        assert!(receive::<_, Request>(&mut reader).await.is_err());
    }
}
