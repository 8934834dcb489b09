//! mockls's protocol handling: requests answered from the text, document
//! sync, diagnostics publishing, and the faults the flags inject.

use crate::features::{Answers, range_json};
use crate::flags::Flags;
use crate::output::Output;
use crate::text::Workspace;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use windlass_actors::lsp::position::PositionEncoding;
use windlass_actors::lsp::uri::uri_to_path;

/// An id mockls never gave out, for the unknown-id fault.
const UNKNOWN_ID: i64 = 987_654_321;
/// The id of mockls's own `workspace/workspaceFolders` requests.
const FOLDERS_REQUEST: &str = "mockls-folders";

pub struct Server {
    flags: Flags,
    output: Arc<Output>,
    workspace: Workspace,
    encoding: PositionEncoding,
    versions: HashMap<String, i64>,
    /// Bumped per change of a document, so a slow diagnostics thread for an
    /// older version never publishes over a newer one.
    generations: Arc<Mutex<HashMap<String, u64>>>,
    answered: u64,
    /// Times each method was asked, for faults of the first time only.
    asked: HashMap<String, u64>,
    indexing: Arc<Mutex<bool>>,
    progress_tokens: AtomicU64,
}

impl Server {
    pub fn new(flags: Flags, output: Arc<Output>) -> Self {
        Self {
            encoding: flags.position_encoding.unwrap_or_default(),
            flags,
            output,
            workspace: Workspace::default(),
            versions: HashMap::new(),
            generations: Arc::default(),
            answered: 0,
            asked: HashMap::new(),
            indexing: Arc::default(),
            progress_tokens: AtomicU64::new(1),
        }
    }

    pub fn receive(&mut self, body: &[u8]) {
        let Ok(message) = serde_json::from_slice::<Value>(body) else {
            eprintln!("mockls: ignoring a body that is not JSON");
            return;
        };
        self.output.record("in", &message);
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match (method, message.get("id").cloned()) {
            (Some(method), Some(id)) => self.request(id, &method, &params),
            (Some(method), None) => self.notification(&method, &params),
            (None, Some(id)) if id == FOLDERS_REQUEST => self.folders_answered(&message),
            (None, _) => {}
        }
    }

    fn request(&mut self, id: Value, method: &str, params: &Value) {
        if self.flags.crash_on.iter().any(|m| m == method) {
            // Named as a real server names the file it choked on.
            match params["textDocument"]["uri"].as_str() {
                Some(uri) => eprintln!("mockls: crashing on {method} of {uri} as asked"),
                None => eprintln!("mockls: crashing on {method} as asked"),
            }
            std::process::exit(3);
        }
        match method {
            "initialize" => return self.initialize(&id, params),
            "shutdown" if self.flags.ignore_shutdown => return,
            "shutdown" => {
                return self
                    .output
                    .send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
            }
            _ => {}
        }
        if let Some(limit) = self.flags.drop_after
            && self.answered >= limit
        {
            eprintln!("mockls: dropping after {limit} requests as asked");
            std::process::exit(4);
        }
        self.answered += 1;
        if self.flags.hangs_on(method) {
            return;
        }
        let times = self.asked.entry(method.to_owned()).or_insert(0);
        *times += 1;
        let first = *times == 1;
        let cancelled = [
            ("content-modified", -32801, first),
            ("server-cancelled", -32802, first),
            ("content-modified-always", -32801, true),
        ]
        .into_iter()
        .find(|(kind, _, now)| *now && self.flags.fault(kind, method));
        if let Some((kind, code, _)) = cancelled {
            let error =
                json!({"code": code, "message": format!("mockls: {kind} on {method} as asked")});
            return self.respond_later(json!({"jsonrpc": "2.0", "id": id, "error": error}));
        }
        if self.flags.fault("unknown-request", method) {
            self.output.send(&json!({"jsonrpc": "2.0", "id": "mockls-unknown", "method": "mockls/unheardOf", "params": {}}));
        }
        if self.flags.fail_on.iter().any(|m| m == method) {
            let error =
                json!({"code": -32603, "message": format!("mockls: failing {method} as asked")});
            return self.respond_later(json!({"jsonrpc": "2.0", "id": id, "error": error}));
        }
        let result = match self.answer(method, params) {
            Ok(result) => result,
            Err(error) => {
                return self.respond_later(json!({"jsonrpc": "2.0", "id": id, "error": error}));
            }
        };
        self.respond_with_faults(id, method, result);
    }

    fn initialize(&mut self, id: &Value, params: &Value) {
        let folders = params
            .get("workspaceFolders")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut roots: Vec<_> = folders
            .iter()
            .filter_map(|f| f.get("uri")?.as_str().and_then(uri_to_path))
            .collect();
        if roots.is_empty()
            && let Some(root) = params
                .get("rootUri")
                .and_then(Value::as_str)
                .and_then(uri_to_path)
        {
            roots.push(root);
        }
        self.workspace.roots = roots;
        let mut sync = json!({"openClose": true, "change": 1});
        if self.flags.diagnostics_on_save {
            sync["save"] = json!({"includeText": false});
        }
        let mut capabilities = json!({
            "textDocumentSync": sync,
            "hoverProvider": true,
            "definitionProvider": true,
            "declarationProvider": true,
            "typeDefinitionProvider": true,
            "implementationProvider": true,
            "referencesProvider": true,
            "documentSymbolProvider": true,
            "workspaceSymbolProvider": true,
            "callHierarchyProvider": true,
            "typeHierarchyProvider": true,
            "codeActionProvider": true,
            "renameProvider": true,
            "completionProvider": {"triggerCharacters": ["."]},
            "signatureHelpProvider": {"triggerCharacters": ["(", ","]},
        });
        if let Some(object) = capabilities.as_object_mut() {
            for capability in &self.flags.without {
                object.remove(capability);
            }
        }
        if let Some(encoding) = self.flags.position_encoding {
            capabilities["positionEncoding"] = json!(encoding.lsp_name());
        }
        if self.flags.workspace_folders {
            capabilities["workspace"] =
                json!({"workspaceFolders": {"supported": true, "changeNotifications": true}});
        }
        let result = json!({"capabilities": capabilities, "serverInfo": {"name": "mockls"}});
        self.output
            .send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn answer(&self, method: &str, params: &Value) -> Result<Value, Value> {
        let indexing = self.indexing.lock().map(|flag| *flag).unwrap_or(false);
        let answers = Answers {
            workspace: &self.workspace,
            encoding: self.encoding,
            outside_uri: self.flags.outside_uri,
            nested_symbols: self.flags.nested_symbols,
        };
        answers.answer(method, params, indexing)
    }

    /// Sends a response after the response delay, with any faults asked
    /// for on this method.
    fn respond_with_faults(&self, id: Value, method: &str, result: Value) {
        let has = |list: &[String]| list.iter().any(|m| m == method);
        let id_text = id.to_string();
        if has(&self.flags.unknown_id_on) {
            self.output
                .send(&json!({"jsonrpc": "2.0", "id": UNKNOWN_ID, "result": null}));
        }
        if has(&self.flags.malformed_on) {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id_text},"result":{{"contents":"#);
            return self.raw_later(windlass_actors::lsp::framing::encode(body.as_bytes()));
        }
        if has(&self.flags.wrong_length_on) {
            let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
            let mut bytes =
                format!("Content-Length: {}\r\n\r\n", body.len().saturating_sub(3)).into_bytes();
            bytes.extend_from_slice(body.as_bytes());
            return self.raw_later(bytes);
        }
        if has(&self.flags.invalid_utf8_on) {
            let mut body =
                format!(r#"{{"jsonrpc":"2.0","id":{id_text},"result":{{"contents":"bad "#)
                    .into_bytes();
            body.extend_from_slice(b"\xff\xfe bytes\"}}");
            return self.raw_later(windlass_actors::lsp::framing::encode(&body));
        }
        if let Some(bytes) = self.wire_fault(&id, method, &result) {
            return self.raw_later(bytes);
        }
        if has(&self.flags.huge_on) {
            let huge = "x".repeat(self.flags.huge_bytes);
            return self
                .respond_later(json!({"jsonrpc": "2.0", "id": id, "result": {"contents": huge}}));
        }
        self.respond_later(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// The bytes of a response broken as `--fault` asks for `method`, if
    /// it does. `truncated` exits once its half body is out.
    fn wire_fault(&self, id: &Value, method: &str, result: &Value) -> Option<Vec<u8>> {
        let fault = |kind: &str| self.flags.fault(kind, method);
        let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        let framed = windlass_actors::lsp::framing::encode(body.as_bytes());
        let bytes = if fault("missing-length") {
            format!("Content-Type: application/vscode-jsonrpc\r\n\r\n{body}").into_bytes()
        } else if fault("non-numeric-length") {
            format!("Content-Length: twelve\r\n\r\n{body}").into_bytes()
        } else if fault("oversize-length") {
            format!("Content-Length: 99999999999\r\n\r\n{body}").into_bytes()
        } else if fault("truncated") {
            let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
            bytes.extend_from_slice(&body.as_bytes()[..body.len() / 2]);
            self.output.send_raw(&bytes);
            eprintln!("mockls: exiting halfway through a response as asked");
            std::process::exit(5);
        } else if fault("garbage-line") {
            let mut bytes = b"this is not a header line\r\n".to_vec();
            bytes.extend_from_slice(&framed);
            bytes
        } else if fault("duplicate-id") {
            [framed.clone(), framed].concat()
        } else if fault("null-id") {
            let error = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "mockls: parse error as asked"}});
            let mut bytes = windlass_actors::lsp::framing::encode(error.to_string().as_bytes());
            bytes.extend_from_slice(&framed);
            bytes
        } else {
            return None;
        };
        Some(bytes)
    }

    fn respond_later(&self, message: Value) {
        let output = self.output.clone();
        self.later(move || output.send(&message));
    }

    fn raw_later(&self, bytes: Vec<u8>) {
        let output = self.output.clone();
        self.later(move || output.send_raw(&bytes));
    }

    /// Runs `send` after the response delay, on its own thread so that
    /// delayed requests are in flight together.
    fn later(&self, send: impl FnOnce() + Send + 'static) {
        let delay = self.flags.response_delay_ms;
        if delay == 0 {
            return send();
        }
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(delay));
            send();
        });
    }

    fn notification(&mut self, method: &str, params: &Value) {
        match method {
            "initialized" if self.flags.crash_on_initialized => {
                eprintln!("mockls: crashing after initialized as asked");
                std::process::exit(6);
            }
            "initialized" => self.initialized(),
            "exit" if self.flags.ignore_shutdown => {}
            "exit" => std::process::exit(0),
            "textDocument/didOpen" => self.did_open(params),
            "textDocument/didChange" => self.did_change(params),
            "textDocument/didSave" => {
                if self.flags.diagnostics_on_save
                    && let Some(uri) = params.pointer("/textDocument/uri").and_then(Value::as_str)
                {
                    self.publish(uri, true);
                }
            }
            "textDocument/didClose" => {
                if let Some(uri) = params.pointer("/textDocument/uri").and_then(Value::as_str) {
                    self.workspace.open.remove(uri);
                }
            }
            "workspace/didChangeWorkspaceFolders" => self.change_folders(params),
            "workspace/didChangeWatchedFiles" if self.flags.watch_files => {
                let open: Vec<String> = self.workspace.open.keys().cloned().collect();
                for uri in open {
                    self.publish(&uri, false);
                }
            }
            _ => {}
        }
    }

    /// Asks the client for its workspace folders, as servers that support
    /// them do after `initialized` and after a change.
    fn ask_folders(&self) {
        self.output.send(&json!({"jsonrpc": "2.0", "id": FOLDERS_REQUEST, "method": "workspace/workspaceFolders", "params": null}));
    }

    /// The client's answer replaces the roots mockls knows.
    fn folders_answered(&mut self, message: &Value) {
        let Some(folders) = message.get("result").and_then(Value::as_array) else {
            return;
        };
        self.workspace.roots = folders
            .iter()
            .filter_map(|folder| folder.get("uri")?.as_str().and_then(uri_to_path))
            .collect();
    }

    fn initialized(&mut self) {
        if self.flags.workspace_folders {
            self.ask_folders();
        }
        if self.flags.watch_files {
            let watchers = json!([{"globPattern": "**/*"}]);
            let registration = json!({"id": "mockls-watch", "method": "workspace/didChangeWatchedFiles", "registerOptions": {"watchers": watchers}});
            self.output.send(&json!({"jsonrpc": "2.0", "id": "mockls-register", "method": "client/registerCapability", "params": {"registrations": [registration]}}));
        }
        if self.flags.send_configuration_request {
            let params = json!({"items": [{"section": "mockls"}]});
            self.output.send(&json!({"jsonrpc": "2.0", "id": "mockls-configuration", "method": "workspace/configuration", "params": params}));
        }
        if self.flags.indexing_delay_ms > 0 {
            if let Ok(mut indexing) = self.indexing.lock() {
                *indexing = true;
            }
            let token = self.begin_progress("indexing");
            let output = self.output.clone();
            let indexing = self.indexing.clone();
            let delay = self.flags.indexing_delay_ms;
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(delay));
                if let Ok(mut flag) = indexing.lock() {
                    *flag = false;
                }
                end_progress(&output, &token);
            });
        }
    }

    fn begin_progress(&self, title: &str) -> String {
        let token = format!(
            "mockls-{}",
            self.progress_tokens.fetch_add(1, Ordering::Relaxed)
        );
        self.output.send(&json!({"jsonrpc": "2.0", "id": format!("create-{token}"), "method": "window/workDoneProgress/create", "params": {"token": token}}));
        let value = json!({"kind": "begin", "title": title, "percentage": 0});
        self.output.send(&json!({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": token, "value": value}}));
        token
    }

    fn did_open(&mut self, params: &Value) {
        let Some(document) = params.get("textDocument") else {
            return;
        };
        let (Some(uri), Some(text)) = (
            document.get("uri").and_then(Value::as_str),
            document.get("text").and_then(Value::as_str),
        ) else {
            return;
        };
        self.workspace.open.insert(uri.to_owned(), text.to_owned());
        self.versions.insert(
            uri.to_owned(),
            document.get("version").and_then(Value::as_i64).unwrap_or(0),
        );
        self.flood(uri);
        self.publish(uri, false);
    }

    /// `--flood-diagnostics N`: N publications for `uri`, each with a
    /// message of its own, before the real one.
    fn flood(&self, uri: &str) {
        for n in 0..self.flags.flood_diagnostics {
            let diagnostic = json!({"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "severity": 2, "source": "mockls", "message": format!("mockls: flood {n}")});
            self.output.send(&json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": uri, "diagnostics": [diagnostic]}}));
        }
    }

    fn did_change(&mut self, params: &Value) {
        let Some(uri) = params.pointer("/textDocument/uri").and_then(Value::as_str) else {
            return;
        };
        let version = params
            .pointer("/textDocument/version")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let mut text = self.workspace.open.get(uri).cloned().unwrap_or_default();
        for change in params
            .get("contentChanges")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(new_text) = change.get("text").and_then(Value::as_str) else {
                continue;
            };
            text = match change.get("range") {
                Some(range) => self.apply_range(&text, range, new_text),
                None => new_text.to_owned(),
            };
        }
        self.workspace.open.insert(uri.to_owned(), text);
        self.versions.insert(uri.to_owned(), version);
        if !self.flags.diagnostics_on_save {
            self.publish(uri, true);
        }
    }

    fn apply_range(&self, text: &str, range: &Value, new_text: &str) -> String {
        let offset = |point: &str| -> usize {
            let line = range
                .pointer(&format!("/{point}/line"))
                .and_then(Value::as_u64)
                .unwrap_or(0) as usize;
            let character = range
                .pointer(&format!("/{point}/character"))
                .and_then(Value::as_u64)
                .unwrap_or(0) as u32;
            byte_offset(text, line, character, self.encoding)
        };
        let (start, end) = (offset("start"), offset("end"));
        format!(
            "{}{new_text}{}",
            &text[..start.min(text.len())],
            &text[end.min(text.len())..]
        )
    }

    fn change_folders(&mut self, params: &Value) {
        let event = params.get("event");
        let uris = |key: &str| -> Vec<std::path::PathBuf> {
            event
                .and_then(|e| e.get(key))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|f| f.get("uri")?.as_str().and_then(uri_to_path))
                .collect()
        };
        let removed = uris("removed");
        self.workspace.roots.retain(|root| !removed.contains(root));
        self.workspace.roots.extend(uris("added"));
        self.ask_folders();
    }

    /// Computes diagnostics for the document as it is now and publishes
    /// them on a thread, after the delays and progress the flags ask for;
    /// CPU is burnt only for a `change`.
    fn publish(&mut self, uri: &str, change: bool) {
        if self.flags.no_diagnostics {
            return;
        }
        let text = self.workspace.open.get(uri).cloned().unwrap_or_default();
        let generation = {
            let Ok(mut generations) = self.generations.lock() else {
                return;
            };
            let entry = generations.entry(uri.to_owned()).or_insert(0);
            *entry += 1;
            *entry
        };
        let job = PublishJob {
            uri: uri.to_owned(),
            version: self.versions.get(uri).copied(),
            diagnostics: self.diagnostics(uri, &text),
            busy_ms: if change { self.flags.cpu_busy_ms } else { 0 },
            generation,
            generations: self.generations.clone(),
            output: self.output.clone(),
            flags: self.flags.clone(),
            progress: self
                .flags
                .progress_on_change
                .then(|| self.begin_progress("checking")),
        };
        std::thread::spawn(move || job.run());
    }

    /// One error per line containing `ERROR`, and one per line `uses
    /// FILE` whose FILE (beside the document, as open or on disk) does.
    fn diagnostics(&self, uri: &str, text: &str) -> Vec<Value> {
        text.lines()
            .enumerate()
            .filter_map(|(index, line)| {
                if let Some(byte) = line.find("ERROR") {
                    let column = line[..byte].chars().count();
                    let range = range_json(self.encoding, line, index, column, column + 5);
                    return Some(json!({"range": range, "severity": 1, "source": "mockls", "code": "E1", "message": format!("mockls: ERROR on line {}", index + 1)}));
                }
                let used = line.trim().strip_prefix("uses ")?.trim();
                let dependency = self.workspace.text(&sibling_uri(uri, used)?)?;
                if !dependency.contains("ERROR") {
                    return None;
                }
                let column = line.chars().take_while(|c| c.is_whitespace()).count();
                let range = range_json(self.encoding, line, index, column, column + 4);
                Some(json!({"range": range, "severity": 1, "source": "mockls", "code": "E2", "message": format!("mockls: {used} has an ERROR")}))
            })
            .collect()
    }
}

/// The URI of `name` in the directory of the document `uri`.
fn sibling_uri(uri: &str, name: &str) -> Option<String> {
    let path = uri_to_path(uri)?;
    Some(windlass_actors::lsp::uri::path_to_uri(
        &path.parent()?.join(name),
    ))
}

/// One diagnostics publication waiting for its delays.
struct PublishJob {
    uri: String,
    version: Option<i64>,
    diagnostics: Vec<Value>,
    /// CPU to burn first.
    busy_ms: u64,
    generation: u64,
    generations: Arc<Mutex<HashMap<String, u64>>>,
    output: Arc<Output>,
    flags: Flags,
    progress: Option<String>,
}

impl PublishJob {
    fn run(self) {
        if self.busy_ms > 0 {
            burn_cpu(Duration::from_millis(self.busy_ms));
        }
        std::thread::sleep(Duration::from_millis(self.flags.diagnostics_delay_ms));
        if !self.is_current() {
            return self.finish_progress();
        }
        if self.flags.multi_round_diagnostics {
            self.send(&[]);
            std::thread::sleep(Duration::from_millis(
                self.flags.diagnostics_delay_ms.max(50),
            ));
            if !self.is_current() {
                return self.finish_progress();
            }
        }
        self.send(&self.diagnostics);
        self.finish_progress();
    }

    fn is_current(&self) -> bool {
        self.generations
            .lock()
            .map(|g| g.get(&self.uri) == Some(&self.generation))
            .unwrap_or(false)
    }

    fn send(&self, diagnostics: &[Value]) {
        let mut params = json!({"uri": self.uri, "diagnostics": diagnostics});
        if self.flags.publish_version
            && let Some(version) = self.version
        {
            params["version"] = json!(version);
        }
        self.output.send(&json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params}));
    }

    fn finish_progress(&self) {
        if let Some(token) = &self.progress {
            end_progress(&self.output, token);
        }
    }
}

fn end_progress(output: &Output, token: &str) {
    output.send(&json!({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": token, "value": {"kind": "end"}}}));
}

fn burn_cpu(duration: Duration) {
    let start = Instant::now();
    let mut counter = 0u64;
    while start.elapsed() < duration {
        counter = std::hint::black_box(counter.wrapping_add(1));
    }
}

/// The byte offset of an LSP position in `text`.
fn byte_offset(text: &str, line: usize, character: u32, encoding: PositionEncoding) -> usize {
    let mut offset = 0;
    for (index, line_text) in text.split('\n').enumerate() {
        if index == line {
            let column = encoding.decode_column(line_text, character);
            return offset
                + line_text
                    .chars()
                    .take(column)
                    .map(char::len_utf8)
                    .sum::<usize>();
        }
        offset += line_text.len() + 1;
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_byte_offsets_of_positions() {
        let text = "ab\n😀x\n";
        assert_eq!(byte_offset(text, 0, 1, PositionEncoding::Utf16), 1);
        assert_eq!(byte_offset(text, 1, 2, PositionEncoding::Utf16), 7);
        assert_eq!(byte_offset(text, 1, 4, PositionEncoding::Utf8), 7);
        assert_eq!(byte_offset(text, 9, 0, PositionEncoding::Utf16), text.len());
    }
}
