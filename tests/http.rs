//! MCP over streamable HTTP: the daemon's endpoint driven by the official
//! MCP Python SDK and by the protocol's own conformance suite, beside a
//! bridge's stdio session; and the raw requests it must refuse, which
//! leave nothing behind.
//!
//! The SDK and the suite come from `.ci/run` (PyPI's `mcp` in a virtual
//! environment, npm's `@modelcontextprotocol/conformance` with the Node 22
//! it needs), under `~/.cache/windlass-ci`; `WINDLASS_MCP_PYTHON` and
//! `WINDLASS_CONFORMANCE` point elsewhere.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::http::{Endpoint, HttpSession, initialize_body, request};
use common::{Daemon, have, project, skip, wait_until, windlass_binary};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;

#[test]
fn requests_without_the_token_from_a_foreign_origin_or_too_big_are_refused() {
    let endpoint = Endpoint::start(&[]);
    let token = endpoint.token();
    let bearer = format!("Bearer {token}");
    let body = initialize_body(json!({}));
    let port = endpoint.port;

    let (status, head) = request(port, "POST", &[], &body);
    assert_eq!(status, 401, "{head}");
    assert!(
        head.to_lowercase().contains("www-authenticate: bearer"),
        "{head}"
    );
    let wrong = format!("Bearer {}", "0".repeat(token.len()));
    assert_eq!(
        request(port, "POST", &[("Authorization", &wrong)], &body).0,
        401
    );
    let (status, _) = request(
        port,
        "POST",
        &[
            ("Authorization", &bearer),
            ("Origin", "http://evil.example"),
        ],
        &body,
    );
    assert_eq!(status, 403, "a foreign Origin");
    let (status, _) = request(
        port,
        "POST",
        &[("Authorization", &bearer), ("Host", "evil.example")],
        &body,
    );
    assert!((400..500).contains(&status), "a foreign Host: {status}");
    let oversize = vec![b' '; 5 << 20];
    let (status, _) = request(port, "POST", &[("Authorization", &bearer)], &oversize);
    assert_eq!(status, 413, "a body over the limit");
    assert!(endpoint.alive().is_empty(), "a refusal starts no session");

    let (status, head) = request(port, "POST", &[("Authorization", &bearer)], &body);
    assert_eq!(status, 200, "{head}");
    assert!(head.to_lowercase().contains("mcp-session-id:"), "{head}");
    // The answer may come before the Recorder has written the row.
    wait_until("the session is listed", || endpoint.alive().len() == 1);
    let alive = endpoint.alive();
    assert!(alive[0].contains("over http"), "{alive:?}");

    endpoint.windlass(&["token", "--rotate"]);
    assert_eq!(
        request(port, "POST", &[("Authorization", &bearer)], &body).0,
        401,
        "a rotated token stops working at once"
    );
}

#[test]
fn a_session_its_client_forgets_ends_after_the_idle_time() {
    let endpoint = Endpoint::start(&["--http-auth", "none", "--http-session-idle", "1"]);
    let (status, head) = request(endpoint.port, "POST", &[], &initialize_body(json!({})));
    assert_eq!(status, 200, "{head}");
    // Its row may not be written yet when the answer comes: wait for the
    // row that says it ended, not for the absence of one that says alive.
    wait_until("the forgotten session is listed dead", || {
        let listed = endpoint.windlass(&["list"]);
        listed.contains("dead") && listed.contains("over http")
    });
    assert!(endpoint.alive().is_empty(), "{:?}", endpoint.alive());
}

/// What `windlass daemon --http ADDR FLAGS` says on its way out.
fn refusal(address: &str, flags: &[&str]) -> String {
    let daemon = Daemon::new();
    let output = Command::new(windlass_binary())
        .args(["daemon", "--foreground", "--http", address])
        .args(flags)
        .envs(daemon.environment())
        .env_remove("WINDLASS_STATE_DIR")
        .output()
        .unwrap();
    assert!(!output.status.success(), "{address} {flags:?} was served");
    assert!(daemon.sockets().is_empty(), "no daemon was left running");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A self-signed certificate for 127.0.0.1 and localhost, and its key.
fn certificate(directory: &Path) -> (PathBuf, PathBuf) {
    let (cert, key) = (directory.join("cert.pem"), directory.join("key.pem"));
    let output = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "2", "-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(output.status.success(), "openssl: {output:?}");
    (cert, key)
}

#[test]
fn an_address_other_machines_reach_needs_asking_tls_and_the_token() {
    let stderr = refusal("0.0.0.0:0", &[]);
    assert!(
        stderr.contains("not a loopback address") && stderr.contains("--http-remote"),
        "{stderr}"
    );
    let stderr = refusal("0.0.0.0:0", &["--http-remote"]);
    assert!(
        stderr.contains("needs TLS") && stderr.contains("--http-tls-cert"),
        "{stderr}"
    );
    let files = tempfile::tempdir().unwrap();
    let (cert, key) = certificate(files.path());
    let (cert, key) = (cert.display().to_string(), key.display().to_string());
    let tls = [
        "--http-remote",
        "--http-tls-cert",
        &cert,
        "--http-tls-key",
        &key,
    ];
    let mut without_token = tls.to_vec();
    without_token.extend(["--http-auth", "none"]);
    let stderr = refusal("0.0.0.0:0", &without_token);
    assert!(
        stderr.contains("http_auth = \"none\" is refused"),
        "{stderr}"
    );
    let stderr = refusal(
        "127.0.0.1:0",
        &["--http-tls-cert", &key, "--http-tls-key", &key],
    );
    assert!(stderr.contains("certificate"), "{stderr}");
}

#[test]
fn https_with_the_token_serves_a_client_from_anywhere() {
    let python = match mcp_python() {
        Ok(python) => python,
        Err(reason) => return skip(&reason),
    };
    let files = tempfile::tempdir().unwrap();
    let (cert, key) = certificate(files.path());
    let served = project(&[("notes.txt", "over TLS\n")]);
    let root = served.path().display().to_string();
    let (cert_arg, key_arg) = (cert.display().to_string(), key.display().to_string());
    let endpoint = Endpoint::start_on(
        "0.0.0.0",
        &[
            "--http-remote",
            "--http-tls-cert",
            &cert_arg,
            "--http-tls-key",
            &key_arg,
            "--http-root",
            &root,
        ],
    );
    let url = format!("https://127.0.0.1:{}/mcp", endpoint.port);
    let args = [
        "--token".into(),
        endpoint.token(),
        "--cafile".into(),
        cert_arg.clone(),
        "--no-roots".into(),
    ];
    let mut client = SdkClient::start(&python, &url, &args);
    let read = client
        .call("read_file", json!({"file": "notes.txt"}))
        .unwrap();
    assert!(read.contains("over TLS"), "{read}");
    client.finish();

    let (status, _) = request(endpoint.port, "POST", &[], &initialize_body(json!({})));
    assert_eq!(
        status, 0,
        "plain HTTP gets no answer from an HTTPS endpoint"
    );
}

/// The Python interpreter that has the MCP SDK, or why there is none.
fn mcp_python() -> Result<PathBuf, String> {
    let python = std::env::var_os("WINDLASS_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| ci_cache().join("mcp/bin/python"));
    let works = Command::new(&python)
        .args(["-c", "import mcp.client.streamable_http"])
        .output()
        .is_ok_and(|output| output.status.success());
    match works {
        true => Ok(python),
        false => Err(format!(
            "{} cannot import the MCP SDK (.ci/run installs it)",
            python.display()
        )),
    }
}

fn ci_cache() -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/windlass-ci")
}

/// A session of the MCP Python SDK's client, driven line by line.
struct SdkClient {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<String>,
}

impl SdkClient {
    fn start(python: &Path, url: &str, args: &[String]) -> SdkClient {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts/http_client.py");
        let mut child = Command::new(python)
            .args(["-W", "ignore"])
            .arg(script)
            .arg(url)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let answers = common::lines_of(child.stdout.take().unwrap());
        let mut client = SdkClient {
            child,
            stdin,
            answers,
        };
        let hello = client.answer();
        assert!(hello["protocol"].is_string(), "{hello}");
        client
    }

    fn answer(&mut self) -> Value {
        let line = self
            .answers
            .recv_timeout(common::WATCHDOG)
            .unwrap_or_else(|_| panic!("the SDK client said nothing"));
        serde_json::from_str(&line).unwrap()
    }

    fn send(&mut self, command: Value) -> Value {
        writeln!(self.stdin, "{command}").unwrap();
        self.answer()
    }

    /// A tool's text; `Err` when it answered with an error.
    fn call(&mut self, tool: &str, args: Value) -> Result<String, String> {
        let answer = self.send(json!({"call": tool, "args": args}));
        let text = answer["text"].as_str().unwrap().to_owned();
        match answer["error"].as_bool() {
            Some(false) => Ok(text),
            _ => Err(text),
        }
    }

    fn set_roots(&mut self, roots: &[&Path]) {
        let answer = self.send(json!({"roots": roots}));
        assert_eq!(answer["ok"], true);
    }

    /// Closes the session as the SDK does on its way out (DELETE).
    fn finish(mut self) {
        writeln!(self.stdin).unwrap();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the SDK client failed: {status}");
    }
}

impl Drop for SdkClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_python_sdk_drives_hover_diagnostics_and_roots_beside_a_bridge() {
    let python = match mcp_python() {
        Ok(python) => python,
        Err(reason) => return skip(&reason),
    };
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let first = project(&[(
        "app.py",
        "def greet(name: str) -> str:\n    return \"hi \" + name\n\ncount: int = greet(\"a\")\n",
    )]);
    let second = project(&[("other.py", "total: int = 2\n")]);
    let endpoint = Endpoint::start(&[]);
    let token = endpoint.token();
    let root = first.path().display().to_string();
    let mut client = SdkClient::start(
        &python,
        &endpoint.url(),
        &["--token".into(), token, "--root".into(), root.clone()],
    );
    let bridged = endpoint.daemon.session(&common::root_arg(first.path()));

    let hover = client
        .call(
            "hover",
            json!({"file": "app.py", "line": 1, "symbol": "greet"}),
        )
        .unwrap();
    assert!(hover.contains("def greet(name: str) -> str"), "{hover}");
    let problems = client
        .call("diagnostics", json!({"file": "app.py"}))
        .unwrap();
    assert!(
        problems.contains("4:14 error") && problems.contains("\"str\""),
        "{problems}"
    );
    assert_eq!(
        bridged.ok("diagnostics", json!({"file": "app.py"})),
        problems,
        "the bridge's session sees the same server's answer"
    );

    std::fs::write(
        first.path().join("app.py"),
        "def greet(name: str) -> str:\n    return \"hi \" + name\n\ncount: str = greet(\"a\")\n",
    )
    .unwrap();
    let fixed = client
        .call("diagnostics", json!({"file": "app.py"}))
        .unwrap();
    assert_eq!(fixed, "app.py: no problems");

    let listed = endpoint.alive();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(
        listed
            .iter()
            .any(|line| line.contains("over http") && line.contains("client mcp")),
        "{listed:?}"
    );
    assert!(
        listed.iter().any(|line| line.contains("over stdio")),
        "{listed:?}"
    );

    client.set_roots(&[second.path()]);
    let app = first.path().join("app.py").display().to_string();
    wait_until("the client's new roots replace its old ones", || {
        client
            .call("diagnostics", json!({"file": app}))
            .is_err_and(|error| error.contains("outside the workspace roots"))
    });
    let other = client
        .call("document_symbols", json!({"file": "other.py"}))
        .unwrap();
    assert!(other.contains("total"), "{other}");

    client.finish();
    wait_until("the ended HTTP session is no longer alive", || {
        endpoint.alive().len() == 1
    });
    assert!(endpoint.alive()[0].contains("over stdio"));
}

#[test]
fn a_client_without_roots_gets_http_roots_or_an_error_naming_the_setting() {
    let python = match mcp_python() {
        Ok(python) => python,
        Err(reason) => return skip(&reason),
    };
    let configured = project(&[("notes.txt", "first line\nsecond line\n")]);
    let root = configured.path().display().to_string();
    let endpoint = Endpoint::start(&["--http-auth", "none", "--http-root", &root]);
    let mut client = SdkClient::start(&python, &endpoint.url(), &["--no-roots".into()]);
    let read = client
        .call("read_file", json!({"file": "notes.txt", "start": 2}))
        .unwrap();
    assert!(
        read.contains("second line") && !read.contains("first line"),
        "{read}"
    );
    client.finish();

    let bare = Endpoint::start(&["--http-auth", "none"]);
    let mut client = SdkClient::start(&python, &bare.url(), &["--no-roots".into()]);
    let error = client
        .call("read_file", json!({"file": "notes.txt"}))
        .unwrap_err();
    assert!(
        error.contains("no workspace roots") && error.contains("http_roots"),
        "{error}"
    );
    client.finish();
}

/// npm's conformance suite, and the Node it needs, or why there is none.
fn conformance() -> Result<PathBuf, String> {
    let bin = std::env::var_os("WINDLASS_CONFORMANCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| ci_cache().join("conformance/node_modules/.bin"));
    match bin.join("conformance").is_file() && bin.join("node").is_file() {
        true => Ok(bin),
        false => Err(format!(
            "no conformance suite with its Node in {} (.ci/run installs them)",
            bin.display()
        )),
    }
}

#[test]
fn the_conformance_suite_passes_the_scenarios_of_a_tools_only_server() {
    let bin = match conformance() {
        Ok(bin) => bin,
        Err(reason) => return skip(&reason),
    };
    let endpoint = Endpoint::start(&["--http-auth", "none"]);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for scenario in [
        "server-initialize",
        "ping",
        "tools-list",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
        "resources-list",
        "prompts-list",
    ] {
        let output = Command::new(bin.join("conformance"))
            .args(["server", "--url", &endpoint.url(), "--scenario", scenario])
            .env("PATH", &path)
            .output()
            .unwrap();
        let mut shown = String::from_utf8_lossy(&output.stdout).into_owned();
        shown.push_str(&String::from_utf8_lossy(&output.stderr));
        assert!(
            output.status.success() && shown.contains(" 0 failed"),
            "scenario {scenario}:\n{shown}"
        );
    }
}

/// A daemon world whose user configuration serves Python with mockls.
fn with_mockls() -> Daemon {
    let daemon = Daemon::new();
    let config = daemon.dir.path().join("config/windlass");
    std::fs::create_dir_all(&config).unwrap();
    let mockls = common::mockls_binary().display().to_string();
    let table = common::python_server("python", &mockls, "", "");
    std::fs::write(config.join("config.toml"), table).unwrap();
    daemon
}

#[test]
fn a_standalone_process_serves_several_http_sessions_and_no_bridge() {
    let served = project(&[("main.py", "class Shape:\n    pass\n\nshape = Shape()\n")]);
    let root = served.path().display().to_string();
    let endpoint = Endpoint::standalone(with_mockls(), &["--http-auth", "none", "-r", &root]);
    let mut sessions: Vec<HttpSession> = (0..3)
        .map(|_| HttpSession::start(&endpoint, None))
        .collect();
    let question = json!({"file": "main.py", "line": 4, "column": 10});
    for session in &mut sessions {
        assert_eq!(session.call("hover", question.clone()).unwrap(), "Shape");
    }
    assert_eq!(children_named(endpoint.pid(), "mockls"), 1);
    // The store is written in batches, after the answers.
    wait_until("the three sessions are listed", || {
        endpoint.alive().len() == 3
    });
    let sockets = endpoint.daemon.sockets();
    assert!(
        sockets.iter().all(|socket| socket
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with("session-"))),
        "only the process's own control socket, no daemon's for bridges to attach to: {sockets:?}"
    );
}

#[test]
fn an_http_session_shares_the_daemons_server_with_a_bridge_and_keeps_to_its_roots() {
    let served = project(&[("main.py", "class Shape:\n    pass\n\nshape = Shape()\n")]);
    let elsewhere = project(&[("secret.py", "token = 1\n")]);
    let daemon = with_mockls();
    let root = served.path().display().to_string();
    let endpoint = Endpoint::start_in(daemon, &["--http-root", &root]);
    let mut http = HttpSession::start(&endpoint, Some(endpoint.token()));
    let bridged = endpoint.daemon.session(&common::root_arg(served.path()));

    let question = json!({"file": "main.py", "line": 4, "column": 10});
    assert_eq!(http.call("hover", question.clone()).unwrap(), "Shape");
    assert_eq!(bridged.ok("hover", question), "Shape");
    assert_eq!(
        children_named(endpoint.pid(), "mockls"),
        1,
        "both sessions are answered by one server process"
    );

    let secret = elsewhere.path().join("secret.py").display().to_string();
    let refused = http.call("read_file", json!({"file": secret})).unwrap_err();
    assert!(refused.contains("outside the workspace roots"), "{refused}");
    wait_until("both sessions are listed, each by its transport", || {
        let alive = endpoint.alive();
        alive.iter().any(|line| line.contains("over http"))
            && alive.iter().any(|line| line.contains("over stdio"))
    });
}

/// How many child processes of `parent` run the program `name`.
fn children_named(parent: u32, name: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
        .filter(|stat| {
            // "PID (COMM) STATE PPID ...": the name may hold spaces.
            let Some((comm, rest)) = stat.split_once(") ") else {
                return false;
            };
            let ppid = rest.split_whitespace().nth(1);
            comm.ends_with(&format!("({name}"))
                && ppid.and_then(|ppid| ppid.parse::<u32>().ok()) == Some(parent)
        })
        .count()
}
