//! The daemon against standalone processes, run by hand:
//!
//! ```sh
//! cargo build --release --workspace && cargo bench --bench daemon
//! ```
//!
//! Prints the bridge's cost on a warm hover (bridge + daemon against one
//! standalone process), the same hover with `windlass top` attached and
//! refreshing against without (when tmux is installed), the first hover of a second session when the
//! daemon already has a warm pyright (against the first session's, cold),
//! and `DAEMON_BENCH_SESSIONS` sessions (default 16) asking mixed
//! questions, and after each round editing a file of their own and asking
//! its diagnostics, for `DAEMON_BENCH_SECONDS` (default 60) against mockls and
//! against pyright: lost and mismatched answers, each session's p50, p90
//! and p99, and the resident memory (RSS and PSS) of Windlass and its
//! servers for those sessions in one daemon against as many standalone
//! processes and against one; then one session's warm hovers, alone and
//! beside another session flooding the same server. During the sessions'
//! run it also prints how many events the recorder wrote (per second) and
//! how much the store grew (per hour), and how long `windlass top --once`
//! took once a second. `DAEMON_BENCH_MANY_ONLY=1`
//! runs only the sessions and the flood; `DAEMON_BENCH_MOCKLS_ONLY=1`
//! leaves pyright out of them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/common/mod.rs"]
mod common;
mod lsp_client;
mod memory;
mod percentiles;

use common::projects::{SHAPES_MAIN_PY, SHAPES_PY, big_python_project, shapes_questions};
use common::*;
use lsp_client::LspServer;
use memory::{Memory, mb, tree_memory};
use percentiles::{Percentiles, report};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

const HOVERS: usize = 2_000;

fn main() {
    let seconds = env_number("DAEMON_BENCH_SECONDS", 60);
    let sessions = env_number("DAEMON_BENCH_SESSIONS", 16) as usize;
    if std::env::var_os("DAEMON_BENCH_MANY_ONLY").is_none() {
        hover_overhead();
        if have("tmux") {
            hover_with_top();
        } else {
            println!("tmux is not on PATH: the hover with `top` attached is skipped");
        }
        if have("pyright-langserver") {
            second_session_first_hover();
        } else {
            println!("pyright-langserver is not on PATH: pyright figures skipped");
        }
    }
    let project = project(&[("shapes.py", SHAPES_PY), ("main.py", SHAPES_MAIN_PY)]);
    let mockls = vec!["--lsp".to_owned(), mockls_lsp("python", "")];
    many_sessions("mockls", project.path(), &mockls, seconds, sessions);
    let mockls_alone = mockls_binary().display().to_string();
    server_alone(&[&mockls_alone], false, project.path(), seconds, sessions);
    flood_beside_quiet("mockls", project.path(), &mockls, seconds);
    if std::env::var_os("DAEMON_BENCH_MOCKLS_ONLY").is_some() {
        return;
    }
    if have("pyright-langserver") {
        many_sessions("pyright", project.path(), &[], seconds, sessions);
        let pyright = ["pyright-langserver", "--stdio"];
        server_alone(&pyright, true, project.path(), seconds, sessions);
        flood_beside_quiet("pyright", project.path(), &[], seconds);
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn quiet(root: &Path, extra: &[String]) -> Vec<String> {
    let mut args = root_arg(root);
    args.extend(["--log-level".into(), "warn".into()]);
    args.extend(extra.iter().cloned());
    args
}

/// Warm hovers through one standalone process and through a bridge to a
/// daemon, in alternating blocks so that both see the same machine.
fn hover_overhead() {
    let dir = project(&[("main.py", "class Shape:\n    pass\n\nshape = Shape()\n")]);
    let args = quiet(dir.path(), &["--lsp".into(), mockls_lsp("python", "")]);
    let daemon = Daemon::new();
    let standalone = Session::start(&args);
    let bridged = daemon.session(&args);
    let question = json!({"file": "main.py", "line": 4, "column": 10});
    for session in [&standalone, &bridged] {
        for _ in 0..100 {
            assert_eq!(session.ok("hover", question.clone()), "Shape");
        }
    }
    let (mut alone, mut through) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        for (session, samples) in [(&standalone, &mut alone), (&bridged, &mut through)] {
            for _ in 0..HOVERS / 10 {
                let started = Instant::now();
                session.ok("hover", question.clone());
                samples.push(started.elapsed());
            }
        }
    }
    report("warm hover, standalone", &alone);
    report("warm hover, bridge + daemon", &through);
    let (alone, through) = (Percentiles::new(&alone), Percentiles::new(&through));
    println!(
        "{:<44} median {:>+9.3} ms  p90 {:>+9.3} ms",
        "  bridge + daemon minus standalone",
        through.ms(0.5) - alone.ms(0.5),
        through.ms(0.9) - alone.ms(0.9)
    );
}

/// Warm hovers through a bridge while `windlass top` runs in a terminal
/// of its own (tmux), refreshing once a second, against the same hovers
/// without it, in alternating blocks.
fn hover_with_top() {
    let dir = project(&[("main.py", "class Shape:\n    pass\n\nshape = Shape()\n")]);
    let args = quiet(dir.path(), &["--lsp".into(), mockls_lsp("python", "")]);
    let daemon = Daemon::new();
    let bridged = daemon.session(&args);
    let question = json!({"file": "main.py", "line": 4, "column": 10});
    for _ in 0..100 {
        assert_eq!(bridged.ok("hover", question.clone()), "Shape");
    }
    let socket = format!("windlass-top-bench-{}", std::process::id());
    let tmux = |args: &[&str]| {
        std::process::Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .unwrap()
    };
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        for _ in 0..HOVERS / 10 {
            let started = Instant::now();
            bridged.ok("hover", question.clone());
            without.push(started.elapsed());
        }
        let mut start = vec!["new-session", "-d", "-s", "top", "-x", "120", "-y", "40"];
        let environment: Vec<String> = daemon
            .environment()
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        for variable in &environment {
            start.extend(["-e", variable.as_str()]);
        }
        let top = format!("{} top", windlass_binary().display());
        start.push(&top);
        tmux(&start);
        // Its first pictures are taken before the block starts.
        std::thread::sleep(Duration::from_millis(1500));
        for _ in 0..HOVERS / 10 {
            let started = Instant::now();
            bridged.ok("hover", question.clone());
            with.push(started.elapsed());
        }
        tmux(&["kill-server"]);
    }
    report("warm hover, bridge + daemon", &without);
    report("  the same with `windlass top` attached", &with);
    let (without, with) = (Percentiles::new(&without), Percentiles::new(&with));
    println!(
        "{:<44} median {:>+9.3} ms  p90 {:>+9.3} ms",
        "  with top minus without",
        with.ms(0.5) - without.ms(0.5),
        with.ms(0.9) - without.ms(0.9)
    );
}

/// The first hover of a session whose daemon already has pyright warm on
/// the project, against the first session's, which waits for pyright to
/// load it.
fn second_session_first_hover() {
    let dir = big_python_project(150, 20);
    let args = quiet(dir.path(), &[]);
    let question = json!({"file": "main.py", "line": 3, "symbol": "result"});
    let daemon = Daemon::new();
    let first = daemon.session(&args);
    let started = Instant::now();
    let answer = first.ok("hover", question.clone());
    let cold = started.elapsed();
    assert!(answer.contains("int"), "{answer}");
    let mut warm = Vec::new();
    let mut from_spawn = Vec::new();
    for _ in 0..10 {
        let spawned = Instant::now();
        let next = daemon.session(&args);
        let started = Instant::now();
        assert_eq!(next.ok("hover", question.clone()), answer);
        warm.push(started.elapsed());
        from_spawn.push(spawned.elapsed());
    }
    println!(
        "{:<44} {:>9.1} ms",
        "first hover, first session (cold pyright)",
        cold.as_secs_f64() * 1000.0
    );
    report("first hover, a later session (warm pyright)", &warm);
    report("  the same, from the bridge's start", &from_spawn);
}

/// The load of [`many_sessions`] put straight to the server by a bare
/// LSP client, one thread per session sharing its one connection as the
/// sessions share the daemon's: the same questions in turn, and after
/// each round the thread's own file written, told as Windlass tells it
/// (a watched-file change and the open document sent again), and its
/// diagnostics awaited. What the server itself takes under that load,
/// beside what the sessions saw through Windlass. A server without
/// `pull` publishes: an unchanged file's diagnostics are then its last
/// publication, which costs nothing to read, and are not asked. Lost
/// answers are empty ones; mismatched, edits whose diagnostics did not
/// come right within 30 s.
fn server_alone(command: &[&str], pull: bool, root: &Path, seconds: u64, count: usize) {
    for session in 0..count {
        std::fs::write(root.join(edited_file(session)), EDITED_CLEAN).unwrap();
    }
    let server = LspServer::start(command, root, pull);
    for file in ["main.py", "shapes.py"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        server.open(file, "python", &text);
    }
    for session in 0..count {
        server.open(&edited_file(session), "python", EDITED_CLEAN);
    }
    let requests: Vec<(&str, Value)> = shapes_requests(&server)
        .into_iter()
        .filter(|(method, _)| pull || *method != "textDocument/diagnostic")
        .collect();
    for (method, params) in &requests {
        server.request(method, params.clone());
    }
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let tallies: Vec<Tally> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..count)
            .map(|n| {
                let (server, requests) = (&server, &requests);
                scope.spawn(move || ask_server_until(server, root, n, requests, deadline))
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().unwrap())
            .collect()
    });
    let name = command[0].rsplit('/').next().unwrap_or(command[0]);
    println!(
        "{name} by itself, the same load from a bare LSP client ({count} threads, {seconds} s)"
    );
    let methods: Vec<&str> = requests.iter().map(|(method, _)| *method).collect();
    print_tallies("thread", &tallies, &methods);
}

/// The questions of [`shapes_questions`] as LSP requests, in its order.
fn shapes_requests(server: &LspServer) -> Vec<(&'static str, Value)> {
    let document = |file: &str| json!({"uri": server.uri(file)});
    let at = |file: &str, line: u32, character: u32| json!({"textDocument": document(file), "position": {"line": line, "character": character}});
    let mut references = at("shapes.py", 5, 4);
    references["context"] = json!({"includeDeclaration": true});
    vec![
        ("textDocument/hover", at("main.py", 2, 7)),
        ("textDocument/definition", at("main.py", 2, 14)),
        ("textDocument/references", references),
        (
            "textDocument/documentSymbol",
            json!({"textDocument": document("shapes.py")}),
        ),
        (
            "textDocument/diagnostic",
            json!({"textDocument": document("main.py")}),
        ),
        ("textDocument/hover", at("shapes.py", 1, 8)),
    ]
}

/// One thread of [`server_alone`]: `requests` in turn from `offset`
/// until `deadline`, and its own file edited after each round.
fn ask_server_until(
    server: &LspServer,
    root: &Path,
    offset: usize,
    requests: &[(&str, Value)],
    deadline: Instant,
) -> Tally {
    let mut tally = Tally {
        by_question: vec![Vec::new(); requests.len() + 1],
        ..Tally::default()
    };
    let file = edited_file(offset);
    let uri = server.uri(&file);
    let mut turn = offset;
    let mut version = 1;
    while Instant::now() < deadline {
        let index = turn % requests.len();
        turn += 1;
        let (method, params) = &requests[index];
        let started = Instant::now();
        let answer = server.request(method, params.clone());
        let elapsed = started.elapsed();
        tally.samples.push(elapsed);
        tally.by_question[index].push(elapsed);
        if answer.is_null() {
            tally.lost += 1;
        }
        if index + 1 < requests.len() {
            continue;
        }
        version += 1;
        let broken = version % 2 == 0;
        let text = if broken { EDITED_BROKEN } else { EDITED_CLEAN };
        let published = server.publications(&file);
        let started = Instant::now();
        std::fs::write(root.join(&file), text).unwrap();
        server.notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": [{"uri": uri, "type": 2}]}),
        );
        server.change(&file, version, text);
        if !server.wait_errors(&file, published, broken, Duration::from_secs(30)) {
            tally.mismatched += 1;
        }
        tally.by_question[requests.len()].push(started.elapsed());
    }
    tally
}

/// What one session saw in the timed run.
#[derive(Default)]
struct Tally {
    samples: Vec<Duration>,
    /// The samples again, by the index of the question asked.
    by_question: Vec<Vec<Duration>>,
    lost: usize,
    mismatched: usize,
}

fn many_sessions(label: &str, root: &Path, extra: &[String], seconds: u64, count: usize) {
    let args = quiet(root, extra);
    let questions = shapes_questions();
    for session in 0..count {
        std::fs::write(root.join(edited_file(session)), EDITED_CLEAN).unwrap();
    }
    let expected: Vec<String> = {
        let reference = Session::start(&args);
        questions
            .iter()
            .map(|(tool, arguments)| reference.ok(tool, arguments.clone()))
            .collect()
    };

    let daemon = Daemon::new();
    let sessions: Vec<Session> = (0..count).map(|_| daemon.session(&args)).collect();
    ask_each_once(&sessions, &questions);
    let daemon_pid = daemon_pid(&sessions[0]);
    let at_rest = DaemonMemory::of(daemon_pid, &sessions);
    let store = daemon.dir.path().join("state/windlass/windlass.db");
    let recorded_before = Recorded::of(&store);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let (tallies, tops): (Vec<Tally>, Vec<Duration>) = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| top_until(&daemon, deadline));
        let workers: Vec<_> = sessions
            .iter()
            .enumerate()
            .map(|(n, session)| {
                let (questions, expected) = (&questions, &expected);
                scope.spawn(move || ask_until(session, root, n, questions, expected, deadline))
            })
            .collect();
        let tallies = workers
            .into_iter()
            .map(|worker| worker.join().unwrap())
            .collect();
        (tallies, watcher.join().unwrap())
    });
    let elapsed = started.elapsed();
    let loaded = DaemonMemory::of(daemon_pid, &sessions);
    drop(sessions);
    // The Recorder writes in batches: its last one lands within a second.
    std::thread::sleep(Duration::from_secs(2));
    let recorded = Recorded::of(&store).since(recorded_before);

    println!("{label}: {count} sessions × mixed questions for {seconds} s");
    let tools: Vec<&str> = questions.iter().map(|(tool, _)| *tool).collect();
    print_tallies("session", &tallies, &tools);
    let hours = elapsed.as_secs_f64() / 3_600.0;
    println!(
        "  recorder: {} events ({:.0} per second), the store grew {:.1} MB ({:.0} MB per hour)",
        recorded.events,
        recorded.events as f64 / elapsed.as_secs_f64(),
        mb(recorded.bytes),
        mb(recorded.bytes) / hours
    );
    let top = Percentiles::new(&tops);
    println!(
        "  `windlass top --once` during the run: {} pictures, p50 {:.0} ms, max {:.0} ms",
        top.count(),
        top.ms(0.5),
        top.ms(1.0)
    );

    let standalone: Vec<Session> = (0..count).map(|_| Session::start(&args)).collect();
    ask_each_once(&standalone, &questions);
    let each: Vec<(Memory, Memory)> = standalone
        .iter()
        .map(|session| {
            let windlass = Memory::of(session.pid());
            (windlass, tree_memory(session.pid()).minus(windlass))
        })
        .collect();
    let windlasses = each
        .iter()
        .map(|each| each.0)
        .fold(Memory::default(), Memory::add);
    let servers = each
        .iter()
        .map(|each| each.1)
        .fold(Memory::default(), Memory::add);
    let one = each
        .iter()
        .copied()
        .max_by_key(|(windlass, servers)| windlass.rss + servers.rss)
        .unwrap_or_default();
    println!("  RSS (MB)                                      windlass  servers    total  × one");
    let row = |name: &str, windlass: Memory, servers: Memory| {
        let total = windlass.rss + servers.rss;
        println!(
            "  {name:<44} {:>8.1} {:>8.1} {:>8.1} {:>6.2}",
            mb(windlass.rss),
            mb(servers.rss),
            mb(total),
            total as f64 / (one.0.rss + one.1.rss) as f64
        );
    };
    row("one standalone session", one.0, one.1);
    row(&format!("{count} standalone sessions"), windlasses, servers);
    for (name, memory) in [
        ("in one daemon, each asked once", at_rest),
        ("in one daemon, after the run", loaded),
    ] {
        row(
            &format!("{count} sessions {name}"),
            memory.daemon.add(memory.bridges),
            memory.servers,
        );
    }
    // A bridge's RSS is mostly libc and loader pages every process maps:
    // 16 bridges cost their own pages, not 16 copies of those.
    row(
        &format!("{count} sessions in one daemon, bridges by USS"),
        at_rest.daemon.add(Memory {
            rss: at_rest.bridges.uss,
            ..at_rest.bridges
        }),
        at_rest.servers,
    );
    println!(
        "  of which the {count} bridges: RSS {:.1} MB, PSS {:.1} MB, USS {:.1} MB (their own pages)",
        mb(at_rest.bridges.rss),
        mb(at_rest.bridges.pss),
        mb(at_rest.bridges.uss)
    );
}

/// Calls the flooding session keeps in flight at once.
const FLOOD_IN_FLIGHT: usize = 200;

/// A quiet session's warm hovers, alone and then while another session
/// in the same daemon floods the same server: hundreds of questions in
/// flight, a workspace `search` and a `check_edit` of the file the quiet
/// session's file imports, over and over.
fn flood_beside_quiet(label: &str, root: &Path, extra: &[String], seconds: u64) {
    let args = quiet(root, extra);
    let daemon = Daemon::new();
    let quiet_session = daemon.session(&args);
    let flooding = daemon.session(&args);
    let hover = json!({"file": "main.py", "line": 3, "symbol": "total"});
    let expected = quiet_session.ok("hover", hover.clone());
    flooding.ok("document_symbols", json!({"file": "shapes.py"}));
    let phase = Duration::from_secs((seconds / 3).max(1));
    println!("{label}: a quiet session's warm hover, alone and beside a flooding session");
    let alone = hovers_until(&quiet_session, &hover, &expected, Instant::now() + phase);
    print_tally("alone", &alone);
    for (name, check) in [("beside questions", false), ("beside check_edit", true)] {
        let deadline = Instant::now() + phase;
        let (beside, flood) = std::thread::scope(|scope| {
            let flood = scope.spawn(|| flood_until(&flooding, deadline, check));
            let beside = hovers_until(&quiet_session, &hover, &expected, deadline);
            (beside, flood.join().unwrap())
        });
        print_tally(name, &beside);
        println!(
            "    the flood: {} answers in {:.1} s, {} refused past its share, {} other errors",
            flood.answered,
            flood.took.as_secs_f64(),
            flood.refused,
            flood.failed
        );
    }
}

/// Each asker's tally (`who`: a session or a thread), then each
/// question's, the edits last, then the lost and mismatched answers.
fn print_tallies(who: &str, tallies: &[Tally], questions: &[&str]) {
    for (n, tally) in tallies.iter().enumerate() {
        print_tally(&format!("{who} {n}:"), tally);
    }
    let kinds = questions.iter().copied().chain(["edit, then diagnostics"]);
    for (index, kind) in kinds.enumerate() {
        let samples: Vec<Duration> = tallies
            .iter()
            .filter_map(|tally| tally.by_question.get(index))
            .flatten()
            .copied()
            .collect();
        let p = Percentiles::new(&samples);
        println!(
            "  question {index} ({kind}): {:>7} answers  p50 {:>8.3} ms  p99 {:>8.3} ms",
            p.count(),
            p.ms(0.5),
            p.ms(0.99)
        );
    }
    let lost: usize = tallies.iter().map(|tally| tally.lost).sum();
    let mismatched: usize = tallies.iter().map(|tally| tally.mismatched).sum();
    println!("  lost {lost}, mismatched {mismatched}");
}

/// One line of a tally: its warm answers' count and percentiles, and
/// its lost and mismatched answers.
fn print_tally(name: &str, tally: &Tally) {
    let p = Percentiles::new(&tally.samples);
    println!(
        "  {name:<18} {:>6} answers  p50 {:>7.3} ms  p90 {:>7.3} ms  p99 {:>7.3} ms  lost {}  mismatched {}",
        p.count(),
        p.ms(0.5),
        p.ms(0.9),
        p.ms(0.99),
        tally.lost,
        tally.mismatched
    );
}

fn hovers_until(session: &Session, hover: &Value, expected: &str, deadline: Instant) -> Tally {
    let mut tally = Tally::default();
    while Instant::now() < deadline {
        let started = Instant::now();
        let answer = session.call("hover", hover.clone());
        tally.samples.push(started.elapsed());
        if answer.is_error {
            tally.lost += 1;
        } else if answer.text != expected {
            tally.mismatched += 1;
        }
    }
    tally
}

#[derive(Default)]
struct Flood {
    answered: usize,
    refused: usize,
    failed: usize,
    /// From the first round sent to the last answered.
    took: Duration,
}

/// Rounds of [`FLOOD_IN_FLIGHT`] calls sent at once, each round a
/// `search`, with `check` a `check_edit`, and hovers at distinct places
/// (so that none shares another's answer), until `deadline`.
fn flood_until(session: &Session, deadline: Instant, check: bool) -> Flood {
    let started = Instant::now();
    let mut flood = Flood::default();
    let places: Vec<(usize, usize)> = SHAPES_PY
        .lines()
        .enumerate()
        .flat_map(|(line, text)| (1..=text.len().max(1)).map(move |column| (line + 1, column)))
        .collect();
    let mut turn = 0;
    while Instant::now() < deadline {
        let mut calls = vec![session.call_async("search", json!({"query": "a"}))];
        if check {
            calls.push(session.call_async(
                "check_edit",
                json!({"file": "shapes.py", "replacements": [{"old": "0.0", "new": "'zero'"}]}),
            ));
        }
        for _ in calls.len()..FLOOD_IN_FLIGHT {
            let (line, column) = places[turn % places.len()];
            turn += 1;
            calls.push(session.call_async(
                "hover",
                json!({"file": "shapes.py", "line": line, "column": column}),
            ));
        }
        for call in &calls {
            let answer = outcome(wait(call));
            match (answer.is_error, answer.text.contains("questions waiting")) {
                (false, _) => flood.answered += 1,
                (true, true) => flood.refused += 1,
                (true, false) => flood.failed += 1,
            }
        }
    }
    flood.took = started.elapsed();
    flood
}

/// Every session asks every question once, in turn.
fn ask_each_once(sessions: &[Session], questions: &[(&str, Value)]) {
    for session in sessions {
        for (tool, arguments) in questions {
            session.ok(tool, arguments.clone());
        }
    }
}

/// The memory of sessions in one daemon: their bridges, the daemon
/// process, and the language servers it runs.
#[derive(Clone, Copy)]
struct DaemonMemory {
    bridges: Memory,
    daemon: Memory,
    servers: Memory,
}

impl DaemonMemory {
    fn of(daemon_pid: u32, sessions: &[Session]) -> DaemonMemory {
        let daemon = Memory::of(daemon_pid);
        DaemonMemory {
            // A bridge that started the daemon is its parent: bridges alone.
            bridges: sessions
                .iter()
                .map(|session| Memory::of(session.pid()))
                .fold(Memory::default(), Memory::add),
            daemon,
            servers: tree_memory(daemon_pid).minus(daemon),
        }
    }
}

/// The session's own file, which it edits after each round of questions.
fn edited_file(session: usize) -> String {
    format!("edited_{session}.py")
}

const EDITED_CLEAN: &str = "value: int = 1\n";
/// A type error for pyright, and an error for mockls's marker.
const EDITED_BROKEN: &str = "value: int = \"text\"  # ERROR\n";

/// Asks the questions in turn from `offset` until `deadline`, and after
/// each round edits the session's own file and asks its diagnostics:
/// warm answers go to `samples`, and each kind also to `by_question`,
/// the edits last.
fn ask_until(
    session: &Session,
    root: &Path,
    offset: usize,
    questions: &[(&str, Value)],
    expected: &[String],
    deadline: Instant,
) -> Tally {
    let mut tally = Tally {
        by_question: vec![Vec::new(); questions.len() + 1],
        ..Tally::default()
    };
    let mut turn = offset;
    let mut broken = false;
    while Instant::now() < deadline {
        let index = turn % questions.len();
        turn += 1;
        let (tool, arguments) = &questions[index];
        let started = Instant::now();
        let answer = outcome(wait(&session.call_async(tool, arguments.clone())));
        let elapsed = started.elapsed();
        tally.samples.push(elapsed);
        tally.by_question[index].push(elapsed);
        if answer.is_error {
            tally.lost += 1;
        } else if answer.text != expected[index] {
            tally.mismatched += 1;
            eprintln!(
                "mismatched {tool} {arguments}: {:?}, expected {:?}",
                answer.text, expected[index]
            );
        }
        if index + 1 == questions.len() {
            broken = !broken;
            let file = edited_file(offset);
            let text = if broken { EDITED_BROKEN } else { EDITED_CLEAN };
            std::fs::write(root.join(&file), text).unwrap();
            let started = Instant::now();
            let answer = session.call("diagnostics", json!({"file": file}));
            tally.by_question[questions.len()].push(started.elapsed());
            let right = match broken {
                true => answer.text.contains(" error"),
                false => answer.text.ends_with("no problems"),
            };
            if answer.is_error {
                tally.lost += 1;
            } else if !right {
                tally.mismatched += 1;
                eprintln!(
                    "mismatched diagnostics of {file} (broken: {broken}): {:?}",
                    answer.text
                );
            }
        }
    }
    tally
}

/// What the event store holds: its events and its size on disk (the
/// database and its write-ahead log).
#[derive(Clone, Copy, Default)]
struct Recorded {
    events: u64,
    bytes: u64,
}

impl Recorded {
    fn of(store: &Path) -> Self {
        let events = rusqlite::Connection::open(store)
            .and_then(|db| {
                db.query_row("SELECT count(*) FROM events", [], |row| {
                    row.get::<_, i64>(0)
                })
            })
            .map_or(0, |count| count as u64);
        let size = |suffix: &str| {
            let mut path = store.as_os_str().to_owned();
            path.push(suffix);
            std::fs::metadata(path).map_or(0, |metadata| metadata.len())
        };
        Self {
            events,
            bytes: size("") + size("-wal"),
        }
    }

    fn since(self, before: Self) -> Self {
        Self {
            events: self.events.saturating_sub(before.events),
            bytes: self.bytes.saturating_sub(before.bytes),
        }
    }
}

/// How long `windlass top --once` takes, once a second until `deadline`.
fn top_until(daemon: &Daemon, deadline: Instant) -> Vec<Duration> {
    let mut times = Vec::new();
    while Instant::now() < deadline {
        let started = Instant::now();
        let output = std::process::Command::new(windlass_binary())
            .args(["top", "--once"])
            .envs(daemon.environment())
            .output()
            .unwrap();
        assert!(output.status.success(), "top --once failed: {output:?}");
        times.push(started.elapsed());
        std::thread::sleep(Duration::from_secs(1));
    }
    times
}

fn daemon_pid(session: &Session) -> u32 {
    let status = session.ok("status", json!({}));
    let line = status
        .lines()
        .find(|line| line.contains("of daemon pid"))
        .unwrap();
    let after = &line[line.find("daemon pid ").unwrap() + "daemon pid ".len()..];
    after.split_whitespace().next().unwrap().parse().unwrap()
}
