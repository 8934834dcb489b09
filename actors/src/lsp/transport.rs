//! A language server process and the three tasks around its pipes.
//!
//! The writer task owns stdin and writes framed bodies it receives over a
//! channel; the reader task owns stdout, cuts it into messages and hands
//! each to a callback; the stderr task keeps the last lines for error
//! reports. None of them knows about actors: the owner passes the callback.
//! The child is spawned with `kill_on_drop`, so dropping the transport ends
//! the process even when the owner panicked.

use super::framing::{self, FrameDecoder};
use super::message::{self, Incoming};
use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// How many stderr lines are kept for error reports.
const STDERR_LINES: usize = 20;

/// The running process and the handles its owner needs.
#[derive(Debug)]
pub struct Transport {
    /// Kept so that dropping the transport kills and reaps the process.
    _child: Child,
    pid: Option<u32>,
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
    stderr: StderrTail,
}

impl Transport {
    /// Starts `command` in `directory`, and the tasks that serve its pipes.
    /// `on_message` receives every incoming message, ending with `Closed`.
    pub fn spawn(
        command: &str,
        args: &[String],
        directory: &Path,
        on_message: impl Fn(Incoming) + Send + 'static,
    ) -> std::io::Result<Self> {
        let mut child = Command::new(command)
            .args(args)
            .current_dir(directory)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let (outgoing, receiver) = mpsc::unbounded_channel();
        let stderr = StderrTail::default();
        if let Some(stdin) = child.stdin.take() {
            tokio::spawn(write_stdin(stdin, receiver));
        }
        match child.stdout.take() {
            Some(stdout) => drop(tokio::spawn(read_stdout(stdout, on_message))),
            None => on_message(Incoming::Closed),
        }
        if let Some(pipe) = child.stderr.take() {
            tokio::spawn(stderr.clone().collect(pipe));
        }
        Ok(Self {
            pid: child.id(),
            _child: child,
            outgoing,
            stderr,
        })
    }

    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Queues one message body; a closed pipe is noticed by the reader.
    pub fn send(&self, body: Vec<u8>) {
        let _closed = self.outgoing.send(body);
    }

    pub fn stderr_tail(&self) -> String {
        self.stderr.text()
    }
}

async fn write_stdin(mut stdin: ChildStdin, mut bodies: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(body) = bodies.recv().await {
        let framed = framing::encode(&body);
        if stdin.write_all(&framed).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
}

async fn read_stdout(mut stdout: impl AsyncRead + Unpin, on_message: impl Fn(Incoming)) {
    let mut decoder = FrameDecoder::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = match stdout.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        decoder.push(&buffer[..read]);
        loop {
            match decoder.next_body() {
                Ok(Some(body)) => on_message(message::parse(&body)),
                Ok(None) => break,
                Err(error) => on_message(Incoming::Malformed {
                    id: None,
                    detail: error.to_string(),
                }),
            }
        }
    }
    on_message(Incoming::Closed);
}

/// The last lines a server wrote to stderr, shared between the task that
/// reads them and the actor that reports them.
#[derive(Debug, Clone, Default)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
}

impl StderrTail {
    async fn collect(self, pipe: impl AsyncRead + Unpin) {
        let mut lines = BufReader::new(pipe).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::debug!(target: "windlass::server_stderr", "{line}");
            if let Ok(mut kept) = self.lines.lock() {
                if kept.len() == STDERR_LINES {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        }
    }

    fn text(&self) -> String {
        self.lines
            .lock()
            .map(|kept| kept.iter().cloned().collect::<Vec<_>>().join("\n"))
            .unwrap_or_default()
    }
}
