//! Finding the daemon: connecting to this version's socket, starting the
//! daemon under the start lock when none answers, and the handshake (the
//! hello `windlass` wrote; the daemon's `welcome` or `refused`, read as
//! the `AttachAnswer` the daemon writes, `src/control/handshake.rs`).

use crate::handshake::AttachAnswer;
use crate::upstream::Upstream;
use crate::{Handoff, log, remove_handoff};
use rustix::fs::{FlockOperation, flock};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How long a bridge waits for a daemon to start, or for another bridge
/// that is starting one.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the daemon may take to answer a hello.
const WELCOME_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest answer line read.
const MAX_ANSWER: usize = 1 << 16;

/// Attaches the session to this version's daemon, starting it if needed.
pub fn attach(handoff: &Handoff) -> Result<Upstream, String> {
    if let Ok(stream) = UnixStream::connect(&handoff.socket) {
        match handshake(stream, handoff) {
            Ok(stream) => return Ok(Upstream::Daemon(stream)),
            // A daemon on its way out; start another.
            Err(error) => log::info(&format!("the daemon did not attach the session: {error}")),
        }
    }
    let stream = start(handoff)?;
    handshake(stream, handoff).map(Upstream::Daemon)
}

fn handshake(mut stream: UnixStream, handoff: &Handoff) -> Result<UnixStream, String> {
    let failed = |error: std::io::Error| format!("the handshake failed: {error}");
    stream
        .set_read_timeout(Some(WELCOME_TIMEOUT))
        .map_err(failed)?;
    let mut hello = handoff.hello.clone().into_bytes();
    hello.push(b'\n');
    stream.write_all(&hello).map_err(failed)?;
    let answer = read_line(&mut stream).map_err(failed)?;
    stream.set_read_timeout(None).map_err(failed)?;
    match serde_json::from_slice::<AttachAnswer>(&answer) {
        Ok(AttachAnswer::Welcome { daemon_pid }) => {
            log::info(&format!("attached to the daemon (pid {daemon_pid})"));
            Ok(stream)
        }
        Ok(AttachAnswer::Refused(reason)) => {
            Err(format!("the daemon refused the session: {reason}"))
        }
        Err(error) => Err(format!(
            "the daemon answered {}: {error}",
            String::from_utf8_lossy(&answer)
        )),
    }
}

/// Reads the answer byte by byte: nothing after its newline is the
/// handshake's.
fn read_line(stream: &mut UnixStream) -> std::io::Result<Vec<u8>> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while line.len() < MAX_ANSWER {
        if stream.read(&mut byte)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        if byte[0] == b'\n' {
            return Ok(line);
        }
        line.push(byte[0]);
    }
    Err(std::io::Error::other("the answer is too long"))
}

/// Starts this version's daemon, unless another bridge is doing so or has
/// done so; returns a connection to it.
fn start(handoff: &Handoff) -> Result<UnixStream, String> {
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&handoff.start_lock)
        .map_err(|error| format!("opening the daemon's start lock: {error}"))?;
    lock_exclusively(&lock)?;
    if let Ok(stream) = UnixStream::connect(&handoff.socket) {
        return Ok(stream);
    }
    let mut command = std::process::Command::new(&handoff.windlass);
    command
        .arg("daemon")
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    remove_handoff(&mut command);
    let mut daemon = command
        .spawn()
        .map_err(|error| format!("starting the daemon: {error}"))?;
    log::info(&format!("started a daemon (pid {})", daemon.id()));
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Ok(stream) = UnixStream::connect(&handoff.socket) {
            // Reaped by a thread of its own once it exits.
            std::thread::spawn(move || daemon.wait());
            return Ok(stream);
        }
        match daemon.try_wait() {
            Ok(Some(status)) => {
                return Err(format!(
                    "the daemon exited as it started ({status}); its log is in the state directory"
                ));
            }
            Ok(None) if Instant::now() > deadline => {
                let _killed = daemon.kill();
                return Err(format!(
                    "the daemon did not listen within {} s",
                    START_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(error) => return Err(format!("watching the daemon start: {error}")),
        }
    }
}

/// Takes the start lock, waiting while another bridge holds it; it is
/// released when the file is closed.
fn lock_exclusively(lock: &File) -> Result<(), String> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        match flock(lock, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::WOULDBLOCK) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(error) => return Err(format!("taking the daemon's start lock: {error}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handoff() -> Handoff {
        Handoff {
            hello: "{}".into(),
            socket: "/nonexistent".into(),
            start_lock: "/nonexistent".into(),
            windlass: "/nonexistent".into(),
            args: Vec::new(),
        }
    }

    /// A daemon's side of the socket that takes the hello and answers
    /// `answer`, one line.
    fn answering(answer: &'static str) -> UnixStream {
        let (bridge, mut daemon) = UnixStream::pair().unwrap();
        std::thread::spawn(move || {
            let mut hello = [0u8; 3];
            daemon.read_exact(&mut hello).unwrap();
            daemon.write_all(answer.as_bytes()).unwrap();
        });
        bridge
    }

    #[test]
    fn the_daemons_answer_is_read_as_the_daemon_writes_it() {
        let welcome = answering("{\"welcome\":{\"daemon_pid\":7}}\n");
        assert!(handshake(welcome, &handoff()).is_ok());
        let refused = answering("{\"refused\":\"no root /gone\"}\n");
        assert_eq!(
            handshake(refused, &handoff()).unwrap_err(),
            "the daemon refused the session: no root /gone"
        );
        let other = answering("{\"stopping\":null}\n");
        let error = handshake(other, &handoff()).unwrap_err();
        assert!(
            error.starts_with("the daemon answered {\"stopping\":null}: "),
            "{error}"
        );
    }
}
