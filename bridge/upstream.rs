//! Where the session is served: the daemon's socket, or, when no daemon
//! can be had, a `windlass --standalone` child speaking MCP on its stdio.

use crate::Handoff;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

pub enum Upstream {
    Daemon(UnixStream),
    Standalone {
        child: Child,
        stdin: ChildStdin,
        stdout: ChildStdout,
    },
}

impl Upstream {
    /// Starts `windlass --standalone` for the session.
    pub fn standalone(handoff: &Handoff) -> io::Result<Self> {
        let mut child = handoff
            .standalone()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        match (child.stdin.take(), child.stdout.take()) {
            (Some(stdin), Some(stdout)) => Ok(Self::Standalone {
                child,
                stdin,
                stdout,
            }),
            _ => Err(io::Error::other("the standalone server has no stdio")),
        }
    }

    pub fn is_standalone(&self) -> bool {
        matches!(self, Self::Standalone { .. })
    }

    /// What `poll` watches for the session's answers.
    pub fn reader(&self) -> BorrowedFd<'_> {
        match self {
            Self::Daemon(stream) => stream.as_fd(),
            Self::Standalone { stdout, .. } => stdout.as_fd(),
        }
    }

    pub fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Daemon(stream) => stream.read(buffer),
            Self::Standalone { stdout, .. } => stdout.read(buffer),
        }
    }

    pub fn write_all(&mut self, line: &[u8]) -> io::Result<()> {
        match self {
            Self::Daemon(stream) => stream.write_all(line),
            Self::Standalone { stdin, .. } => stdin.write_all(line),
        }
    }

    /// The client went away: ends the session, and waits for a standalone
    /// server to stop its language servers and exit.
    pub fn close(self) {
        match self {
            Self::Daemon(stream) => {
                let _closed = stream.shutdown(std::net::Shutdown::Both);
            }
            Self::Standalone {
                mut child, stdin, ..
            } => {
                drop(stdin);
                let _exited = child.wait();
            }
        }
    }
}
