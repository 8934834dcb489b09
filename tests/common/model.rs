//! A scripted model on loopback for the real agent hosts: an HTTP/1.1
//! server on 127.0.0.1 that answers each main-loop request of one host
//! process with the next step of a script (a tool call or a final text),
//! answers the host's side requests so they leave the script alone, and
//! records every request with its arrival time. The host's API is
//! [`anthropic`](super::anthropic) (Claude Code),
//! [`gemini`](super::gemini) (Gemini CLI), [`responses`](super::responses)
//! (Codex) or [`chat`](super::chat) (Copilot CLI, OpenCode, Qwen Code);
//! this file owns the script, the record and the HTTP.

use serde_json::Value;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use super::chat::Dialect;
use super::{anthropic, chat, gemini, responses};

/// The API a model speaks: its host's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    Anthropic,
    Gemini,
    Responses,
    Chat(Dialect),
}

/// What the model does at one step of the host's main loop, in host-neutral
/// terms; each API names the host's own tool for it.
#[derive(Clone, Debug)]
pub enum Action {
    Edit {
        file: PathBuf,
        old: String,
        new: String,
    },
    Read {
        file: PathBuf,
    },
    /// A patch in the `apply_patch` format; `edited` is a file it writes.
    Patch {
        patch: String,
        edited: PathBuf,
    },
    /// A Windlass MCP tool by its own name (`hover`), with its arguments:
    /// the plugin's or extension's server, or the one the host was told
    /// of by this name (`server`).
    Mcp {
        server: Option<String>,
        tool: String,
        arguments: Value,
    },
    /// Claude Code's ToolSearch, which loads deferred (MCP) tools.
    ToolSearch {
        query: String,
    },
    /// A final answer: the host's turn ends.
    Text(String),
}

impl Action {
    /// The file this action writes, if it writes one.
    fn edited(&self) -> Option<&Path> {
        match self {
            Action::Edit { file, .. } => Some(file),
            Action::Patch { edited, .. } => Some(edited),
            _ => None,
        }
    }
}

type Gate = Box<dyn FnOnce() + Send>;

/// One step of a script: an action, and optionally a gate the answer waits
/// for (how a test orders the steps of two hosts running at once).
pub struct Step {
    action: Action,
    gate: Option<Gate>,
}

impl Step {
    pub fn edit(file: &Path, old: &str, new: &str) -> Step {
        Step::from(Action::Edit {
            file: file.to_owned(),
            old: old.to_owned(),
            new: new.to_owned(),
        })
    }

    pub fn patch(patch: &str, edited: &Path) -> Step {
        Step::from(Action::Patch {
            patch: patch.to_owned(),
            edited: edited.to_owned(),
        })
    }

    pub fn read(file: &Path) -> Step {
        Step::from(Action::Read {
            file: file.to_owned(),
        })
    }

    pub fn mcp(tool: &str, arguments: Value) -> Step {
        Step::from(Action::Mcp {
            server: None,
            tool: tool.to_owned(),
            arguments,
        })
    }

    /// A tool of the MCP server the host knows as `server`.
    pub fn mcp_on(server: &str, tool: &str, arguments: Value) -> Step {
        Step::from(Action::Mcp {
            server: Some(server.to_owned()),
            tool: tool.to_owned(),
            arguments,
        })
    }

    pub fn tool_search(query: &str) -> Step {
        Step::from(Action::ToolSearch {
            query: query.to_owned(),
        })
    }

    pub fn text(text: &str) -> Step {
        Step::from(Action::Text(text.to_owned()))
    }

    /// Holds this step's answer until `gate` returns.
    pub fn after(self, gate: impl FnOnce() + Send + 'static) -> Step {
        Step {
            gate: Some(Box::new(gate)),
            ..self
        }
    }
}

impl From<Action> for Step {
    fn from(action: Action) -> Step {
        Step { action, gate: None }
    }
}

/// One request the model received.
#[derive(Clone, Debug)]
pub struct Received {
    /// When its request line arrived.
    pub at: SystemTime,
    pub path: String,
    pub body: Value,
    /// Its place among the main-loop requests (0 = the prompt); `None` for
    /// a side request.
    pub turn: Option<usize>,
    /// When the step before it edited a file: the file's mtime as this
    /// request arrived, which is when the host finished writing it (the
    /// host's hooks run after the write, and the next edit comes only
    /// after this request is answered).
    pub edited_at: Option<SystemTime>,
}

impl Received {
    /// From the end of the edit before it to this request's arrival.
    pub fn since_edit(&self) -> Option<Duration> {
        self.at.duration_since(self.edited_at?).ok()
    }
}

/// A tool's result as the model saw it in the request after the call.
#[derive(Clone, Debug, Default)]
pub struct ToolResult {
    /// The result's own text.
    pub text: String,
    /// What came with it from the host's hooks (Claude Code's
    /// `additionalContext` after the result, Gemini's `<hook_context>`).
    pub context: String,
    pub is_error: bool,
    /// The tools a ToolSearch result loaded.
    pub tools: Vec<String>,
}

/// What the script and the record share with the connections.
struct Shared {
    api: Api,
    /// Names the host in printed figures.
    label: String,
    steps: Mutex<VecDeque<Step>>,
    /// The actions answered, by turn.
    answered: Mutex<Vec<Action>>,
    log: Mutex<Vec<Received>>,
    arrived: Condvar,
    closed: AtomicBool,
}

/// A running scripted model; dropping it stops the server.
pub struct Model {
    shared: Arc<Shared>,
    address: SocketAddr,
}

/// A handle on a model's record that outlives borrows: for gates.
#[derive(Clone)]
pub struct Watch(Arc<Shared>);

impl Model {
    /// Serves one host speaking `api`, on a free loopback port; `label`
    /// names it in printed figures. Its script starts empty: see
    /// [`Model::script`].
    pub fn start(api: Api, label: &str) -> Model {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let address = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            api,
            label: label.to_owned(),
            steps: Mutex::default(),
            answered: Mutex::default(),
            log: Mutex::default(),
            arrived: Condvar::new(),
            closed: AtomicBool::new(false),
        });
        let serving = shared.clone();
        std::thread::spawn(move || accept(&listener, &serving));
        Model { shared, address }
    }

    /// Appends steps to the script: separate from [`Model::start`] so that
    /// two models' steps can wait on each other.
    pub fn script(&self, steps: impl IntoIterator<Item = Step>) {
        self.shared.steps.lock().unwrap().extend(steps);
    }

    /// The base URL the host is pointed at.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    pub fn watch(&self) -> Watch {
        Watch(self.shared.clone())
    }

    /// The main-loop request of `turn`, if it came.
    pub fn turn(&self, turn: usize) -> Option<Received> {
        self.shared
            .log()
            .iter()
            .find(|received| received.turn == Some(turn))
            .cloned()
    }

    /// How many main-loop requests came.
    pub fn turns(&self) -> usize {
        self.shared.turns(&self.shared.log())
    }

    /// The result of the tool the model called at `turn`, as the request
    /// of the next turn carried it to the model.
    pub fn result(&self, turn: usize) -> Option<ToolResult> {
        let next = self.turn(turn + 1)?;
        match self.shared.api {
            Api::Anthropic => anthropic::tool_result(&next.body, turn),
            Api::Gemini => gemini::tool_result(&next.body, turn),
            Api::Responses => responses::tool_result(&next.body, turn),
            Api::Chat(_) => chat::tool_result(&next.body, turn),
        }
    }

    /// Writes every request received to `path`, one JSON line each (time
    /// in ms since the epoch, turn, path, body): what to read when a test
    /// fails.
    pub fn dump(&self, path: &Path) {
        let lines: Vec<String> = self
            .shared
            .log()
            .iter()
            .map(|received| {
                serde_json::json!({
                    "at_ms": super::host::millis(received.at),
                    "turn": received.turn,
                    "path": received.path,
                    "body": received.body,
                })
                .to_string()
            })
            .collect();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, lines.join("\n")).unwrap();
    }

    /// From each edit's end to the next main-loop request, in turn order.
    pub fn edit_latencies(&self) -> Vec<Duration> {
        self.shared
            .log()
            .iter()
            .filter_map(Received::since_edit)
            .collect()
    }

    /// When each edit ended (the file's mtime as the next request came),
    /// in turn order.
    pub fn edits_ended(&self) -> Vec<SystemTime> {
        self.shared
            .log()
            .iter()
            .filter_map(|received| received.edited_at)
            .collect()
    }
}

impl Watch {
    /// Waits until `turns` main-loop requests have come, failing the test
    /// after `timeout`.
    pub fn wait_turns(&self, turns: usize, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut log = self.0.log();
        while self.0.turns(&log) < turns {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "{}: {turns} model requests did not come within {timeout:?}",
                self.0.label
            );
            log = self.0.arrived.wait_timeout(log, left).unwrap().0;
        }
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        // Wakes the accepting thread so that it sees the flag and ends.
        let _ = TcpStream::connect(self.address);
    }
}

impl Shared {
    fn log(&self) -> MutexGuard<'_, Vec<Received>> {
        self.log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn turns(&self, log: &[Received]) -> usize {
        log.iter()
            .filter(|received| received.turn.is_some())
            .count()
    }

    /// Records a request and says what to answer.
    fn answer(&self, request: HttpRequest) -> Response {
        let main = match self.api {
            Api::Anthropic => anthropic::is_main(&request.path, &request.body),
            Api::Gemini => gemini::is_main(&request.path, &request.body),
            Api::Responses => responses::is_main(&request.path, &request.body),
            Api::Chat(_) => chat::is_main(&request.path, &request.body),
        };
        if !main {
            let response = match self.api {
                Api::Anthropic => anthropic::side(&request.path, &request.body),
                Api::Gemini => gemini::side(&request.path, &request.body),
                Api::Responses | Api::Chat(_) => chat::side(),
            };
            self.record(request, false);
            return response;
        }
        let turn = self.record(request, true);
        let step = self.steps.lock().unwrap().pop_front();
        let Step { action, gate } =
            step.unwrap_or_else(|| Step::text("(the scripted model has no more steps)"));
        if let Some(gate) = gate {
            gate();
        }
        self.answered.lock().unwrap().push(action.clone());
        match self.api {
            Api::Anthropic => anthropic::answer(&action, turn),
            Api::Gemini => gemini::answer(&action, turn),
            Api::Responses => responses::answer(&action, turn),
            Api::Chat(dialect) => chat::answer(dialect, &action, turn),
        }
    }

    /// Appends a request to the log (as the next turn when `main`), and
    /// returns its turn.
    fn record(&self, request: HttpRequest, main: bool) -> usize {
        let mut log = self.log();
        let turn = self.turns(&log);
        let received = Received {
            at: request.at,
            path: request.path,
            body: request.body,
            turn: main.then_some(turn),
            edited_at: if main { self.edit_end(turn) } else { None },
        };
        if let Some(took) = received.since_edit() {
            eprintln!(
                "host: {} edit->next request {} ms",
                self.label,
                took.as_millis()
            );
        }
        log.push(received);
        self.arrived.notify_all();
        turn
    }

    /// The mtime of the file the previous turn's step edited.
    fn edit_end(&self, turn: usize) -> Option<SystemTime> {
        let answered = self.answered.lock().unwrap();
        let file = answered.get(turn.checked_sub(1)?)?.edited()?;
        std::fs::metadata(file).ok()?.modified().ok()
    }
}

/// One HTTP request: enough of it for the hosts' API clients.
struct HttpRequest {
    at: SystemTime,
    path: String,
    body: Value,
}

/// An HTTP 200 answer.
pub struct Response {
    content_type: &'static str,
    body: String,
}

impl Response {
    pub fn json(value: &Value) -> Response {
        Response {
            content_type: "application/json",
            body: value.to_string(),
        }
    }

    /// Server-Sent Events, each already framed.
    pub fn events(events: impl Iterator<Item = String>) -> Response {
        Response {
            content_type: "text/event-stream",
            body: events.collect(),
        }
    }
}

fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.closed.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let shared = shared.clone();
        std::thread::spawn(move || serve(stream, &shared));
    }
}

/// Answers the requests of one keep-alive connection until it closes.
fn serve(mut stream: TcpStream, shared: &Shared) {
    let Ok(reading) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(reading);
    while let Some(request) = read_request(&mut reader) {
        let response = shared.answer(request);
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {}\r\ncontent-length: {}\r\ncache-control: no-cache\r\n\r\n",
            response.content_type,
            response.body.len()
        );
        let written = stream
            .write_all(head.as_bytes())
            .and_then(|()| stream.write_all(response.body.as_bytes()))
            .and_then(|()| stream.flush());
        if written.is_err() {
            return;
        }
    }
}

/// Reads a request line, headers and a `content-length` body; `None` when
/// the connection ends. The hosts' clients send no chunked bodies.
fn read_request(reader: &mut impl BufRead) -> Option<HttpRequest> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let at = SystemTime::now();
    let path = line.split_whitespace().nth(1)?.to_owned();
    let mut length = 0;
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(HttpRequest {
        at,
        path,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}
