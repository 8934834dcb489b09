//! Carrying the MCP stream: lines from the client go upstream (to the
//! daemon, or a standalone server) and lines back go to the client,
//! unchanged, in one thread waiting on both with `poll`.
//!
//! The carrier reads just enough of each line to survive the daemon: the
//! client's unanswered requests, and its `initialize` and `initialized`.
//! When the daemon goes away those requests get an error that says so at
//! once, a new daemon is attached, the handshake is replayed (its second
//! answer kept from the client), and the client never sees a drop. A line
//! that could not even be written goes to the new daemon.

use crate::upstream::Upstream;
use crate::{Handoff, daemon, log};
use rustix::event::{PollFd, PollFlags, poll};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::Write;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

/// Daemon losses within [`REATTACH_WINDOW`] after which the bridge gives
/// up rather than start daemons in a loop.
const MAX_REATTACHES: usize = 5;
const REATTACH_WINDOW: Duration = Duration::from_secs(60);
const READ_SIZE: usize = 64 * 1024;

pub struct Carrier {
    handoff: Handoff,
    initialize: Option<Vec<u8>>,
    initialized: Option<Vec<u8>>,
    /// The client's unanswered requests, by id as JSON text.
    in_flight: HashMap<String, Value>,
    /// The id of a replayed `initialize`, whose answer the client had.
    replayed: Option<String>,
    reattached: Vec<Instant>,
}

/// What the carrier reads of a line.
#[derive(Deserialize)]
struct Peek {
    id: Option<Value>,
    method: Option<String>,
}

/// Bytes read from one side, cut into lines as they complete.
#[derive(Default)]
struct Lines {
    partial: Vec<u8>,
}

impl Lines {
    /// Every line `bytes` completes, each with its newline.
    fn push(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let mut lines = Vec::new();
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|byte| *byte == b'\n') {
            let mut line = std::mem::take(&mut self.partial);
            line.extend_from_slice(&rest[..=end]);
            lines.push(line);
            rest = &rest[end + 1..];
        }
        self.partial.extend_from_slice(rest);
        lines
    }

    /// What is left of a last line without its newline.
    fn rest(&mut self) -> Option<Vec<u8>> {
        Some(std::mem::take(&mut self.partial)).filter(|rest| !rest.is_empty())
    }
}

impl Carrier {
    pub fn new(handoff: Handoff) -> Self {
        Self {
            handoff,
            initialize: None,
            initialized: None,
            in_flight: HashMap::new(),
            replayed: None,
            reattached: Vec::new(),
        }
    }

    /// Carries lines both ways until the client goes away.
    pub fn carry(mut self, mut upstream: Upstream) -> Result<(), String> {
        let stdin = std::io::stdin();
        let mut client = std::io::stdout().lock();
        let mut from_client = Lines::default();
        let mut from_upstream = Lines::default();
        let mut buffer = vec![0u8; READ_SIZE];
        loop {
            let (client_ready, upstream_ready) = ready(&stdin, &upstream)?;
            if upstream_ready {
                match upstream.read(&mut buffer) {
                    Ok(0) | Err(_) => {
                        from_upstream = Lines::default();
                        self.reattach(&mut upstream, &mut client)?;
                        continue;
                    }
                    Ok(read) => {
                        for line in from_upstream.push(&buffer[..read]) {
                            if self.passes(&line) {
                                client.write_all(&line).map_err(client_gone)?;
                            }
                        }
                        client.flush().map_err(client_gone)?;
                    }
                }
            }
            if client_ready {
                match rustix::io::read(stdin.as_fd(), &mut buffer) {
                    Err(rustix::io::Errno::INTR) => {}
                    Ok(0) | Err(_) => {
                        if let Some(rest) = from_client.rest() {
                            self.deliver(&mut upstream, &rest, &mut client)?;
                        }
                        upstream.close();
                        return Ok(());
                    }
                    Ok(read) => {
                        for line in from_client.push(&buffer[..read]) {
                            self.deliver(&mut upstream, &line, &mut client)?;
                        }
                    }
                }
            }
        }
    }

    /// Sends a client line upstream; one the upstream never took goes to
    /// the next, after the handshake replayed to it.
    fn deliver(
        &mut self,
        upstream: &mut Upstream,
        line: &[u8],
        client: &mut impl Write,
    ) -> Result<(), String> {
        let mut id = self.note_from_client(line);
        while upstream.write_all(line).is_err() {
            if let Some(id) = &id {
                self.in_flight.remove(id);
            }
            self.reattach(upstream, client)?;
            if self.replays(line) {
                break;
            }
            id = self.note_from_client(line);
        }
        Ok(())
    }

    /// Remembers what the carrier needs of a client line; returns the id
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

    /// Whether a line from upstream goes on to the client: all do but the
    /// answer to a replayed `initialize`.
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

    /// The upstream went away: fails the calls it had, attaches to a new
    /// daemon (or a standalone server) and replays the handshake.
    fn reattach(&mut self, upstream: &mut Upstream, client: &mut impl Write) -> Result<(), String> {
        let now = Instant::now();
        self.reattached
            .retain(|at| now.duration_since(*at) < REATTACH_WINDOW);
        if self.reattached.len() >= MAX_REATTACHES {
            return Err(format!(
                "the session's server was lost {MAX_REATTACHES} times within a minute; giving up"
            ));
        }
        self.reattached.push(now);
        log::warn("the daemon went away; attaching to a new one");
        self.fail_in_flight(client)?;
        let next = match daemon::attach(&self.handoff) {
            Ok(next) => next,
            Err(error) => {
                log::warn(&format!("no daemon ({error}); serving standalone"));
                Upstream::standalone(&self.handoff)
                    .map_err(|error| format!("starting the standalone server: {error}"))?
            }
        };
        let previous = std::mem::replace(upstream, next);
        if previous.is_standalone() {
            previous.close();
        }
        if let Some(initialize) = self.initialize.clone() {
            self.replayed = serde_json::from_slice::<Peek>(&initialize)
                .ok()
                .and_then(|peek| peek.id)
                .map(|id| id.to_string());
            upstream
                .write_all(&initialize)
                .map_err(|error| format!("replaying initialize: {error}"))?;
        }
        if let Some(initialized) = self.initialized.clone() {
            upstream
                .write_all(&initialized)
                .map_err(|error| format!("replaying initialized: {error}"))?;
        }
        Ok(())
    }

    /// Answers every unanswered request with an error naming the restart.
    fn fail_in_flight(&mut self, client: &mut impl Write) -> Result<(), String> {
        for (_, id) in self.in_flight.drain() {
            let error = json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {
                    "code": -32603,
                    "message": "the windlass daemon stopped while this call was in flight; a new daemon was started, call again",
                },
            });
            let mut line = error.to_string().into_bytes();
            line.push(b'\n');
            client.write_all(&line).map_err(client_gone)?;
        }
        client.flush().map_err(client_gone)
    }
}

/// Waits until the client or the upstream has something (or hung up).
fn ready(stdin: &std::io::Stdin, upstream: &Upstream) -> Result<(bool, bool), String> {
    let readable = PollFlags::IN | PollFlags::HUP | PollFlags::ERR;
    loop {
        let mut fds = [
            PollFd::new(stdin, PollFlags::IN),
            PollFd::from_borrowed_fd(upstream.reader(), PollFlags::IN),
        ];
        match poll(&mut fds, None) {
            Ok(_) => {
                return Ok((
                    fds[0].revents().intersects(readable),
                    fds[1].revents().intersects(readable),
                ));
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(error) => return Err(format!("waiting for input: {error}")),
        }
    }
}

fn client_gone(error: std::io::Error) -> String {
    format!("the MCP client went away: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn carrier() -> Carrier {
        Carrier::new(Handoff {
            hello: String::new(),
            socket: "/nonexistent".into(),
            start_lock: "/nonexistent".into(),
            windlass: "/nonexistent".into(),
            args: Vec::new(),
        })
    }

    #[test]
    fn lines_are_cut_where_they_end() {
        let mut lines = Lines::default();
        assert!(lines.push(b"{\"a\":").is_empty());
        assert_eq!(
            lines.push(b"1}\n{\"b\":2}\n{"),
            vec![b"{\"a\":1}\n".to_vec(), b"{\"b\":2}\n".to_vec()]
        );
        assert_eq!(lines.rest(), Some(b"{".to_vec()));
        assert_eq!(lines.rest(), None);
    }

    #[test]
    fn requests_are_in_flight_until_answered() {
        let mut carrier = carrier();
        carrier.note_from_client(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
        carrier.note_from_client(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        carrier.note_from_client(br#"{"jsonrpc":"2.0","id":"a","method":"tools/call"}"#);
        assert!(carrier.initialize.is_some() && carrier.initialized.is_some());
        assert_eq!(carrier.in_flight.len(), 2);
        assert!(carrier.passes(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        // A request of the daemon's own is not an answer.
        assert!(carrier.passes(br#"{"jsonrpc":"2.0","id":"a","method":"roots/list"}"#));
        assert_eq!(carrier.in_flight.len(), 1);
        assert!(carrier.passes(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#));
        assert!(carrier.in_flight.is_empty());
    }

    #[test]
    fn the_answer_to_a_replayed_initialize_is_kept_from_the_client() {
        let mut carrier = carrier();
        carrier.replayed = Some("1".into());
        assert!(!carrier.passes(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        assert!(carrier.passes(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        assert!(carrier.passes(b"not json at all"));
    }

    #[test]
    fn calls_in_flight_fail_saying_why() {
        let mut carrier = carrier();
        carrier.note_from_client(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#);
        let mut client = Vec::new();
        carrier.fail_in_flight(&mut client).unwrap();
        let answer: Value = serde_json::from_slice(&client).unwrap();
        assert_eq!(answer["id"], 7);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("daemon stopped")
        );
        assert!(carrier.in_flight.is_empty());
    }
}
