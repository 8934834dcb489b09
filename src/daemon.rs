//! The daemon: one per user and version, owning the actor tree that every
//! attached session shares. It listens on its socket in the runtime
//! directory, admits only its own user, reads each connection's hello,
//! resolves that session's settings as a standalone process in the
//! bridge's directory would, and hands the connection to the Supervisor
//! as a new session. It stops on `windlass stop`, a signal, or when it has
//! lingered without sessions.

use crate::hello::{self, Answer, Hello, Request};
use crate::runtime_dir::{RuntimeDir, version};
use crate::{logging, session_args, tree};
use anyhow::{Context as _, Result, bail};
use ractor::rpc::CallResult;
use ractor::{ActorRef, RpcReplyPort};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;
use windlass_actors::gateway::Connection;
use windlass_actors::recorder::RecorderMsg;
use windlass_actors::recorder::subscribers::Filter;
use windlass_actors::supervisor::{self, Lifetime, Mode, RestartPolicy, SupervisorMsg};

/// How long a connection may take to say hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the daemon's actors may take to take a subscription or
/// answer a session's status.
const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(5);
/// Diagnostics may wait for a loading server and for the diagnostics of
/// a change; the tool itself gives up well before this.
const DIAGNOSTICS_TIMEOUT: Duration = Duration::from_secs(120);
/// How often the runtime directory is checked for a newer daemon of
/// another version.
const VERSION_CHECK: Duration = Duration::from_secs(2);

/// When this daemon started, in milliseconds since the Unix epoch.
fn started() -> u128 {
    static STARTED: std::sync::OnceLock<u128> = std::sync::OnceLock::new();
    *STARTED.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_millis())
    })
}

#[derive(clap::Args, Clone, Debug)]
pub struct DaemonArgs {
    /// Stay attached to the terminal instead of detaching.
    #[arg(long)]
    pub foreground: bool,
    /// Seconds to stay up after the last session ends.
    #[arg(long, env = "WINDLASS_LINGER", value_name = "SECS")]
    pub linger: Option<u64>,
    /// Seconds without a request after which a server stops; 0 = never.
    #[arg(long, env = "WINDLASS_SERVER_IDLE", value_name = "SECS")]
    pub server_idle: Option<u64>,
    /// The servers' total RSS above which idle ones stop, least recently
    /// used first ("4GiB", "512MiB", bytes; "0" = no budget).
    #[arg(long, env = "WINDLASS_MEMORY_BUDGET", value_name = "SIZE")]
    pub memory_budget: Option<String>,
    /// Log filter for the log file (error, warn, info, debug, trace).
    #[arg(long, env = "WINDLASS_LOG", default_value = "info")]
    pub log_level: String,
}

pub fn run(args: DaemonArgs) -> Result<()> {
    if !args.foreground {
        // Its own session: the terminal and process group of the bridge
        // that started it can go away without taking it along.
        let _already_a_leader = rustix::process::setsid();
    }
    logging::init(&args.log_level)?;
    let directory = RuntimeDir::open()?;
    let config = crate::config::daemon_config()?;
    let server_idle = args.server_idle.unwrap_or(config.server_idle);
    let lifetime = Lifetime {
        linger: Duration::from_secs(args.linger.unwrap_or(config.linger)),
        server_idle: (server_idle > 0).then(|| Duration::from_secs(server_idle)),
        memory_budget: match &args.memory_budget {
            Some(budget) => crate::config::parse_bytes(budget)?,
            None => config.memory_budget,
        },
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let served = runtime.block_on(serve(&directory, lifetime));
    runtime.shutdown_timeout(Duration::from_secs(2));
    served
}

async fn serve(directory: &RuntimeDir, lifetime: Lifetime) -> Result<()> {
    let socket = directory.socket();
    started();
    let (listener, inode) = bind(&socket).await?;
    tracing::info!(socket = %socket.display(), pid = std::process::id(), version = %version(), "daemon listening");
    let arguments = |recorder| supervisor::Arguments {
        policy: RestartPolicy::default(),
        mode: Mode::Daemon(lifetime),
        first: None,
        recorder,
        socket: Some(socket.clone()),
    };
    let served = tree::run(arguments, |supervisor, recorder| async move {
        tokio::select! {
            reason = accept(listener, supervisor.clone(), recorder) => reason,
            never = watch_versions(directory, supervisor) => never,
        }
    })
    .await;
    // A daemon started after this one stopped answering may own the path now.
    if std::fs::metadata(&socket).is_ok_and(|metadata| metadata.ino() == inode) {
        let _gone = std::fs::remove_file(&socket);
    }
    served
}

/// Binds the socket, 0600, unless a daemon already answers on it; a
/// socket nobody answers on is left over from a daemon that died.
async fn bind(socket: &Path) -> Result<(UnixListener, u64)> {
    if socket.exists() {
        if UnixStream::connect(socket).await.is_ok() {
            bail!("a daemon already listens on {}", socket.display());
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

/// Admits connections until one asks the daemon to stop.
async fn accept(
    listener: UnixListener,
    supervisor: ActorRef<SupervisorMsg>,
    recorder: ActorRef<RecorderMsg>,
) -> String {
    let (stop, mut stopping) = mpsc::channel::<()>(1);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let handles = Handles {
                        supervisor: supervisor.clone(),
                        recorder: recorder.clone(),
                        stop: stop.clone(),
                    };
                    tokio::spawn(admit(stream, handles));
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

/// Tells the Supervisor once a daemon of another version, started after
/// this one, answers in the runtime directory: this one is the old one,
/// and ends with its last session instead of lingering.
async fn watch_versions(directory: &RuntimeDir, supervisor: ActorRef<SupervisorMsg>) -> String {
    let own = directory.socket();
    let mut ticks = tokio::time::interval(VERSION_CHECK);
    loop {
        ticks.tick().await;
        for socket in directory
            .sockets()
            .into_iter()
            .filter(|socket| *socket != own)
        {
            if ping(&socket)
                .await
                .is_ok_and(|(_, their_start)| their_start > started())
            {
                let _stopped = supervisor.send_message(SupervisorMsg::Superseded);
                return std::future::pending().await;
            }
        }
    }
}

/// The version and start time of the daemon answering on `socket`.
async fn ping(socket: &Path) -> Result<(String, u128)> {
    let stream = UnixStream::connect(socket).await?;
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    hello::send(&mut writer, &Request::Ping).await?;
    let answer = tokio::time::timeout(HELLO_TIMEOUT, hello::receive(&mut reader))
        .await
        .context("no answer")??;
    match answer {
        Answer::Pong { version, started } => Ok((version, started)),
        other => bail!("unexpected answer {other:?}"),
    }
}

/// What a connection to the daemon may reach.
#[derive(Clone)]
struct Handles {
    supervisor: ActorRef<SupervisorMsg>,
    recorder: ActorRef<RecorderMsg>,
    stop: mpsc::Sender<()>,
}

async fn admit(stream: UnixStream, handles: Handles) {
    if let Err(error) = handshake(stream, handles).await {
        tracing::warn!("a connection was turned away: {error:#}");
    }
}

async fn handshake(stream: UnixStream, handles: Handles) -> Result<()> {
    let peer = stream.peer_cred()?.uid();
    let own = rustix::process::getuid().as_raw();
    if peer != own {
        bail!("a peer of uid {peer} is not this daemon's user ({own})");
    }
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    let line = tokio::time::timeout(HELLO_TIMEOUT, hello::receive_line(&mut reader))
        .await
        .context("no hello in time")??;
    let request: Request = match serde_json::from_slice(&line) {
        Ok(request) => request,
        Err(error) => {
            let refusal = format!(
                "this daemon (version {}) does not know this request: {error}",
                version()
            );
            hello::send(&mut writer, &Answer::Refused(refusal.clone())).await?;
            bail!(refusal);
        }
    };
    let hello = match request {
        Request::Stop => {
            hello::send(&mut writer, &Answer::Stopping).await?;
            let _stopping = handles.stop.send(()).await;
            return Ok(());
        }
        Request::Status { session } => {
            let message = |reply| SupervisorMsg::SessionStatus { session, reply };
            let answer = ask(
                &handles.supervisor,
                message,
                SUBSCRIBE_TIMEOUT,
                Answer::Status,
            );
            return hello::send(&mut writer, &answer.await).await;
        }
        Request::Diagnostics { file, session } => {
            let message = |reply| SupervisorMsg::SessionDiagnostics {
                session,
                file,
                reply,
            };
            let answer = ask(
                &handles.supervisor,
                message,
                DIAGNOSTICS_TIMEOUT,
                Answer::Diagnostics,
            );
            return hello::send(&mut writer, &answer.await).await;
        }
        Request::Roots { session, change } => {
            let message = |reply| SupervisorMsg::ChangeSessionRoots {
                session,
                change: change.into(),
                reply,
            };
            let answer = ask(&handles.supervisor, message, SUBSCRIBE_TIMEOUT, |answer| {
                Answer::Roots {
                    roots: answer
                        .roots
                        .roots()
                        .iter()
                        .map(|root| root.path.clone())
                        .collect(),
                    refused: answer.refused,
                }
            });
            return hello::send(&mut writer, &answer.await).await;
        }
        Request::Sessions => {
            let answer = ask(
                &handles.supervisor,
                SupervisorMsg::Sessions,
                SUBSCRIBE_TIMEOUT,
                Answer::Sessions,
            );
            return hello::send(&mut writer, &answer.await).await;
        }
        Request::Subscribe { session, kind } => {
            let filter = Filter { session, kind };
            return subscribe(reader, writer, &handles.recorder, filter).await;
        }
        Request::Ping => {
            let pong = Answer::Pong {
                version: version(),
                started: started(),
            };
            return hello::send(&mut writer, &pong).await;
        }
        Request::Attach(hello) => *hello,
    };
    if hello.version != version() {
        let refusal = format!(
            "this daemon is version {}, not {}",
            version(),
            hello.version
        );
        hello::send(&mut writer, &Answer::Refused(refusal.clone())).await?;
        bail!(refusal);
    }
    let cwd = hello.cwd.clone();
    let settings = match tokio::task::spawn_blocking(move || settings_of(hello)).await? {
        Ok(settings) => settings,
        Err(error) => {
            let refusal = format!("{error:#}");
            hello::send(&mut writer, &Answer::Refused(refusal)).await?;
            return Err(error.context(format!("a session in {}", cwd.display())));
        }
    };
    let welcome = Answer::Welcome {
        daemon_pid: std::process::id(),
    };
    hello::send(&mut writer, &welcome).await?;
    let attach = SupervisorMsg::Attach {
        settings: Box::new(settings),
        connection: Connection::Stream(Box::new(reader), Box::new(writer)),
    };
    handles
        .supervisor
        .send_message(attach)
        .map_err(|_| anyhow::anyhow!("the daemon is stopping"))
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
    match supervisor.call(message, Some(limit)).await {
        Ok(CallResult::Success(Ok(value))) => answered(value),
        Ok(CallResult::Success(Err(error))) => Answer::Refused(error),
        _ => Answer::Refused("the daemon did not answer in time".into()),
    }
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
            Some(SUBSCRIBE_TIMEOUT),
        )
        .await
    {
        Ok(CallResult::Success(events)) => events,
        _ => bail!("the recorder did not take the subscription"),
    };
    hello::send(&mut writer, &Answer::Subscribed).await?;
    let mut ignored = [0u8; 256];
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(event) => hello::send(&mut writer, &event).await?,
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

fn settings_of(hello: Hello) -> Result<windlass_actors::settings::Settings> {
    let cwd: PathBuf = hello.cwd;
    session_args::resolve(&hello.args, &cwd, hello.identity)
}

/// `windlass stop`: asks every daemon in the runtime directory, of any
/// version, to stop, and waits until each has let go of its socket.
pub fn stop_all() -> Result<()> {
    let directory = RuntimeDir::open()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let sockets = directory.sockets();
    let mut stopped = 0;
    for socket in &sockets {
        match runtime.block_on(stop_one(socket)) {
            Ok(()) => {
                stopped += 1;
                eprintln!("stopped the daemon at {}", socket.display());
            }
            Err(error) => tracing::debug!("{}: {error:#}", socket.display()),
        }
    }
    if stopped == 0 {
        eprintln!("no daemon is running");
    }
    Ok(())
}

async fn stop_one(socket: &Path) -> Result<()> {
    let stream = UnixStream::connect(socket).await?;
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    hello::send(&mut writer, &Request::Stop).await?;
    let answer: Answer = tokio::time::timeout(HELLO_TIMEOUT, hello::receive(&mut reader))
        .await
        .context("no answer")??;
    if !matches!(answer, Answer::Stopping) {
        bail!("unexpected answer {answer:?}");
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while socket.exists() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}
