//! Windlass on a real tree of more than a million lines, against the
//! language servers asked the same questions directly; run by hand:
//!
//! ```sh
//! cargo build --release -p windlass -p mockls && cargo bench --bench bigtree
//! ```
//!
//! The tree is `bigtree-1` of `target/real-projects` (or
//! `WINDLASS_REAL_PROJECTS`), which `.ci/run` unpacks (sympy and django
//! from PyPI, effect's TypeScript sources from npm, side by side);
//! `BIGTREE_DIR` names another. The bench works on a copy
//! of it made of hard links, so that the one the tests share is never
//! edited: a file the bench edits is written anew, never in place. The
//! copy gets a `tsconfig.json` at its root that includes effect's
//! sources, so that typescript-language-server loads them whole.
//!
//! For pyright (Python) and typescript-language-server (TypeScript) it
//! prints the tree's lines by language, then, for each question, how
//! long Windlass took to answer it (the first time, and the median of
//! `BIGTREE_ROUNDS` rounds, default 3) beside the server's own time for
//! the same request, sent by a minimal LSP client of the bench's own
//! (from the request to its response; for diagnostics from the change
//! to the first answer that shows it, asked for as Windlass asks
//! pyright, published as typescript-language-server publishes). The
//! questions: the first correct hover from a cold start (from the
//! process's spawn), the first and later `search` of a name, `find_references` of a widely used name,
//! `diagnostics` after an edit on disk, and `codebase_map` of a folder
//! with its symbols (the server's time: every `documentSymbol` the map
//! shows, asked at once). Then the same with `BIGTREE_AGENTS` (default
//! 16) agents at once, each its own session of one cold daemon, against
//! as many requests in flight to one server: p50, p90, p99, and answers
//! lost (an error) or wrong (missing what the answer must say). A
//! language whose server is not on PATH is skipped, saying so;
//! `BIGTREE_LANGUAGE=python` (or `typescript`) measures that one alone.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/common/mod.rs"]
mod common;
mod lsp_client;
mod percentiles;

use common::*;
use lsp_client::{LspServer, answer};
use percentiles::{Percentiles, report};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One language of the tree, and the questions put about it.
struct Language {
    label: &'static str,
    server: &'static [&'static str],
    language_id: &'static str,
    /// Whether Windlass asks the server for diagnostics, which the bench
    /// then does too, rather than waiting for them to be published.
    pulls_diagnostics: bool,
    /// A hover: file, line (1-based), the symbol on it, what it must say.
    hover: (&'static str, usize, &'static str, &'static str),
    /// A `search` query, and a file its answer must name.
    search: (&'static str, &'static str),
    /// A widely used name: where it is defined (file, line, symbol).
    references: (&'static str, usize, &'static str),
    /// The file each agent edits is `{edited}{n}{extension}`: its own,
    /// first written clean.
    edited: (&'static str, &'static str),
    clean: &'static str,
    broken: &'static str,
    /// The folder `codebase_map` is asked about.
    map: &'static str,
}

const PYTHON: Language = Language {
    label: "Python (pyright)",
    server: &["pyright-langserver", "--stdio"],
    language_id: "python",
    pulls_diagnostics: true,
    hover: (
        "sympy-1.14.0/sympy/core/basic.py",
        156,
        "Basic",
        "class Basic",
    ),
    search: ("sympify", "sympy/core/sympify.py"),
    references: ("sympy-1.14.0/sympy/core/basic.py", 156, "Basic"),
    edited: ("sympy-1.14.0/bench_edited_", ".py"),
    clean: "from sympy.core.basic import Basic\n\nvalue: Basic = Basic()\n",
    broken: "from sympy.core.basic import Basic\n\nvalue: int = Basic()\n",
    map: "sympy-1.14.0/sympy/core",
};

const TYPESCRIPT: Language = Language {
    label: "TypeScript (typescript-language-server)",
    server: &["typescript-language-server", "--stdio"],
    language_id: "typescript",
    pulls_diagnostics: false,
    hover: (
        "effect-3.19.3/src/Option.ts",
        187,
        "some",
        "const some: <A>(value: A) => Option<A>",
    ),
    search: ("dual", "src/Function.ts"),
    references: ("effect-3.19.3/src/Function.ts", 95, "dual"),
    edited: ("effect-3.19.3/src/BenchEdited", ".ts"),
    clean: "import * as Option from \"./Option.js\"\n\nexport const value: Option.Option<number> = Option.some(1)\n",
    broken: "import * as Option from \"./Option.js\"\n\nexport const value: Option.Option<number> = Option.some(\"text\")\n",
    map: "effect-3.19.3/src",
};

/// The TypeScript project of the copy: effect's sources, as its own
/// build checks them.
const TSCONFIG: &str = r#"{
  "compilerOptions": {
    "strict": true, "exactOptionalPropertyTypes": true, "noEmit": true,
    "target": "es2022", "lib": ["es2022", "dom"], "module": "preserve",
    "moduleResolution": "bundler", "skipLibCheck": true
  },
  "include": ["effect-3.19.3/src/**/*.ts"]
}
"#;

/// How long the bench waits for a diagnostics publication.
const PATIENCE: Duration = Duration::from_secs(300);

fn main() {
    let rounds = env_number("BIGTREE_ROUNDS", 3);
    let agents = env_number("BIGTREE_AGENTS", 16);
    let source = std::env::var_os("BIGTREE_DIR").map_or_else(
        || {
            std::env::var_os("WINDLASS_REAL_PROJECTS")
                .map_or_else(
                    || Path::new(env!("CARGO_MANIFEST_DIR")).join("target/real-projects"),
                    PathBuf::from,
                )
                .join("bigtree-1")
        },
        PathBuf::from,
    );
    if !source.is_dir() {
        return println!(
            "{} is missing: .ci/run unpacks it (or set BIGTREE_DIR)",
            source.display()
        );
    }
    let copy = linked_copy(&source);
    let root = copy.path().canonicalize().unwrap();
    std::fs::write(root.join("tsconfig.json"), TSCONFIG).unwrap();
    for language in [&PYTHON, &TYPESCRIPT] {
        for agent in 0..=agents {
            std::fs::write(root.join(edited_file(language, agent)), language.clean).unwrap();
        }
    }
    print_line_counts(&root);
    let only = std::env::var("BIGTREE_LANGUAGE").unwrap_or_default();
    for language in [&PYTHON, &TYPESCRIPT] {
        if !only.is_empty() && only != language.language_id {
            continue;
        }
        if !have(language.server[0]) {
            println!(
                "{}: skipped, {} is not on PATH",
                language.label, language.server[0]
            );
            continue;
        }
        println!("\n{}", language.label);
        let (rows, mapped) = timed("alone", || alone(language, &root, rounds));
        print_alone(&rows);
        let many = Many {
            windlass: timed("agents through Windlass", || {
                windlass_agents(language, &root, agents, rounds)
            }),
            server: timed("requests in flight to the server", || {
                server_in_flight(language, &root, agents, rounds, &mapped)
            }),
        };
        print_table(&rows, &many, agents);
    }
}

/// Runs one phase of the bench, saying how long it took, since a
/// phase on this tree takes minutes.
fn timed<T>(phase: &str, run: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let result = run();
    println!(
        "  {phase}: done in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    result
}

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// A copy of `source` in a fresh temporary directory, of hard links
/// (`cp -al`, so on the same file system): quick, and free of the shared
/// tree's inode for every file the bench writes anew.
fn linked_copy(source: &Path) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("cp")
        .arg("-al")
        .arg(format!("{}/.", source.display()))
        .arg(copy.path())
        .status()
        .unwrap();
    assert!(status.success(), "cp -al {} failed", source.display());
    copy
}

fn print_line_counts(root: &Path) {
    let mut counts = [
        ("Python (.py)", 0, 0),
        ("TypeScript (.ts)", 0, 0),
        ("TypeScript declarations (.d.ts)", 0, 0),
    ];
    for file in files_under(root) {
        let name = file.to_string_lossy();
        let index = match () {
            () if name.ends_with(".d.ts") => 2,
            () if name.ends_with(".ts") => 1,
            () if name.ends_with(".py") => 0,
            () => continue,
        };
        let text = std::fs::read(&file).unwrap_or_default();
        counts[index].1 += 1;
        counts[index].2 += text.iter().filter(|byte| **byte == b'\n').count();
    }
    println!("the tree: {}", root.display());
    for (name, files, lines) in counts {
        println!("  {name:<34} {files:>6} files {lines:>10} lines");
    }
}

fn files_under(directory: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![directory.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().filter_map(Result::ok) {
            let kind = entry.file_type().unwrap();
            match kind.is_dir() {
                true => folders.push(entry.path()),
                false if kind.is_file() => files.push(entry.path()),
                false => {}
            }
        }
    }
    files
}

fn edited_file(language: &Language, agent: usize) -> String {
    format!("{}{agent}{}", language.edited.0, language.edited.1)
}

/// Writes `text` as a new file, so that the shared tree's file, which
/// the copy's name links to, keeps its own.
fn write_anew(path: &Path, text: &str) {
    let _ = std::fs::remove_file(path);
    std::fs::write(path, text).unwrap();
}

/// The questions, in the order they are asked after the first hover.
const QUESTIONS: [&str; 4] = ["search", "find_references", "diagnostics", "codebase_map"];

/// One row of the table: a question's times alone, through Windlass and
/// from the server.
struct Row {
    question: String,
    windlass: Vec<Duration>,
    server: Vec<Duration>,
    /// What each answered, when they differ in size (references).
    note: String,
}

fn quiet_args(root: &Path) -> Vec<String> {
    let mut args = root_arg(root);
    args.extend(["--log-level".into(), "warn".into()]);
    args
}

/// Each question asked `rounds` times of one session of a cold daemon,
/// then of the server alone; with the files the map showed symbols of.
fn alone(language: &Language, root: &Path, rounds: usize) -> (Vec<Row>, Vec<String>) {
    let daemon = Daemon::new();
    let spawned = Instant::now();
    let session = daemon.session(&quiet_args(root));
    let first = windlass_first_hover(&session, language, spawned);
    let mut windlass: Vec<Vec<Duration>> = vec![Vec::new(); QUESTIONS.len()];
    let mut references_said = String::new();
    for _ in 0..rounds {
        for (index, question) in QUESTIONS.iter().enumerate() {
            let (took, outcome) = ask_windlass(&session, language, root, question, 0);
            if outcome.is_error || !outcome.right {
                println!("  alone, wrong or lost: {question}: {}", outcome.text);
            }
            if *question == "find_references" {
                references_said = outcome
                    .text
                    .lines()
                    .find(|line| line.contains(" references in "))
                    .unwrap_or_default()
                    .to_owned();
            }
            windlass[index].push(took);
        }
    }
    let map = session.ok("codebase_map", map_arguments(language));
    drop(session);
    drop(daemon);

    let spawned = Instant::now();
    let server = LspServer::start(language.server, root, language.pulls_diagnostics);
    let server_first = server_first_hover(&server, language, root, spawned);
    open_edited(&server, language, 1);
    let mapped = mapped_files(language.map, &map);
    let mut own: Vec<Vec<Duration>> = vec![Vec::new(); QUESTIONS.len()];
    let mut references_found = 0;
    for round in 0..rounds {
        for (index, question) in QUESTIONS.iter().enumerate() {
            let started = Instant::now();
            let found = ask_server(&server, language, root, question, 0, round, &mapped);
            own[index].push(started.elapsed());
            if *question == "find_references" {
                references_found = found;
            }
        }
    }
    let mut rows = vec![Row {
        question: "first correct hover, from a cold start".into(),
        windlass: vec![first],
        server: vec![server_first],
        note: String::new(),
    }];
    for (index, question) in QUESTIONS.iter().enumerate() {
        let note = match *question {
            "find_references" => {
                format!("Windlass: \"{references_said}\"; the server: {references_found} locations")
            }
            "codebase_map" => format!("{} files with symbols", mapped.len()),
            _ => String::new(),
        };
        rows.push(Row {
            question: (*question).into(),
            windlass: std::mem::take(&mut windlass[index]),
            server: std::mem::take(&mut own[index]),
            note,
        });
    }
    (rows, mapped)
}

/// Hovers until the answer is right: the time from the session's spawn.
fn windlass_first_hover(session: &Session, language: &Language, spawned: Instant) -> Duration {
    let (file, line, symbol, says) = language.hover;
    loop {
        let outcome = call(
            session,
            "hover",
            json!({"file": file, "line": line, "symbol": symbol}),
        );
        if !outcome.is_error && outcome.text.contains(says) {
            return spawned.elapsed();
        }
        assert!(
            spawned.elapsed() < PATIENCE,
            "hover never right: {}",
            outcome.text
        );
    }
}

/// What an answer was: its text, and whether it says what it must.
struct Checked {
    text: String,
    is_error: bool,
    right: bool,
}

/// Asks one question as agent `agent`; diagnostics after breaking its
/// own file on disk.
fn ask_windlass(
    session: &Session,
    language: &Language,
    root: &Path,
    question: &str,
    agent: usize,
) -> (Duration, Checked) {
    let arguments = match question {
        "search" => json!({"query": language.search.0}),
        "find_references" => {
            let (file, line, symbol) = language.references;
            json!({"file": file, "line": line, "symbol": symbol})
        }
        "diagnostics" => {
            let file = edited_file(language, agent);
            write_anew(&root.join(&file), language.broken);
            json!({"file": file})
        }
        _ => map_arguments(language),
    };
    let started = Instant::now();
    let outcome = call(session, question, arguments);
    let took = started.elapsed();
    let right = match question {
        "search" => outcome.text.contains(language.search.1),
        "find_references" => outcome.text.contains(" references in "),
        "diagnostics" => {
            outcome.text.contains(" error") && restored(session, language, root, agent)
        }
        _ => outcome.text.contains(&format!("{}: ", language.edited.1)),
    };
    let checked = Checked {
        text: outcome.text,
        is_error: outcome.is_error,
        right,
    };
    (took, checked)
}

/// Writes the agent's file clean again, untimed: whether its
/// diagnostics then say so.
fn restored(session: &Session, language: &Language, root: &Path, agent: usize) -> bool {
    let file = edited_file(language, agent);
    write_anew(&root.join(&file), language.clean);
    let outcome = call(session, "diagnostics", json!({"file": file}));
    !outcome.is_error && !outcome.text.contains(" error")
}

/// Calls a tool, waiting longer than the test client's watchdog: an
/// answer that never comes is a lost one, saying so.
fn call(session: &Session, tool: &str, arguments: Value) -> ToolOutcome {
    match session.call_async(tool, arguments).recv_timeout(PATIENCE) {
        Ok(response) => outcome(response),
        Err(_) => ToolOutcome {
            text: format!("no answer within {} s", PATIENCE.as_secs()),
            is_error: true,
        },
    }
}

fn map_arguments(language: &Language) -> Value {
    json!({"path": language.map, "include_symbols": true})
}

/// The files a `codebase_map` of `path` shows symbols of, read from its
/// indented answer: a folder ends with `/`, a file with symbols is
/// `name: symbols`.
fn mapped_files(path: &str, map: &str) -> Vec<String> {
    let mut folders: Vec<String> = Vec::new();
    let mut files = Vec::new();
    for line in map.lines().skip(1) {
        let name = line.trim_start();
        let depth = (line.len() - name.len()) / 2;
        if depth == 0 {
            continue;
        }
        folders.truncate(depth - 1);
        if let Some(folder) = name.strip_suffix('/') {
            folders.push(folder.to_owned());
        } else if let Some((file, _)) = name.split_once(": ") {
            let mut parts = vec![path.trim_end_matches('/').to_owned()];
            parts.extend(folders.iter().cloned());
            parts.push(file.to_owned());
            files.push(parts.join("/"));
        }
    }
    files
}

/// Initializes, opens the file and hovers until the answer is right:
/// the time from the server's spawn.
fn server_first_hover(
    server: &LspServer,
    language: &Language,
    root: &Path,
    spawned: Instant,
) -> Duration {
    let (file, line, symbol, says) = language.hover;
    open_file(server, language, root, file);
    let params = position_params(server, root, file, line, symbol);
    loop {
        let hover = server.request("textDocument/hover", params.clone());
        if hover.to_string().contains(says) {
            return spawned.elapsed();
        }
        assert!(
            spawned.elapsed() < PATIENCE,
            "the server's hover never right: {hover}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Opens `file` unless it is open: whether it was not.
fn open_file(server: &LspServer, language: &Language, root: &Path, file: &str) -> bool {
    let text = std::fs::read_to_string(root.join(file)).unwrap();
    server.open(file, language.language_id, &text)
}

/// Opens the first `count` agents' edited files, clean, and waits for
/// the server to say so.
fn open_edited(server: &LspServer, language: &Language, count: usize) {
    for agent in 0..count {
        let file = edited_file(language, agent);
        let before = server.publications(&file);
        if !server.open(&file, language.language_id, language.clean) {
            continue;
        }
        assert!(
            server.wait_errors(&file, before, false, PATIENCE),
            "the server never diagnosed {file} clean"
        );
    }
}

/// The document and position of `symbol` on `line` (1-based) of `file`.
fn position_params(
    server: &LspServer,
    root: &Path,
    file: &str,
    line: usize,
    symbol: &str,
) -> Value {
    let text = std::fs::read_to_string(root.join(file)).unwrap();
    let column = text
        .lines()
        .nth(line - 1)
        .and_then(|text| text.find(symbol))
        .unwrap();
    json!({"textDocument": {"uri": server.uri(file)}, "position": {"line": line - 1, "character": column}})
}

/// Asks the server the request behind one question; gives how many
/// results came back (locations, symbols or outlines).
fn ask_server(
    server: &LspServer,
    language: &Language,
    root: &Path,
    question: &str,
    agent: usize,
    round: usize,
    mapped: &[String],
) -> usize {
    match question {
        "search" => count(&server.request("workspace/symbol", json!({"query": language.search.0}))),
        "find_references" => {
            let (file, line, symbol) = language.references;
            // typescript-language-server answers only of open documents.
            open_file(server, language, root, file);
            let mut params = position_params(server, root, file, line, symbol);
            params["context"] = json!({"includeDeclaration": true});
            count(&server.request("textDocument/references", params))
        }
        "diagnostics" => {
            let file = edited_file(language, agent);
            let version = 2 * round as i64 + 2;
            let before = server.publications(&file);
            server.change(&file, version, language.broken);
            let broken = server.wait_errors(&file, before, true, PATIENCE);
            // Made clean again untimed, as through Windlass.
            let before = server.publications(&file);
            server.change(&file, version + 1, language.clean);
            let clean = server.wait_errors(&file, before, false, PATIENCE);
            if !(broken && clean) {
                println!("  the server never diagnosed {file} (broken: {broken}, clean: {clean})");
            }
            usize::from(broken)
        }
        _ => {
            for file in mapped {
                open_file(server, language, root, file);
            }
            let asked: Vec<_> = mapped
                .iter()
                .map(|file| {
                    server.send(
                        "textDocument/documentSymbol",
                        json!({"textDocument": {"uri": server.uri(file)}}),
                    )
                })
                .collect();
            asked
                .iter()
                .map(|receiver| count(&answer(receiver)))
                .filter(|n| *n > 0)
                .count()
        }
    }
}

fn count(result: &Value) -> usize {
    result.as_array().map_or(0, Vec::len)
}

/// The samples of many agents at once, by question (the first hover
/// first), and the answers lost or wrong.
struct Tally {
    by_question: Vec<Vec<Duration>>,
    lost: Vec<usize>,
    wrong: Vec<usize>,
}

impl Tally {
    fn new() -> Tally {
        let questions = QUESTIONS.len() + 1;
        Tally {
            by_question: vec![Vec::new(); questions],
            lost: vec![0; questions],
            wrong: vec![0; questions],
        }
    }

    fn add(&mut self, other: Tally) {
        for (index, samples) in other.by_question.into_iter().enumerate() {
            self.by_question[index].extend(samples);
            self.lost[index] += other.lost[index];
            self.wrong[index] += other.wrong[index];
        }
    }
}

struct Many {
    windlass: Tally,
    server: Tally,
}

/// `agents` sessions of one cold daemon, started at once: each hovers
/// until right, then asks every question `rounds` times, editing a file
/// of its own for diagnostics.
fn windlass_agents(language: &Language, root: &Path, agents: usize, rounds: usize) -> Tally {
    let daemon = Daemon::new();
    let args = quiet_args(root);
    let tallies: Vec<Tally> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..agents)
            .map(|agent| {
                let (daemon, args) = (&daemon, &args);
                scope.spawn(move || {
                    let spawned = Instant::now();
                    let session = daemon.session(args);
                    let mut tally = Tally::new();
                    tally.by_question[0].push(windlass_first_hover(&session, language, spawned));
                    for _ in 0..rounds {
                        for turn in 0..QUESTIONS.len() {
                            // Each agent starts at a question of its own.
                            let index = (turn + agent) % QUESTIONS.len();
                            let question = QUESTIONS[index];
                            let (took, checked) =
                                ask_windlass(&session, language, root, question, agent + 1);
                            tally.by_question[index + 1].push(took);
                            if checked.is_error {
                                tally.lost[index + 1] += 1;
                                println!("  lost: agent {agent} {question}: {}", checked.text);
                            } else if !checked.right {
                                tally.wrong[index + 1] += 1;
                                println!("  wrong: agent {agent} {question}: {}", checked.text);
                            }
                        }
                    }
                    tally
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().unwrap())
            .collect()
    });
    let mut total = Tally::new();
    for tally in tallies {
        total.add(tally);
    }
    total
}

/// One server asked each question `agents` at a time, `rounds` times:
/// hovers right after its start, then the rest, each agent's edits to
/// its own open file.
fn server_in_flight(
    language: &Language,
    root: &Path,
    agents: usize,
    rounds: usize,
    mapped: &[String],
) -> Tally {
    let mut tally = Tally::new();
    let spawned = Instant::now();
    let server = LspServer::start(language.server, root, language.pulls_diagnostics);
    let (file, line, symbol, says) = language.hover;
    open_file(&server, language, root, file);
    let params = position_params(&server, root, file, line, symbol);
    std::thread::scope(|scope| {
        let hovers: Vec<_> = (0..agents)
            .map(|_| {
                let (server, params) = (&server, &params);
                scope.spawn(move || {
                    loop {
                        let hover = server.request("textDocument/hover", params.clone());
                        if hover.to_string().contains(says) || spawned.elapsed() > PATIENCE {
                            return spawned.elapsed();
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    }
                })
            })
            .collect();
        tally.by_question[0] = hovers
            .into_iter()
            .map(|hover| hover.join().unwrap())
            .collect();
    });
    open_edited(&server, language, agents + 1);
    for round in 0..rounds {
        for (index, question) in QUESTIONS.iter().enumerate() {
            let samples: Vec<Duration> = std::thread::scope(|scope| {
                let asked: Vec<_> = (0..agents)
                    .map(|agent| {
                        let server = &server;
                        scope.spawn(move || {
                            let started = Instant::now();
                            ask_server(server, language, root, question, agent + 1, round, mapped);
                            started.elapsed()
                        })
                    })
                    .collect();
                asked
                    .into_iter()
                    .map(|asked| asked.join().unwrap())
                    .collect()
            });
            tally.by_question[index + 1].extend(samples);
        }
    }
    tally
}

fn print_alone(rows: &[Row]) {
    for row in rows {
        report(&format!("  {}, Windlass", row.question), &row.windlass);
        report(&format!("  {}, the server", row.question), &row.server);
    }
}

fn print_table(rows: &[Row], many: &Many, agents: usize) {
    println!(
        "| question | Windlass, first | Windlass, median | server, first | server, median | \
         {agents} agents: Windlass p50 / p90 / p99 | {agents} in flight: server p50 / p90 / p99 | lost | wrong |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (index, row) in rows.iter().enumerate() {
        let windlass = Percentiles::new(&many.windlass.by_question[index]);
        let server = Percentiles::new(&many.server.by_question[index]);
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            row.question,
            ms(row.windlass[0]),
            ms_of(Percentiles::new(&row.windlass).ms(0.5)),
            ms(row.server[0]),
            ms_of(Percentiles::new(&row.server).ms(0.5)),
            spread(&windlass),
            spread(&server),
            many.windlass.lost[index],
            many.windlass.wrong[index],
        );
    }
    for row in rows.iter().filter(|row| !row.note.is_empty()) {
        println!("  {}: {}", row.question, row.note);
    }
}

fn ms(duration: Duration) -> String {
    ms_of(duration.as_secs_f64() * 1000.0)
}

fn ms_of(ms: f64) -> String {
    match ms {
        ms if ms >= 10_000.0 => format!("{:.1} s", ms / 1000.0),
        ms => format!("{ms:.0} ms"),
    }
}

fn spread(p: &Percentiles) -> String {
    format!(
        "{} / {} / {} (n={})",
        ms_of(p.ms(0.5)),
        ms_of(p.ms(0.9)),
        ms_of(p.ms(0.99)),
        p.count()
    )
}
