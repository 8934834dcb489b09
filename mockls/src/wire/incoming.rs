//! The client's side of the wire: each message read from stdin,
//! recorded, and passed on to the service unless a flag says the server
//! should never see it (a hang, a crash, an ignored shutdown).

use super::{Methods, OWN_IDS, Record, content_length, frame};
use crate::flags::Flags;
use serde_json::Value;
use std::sync::Arc;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest body mockls reads from its client.
const MAX_BODY: usize = 1 << 30;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
