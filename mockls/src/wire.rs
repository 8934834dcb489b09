//! mockls's wire: the bytes between the client and the tower-lsp-server
//! service. Incoming messages are read here, recorded and passed on, or
//! withheld to play a server that hangs, crashes or ignores shutdown;
//! outgoing messages are recorded and written as they are, or corrupted,
//! truncated, slowed, doubled or preceded by messages of their own, as the
//! flags ask. The framing is mockls's own: it shares no code with the
//! bridge, so a mistake in either shows up in the tests.

use crate::flags::Flags;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::pin::Pin;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// An id mockls never gave out, for the unknown-id fault.
const UNKNOWN_ID: i64 = 987_654_321;
/// Ids of the requests the wire itself sends; their answers stop here.
const OWN_IDS: &str = "mockls-";
/// The largest body mockls reads from its client.
const MAX_BODY: usize = 1 << 30;

/// The method of each request in flight, by its id's JSON text, so that
/// faults chosen by method find its response.
pub type Methods = Arc<Mutex<HashMap<String, String>>>;

/// The `--record` log: every message either way, timestamped, as JSON
/// lines.
pub struct Record(Option<Mutex<File>>);

impl Record {
    pub fn open(path: Option<&str>) -> std::io::Result<Self> {
        let file = match path {
            Some(path) => Some(Mutex::new(
                File::options().create(true).append(true).open(path)?,
            )),
            None => None,
        };
        Ok(Self(file))
    }

    fn write(&self, direction: &str, message: &Value) {
        let Some(file) = &self.0 else { return };
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0);
        let line = json!({"t": millis, "dir": direction, "message": message});
        if let Ok(mut file) = file.lock() {
            let _ = writeln!(file, "{line}");
        }
    }
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// The Content-Length a header block gives, if it gives one.
fn content_length(header: &str) -> Option<usize> {
    header.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        match name.trim().eq_ignore_ascii_case("content-length") {
            true => value.trim().parse().ok(),
            false => None,
        }
    })
}

/// Reads one message body; `None` at the end of input.
async fn read_body(input: &mut (impl AsyncBufRead + Unpin)) -> std::io::Result<Option<Vec<u8>>> {
    let mut header = String::new();
    loop {
        let mut line = Vec::new();
        if input.read_until(b'\n', &mut line).await? == 0 {
            return Ok(None);
        }
        let line = String::from_utf8_lossy(&line);
        if !line.trim().is_empty() {
            header.push_str(&line);
        } else if !header.is_empty() {
            break;
        }
    }
    let length = content_length(&header)
        .filter(|length| *length <= MAX_BODY)
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("no usable Content-Length in {header:?}"),
            )
        })?;
    let mut body = vec![0; length];
    input.read_exact(&mut body).await?;
    Ok(Some(body))
}

/// What the client sends, on its way to the service: read, recorded, and
/// passed on unless a flag says the server should never see it.
pub struct Incoming {
    flags: Arc<Flags>,
    record: Arc<Record>,
    methods: Methods,
    /// Requests passed on, `initialize` and `shutdown` not counted.
    requests: u64,
}

impl Incoming {
    pub fn new(flags: Arc<Flags>, record: Arc<Record>, methods: Methods) -> Self {
        Self {
            flags,
            record,
            methods,
            requests: 0,
        }
    }

    /// Copies stdin's messages to `service` until the input ends; a server
    /// that ignores shutdown ignores the end of its input too.
    pub async fn run(mut self, mut service: impl AsyncWrite + Unpin) {
        let mut stdin = tokio::io::BufReader::new(tokio::io::stdin());
        loop {
            let body = match read_body(&mut stdin).await {
                Ok(Some(body)) => body,
                Ok(None) => break,
                Err(error) if error.kind() == std::io::ErrorKind::InvalidData => {
                    eprintln!("mockls: bad frame: {error}");
                    continue;
                }
                Err(_) => break,
            };
            // A body that is not JSON goes on for the service to refuse.
            if let Ok(message) = serde_json::from_slice::<Value>(&body) {
                self.record.write("in", &message);
                if !self.admit(&message) {
                    continue;
                }
            }
            if service.write_all(&frame(&body)).await.is_err() {
                break;
            }
        }
        if self.flags.ignore_shutdown {
            std::future::pending::<()>().await;
        }
    }

    /// Whether the service should see `message`; exits the process for
    /// the crashes the flags ask for.
    fn admit(&mut self, message: &Value) -> bool {
        let method = message.get("method").and_then(Value::as_str);
        match (method, message.get("id")) {
            (Some(method), Some(id)) => self.admit_request(method, id, message),
            (Some("initialized"), None) if self.flags.crash_on_initialized => {
                eprintln!("mockls: crashing after initialized as asked");
                std::process::exit(6);
            }
            (Some("exit"), None) => !self.flags.ignore_shutdown,
            (Some(_), None) => true,
            // Answers to the wire's own requests: the service never sent them.
            (None, id) => !id
                .and_then(Value::as_str)
                .is_some_and(|id| id.starts_with(OWN_IDS)),
        }
    }

    fn admit_request(&mut self, method: &str, id: &Value, message: &Value) -> bool {
        if self.flags.crash_on.iter().any(|m| m == method) {
            // Named as a real server names the file it choked on.
            match message
                .pointer("/params/textDocument/uri")
                .and_then(Value::as_str)
            {
                Some(uri) => eprintln!("mockls: crashing on {method} of {uri} as asked"),
                None => eprintln!("mockls: crashing on {method} as asked"),
            }
            std::process::exit(3);
        }
        match method {
            "initialize" => {}
            "shutdown" => return !self.flags.ignore_shutdown,
            _ => {
                if let Some(limit) = self.flags.drop_after
                    && self.requests >= limit
                {
                    eprintln!("mockls: dropping after {limit} requests as asked");
                    std::process::exit(4);
                }
                self.requests += 1;
            }
        }
        if self.flags.hangs_on(method) {
            return false;
        }
        if let Ok(mut methods) = self.methods.lock() {
            methods.insert(id.to_string(), method.to_owned());
        }
        true
    }
}

/// The service's output: split into messages, each handed to the writer
/// thread, which owns stdout.
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
            stdout: std::io::stdout(),
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
    stdout: std::io::Stdout,
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
        self.write(&bytes);
    }

    /// The error that replaces an answer: `ContentModified` or
    /// `ServerCancelled` by `--fault`, or a failure by `--fail-on`.
    fn error_for(&self, method: &str, first: bool) -> Option<Value> {
        let cancelled = [
            ("content-modified", -32801, first),
            ("server-cancelled", -32802, first),
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
        if !self.flags.slow_write {
            let _ = self.stdout.write_all(bytes);
            let _ = self.stdout.flush();
            return;
        }
        for (index, byte) in bytes.iter().enumerate() {
            let _ = self.stdout.write_all(std::slice::from_ref(byte));
            let _ = self.stdout.flush();
            if index % 16 == 15 {
                std::thread::sleep(Duration::from_millis(1));
            }
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
    fn reads_the_content_length_of_a_header() {
        assert_eq!(content_length("Content-Length: 12\r\n"), Some(12));
        assert_eq!(
            content_length("content-type: x\r\ncontent-length:7\r\n"),
            Some(7)
        );
        assert_eq!(content_length("Content-Type: x\r\n"), None);
    }

    #[tokio::test]
    async fn reads_bodies_and_the_end_of_input() {
        let input = [frame(b"{}"), frame(b"[1]")].concat();
        let mut input = input.as_slice();
        assert_eq!(
            read_body(&mut input).await.ok().flatten(),
            Some(b"{}".to_vec())
        );
        assert_eq!(
            read_body(&mut input).await.ok().flatten(),
            Some(b"[1]".to_vec())
        );
        assert!(matches!(read_body(&mut input).await, Ok(None)));
    }

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
