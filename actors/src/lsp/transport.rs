//! A language server process and the three tasks around its pipes.
//!
//! The writer task owns stdin and writes framed bodies it receives over a
//! channel; the reader task owns stdout, cuts it into messages and hands
//! each to a callback; the stderr task keeps the first and last lines for error
//! reports. None of them knows about actors: the owner passes the callback.
//! The child is spawned with `kill_on_drop`, so dropping the transport ends
//! the process even when the owner panicked.

use super::framing::{self, FrameDecoder};
use super::message::{self, Incoming};
use std::cell::Cell;
use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How many of the first stderr lines are kept: a server that fails to
/// start usually says why before its backtrace.
const STDERR_HEAD_LINES: usize = 10;
/// How many of the last stderr lines are kept.
const STDERR_TAIL_LINES: usize = 20;
/// Longest stderr line kept, in bytes.
const STDERR_LINE_BYTES: usize = 400;

/// The running process and the handles its owner needs.
#[derive(Debug)]
pub struct Transport {
    /// Kept so that dropping the transport kills and reaps the process.
    child: Child,
    pid: Option<u32>,
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
    /// When a message was last queued: a server that rests after input
    /// may still go on with unfinished work until some time after it.
    last_sent: Cell<Option<Instant>>,
    stderr: StderrLog,
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
        let stderr = StderrLog::default();
        if let Some(stdin) = child.stdin.take() {
            tokio::spawn(write_stdin(stdin, receiver));
        }
        let stderr_done = child
            .stderr
            .take()
            .map(|pipe| tokio::spawn(stderr.clone().collect(pipe)));
        match child.stdout.take() {
            Some(stdout) => drop(tokio::spawn(read_stdout(stdout, stderr_done, on_message))),
            None => on_message(Incoming::Closed),
        }
        Ok(Self {
            pid: child.id(),
            child,
            outgoing,
            last_sent: Cell::new(None),
            stderr,
        })
    }

    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Queues one message body; a closed pipe is noticed by the reader.
    pub fn send(&self, body: Vec<u8>) {
        self.last_sent.set(Some(Instant::now()));
        let _closed = self.outgoing.send(body);
    }

    /// When a message was last queued for the server, if ever.
    pub fn last_sent(&self) -> Option<Instant> {
        self.last_sent.get()
    }

    /// What the server wrote to stderr: its first lines, then its last.
    pub fn stderr_text(&self) -> String {
        self.stderr.text()
    }

    /// The stderr line that most likely says why the server failed.
    pub fn stderr_reason(&self) -> String {
        self.stderr.reason()
    }

    /// Whether the process has already exited, found without blocking.
    pub fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
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

/// How long the end of stdout waits for stderr to end too, so that the
/// exit is reported with the server's last words.
const STDERR_DRAIN: Duration = Duration::from_millis(500);

async fn read_stdout(
    mut stdout: impl AsyncRead + Unpin,
    stderr_done: Option<JoinHandle<()>>,
    on_message: impl Fn(Incoming),
) {
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
                    id: error.id(),
                    detail: error.to_string(),
                }),
            }
        }
    }
    if let Some(stderr_done) = stderr_done {
        let _drained = tokio::time::timeout(STDERR_DRAIN, stderr_done).await;
    }
    on_message(Incoming::Closed);
}

/// The first and last lines a server wrote to stderr, shared between the
/// task that reads them and the actor that reports them.
#[derive(Debug, Clone, Default)]
pub struct StderrLog {
    lines: Arc<Mutex<StderrLines>>,
}

#[derive(Debug, Default)]
struct StderrLines {
    head: Vec<String>,
    tail: VecDeque<String>,
    /// Lines dropped between head and tail.
    skipped: usize,
}

impl StderrLog {
    async fn collect(self, pipe: impl AsyncRead + Unpin) {
        let mut lines = BufReader::new(pipe).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::debug!(target: "windlass::server_stderr", "{line}");
            if let Ok(mut kept) = self.lines.lock() {
                kept.push(shorten(line));
            }
        }
    }

    fn text(&self) -> String {
        self.lines
            .lock()
            .map(|kept| kept.text())
            .unwrap_or_default()
    }

    fn reason(&self) -> String {
        self.lines
            .lock()
            .map(|kept| kept.reason())
            .unwrap_or_default()
    }
}

impl StderrLines {
    fn push(&mut self, line: String) {
        if self.head.len() < STDERR_HEAD_LINES {
            return self.head.push(line);
        }
        if self.tail.len() == STDERR_TAIL_LINES {
            self.tail.pop_front();
            self.skipped += 1;
        }
        self.tail.push_back(line);
    }

    fn text(&self) -> String {
        let mut lines: Vec<String> = self.head.clone();
        if self.skipped > 0 {
            lines.push(format!("… {} lines", self.skipped));
        }
        lines.extend(self.tail.iter().cloned());
        lines.join("\n")
    }

    /// The first line that reads like an error message; else the first
    /// line with any text; else the last line.
    fn reason(&self) -> String {
        let meaningful = |line: &&String| !line.trim().is_empty();
        let all = || self.head.iter().chain(self.tail.iter());
        all()
            .find(|line| looks_like_an_error(line))
            .or_else(|| self.head.iter().find(meaningful))
            .or_else(|| self.tail.iter().rev().find(meaningful))
            .map(|line| line.trim().to_owned())
            .unwrap_or_default()
    }
}

/// The line of a command's output that most likely says why it failed.
pub fn reason_of(text: &str) -> String {
    let mut lines = StderrLines::default();
    for line in text.lines() {
        lines.push(shorten(line.to_owned()));
    }
    lines.reason()
}

fn looks_like_an_error(line: &str) -> bool {
    let lower = line.to_lowercase();
    [
        "error",
        "fatal",
        "panic",
        "cannot",
        "can't",
        "failed",
        "not found",
        "unknown",
        "no such",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

fn shorten(mut line: String) -> String {
    if line.len() > STDERR_LINE_BYTES {
        let mut end = STDERR_LINE_BYTES;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
        line.push('…');
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[&str]) -> StderrLines {
        let mut kept = StderrLines::default();
        for line in text {
            kept.push((*line).to_owned());
        }
        kept
    }

    #[test]
    fn the_reason_is_the_line_that_says_why_not_the_backtrace() {
        let mut text = vec![
            "error: Unknown binary 'rust-analyzer' in official toolchain 'stable'.",
            "",
            "Stack backtrace:",
        ];
        let frames: Vec<String> = (0..40).map(|n| format!("  {n}: <unknown>")).collect();
        text.extend(frames.iter().map(String::as_str));
        let kept = lines(&text);
        assert_eq!(
            kept.reason(),
            "error: Unknown binary 'rust-analyzer' in official toolchain 'stable'."
        );
        let shown = kept.text();
        assert!(shown.starts_with("error: Unknown binary"), "{shown}");
        assert!(shown.contains("… 13 lines"), "{shown}");
        assert!(shown.ends_with("39: <unknown>"), "{shown}");
    }

    #[test]
    fn without_an_error_word_the_first_line_with_text_is_the_reason() {
        assert_eq!(lines(&["", "Starting up", "bye"]).reason(), "Starting up");
        assert_eq!(lines(&[]).reason(), "");
    }

    #[test]
    fn long_lines_are_cut_at_a_character_boundary() {
        let long = "é".repeat(STDERR_LINE_BYTES);
        let cut = shorten(long);
        assert!(cut.len() <= STDERR_LINE_BYTES + '…'.len_utf8());
        assert!(cut.ends_with('…'));
    }
}
