//! mockls's flags, each observed on the wire: the test speaks LSP to the
//! real binary and reads what it sends back.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;
use windlass_actors::lsp::framing::{FrameDecoder, encode};

const WATCHDOG: Duration = Duration::from_secs(30);

struct Mock {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    root: tempfile::TempDir,
}

impl Mock {
    fn start(flags: &[&str]) -> Mock {
        let root = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_mockls"))
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            let mut decoder = FrameDecoder::new();
            let mut buffer = [0u8; 4096];
            while let Ok(read) = stdout.read(&mut buffer) {
                if read == 0 {
                    return;
                }
                decoder.push(&buffer[..read]);
                while let Ok(Some(body)) = decoder.next_body() {
                    let message = serde_json::from_slice(&body)
                        .unwrap_or_else(|_| json!({"raw": String::from_utf8_lossy(&body)}));
                    if sender.send(message).is_err() {
                        return;
                    }
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        let mut mock = Mock {
            child,
            stdin,
            messages,
            root,
        };
        let uri = format!("file://{}", mock.root.path().display());
        mock.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"rootUri": uri, "capabilities": {}}}));
        mock
    }

    fn send(&mut self, message: Value) {
        self.stdin
            .write_all(&encode(message.to_string().as_bytes()))
            .unwrap();
        self.stdin.flush().unwrap();
    }

    fn next(&self) -> Value {
        self.messages
            .recv_timeout(WATCHDOG)
            .expect("mockls said nothing")
    }

    /// The next message that satisfies `wanted`, skipping others.
    fn next_where(&self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self.next();
            if wanted(&message) {
                return message;
            }
        }
    }

    fn initialize_result(&self) -> Value {
        self.next_where(|m| m["id"] == 0)["result"].clone()
    }

    fn initialized(&mut self) {
        self.initialize_result();
        self.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    }

    fn open(&mut self, name: &str, text: &str) -> String {
        let uri = format!("file://{}/{name}", self.root.path().display());
        let document = json!({"uri": uri, "languageId": "python", "version": 1, "text": text});
        self.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": document}}));
        uri
    }

    fn change(&mut self, uri: &str, version: i64, text: &str) {
        let params = json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]});
        self.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": params}));
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.next_where(|m| m["id"] == id)
    }

    fn diagnostics(&self) -> Value {
        self.next_where(|m| m["method"] == "textDocument/publishDiagnostics")["params"].clone()
    }

    fn exit_code(&mut self) -> Option<i32> {
        let deadline = std::time::Instant::now() + WATCHDOG;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(std::time::Instant::now() < deadline, "mockls did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn messages_of(diagnostics: &Value) -> Vec<String> {
    diagnostics["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn diagnostics_follow_the_text() {
    let mut mock = Mock::start(&[]);
    mock.initialized();
    let uri = mock.open("a.py", "ok\nan ERROR here\nERROR again\n");
    assert_eq!(
        messages_of(&mock.diagnostics()),
        vec!["mockls: ERROR on line 2", "mockls: ERROR on line 3"]
    );
    mock.change(&uri, 2, "clean\n");
    let cleared = mock.diagnostics();
    assert!(messages_of(&cleared).is_empty());
    assert!(
        cleared.get("version").is_none(),
        "no version without --publish-version"
    );
}

#[test]
fn publish_version_echoes_the_document_version() {
    let mut mock = Mock::start(&["--publish-version", "--diagnostics-delay", "20"]);
    mock.initialized();
    let uri = mock.open("a.py", "ERROR\n");
    assert_eq!(mock.diagnostics()["version"], 1);
    mock.change(&uri, 7, "fine\n");
    assert_eq!(mock.diagnostics()["version"], 7);
}

#[test]
fn no_diagnostics_never_publishes() {
    let mut mock = Mock::start(&["--no-diagnostics"]);
    mock.initialized();
    mock.open("a.py", "ERROR\n");
    let answer = mock.request(
        5,
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": "file:///none"}}),
    );
    assert_eq!(answer["result"], json!([]));
    // Absence can only be shown by waiting; a publication would follow
    // the didOpen at once, well inside this window.
    assert!(
        mock.messages
            .recv_timeout(Duration::from_millis(300))
            .is_err(),
        "nothing but the answer was sent"
    );
}

#[test]
fn diagnostics_on_save_waits_for_the_save() {
    let mut mock = Mock::start(&["--diagnostics-on-save"]);
    let capabilities = mock.initialize_result()["capabilities"].clone();
    assert_eq!(
        capabilities["textDocumentSync"]["save"],
        json!({"includeText": false})
    );
    mock.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    let uri = mock.open("a.py", "fine\n");
    assert!(messages_of(&mock.diagnostics()).is_empty());
    mock.change(&uri, 2, "ERROR\n");
    mock.send(json!({"jsonrpc": "2.0", "method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}}));
    assert_eq!(
        messages_of(&mock.diagnostics()),
        vec!["mockls: ERROR on line 1"]
    );
}

#[test]
fn progress_on_change_brackets_the_publication() {
    let mut mock = Mock::start(&["--progress-on-change", "--cpu-busy", "50"]);
    mock.initialized();
    mock.open("a.py", "ERROR\n");
    let create = mock.next();
    assert_eq!(create["method"], "window/workDoneProgress/create");
    let begin = mock.next();
    assert_eq!(begin["params"]["value"]["kind"], "begin");
    assert_eq!(mock.next()["method"], "textDocument/publishDiagnostics");
    let end = mock.next();
    assert_eq!(
        (
            end["params"]["value"]["kind"].clone(),
            end["params"]["token"].clone()
        ),
        (json!("end"), begin["params"]["token"].clone())
    );
}

#[test]
fn multi_round_publishes_empty_then_real() {
    let mut mock = Mock::start(&["--multi-round-diagnostics"]);
    mock.initialized();
    mock.open("a.py", "ERROR\n");
    assert!(messages_of(&mock.diagnostics()).is_empty());
    assert_eq!(
        messages_of(&mock.diagnostics()),
        vec!["mockls: ERROR on line 1"]
    );
}

#[test]
fn indexing_reports_progress_and_answers_empty_meanwhile() {
    let mut mock = Mock::start(&["--indexing-delay", "300", "--no-diagnostics"]);
    mock.initialized();
    let uri = mock.open("a.py", "def run():\n    pass\n");
    assert_eq!(mock.next()["method"], "window/workDoneProgress/create");
    assert_eq!(mock.next()["params"]["value"]["title"], "indexing");
    let position = json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 5}});
    assert_eq!(
        mock.request(1, "textDocument/hover", position.clone())["result"],
        Value::Null
    );
    assert_eq!(mock.next()["params"]["value"]["kind"], "end");
    assert_eq!(
        mock.request(2, "textDocument/hover", position)["result"]["contents"]["value"],
        "```mockls\nrun\n```"
    );
}

#[test]
fn workspace_folders_and_position_encoding_are_advertised() {
    let mut mock = Mock::start(&["--workspace-folders", "--position-encoding", "utf-8"]);
    let capabilities = mock.initialize_result()["capabilities"].clone();
    assert_eq!(
        capabilities["workspace"]["workspaceFolders"]["supported"],
        true
    );
    assert_eq!(capabilities["positionEncoding"], "utf-8");
    mock.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    let uri = mock.open("a.py", "é = 1; def café(): pass\n");
    let position = json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 13}});
    let hover = mock.request(1, "textDocument/hover", position);
    assert_eq!(hover["result"]["contents"]["value"], "```mockls\ncafé\n```");
}

#[test]
fn crash_on_and_drop_after_exit_the_process() {
    let mut crashing = Mock::start(&["--crash-on", "textDocument/hover"]);
    crashing.initialized();
    crashing.send(json!({"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {}}));
    assert_eq!(crashing.exit_code(), Some(3));

    let mut dropping = Mock::start(&["--drop-after", "1", "--no-diagnostics"]);
    dropping.initialized();
    assert!(dropping.request(1, "workspace/symbol", json!({"query": ""}))["result"].is_array());
    dropping.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "workspace/symbol", "params": {"query": ""}}),
    );
    assert_eq!(dropping.exit_code(), Some(4));
}

#[test]
fn fail_on_and_hang_on_shape_the_answer() {
    let mut mock = Mock::start(&[
        "--fail-on",
        "workspace/symbol",
        "--hang-on",
        "textDocument/hover",
    ]);
    mock.initialized();
    mock.send(json!({"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {}}));
    let failed = mock.request(2, "workspace/symbol", json!({"query": ""}));
    assert_eq!(
        failed["error"]["message"],
        "mockls: failing workspace/symbol as asked"
    );
    assert!(
        mock.messages
            .recv_timeout(Duration::from_millis(300))
            .is_err(),
        "the hover was never answered"
    );
}

#[test]
fn configuration_request_and_record_file() {
    let record = tempfile::NamedTempFile::new().unwrap();
    let path = record.path().to_str().unwrap().to_owned();
    let mut mock = Mock::start(&["--send-configuration-request", "--record", &path]);
    mock.initialized();
    let request = mock.next_where(|m| m["method"] == "workspace/configuration");
    assert_eq!(request["params"]["items"][0]["section"], "mockls");
    mock.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": [{"level": 1}]}));
    mock.request(9, "workspace/symbol", json!({"query": ""}));
    let lines: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let answer = lines
        .iter()
        .find(|l| {
            l["dir"] == "in"
                && l["message"]["id"] == request["id"]
                && l["message"]["method"].is_null()
        })
        .unwrap();
    assert_eq!(answer["message"]["result"], json!([{"level": 1}]));
    assert!(lines.iter().all(|l| l["t"].as_f64().unwrap() > 0.0));
}

#[test]
fn wire_faults_are_produced_as_asked() {
    let mut mock = Mock::start(&[
        "--malformed-on",
        "textDocument/hover",
        "--unknown-id-on",
        "workspace/symbol",
        "--invalid-utf8-on",
        "textDocument/definition",
        "--outside-uri",
        "--slow-write",
    ]);
    mock.initialized();
    mock.send(json!({"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {}}));
    assert!(
        mock.next()["raw"]
            .as_str()
            .unwrap()
            .starts_with(r#"{"jsonrpc":"2.0","id":1,"result":{"contents":"#)
    );
    mock.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "workspace/symbol", "params": {"query": ""}}),
    );
    assert_eq!(mock.next()["id"], 987_654_321);
    assert_eq!(mock.next()["id"], 2);
    mock.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "textDocument/definition", "params": {}}),
    );
    assert!(mock.next()["raw"].as_str().unwrap().contains('\u{fffd}'));
}

#[test]
fn huge_and_wrong_length_responses() {
    let mut mock = Mock::start(&[
        "--huge-on",
        "workspace/symbol",
        "--huge-bytes",
        "100000",
        "--wrong-length-on",
        "textDocument/hover",
    ]);
    mock.initialized();
    let huge = mock.request(1, "workspace/symbol", json!({"query": ""}));
    assert_eq!(huge["result"]["contents"].as_str().unwrap().len(), 100_000);
    mock.send(json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {}}));
    assert!(
        mock.next()["raw"].is_string(),
        "the body was cut short by its Content-Length"
    );
}

#[test]
fn outside_uri_points_definitions_out_of_the_workspace() {
    let mut mock = Mock::start(&["--outside-uri", "--response-delay", "10"]);
    mock.initialized();
    let uri = mock.open("a.py", "def run():\n    run()\n");
    let at = json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 4}});
    let definition = mock.request(1, "textDocument/definition", at);
    assert_eq!(definition["result"][0]["uri"], "file:///etc/passwd");
}
