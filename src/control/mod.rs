//! The control socket of a serving process: the daemon's, which every
//! bridge, command and hook talks to, or a standalone session's own. Each
//! connection sends one request (see [`protocol`]): the daemon attaches a
//! session on `attach` and stops on `stop`; both answer `status`,
//! `diagnostics`, `roots`, `sessions`, `ping`, and stream events on
//! `subscribe`. Only this user may connect. The questions go to the
//! Supervisor and the subscriptions to the Recorder.

pub mod client;
pub mod handshake;
pub mod protocol;

use crate::runtime_dir::version;
use crate::session_args;
use anyhow::{Context as _, Result, bail};
use handshake::AttachAnswer;
use protocol::{Answer, Hello, Request};
use ractor::rpc::CallResult;
use ractor::{ActorRef, RpcReplyPort};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncReadExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;
use windlass_actors::gateway::server_reports;
use windlass_actors::messages::recorder::{Filter, RecorderMsg};
use windlass_actors::messages::session::{Addressee, SessionQuestion};
use windlass_actors::messages::supervisor::{Connection, SupervisorMsg};
use windlass_actors::vocabulary::ids::SessionId;

/// How long a connection may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the actors may take to take a subscription or answer a
/// question about a session.
const ACTOR_TIMEOUT: Duration = Duration::from_secs(5);
/// Diagnostics may wait for a loading server and for the diagnostics of
/// a change; the tool itself gives up well before this.
const DIAGNOSTICS_TIMEOUT: Duration = Duration::from_secs(120);

/// When this process started serving, in milliseconds since the Unix
/// epoch: a daemon that started later is the newer one.
pub fn started() -> u128 {
    static STARTED: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    *STARTED.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_millis())
    })
}

/// What a connection may reach.
#[derive(Clone)]
pub struct Control {
    pub supervisor: ActorRef<SupervisorMsg>,
    pub recorder: ActorRef<RecorderMsg>,
    /// The daemon's socket; a standalone session's neither attaches
    /// sessions nor stops its process.
    pub daemon: bool,
}

/// Binds `socket`, 0600, unless a process already answers on it; a
/// socket nobody answers on is left over from one that died. Returns the
/// socket's inode, to remove it on the way out only if it is still ours.
pub async fn bind(socket: &Path) -> Result<(UnixListener, u64)> {
    if socket.exists() {
        if UnixStream::connect(socket).await.is_ok() {
            bail!("a process already listens on {}", socket.display());
        }
        std::fs::remove_file(socket)
            .with_context(|| format!("removing the stale {}", socket.display()))?;
    }
    let listener =
        UnixListener::bind(socket).with_context(|| format!("binding {}", socket.display()))?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
    let inode = std::fs::metadata(socket)?.ino();
    Ok((listener, inode))
}

/// Removes `socket` if it is still the one bound with `inode`: a process
/// started after this one stopped answering may own the path now.
pub fn unbind(socket: &Path, inode: u64) {
    if std::fs::metadata(socket).is_ok_and(|metadata| metadata.ino() == inode) {
        let _gone = std::fs::remove_file(socket);
    }
}

/// Answers connections until one asks the daemon to stop; never returns
/// for a standalone session's socket.
pub async fn accept(listener: UnixListener, control: Control) -> String {
    let (stop, mut stopping) = mpsc::channel::<()>(1);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(admit(stream, control.clone(), stop.clone()));
                }
                Err(error) => {
                    // Out of descriptors, most likely: wait rather than spin.
                    tracing::warn!("accepting a connection failed: {error}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            _ = stopping.recv() => return "stopped by `windlass stop`".into(),
        }
    }
}

async fn admit(stream: UnixStream, control: Control, stop: mpsc::Sender<()>) {
    if let Err(error) = answer(stream, control, stop).await {
        tracing::warn!("a connection was turned away: {error:#}");
    }
}

async fn answer(stream: UnixStream, control: Control, stop: mpsc::Sender<()>) -> Result<()> {
    let peer = stream.peer_cred()?.uid();
    let own = rustix::process::getuid().as_raw();
    if peer != own {
        bail!("a peer of uid {peer} is not this process's user ({own})");
    }
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    let line = tokio::time::timeout(REQUEST_TIMEOUT, protocol::receive_line(&mut reader))
        .await
        .context("no request in time")??;
    let request = match protocol::decode(&line) {
        Ok(request) => request,
        Err(refusal) => {
            protocol::send(&mut writer, &Answer::Refused(refusal.clone())).await?;
            bail!(refusal);
        }
    };
    let answer = match request {
        Request::Subscribe { session, kind } => {
            let filter = Filter { session, kind };
            return subscribe(reader, writer, &control.recorder, filter).await;
        }
        Request::Attach(hello) if control.daemon => {
            return attach(*hello, reader, writer, &control.supervisor).await;
        }
        Request::Attach(_) => Answer::Refused(not_a_daemon("attaches no sessions")),
        Request::Stop if control.daemon => {
            protocol::send(&mut writer, &Answer::Stopping).await?;
            let _stopping = stop.send(()).await;
            return Ok(());
        }
        Request::Stop => Answer::Refused(not_a_daemon("stops with its client")),
        Request::Ping => Answer::Pong {
            version: version(),
            started: started(),
            protocol: protocol::PROTOCOL,
            store: store_trouble(&control.recorder).await,
        },
        question => ask_about(question, &control.supervisor).await,
    };
    protocol::send(&mut writer, &answer).await
}

/// The session named, or else the most recently attached one whose roots
/// hold `file`.
fn addressee(session: Option<SessionId>, file: &Path) -> Addressee {
    match session {
        Some(session) => Addressee::Named(session),
        None => Addressee::Holding(file.to_path_buf()),
    }
}

fn not_a_daemon(why: &str) -> String {
    format!("this is a standalone session's socket, not a daemon's: it {why}")
}

/// The answer to a question about the sessions: the Supervisor's, as
/// [`ask`] turns it into an answer or a refusal.
async fn ask_about(question: Request, supervisor: &ActorRef<SupervisorMsg>) -> Answer {
    match question {
        Request::Status { session } => {
            let message = |reply| SupervisorMsg::AskSession {
                to: Addressee::Named(session),
                question: SessionQuestion::Status(reply),
            };
            ask(supervisor, message, ACTOR_TIMEOUT, Answer::Status).await
        }
        Request::Diagnostics { file, session } => {
            let message = |reply| SupervisorMsg::AskSession {
                to: addressee(session, &file),
                question: SessionQuestion::Diagnostics { file, reply },
            };
            ask(
                supervisor,
                message,
                DIAGNOSTICS_TIMEOUT,
                Answer::Diagnostics,
            )
            .await
        }
        Request::PrepareEdit { file, session } => {
            let message = |reply| SupervisorMsg::AskSession {
                to: addressee(session, &file),
                question: SessionQuestion::PrepareEdit { file, reply },
            };
            ask(supervisor, message, ACTOR_TIMEOUT, |()| Answer::Prepared).await
        }
        Request::EditEffect { file, session } => {
            let message = |reply| SupervisorMsg::AskSession {
                to: addressee(session, &file),
                question: SessionQuestion::EditEffect { file, reply },
            };
            ask(supervisor, message, DIAGNOSTICS_TIMEOUT, Answer::EditEffect).await
        }
        Request::Roots { session, change } => {
            let message = |reply| SupervisorMsg::AskSession {
                to: Addressee::Named(session),
                question: SessionQuestion::ChangeRoots {
                    change: change.into(),
                    reply,
                },
            };
            ask(supervisor, message, ACTOR_TIMEOUT, |answer| Answer::Roots {
                roots: answer
                    .roots
                    .roots()
                    .iter()
                    .map(|root| root.path.clone())
                    .collect(),
                refused: answer.refused,
            })
            .await
        }
        Request::Sessions => {
            ask(
                supervisor,
                SupervisorMsg::Sessions,
                ACTOR_TIMEOUT,
                Answer::Sessions,
            )
            .await
        }
        Request::Servers => match asked(supervisor, SupervisorMsg::Pool, ACTOR_TIMEOUT).await {
            Ok(records) => Answer::Servers(server_reports(records, None).await),
            Err(refusal) => refusal,
        },
        Request::Attach(_) | Request::Stop | Request::Ping | Request::Subscribe { .. } => {
            Answer::Refused("not a question".into())
        }
    }
}

/// Why the serving process records nothing, if it does not.
async fn store_trouble(recorder: &ActorRef<RecorderMsg>) -> Option<String> {
    match recorder
        .call(RecorderMsg::Problem, Some(ACTOR_TIMEOUT))
        .await
    {
        Ok(CallResult::Success(trouble)) => trouble,
        _ => Some("the event recorder did not answer in time".into()),
    }
}

/// Asks the Supervisor on behalf of the socket: its answer as `answered`
/// says it, its error or its silence as a refusal.
async fn ask<T, M>(
    supervisor: &ActorRef<SupervisorMsg>,
    message: M,
    limit: Duration,
    answered: impl FnOnce(T) -> Answer,
) -> Answer
where
    M: FnOnce(RpcReplyPort<Result<T, String>>) -> SupervisorMsg,
    T: Send + 'static,
{
    asked(supervisor, message, limit)
        .await
        .map_or_else(|refusal| refusal, answered)
}

/// The Supervisor's answer, or the refusal its error or its silence
/// makes.
async fn asked<T, M>(
    supervisor: &ActorRef<SupervisorMsg>,
    message: M,
    limit: Duration,
) -> Result<T, Answer>
where
    M: FnOnce(RpcReplyPort<Result<T, String>>) -> SupervisorMsg,
    T: Send + 'static,
{
    match supervisor.call(message, Some(limit)).await {
        Ok(CallResult::Success(Ok(value))) => Ok(value),
        Ok(CallResult::Success(Err(error))) => Err(Answer::Refused(error)),
        _ => Err(Answer::Refused(
            "the serving process did not answer in time".into(),
        )),
    }
}

/// Attaches a bridge's session: its settings resolved as a standalone
/// process in the bridge's directory would, then MCP on this connection.
async fn attach(
    hello: Hello,
    reader: BufReader<OwnedReadHalf>,
    mut writer: OwnedWriteHalf,
    supervisor: &ActorRef<SupervisorMsg>,
) -> Result<()> {
    if hello.version != version() {
        let refusal = format!(
            "this daemon is version {}, not {}",
            version(),
            hello.version
        );
        protocol::send(&mut writer, &AttachAnswer::Refused(refusal.clone())).await?;
        bail!(refusal);
    }
    let cwd = hello.cwd.clone();
    let resolved = tokio::task::spawn_blocking(move || {
        session_args::resolve(&hello.args, &hello.cwd, hello.identity)
    })
    .await?;
    let settings = match resolved {
        Ok(settings) => settings,
        Err(error) => {
            let refusal = format!("{error:#}");
            protocol::send(&mut writer, &AttachAnswer::Refused(refusal)).await?;
            return Err(error.context(format!("a session in {}", cwd.display())));
        }
    };
    let welcome = AttachAnswer::Welcome {
        daemon_pid: std::process::id(),
    };
    protocol::send(&mut writer, &welcome).await?;
    let attach = SupervisorMsg::Attach {
        settings: Box::new(settings),
        connection: Connection::Stream(Box::new(reader), Box::new(writer)),
    };
    supervisor
        .send_message(attach)
        .map_err(|_| anyhow::anyhow!("the daemon is stopping"))
}

/// Streams the events that pass `filter` until the subscriber hangs up.
async fn subscribe(
    mut reader: BufReader<OwnedReadHalf>,
    mut writer: OwnedWriteHalf,
    recorder: &ActorRef<RecorderMsg>,
    filter: Filter,
) -> Result<()> {
    let mut events = match recorder
        .call(
            |reply| RecorderMsg::Subscribe(filter, reply),
            Some(ACTOR_TIMEOUT),
        )
        .await
    {
        Ok(CallResult::Success(events)) => events,
        _ => bail!("the recorder did not take the subscription"),
    };
    protocol::send(&mut writer, &Answer::Subscribed).await?;
    let mut ignored = [0u8; 256];
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(event) => protocol::send(&mut writer, &event).await?,
                None => return Ok(()),
            },
            // Nothing is read after the request but the hang-up.
            read = reader.read(&mut ignored) => match read {
                Ok(0) | Err(_) => return Ok(()),
                Ok(_) => {}
            },
        }
    }
}
