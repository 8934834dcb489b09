//! The daemon's HTTP endpoint for tests and benchmarks: a daemon serving
//! MCP over HTTP on a loopback port of its own, single raw requests, and
//! a small keep-alive MCP client (initialize, then tool calls whose
//! answers come as server-sent events), written from the protocol and
//! independent of the rmcp crate the server uses.

use super::{Daemon, wait_until, windlass_binary};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A daemon serving HTTP on a loopback port of its own.
pub struct Endpoint {
    pub daemon: Daemon,
    child: Child,
    pub port: u16,
}

impl Endpoint {
    /// `windlass daemon --http 127.0.0.1:PORT` with `flags`, once it
    /// accepts connections.
    pub fn start(flags: &[&str]) -> Endpoint {
        Endpoint::start_in(Daemon::new(), flags)
    }

    /// The same in `daemon`'s world (its user configuration, say).
    pub fn start_in(daemon: Daemon, flags: &[&str]) -> Endpoint {
        Endpoint::spawn(daemon, &["daemon", "--foreground"], "127.0.0.1", flags)
    }

    /// A daemon serving on `host` (an address of every interface, say).
    pub fn start_on(host: &str, flags: &[&str]) -> Endpoint {
        Endpoint::spawn(Daemon::new(), &["daemon", "--foreground"], host, flags)
    }

    /// `windlass serve --standalone --http 127.0.0.1:PORT` with `flags`,
    /// in `daemon`'s world but not its daemon.
    pub fn standalone(daemon: Daemon, flags: &[&str]) -> Endpoint {
        Endpoint::spawn(daemon, &["serve", "--standalone"], "127.0.0.1", flags)
    }

    fn spawn(daemon: Daemon, command: &[&str], host: &str, flags: &[&str]) -> Endpoint {
        let port = free_port();
        let child = Command::new(windlass_binary())
            .args(command)
            .arg("--http")
            .arg(format!("{host}:{port}"))
            .args(flags)
            .envs(daemon.environment())
            .env_remove("WINDLASS_STATE_DIR")
            .env_remove("WINDLASS_LOG")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let endpoint = Endpoint {
            daemon,
            child,
            port,
        };
        wait_until("the HTTP endpoint listens", || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        endpoint
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `windlass ARGS` in the daemon's world, its stdout.
    pub fn windlass(&self, args: &[&str]) -> String {
        let output = Command::new(windlass_binary())
            .args(args)
            .envs(self.daemon.environment())
            .env_remove("WINDLASS_STATE_DIR")
            .output()
            .unwrap();
        assert!(output.status.success(), "windlass {args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    }

    pub fn token(&self) -> String {
        self.windlass(&["token"]).trim().to_owned()
    }

    /// The live sessions `windlass list` shows.
    pub fn alive(&self) -> Vec<String> {
        self.windlass(&["list"])
            .lines()
            .filter(|line| line.contains("  alive  "))
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let _ = self.daemon.stop();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One raw HTTP/1.1 request on a connection of its own: the status (0
/// when no HTTP answer came) and the response's head.
pub fn request(port: u16, method: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut head = request_head(port, method, headers, body.len());
    head.push_str("Connection: close\r\n\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    // A refusal may come before the whole body is read, and the
    // connection close under the rest of it.
    let _ = stream.write_all(body);
    let (status, head) = read_head(&mut BufReader::new(stream));
    (status, head)
}

fn request_head(port: u16, method: &str, headers: &[(&str, &str)], length: usize) -> String {
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n"
    );
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head
}

fn read_head(reader: &mut impl BufRead) -> (u16, String) {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, head)
}

/// The value of header `name` in a response head.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim()
            .eq_ignore_ascii_case(name)
            .then_some(value.trim())
    })
}

pub fn initialize_body(capabilities: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": capabilities,
                   "clientInfo": {"name": "raw", "version": "0"}}
    }))
    .unwrap()
}

/// An MCP session over one keep-alive connection, without roots of its
/// own (the endpoint's `--http-root` gives them).
pub struct HttpSession {
    reader: BufReader<TcpStream>,
    port: u16,
    session: String,
    next_id: i64,
    token: Option<String>,
}

impl HttpSession {
    pub fn start(endpoint: &Endpoint, token: Option<String>) -> HttpSession {
        let stream = TcpStream::connect(("127.0.0.1", endpoint.port)).unwrap();
        stream.set_nodelay(true).unwrap();
        stream.set_read_timeout(Some(super::WATCHDOG)).unwrap();
        let mut session = HttpSession {
            reader: BufReader::new(stream),
            port: endpoint.port,
            session: String::new(),
            next_id: 1,
            token,
        };
        let (head, _) = session.post(&initialize_body(json!({})));
        session.session = header(&head, "mcp-session-id")
            .unwrap_or_else(|| panic!("no session id in {head}"))
            .to_owned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        session.post(&serde_json::to_vec(&initialized).unwrap());
        session
    }

    /// A tool's text; `Err` when it answered with an error.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Result<String, String> {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": tool, "arguments": arguments}});
        let (_, events) = self.post(&serde_json::to_vec(&body).unwrap());
        let answer = events
            .iter()
            .find(|event| event["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id} in {events:?}"));
        let result = &answer["result"];
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        match result["isError"].as_bool() {
            Some(true) => Err(text),
            _ => Ok(text),
        }
    }

    /// Posts one message; the response's head and the JSON messages of
    /// its event stream (none for a notification's 202).
    fn post(&mut self, body: &[u8]) -> (String, Vec<Value>) {
        let mut headers: Vec<(&str, String)> = Vec::new();
        if !self.session.is_empty() {
            headers.push(("Mcp-Session-Id", self.session.clone()));
            headers.push(("MCP-Protocol-Version", "2025-06-18".into()));
        }
        if let Some(token) = &self.token {
            headers.push(("Authorization", format!("Bearer {token}")));
        }
        let borrowed: Vec<(&str, &str)> = headers
            .iter()
            .map(|(name, value)| (*name, value.as_str()))
            .collect();
        let mut head = request_head(self.port, "POST", &borrowed, body.len());
        head.push_str("\r\n");
        let stream = self.reader.get_mut();
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body).unwrap();
        let (status, head) = read_head(&mut self.reader);
        assert!(status == 200 || status == 202, "{head}");
        let body = self.read_body(&head);
        let events = body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str(data.trim()).ok())
            .collect();
        (head, events)
    }

    fn read_body(&mut self, head: &str) -> String {
        if let Some(length) = header(head, "content-length") {
            let mut body = vec![0; length.parse().unwrap()];
            self.reader.read_exact(&mut body).unwrap();
            return String::from_utf8(body).unwrap();
        }
        assert_eq!(header(head, "transfer-encoding"), Some("chunked"), "{head}");
        let mut body = Vec::new();
        loop {
            let mut size = String::new();
            self.reader.read_line(&mut size).unwrap();
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            let mut chunk = vec![0; size + 2];
            self.reader.read_exact(&mut chunk).unwrap();
            if size == 0 {
                return String::from_utf8(body).unwrap();
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
}
