//! The service's side of the wire: its output split into messages,
//! written to stdout by a thread of their own with the faults asked for
//! the method each response answers.

use super::{Methods, OWN_IDS, Record, content_length, frame};
use crate::flags::Flags;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::Write;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::AsyncWrite;

/// An id mockls never gave out, for the unknown-id fault.
const UNKNOWN_ID: i64 = 987_654_321;
/// How long a `late` response is held back.
const LATE: Duration = Duration::from_millis(500);

/// The service's output: split into messages, each handed to the writer
/// thread.
pub struct Outgoing {
    pending: Vec<u8>,
    messages: Sender<Vec<u8>>,
}

impl Outgoing {
    /// Starts the writer thread; its handle ends once every message is out.
    pub fn start(
        flags: Arc<Flags>,
        record: Arc<Record>,
        methods: Methods,
    ) -> (Self, std::thread::JoinHandle<()>) {
        let (messages, received) = channel();
        let writer = Writer {
            flags,
            record,
            methods,
            answered: HashMap::new(),
        };
        let thread = std::thread::spawn(move || writer.run(received));
        let outgoing = Self {
            pending: Vec::new(),
            messages,
        };
        (outgoing, thread)
    }

    /// The next whole message in `pending`, taken out of it.
    fn next_body(&mut self) -> Option<Vec<u8>> {
        let end = self.pending.windows(4).position(|w| w == b"\r\n\r\n")?;
        let length = content_length(std::str::from_utf8(&self.pending[..end]).ok()?)?;
        let start = end + 4;
        if self.pending.len() < start + length {
            return None;
        }
        let body = self.pending[start..start + length].to_vec();
        self.pending.drain(..start + length);
        Some(body)
    }
}

impl AsyncWrite for Outgoing {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        this.pending.extend_from_slice(bytes);
        while let Some(body) = this.next_body() {
            if this.messages.send(body).is_err() {
                return Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into()));
            }
        }
        Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// Writes every outgoing message to stdout, with the faults asked for
/// the method it answers.
struct Writer {
    flags: Arc<Flags>,
    record: Arc<Record>,
    methods: Methods,
    /// Responses so far per method, for faults of the first time only.
    answered: HashMap<String, u64>,
}

impl Writer {
    fn run(mut self, messages: Receiver<Vec<u8>>) {
        for body in messages {
            self.message(&body);
        }
    }

    fn message(&mut self, body: &[u8]) {
        // Bodies nested past serde_json's depth limit go out untouched.
        let Ok(mut message) = serde_json::from_slice::<Value>(body) else {
            return self.write(&frame(body));
        };
        let Some(method) = self.method_answered(&message) else {
            self.record.write("out", &message);
            return self.write(&frame(body));
        };
        if method == "initialize" {
            advertise_type_hierarchy(&mut message, &self.flags);
        }
        self.answer(&method, message);
    }

    fn method_answered(&self, message: &Value) -> Option<String> {
        if message.get("method").is_some() {
            return None;
        }
        let id = message.get("id")?.to_string();
        self.methods.lock().ok()?.remove(&id)
    }

    fn answer(&mut self, method: &str, mut message: Value) {
        let times = self.answered.entry(method.to_owned()).or_insert(0);
        *times += 1;
        let first = *times == 1;
        if let Some(error) = self.error_for(method, first) {
            message = json!({"jsonrpc": "2.0", "id": message["id"], "error": error});
        }
        self.record.write("out", &message);
        let has = |list: &[String]| list.iter().any(|m| m == method);
        if self.flags.fault("unknown-request", method) {
            let id = format!("{OWN_IDS}unknown");
            self.send(
                &json!({"jsonrpc": "2.0", "id": id, "method": "mockls/unheardOf", "params": {}}),
            );
        }
        if has(&self.flags.unknown_id_on) {
            self.send(&json!({"jsonrpc": "2.0", "id": UNKNOWN_ID, "result": null}));
        }
        if has(&self.flags.huge_on) && message.get("result").is_some() {
            message["result"] = json!({"contents": "x".repeat(self.flags.huge_bytes)});
        }
        let bytes = self.broken(method, &message);
        if self.flags.fault("late", method) {
            // Held back on a thread of its own while later messages pass it.
            let slow = self.flags.slow_write;
            std::thread::spawn(move || {
                std::thread::sleep(LATE);
                write_out(&bytes, slow);
            });
            return;
        }
        self.write(&bytes);
    }

    /// The error that replaces an answer: `ContentModified` or
    /// `ServerCancelled` or `RequestCancelled` by `--fault`, or a failure by `--fail-on`.
    fn error_for(&self, method: &str, first: bool) -> Option<Value> {
        let cancelled = [
            ("content-modified", -32801, first),
            ("server-cancelled", -32802, first),
            ("request-cancelled", -32800, first),
            ("content-modified-always", -32801, true),
        ]
        .into_iter()
        .find(|(kind, _, now)| *now && self.flags.fault(kind, method));
        if let Some((kind, code, _)) = cancelled {
            return Some(
                json!({"code": code, "message": format!("mockls: {kind} on {method} as asked")}),
            );
        }
        self.flags.fail_on.iter().any(|m| m == method).then(
            || json!({"code": -32603, "message": format!("mockls: failing {method} as asked")}),
        )
    }

    /// The bytes of a response, broken as the flags ask for `method`.
    /// `truncated` exits once its half body is out.
    fn broken(&mut self, method: &str, message: &Value) -> Vec<u8> {
        let flags = self.flags.clone();
        let has = |list: &[String]| list.iter().any(|m| m == method);
        let fault = |kind: &str| flags.fault(kind, method);
        let id = message["id"].to_string();
        let body = message.to_string();
        if has(&flags.malformed_on) {
            frame(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"contents":"#).as_bytes())
        } else if has(&flags.wrong_length_on) {
            let length = body.len().saturating_sub(3);
            format!("Content-Length: {length}\r\n\r\n{body}").into_bytes()
        } else if has(&flags.invalid_utf8_on) {
            let mut bad =
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"contents":"bad "#).into_bytes();
            bad.extend_from_slice(b"\xff\xfe bytes\"}}");
            frame(&bad)
        } else if fault("missing-length") {
            format!("Content-Type: application/vscode-jsonrpc\r\n\r\n{body}").into_bytes()
        } else if fault("non-numeric-length") {
            format!("Content-Length: twelve\r\n\r\n{body}").into_bytes()
        } else if fault("oversize-length") {
            format!("Content-Length: 99999999999\r\n\r\n{body}").into_bytes()
        } else if fault("truncated") {
            let mut half = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
            half.extend_from_slice(&body.as_bytes()[..body.len() / 2]);
            self.write(&half);
            eprintln!("mockls: exiting halfway through a response as asked");
            std::process::exit(5);
        } else if fault("garbage-line") {
            [
                b"this is not a header line\r\n".to_vec(),
                frame(body.as_bytes()),
            ]
            .concat()
        } else if fault("duplicate-id") {
            [frame(body.as_bytes()), frame(body.as_bytes())].concat()
        } else if fault("null-id") {
            let error = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "mockls: parse error as asked"}});
            [frame(error.to_string().as_bytes()), frame(body.as_bytes())].concat()
        } else {
            frame(body.as_bytes())
        }
    }

    fn send(&mut self, message: &Value) {
        self.record.write("out", message);
        self.write(&frame(message.to_string().as_bytes()));
    }

    fn write(&mut self, bytes: &[u8]) {
        write_out(bytes, self.flags.slow_write);
    }
}

/// Writes one message's bytes to stdout, holding it throughout so that a
/// message held back and written from another thread never splits one.
fn write_out(bytes: &[u8], slow: bool) {
    let mut stdout = std::io::stdout().lock();
    if !slow {
        let _ = stdout.write_all(bytes);
        let _ = stdout.flush();
        return;
    }
    for (index, byte) in bytes.iter().enumerate() {
        let _ = stdout.write_all(std::slice::from_ref(byte));
        let _ = stdout.flush();
        if index % 16 == 15 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// The protocol's types have no field for the type hierarchy capability,
/// so the wire adds it to the `initialize` answer, as the service would.
fn advertise_type_hierarchy(message: &mut Value, flags: &Flags) {
    let left_out = flags.without.iter().any(|c| c == "typeHierarchyProvider");
    if let Some(capabilities) = message.pointer_mut("/result/capabilities")
        && let Some(capabilities) = capabilities.as_object_mut()
        && !left_out
    {
        capabilities.insert("typeHierarchyProvider".into(), json!(true));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_the_service_output_into_messages() {
        let (messages, received) = channel();
        let mut outgoing = Outgoing {
            pending: Vec::new(),
            messages,
        };
        let bytes = [frame(b"{\"a\":1}"), frame(b"{}")].concat();
        outgoing.pending.extend_from_slice(&bytes[..10]);
        assert_eq!(outgoing.next_body(), None);
        outgoing.pending.extend_from_slice(&bytes[10..]);
        assert_eq!(outgoing.next_body(), Some(b"{\"a\":1}".to_vec()));
        assert_eq!(outgoing.next_body(), Some(b"{}".to_vec()));
        drop(received);
    }
}
