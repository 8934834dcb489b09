//! A minimal LSP client for the benchmarks: it runs a language server
//! directly, without Windlass, so that a bench can time the server's own
//! answer to the question it also puts to Windlass.

use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

type Pending = Arc<Mutex<HashMap<i64, Sender<Value>>>>;

/// The last diagnostics published for each URI: how many publications
/// came so far, and how many errors the last one held.
#[derive(Default)]
struct Published {
    by_uri: Mutex<HashMap<String, (u64, usize)>>,
    changed: Condvar,
}

pub struct LspServer {
    child: Child,
    stdin: Stdin,
    pending: Pending,
    published: Arc<Published>,
    next_id: AtomicI64,
    root: PathBuf,
    /// The URIs opened so far, each opened once.
    opened: Mutex<HashSet<String>>,
    /// Whether diagnostics are asked for (`textDocument/diagnostic`)
    /// rather than waited for as the server publishes them.
    pull: bool,
}

type Stdin = Arc<Mutex<ChildStdin>>;

impl LspServer {
    /// Starts `command` in `root` and completes the LSP handshake; with
    /// `pull`, it offers to ask for diagnostics, as Windlass does of
    /// servers that support it.
    pub fn start(command: &[&str], root: &Path, pull: bool) -> LspServer {
        let mut child = Command::new(command[0])
            .args(&command[1..])
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the language server");
        let stdout = child.stdout.take().unwrap();
        let server = LspServer {
            stdin: Arc::new(Mutex::new(child.stdin.take().unwrap())),
            pending: Arc::default(),
            published: Arc::default(),
            next_id: AtomicI64::new(1),
            root: root.to_path_buf(),
            opened: Mutex::default(),
            pull,
            child,
        };
        read(
            stdout,
            server.stdin.clone(),
            server.pending.clone(),
            server.published.clone(),
        );
        let root_uri = server.uri("");
        let mut document = json!({
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "publishDiagnostics": {},
            "documentSymbol": {"hierarchicalDocumentSymbolSupport": true}
        });
        if pull {
            document["diagnostic"] = json!({});
        }
        server.request(
            "initialize",
            json!({
                "processId": std::process::id(),
                "rootUri": root_uri,
                "workspaceFolders": [{"uri": root_uri, "name": "bigtree"}],
                "capabilities": {
                    "textDocument": document,
                    "workspace": {"configuration": true, "workspaceFolders": true}
                }
            }),
        );
        server.notify("initialized", json!({}));
        server
    }

    /// The URI of `relative` under the root.
    pub fn uri(&self, relative: &str) -> String {
        format!("file://{}", self.root.join(relative).display())
    }

    pub fn send(&self, method: &str, params: Value) -> Receiver<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = channel();
        self.pending.lock().unwrap().insert(id, sender);
        write_message(
            &self.stdin,
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        receiver
    }

    /// Sends a request and waits for its result (`null` on an error).
    pub fn request(&self, method: &str, params: Value) -> Value {
        answer(&self.send(method, params))
    }

    pub fn notify(&self, method: &str, params: Value) {
        write_message(
            &self.stdin,
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        );
    }

    /// Opens a document unless it is open: whether it was not.
    pub fn open(&self, relative: &str, language: &str, text: &str) -> bool {
        let uri = self.uri(relative);
        if !self.opened.lock().unwrap().insert(uri.clone()) {
            return false;
        }
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        );
        true
    }

    /// Replaces the whole text of an open document.
    pub fn change(&self, relative: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": self.uri(relative), "version": version},
                   "contentChanges": [{"text": text}]}),
        );
    }

    /// How many diagnostics publications `relative` has had so far.
    pub fn publications(&self, relative: &str) -> u64 {
        let by_uri = self.published.by_uri.lock().unwrap();
        by_uri.get(&self.uri(relative)).map_or(0, |(seen, _)| *seen)
    }

    /// Waits until the diagnostics of `relative` have errors (`errors`)
    /// or none: asked for until they do, or published after the
    /// `after`th publication; false past `limit`.
    pub fn wait_errors(&self, relative: &str, after: u64, errors: bool, limit: Duration) -> bool {
        if !self.pull {
            return self.wait_diagnostics(relative, after, errors, limit);
        }
        let deadline = Instant::now() + limit;
        loop {
            let report = self.request(
                "textDocument/diagnostic",
                json!({"textDocument": {"uri": self.uri(relative)}}),
            );
            if (errors_in(&report["items"]) > 0) == errors {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait_diagnostics(&self, relative: &str, after: u64, errors: bool, limit: Duration) -> bool {
        let uri = self.uri(relative);
        let deadline = Instant::now() + limit;
        let mut by_uri = self.published.by_uri.lock().unwrap();
        loop {
            if let Some((seen, count)) = by_uri.get(&uri)
                && *seen > after
                && (*count > 0) == errors
            {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            by_uri = self.published.changed.wait_timeout(by_uri, left).unwrap().0;
        }
    }
}

impl Drop for LspServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for a response, giving its result (`null` for an error or no
/// answer within ten minutes).
pub fn answer(receiver: &Receiver<Value>) -> Value {
    receiver
        .recv_timeout(Duration::from_secs(600))
        .map_or(Value::Null, |response| response["result"].clone())
}

/// Reads the server's messages: responses go to their waiters, error
/// diagnostics are counted, and the server's own requests are answered
/// with nothing (every setting its default).
fn read(stdout: ChildStdout, stdin: Stdin, pending: Pending, published: Arc<Published>) {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        while let Some(message) = read_message(&mut reader) {
            match (message.get("id"), message["method"].as_str()) {
                (Some(id), Some(method)) => {
                    let result = match method {
                        "workspace/configuration" => {
                            let items = message["params"]["items"].as_array().map_or(0, Vec::len);
                            Value::Array(vec![Value::Null; items])
                        }
                        _ => Value::Null,
                    };
                    write_message(
                        &stdin,
                        &json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    );
                }
                (None, Some("textDocument/publishDiagnostics")) => {
                    record_publication(&published, &message["params"]);
                }
                (Some(id), None) => {
                    let waiter = id
                        .as_i64()
                        .and_then(|id| pending.lock().unwrap().remove(&id));
                    if let Some(waiter) = waiter {
                        let _ = waiter.send(message);
                    }
                }
                _ => {}
            }
        }
    });
}

fn record_publication(published: &Published, params: &Value) {
    let Some(uri) = params["uri"].as_str() else {
        return;
    };
    let errors = errors_in(&params["diagnostics"]);
    let mut by_uri = published.by_uri.lock().unwrap();
    let entry = by_uri.entry(uri.to_owned()).or_default();
    *entry = (entry.0 + 1, errors);
    published.changed.notify_all();
}

/// How many of `diagnostics` are errors (severity 1): hints and
/// warnings do not make an edit broken.
fn errors_in(diagnostics: &Value) -> usize {
    diagnostics
        .as_array()
        .into_iter()
        .flatten()
        .filter(|diagnostic| diagnostic["severity"].as_i64() == Some(1))
        .count()
}

fn write_message(stdin: &Stdin, message: &Value) {
    let body = message.to_string();
    let mut stdin = stdin.lock().unwrap();
    // A server that exited is seen by the waiter, which gets no answer.
    let _ =
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).and_then(|()| stdin.flush());
}

/// One framed message, or `None` once the server closed its output.
fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}
