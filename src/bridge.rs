//! The bridge: the process an MCP client starts. It finds this user's
//! daemon of its version, starting one (detached) when none answers,
//! attaches a session with its hello, and then carries the MCP stream both
//! ways unchanged, line by line.
//!
//! It reads just enough of each line to survive the daemon: which of the
//! client's requests are unanswered, and the client's `initialize`. If the
//! daemon goes away, those requests get an error that says so at once, a
//! new daemon is started and attached with the same hello, the
//! `initialize` is replayed (its second answer kept from the client), and
//! the client's connection never drops. Where no daemon can be reached or
//! started, the bridge serves the session itself.

use crate::hello::{self, Answer, Hello, Request};
use crate::runtime_dir::{RuntimeDir, version};
use crate::session_args::{self, ServeArgs};
use crate::{logging, standalone};
use anyhow::{Context as _, Result, bail};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::process::Stdio;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use windlass_actors::settings::{Identity, Settings};

/// How long a bridge waits for a daemon to start, or for another bridge
/// that is starting one.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the daemon may take to answer a hello.
const WELCOME_TIMEOUT: Duration = Duration::from_secs(30);
/// Daemon losses within [`REATTACH_WINDOW`] after which the bridge gives
/// up rather than start daemons in a loop.
const MAX_REATTACHES: usize = 5;
const REATTACH_WINDOW: Duration = Duration::from_secs(60);

pub fn run(args: ServeArgs) -> Result<()> {
    logging::init(&args.log_level)?;
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let identity = Identity::of_this_process();
    // Resolved here as well as in the daemon: a bad root or configuration
    // fails here exactly as it does standalone, and a fallback needs them.
    let settings = session_args::resolve(&args, &cwd, identity.clone())?;
    if args.standalone {
        return standalone::run(settings);
    }
    let hello = Hello {
        version: version(),
        cwd,
        args,
        identity,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    match runtime.block_on(attach(&hello)) {
        Ok(daemon) => runtime.block_on(Bridge::new(hello, settings).carry(daemon)),
        Err(error) => {
            tracing::warn!("no daemon ({error:#}); serving standalone");
            drop(runtime);
            standalone::run(settings)
        }
    }
}

/// An attached session's socket, to the daemon or to a standalone thread.
struct Daemon {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
}

/// The little of the MCP stream the bridge must remember.
struct Bridge {
    hello: Hello,
    settings: Settings,
    /// The client's `initialize` request and `initialized` notification,
    /// replayed to a new daemon.
    initialize: Option<Vec<u8>>,
    initialized: Option<Vec<u8>>,
    /// The client's unanswered requests, by id as JSON text.
    in_flight: HashMap<String, Value>,
    /// The id of a replayed `initialize`, whose answer the client had.
    replayed: Option<String>,
    reattached: Vec<Instant>,
    /// The thread serving the session when no daemon could be started.
    fallback: Option<JoinHandle<()>>,
}

/// What the bridge reads of a line.
#[derive(Deserialize)]
struct Peek {
    id: Option<Value>,
    method: Option<String>,
}

impl Bridge {
    fn new(hello: Hello, settings: Settings) -> Self {
        Self {
            hello,
            settings,
            initialize: None,
            initialized: None,
            in_flight: HashMap::new(),
            replayed: None,
            reattached: Vec::new(),
            fallback: None,
        }
    }

    /// Carries lines both ways until the client goes away.
    async fn carry(mut self, mut daemon: Daemon) -> Result<()> {
        let (client_in, mut client_out) = rmcp::transport::io::stdio_pipes();
        let mut client_in = BufReader::new(client_in);
        let mut from_client = Vec::new();
        let mut from_daemon = Vec::new();
        loop {
            // Both reads are cancel-safe: a partial line stays in its
            // buffer for the next turn.
            tokio::select! {
                read = client_in.read_until(b'\n', &mut from_client) => {
                    if matches!(read, Ok(0) | Err(_)) {
                        let _closed = daemon.writer.shutdown().await;
                        break;
                    }
                    let id = self.note_from_client(&from_client);
                    while daemon.writer.write_all(&from_client).await.is_err() {
                        // The daemon never had this line: the next one gets
                        // it, after the handshake replayed to it.
                        tracing::debug!("the line did not reach the daemon");
                        if let Some(id) = &id {
                            self.in_flight.remove(id);
                        }
                        daemon = self.reattach(&mut client_out).await?;
                        if self.replays(&from_client) {
                            break;
                        }
                        self.note_from_client(&from_client);
                    }
                    from_client.clear();
                }
                read = daemon.reader.read_until(b'\n', &mut from_daemon) => {
                    if matches!(read, Ok(0) | Err(_)) {
                        tracing::debug!(?read, "end of the daemon's stream");
                        from_daemon.clear();
                        daemon = self.reattach(&mut client_out).await?;
                        continue;
                    }
                    if self.passes(&from_daemon) {
                        client_out.write_all(&from_daemon).await?;
                        client_out.flush().await?;
                    }
                    from_daemon.clear();
                }
            }
        }
        drop(daemon);
        if let Some(thread) = self.fallback.take() {
            // Its session ends with the closed socket; its servers stop.
            let _joined = tokio::task::spawn_blocking(move || thread.join()).await;
        }
        Ok(())
    }

    /// Remembers what the bridge needs of a client line; returns the id
    /// of a request, as JSON text.
    fn note_from_client(&mut self, line: &[u8]) -> Option<String> {
        let peek = serde_json::from_slice::<Peek>(line).ok()?;
        match (peek.id, peek.method.as_deref()) {
            (Some(id), Some(method)) => {
                if method == "initialize" {
                    self.initialize = Some(line.to_vec());
                }
                let key = id.to_string();
                self.in_flight.insert(key.clone(), id);
                Some(key)
            }
            (None, Some("notifications/initialized")) => {
                self.initialized = Some(line.to_vec());
                None
            }
            _ => None,
        }
    }

    /// Whether `line` is part of the handshake a reattach replays.
    fn replays(&self, line: &[u8]) -> bool {
        [&self.initialize, &self.initialized]
            .into_iter()
            .flatten()
            .any(|replayed| replayed.as_slice() == line)
    }

    /// Whether a line from the daemon goes on to the client: all do but
    /// the answer to a replayed `initialize`.
    fn passes(&mut self, line: &[u8]) -> bool {
        let Ok(Peek {
            id: Some(id),
            method: None,
        }) = serde_json::from_slice::<Peek>(line)
        else {
            return true;
        };
        let id = id.to_string();
        if self.replayed.as_ref() == Some(&id) {
            self.replayed = None;
            return false;
        }
        self.in_flight.remove(&id);
        true
    }

    /// The daemon went away: fails the calls it had, attaches to a new
    /// one (or a standalone thread) and replays the handshake.
    async fn reattach(&mut self, client: &mut (impl AsyncWrite + Unpin)) -> Result<Daemon> {
        let now = Instant::now();
        self.reattached
            .retain(|at| now.duration_since(*at) < REATTACH_WINDOW);
        if self.reattached.len() >= MAX_REATTACHES {
            bail!("the daemon was lost {MAX_REATTACHES} times within a minute; giving up");
        }
        self.reattached.push(now);
        tracing::warn!("the daemon went away; attaching to a new one");
        for (_, id) in self.in_flight.drain() {
            let error = json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {
                    "code": -32603,
                    "message": "the windlass daemon stopped while this call was in flight; a new daemon was started, call again",
                },
            });
            let mut line = serde_json::to_vec(&error)?;
            line.push(b'\n');
            client.write_all(&line).await?;
        }
        client.flush().await?;
        let mut daemon = match attach(&self.hello).await {
            Ok(daemon) => daemon,
            Err(error) => {
                tracing::warn!("no daemon ({error:#}); serving standalone in this process");
                self.serve_standalone()?
            }
        };
        if let Some(initialize) = &self.initialize {
            daemon.writer.write_all(initialize).await?;
            self.replayed = serde_json::from_slice::<Peek>(initialize)
                .ok()
                .and_then(|peek| peek.id)
                .map(|id| id.to_string());
        }
        if let Some(initialized) = &self.initialized {
            daemon.writer.write_all(initialized).await?;
        }
        Ok(daemon)
    }

    fn serve_standalone(&mut self) -> Result<Daemon> {
        if self.fallback.is_some() {
            bail!("the standalone server in this process stopped");
        }
        let (stream, thread) = standalone::spawn(self.settings.clone())?;
        self.fallback = Some(thread);
        stream.set_nonblocking(true)?;
        let (reader, writer) = UnixStream::from_std(stream)?.into_split();
        Ok(Daemon {
            reader: BufReader::new(reader),
            writer,
        })
    }
}

/// Attaches a session to this version's daemon, starting it if needed.
async fn attach(hello: &Hello) -> Result<Daemon> {
    let directory = RuntimeDir::open()?;
    if let Ok(stream) = UnixStream::connect(directory.socket()).await {
        match handshake(stream, hello).await {
            Ok(daemon) => return Ok(daemon),
            // A daemon on its way out; start another.
            Err(error) => tracing::info!("the daemon did not attach the session: {error:#}"),
        }
    }
    let stream = start_daemon(&directory).await?;
    handshake(stream, hello).await
}

async fn handshake(stream: UnixStream, hello: &Hello) -> Result<Daemon> {
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    hello::send(&mut writer, &Request::Attach(Box::new(hello.clone()))).await?;
    let answer = tokio::time::timeout(WELCOME_TIMEOUT, hello::receive(&mut reader))
        .await
        .context("the daemon did not answer the hello")??;
    match answer {
        Answer::Welcome { daemon_pid } => {
            tracing::info!(daemon_pid, "attached to the daemon");
            Ok(Daemon { reader, writer })
        }
        Answer::Refused(reason) => bail!("the daemon refused the session: {reason}"),
        Answer::Stopping => bail!("the daemon is stopping"),
        Answer::Pong { .. } => bail!("the daemon answered a hello with a pong"),
    }
}

/// Starts this version's daemon, unless another bridge is doing so or has
/// done so; returns a connection to it.
async fn start_daemon(directory: &RuntimeDir) -> Result<UnixStream> {
    let socket = directory.socket();
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(directory.start_lock())
        .context("opening the daemon's start lock")?;
    lock_exclusively(&lock).await?;
    if let Ok(stream) = UnixStream::connect(&socket).await {
        return Ok(stream);
    }
    let mut daemon = std::process::Command::new(std::env::current_exe()?)
        .arg("daemon")
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting the daemon")?;
    tracing::info!(pid = daemon.id(), "started a daemon");
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Ok(stream) = UnixStream::connect(&socket).await {
            // Reaped by a thread of its own once it exits.
            std::thread::spawn(move || daemon.wait());
            return Ok(stream);
        }
        if let Some(status) = daemon.try_wait()? {
            bail!("the daemon exited as it started ({status}); its log is in the state directory");
        }
        if Instant::now() > deadline {
            let _killed = daemon.kill();
            bail!(
                "the daemon did not listen within {} s",
                START_TIMEOUT.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Takes the start lock, waiting while another bridge holds it; it is
/// released when the file is closed.
async fn lock_exclusively(lock: &File) -> Result<()> {
    use rustix::fs::{FlockOperation, flock};
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        match flock(lock, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::WOULDBLOCK) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(error) => bail!("taking the daemon's start lock: {error}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bridge() -> Bridge {
        let hello = Hello {
            version: "0".into(),
            cwd: "/".into(),
            args: ServeArgs::default(),
            identity: Identity::default(),
        };
        let settings = Settings {
            roots: windlass_actors::roots::RootSet::from_canonical(Vec::new()),
            roots_pinned: false,
            servers: Vec::new(),
            request_timeout: Duration::from_secs(1),
            idle_timeout: Duration::ZERO,
            diagnostics_settle: None,
            max_output_bytes: 1024,
            warnings: Vec::new(),
            reload: None,
            config_directories: Vec::new(),
            identity: Identity::default(),
        };
        Bridge::new(hello, settings)
    }

    #[test]
    fn requests_are_in_flight_until_answered() {
        let mut bridge = bridge();
        bridge.note_from_client(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
        bridge.note_from_client(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        bridge.note_from_client(br#"{"jsonrpc":"2.0","id":"a","method":"tools/call"}"#);
        assert!(bridge.initialize.is_some() && bridge.initialized.is_some());
        assert_eq!(bridge.in_flight.len(), 2);
        assert!(bridge.passes(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        // A request of the daemon's own is not an answer.
        assert!(bridge.passes(br#"{"jsonrpc":"2.0","id":"a","method":"roots/list"}"#));
        assert_eq!(bridge.in_flight.len(), 1);
        assert!(bridge.passes(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#));
        assert!(bridge.in_flight.is_empty());
    }

    #[test]
    fn the_answer_to_a_replayed_initialize_is_kept_from_the_client() {
        let mut bridge = bridge();
        bridge.replayed = Some("1".into());
        assert!(!bridge.passes(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        assert!(bridge.passes(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        assert!(bridge.passes(b"not json at all"));
    }
}
