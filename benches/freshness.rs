//! How soon answers are true again after a change on disk or to the
//! roots, and how long real servers take to give their first correct
//! answer; run by hand:
//!
//! ```sh
//! cargo bench --bench freshness
//! ```
//!
//! Cross-file: a callee (pyright, gopls), an interface (intelephense) or a
//! header (clangd) is rewritten on disk and the caller's diagnostics asked
//! for at once; every answer is checked, so a stale one fails the run, and
//! the server's own diagnostics of the caller (published, or answered when
//! asked) are read from the event store beside it. New root: the client's roots change to
//! include a new directory and a question about a symbol defined only
//! there is asked at once; the time runs from the `list_changed`
//! notification to the correct answer. First answer: Windlass is started
//! on a project and asked one question at once; the time runs from the
//! process start to the correct answer. Servers missing from PATH are
//! skipped with a note.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/common/mod.rs"]
mod common;
mod percentiles;
mod store_events;

use common::projects::{big_typescript_project, c_project_with_database, write};
use common::*;
use percentiles::report;
use serde_json::{Value, json};
use std::time::{Duration, Instant, SystemTime};
use store_events::{diagnostics_events, epoch_millis, last_publication};

/// What is rewritten, and what the dependent's diagnostics must say.
struct CrossFile {
    label: &'static str,
    server: &'static str,
    files: &'static [(&'static str, &'static str)],
    edited: &'static str,
    broken: &'static str,
    fixed: &'static str,
    dependent: &'static str,
    broken_says: &'static str,
}

const CROSS_FILE: &[CrossFile] = &[
    CrossFile {
        label: "pyright: callee's signature → caller's diagnostics",
        server: "pyright-langserver",
        files: &[
            ("util.py", "def helper(a: int) -> int:\n    return a\n"),
            ("main.py", "from util import helper\n\nresult = helper(1)\n"),
        ],
        edited: "util.py",
        broken: "def helper(a: int, b: int) -> int:\n    return a + b\n",
        fixed: "def helper(a: int) -> int:\n    return a\n",
        dependent: "main.py",
        broken_says: "Argument missing for parameter \"b\"",
    },
    CrossFile {
        label: "gopls: a function's signature → its caller's diagnostics",
        server: "gopls",
        files: &[
            ("go.mod", "module example.com/shapes\n\ngo 1.19\n"),
            (
                "area.go",
                "package shapes\n\nfunc Area(w, h int) int { return w * h }\n",
            ),
            (
                "use.go",
                "package shapes\n\nfunc Use() int { return Area(2, 3) }\n",
            ),
        ],
        edited: "area.go",
        broken: "package shapes\n\nfunc Area(w int) int { return w }\n",
        fixed: "package shapes\n\nfunc Area(w, h int) int { return w * h }\n",
        dependent: "use.go",
        broken_says: "too many arguments in call to Area",
    },
    CrossFile {
        label: "intelephense: an interface's method → its caller's diagnostics",
        server: "intelephense",
        files: &[
            (
                "Greeter.php",
                "<?php\n\ninterface Greeter\n{\n    public function greet(): string;\n}\n",
            ),
            (
                "hello.php",
                "<?php\n\nfunction hello(Greeter $greeter): string\n{\n    return $greeter->greet();\n}\n",
            ),
        ],
        edited: "Greeter.php",
        broken: "<?php\n\ninterface Greeter\n{\n    public function salute(): string;\n}\n",
        fixed: "<?php\n\ninterface Greeter\n{\n    public function greet(): string;\n}\n",
        dependent: "hello.php",
        broken_says: "Undefined method 'greet'",
    },
    CrossFile {
        label: "clangd: header's declaration → includer's diagnostics",
        server: "clangd",
        files: &[
            ("shapes.h", "int area(int w, int h);\n"),
            (
                "main.c",
                "#include \"shapes.h\"\n\nint main(void) { return area(2, 3); }\n",
            ),
            ("compile_flags.txt", "-xc\n"),
        ],
        edited: "shapes.h",
        broken: "int area(int w);\n",
        fixed: "int area(int w, int h);\n",
        dependent: "main.c",
        broken_says: "Too many arguments to function call",
    },
];

fn main() {
    for case in CROSS_FILE {
        cross_file(case, 20);
    }
    let mockls = mockls_lsp("python", "--workspace-folders");
    new_root(
        "mockls --workspace-folders: new root",
        None,
        &["--lsp", &mockls],
        20,
    );
    new_root("pyright: new root", Some("pyright-langserver"), &[], 10);
    first_answers();
}

/// `list_changed` → the first answer that finds a symbol defined only in
/// the new root, `rounds` times, each round with a root of its own.
fn new_root(label: &str, server: Option<&str>, args: &[&str], rounds: usize) {
    if let Some(server) = server.filter(|server| !have(server)) {
        return println!("{label}: skipped, {server} is not on PATH");
    }
    let dir = project(&[("app/main.py", "def start() -> int:\n    return 1\n")]);
    let base = dir.path().canonicalize().unwrap();
    let app = base.join("app");
    let client = Client {
        cwd: Some(&app),
        roots: Some(vec![app.clone()]),
        ..Client::default()
    };
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    let session = Session::start_as(&args, &client);
    session.ok("definition", json!({"symbol": "start"}));
    let mut samples = Vec::new();
    for round in 0..rounds {
        let root = base.join(format!("lib{round}"));
        write(
            &root,
            "shapes.py",
            &format!("def area_{round}(w: int) -> int:\n    return w\n"),
        );
        let expected = format!("lib{round}/shapes.py:1:5");
        let started = Instant::now();
        session.set_roots(&[&app, &root]);
        // The notification is answered asynchronously: ask until the new
        // root is in, the way an agent that just added it would.
        loop {
            let answer = session.call("definition", json!({"symbol": format!("area_{round}")}));
            if !answer.is_error && answer.text.starts_with(&expected) {
                break;
            }
            assert!(started.elapsed() < WATCHDOG, "{label}: {}", answer.text);
        }
        samples.push(started.elapsed());
    }
    report(label, &samples);
}

fn cross_file(case: &CrossFile, cycles: usize) {
    if !have(case.server) {
        return println!("{}: skipped, {} is not on PATH", case.label, case.server);
    }
    let dir = project(case.files);
    let root = dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let store = state.path().join("state/windlass/windlass.db");
    let session = Session::start_with_state(state, &root_arg(&root));
    let ask = json!({"file": case.dependent});
    session.ok("diagnostics", ask.clone());
    let mut answers = Vec::new();
    let mut timeline = Vec::new();
    for _ in 0..cycles {
        for (text, broken) in [(case.broken, true), (case.fixed, false)] {
            std::fs::write(root.join(case.edited), text).unwrap();
            let (written, started) = (SystemTime::now(), Instant::now());
            let answer = session.ok("diagnostics", ask.clone());
            answers.push(started.elapsed());
            timeline.push((written, started.elapsed(), broken));
            assert_eq!(
                answer.contains(case.broken_says),
                broken,
                "a stale answer: {answer}"
            );
        }
    }
    report(case.label, &answers);
    // The store's writer commits within 100 ms of an event.
    std::thread::sleep(Duration::from_millis(500));
    let uri = format!("file://{}", root.join(case.dependent).display());
    let published = diagnostics_events(&store, &uri);
    let mut server = Vec::new();
    let mut beyond = Vec::new();
    for (written, answer, broken) in timeline {
        let from = epoch_millis(written);
        let to = from + answer.as_millis() as i64 + 5;
        if let Some(at) = last_publication(&published, from, to, broken) {
            let own = Duration::from_millis((at - from).max(0) as u64);
            server.push(own);
            beyond.push(answer.saturating_sub(own));
        }
    }
    report("  the server's diagnostics of it", &server);
    report("  the answer beyond them", &beyond);
}

/// One question asked of a fresh session, and what its answer must say.
struct FirstAnswer {
    label: &'static str,
    server: &'static str,
    project: fn() -> tempfile::TempDir,
    tool: &'static str,
    arguments: fn() -> Value,
    says: &'static str,
}

fn first_answers() {
    let cases = [
        FirstAnswer {
            label: "pyright, 300 modules: hover",
            server: "pyright-langserver",
            project: || python_project(300),
            tool: "hover",
            arguments: || json!({"file": "main.py", "line": 3, "symbol": "f299"}),
            says: "def f299(x: int) -> int",
        },
        FirstAnswer {
            label: "typescript-language-server, 400 modules: hover",
            server: "typescript-language-server",
            project: || big_typescript_project(400),
            tool: "hover",
            arguments: || json!({"file": "src/main.ts", "line": 5, "symbol": "f399"}),
            says: "(alias) f399(x: number): number",
        },
        FirstAnswer {
            label: "clangd, compile_commands.json, 200 files: references by symbol",
            server: "clangd",
            project: || c_project_with_database(200),
            tool: "find_references",
            arguments: || json!({"symbol": "area"}),
            says: "references in 203 files",
        },
        FirstAnswer {
            label: "bash-language-server, 200 scripts: definition by symbol",
            server: "bash-language-server",
            project: || shell_project(200),
            tool: "definition",
            arguments: || json!({"symbol": "task_199"}),
            says: "lib/task_199.sh:1:1  task_199() {",
        },
    ];
    for case in cases {
        first_answer(&case, 3);
    }
}

fn first_answer(case: &FirstAnswer, runs: usize) {
    if !have(case.server) {
        return println!("{}: skipped, {} is not on PATH", case.label, case.server);
    }
    let mut samples = Vec::new();
    for _ in 0..runs {
        let dir = (case.project)();
        let started = Instant::now();
        let session = Session::start(&root_arg(dir.path()));
        let answer = session.ok(case.tool, (case.arguments)());
        samples.push(started.elapsed());
        assert!(answer.contains(case.says), "{}: {answer}", case.label);
    }
    report(case.label, &samples);
}

/// `main.py` calling the last of a chain of modules.
fn python_project(modules: usize) -> tempfile::TempDir {
    let dir = project(&[]);
    for index in 0..modules {
        let mut text = String::new();
        if index > 0 {
            text.push_str(&format!("from m{} import f{}\n\n\n", index - 1, index - 1));
        }
        let body = match index {
            0 => "return x".to_owned(),
            _ => format!("return f{}(x) + 1", index - 1),
        };
        text.push_str(&format!("def f{index}(x: int) -> int:\n    {body}\n"));
        for part in 0..20 {
            text.push_str(&format!(
                "\n\nclass C{index}_{part}:\n    def value(self) -> int:\n        return {part}\n"
            ));
        }
        write(dir.path(), &format!("m{index}.py"), &text);
    }
    let last = modules - 1;
    write(
        dir.path(),
        "main.py",
        &format!("from m{last} import f{last}\n\nanswer = f{last}(1)\n"),
    );
    dir
}

/// Scripts that each define one function and source the one before.
fn shell_project(scripts: usize) -> tempfile::TempDir {
    let dir = project(&[]);
    for index in 0..scripts {
        let source = match index {
            0 => String::new(),
            _ => format!("source \"$(dirname \"$0\")/task_{}.sh\"\n", index - 1),
        };
        write(
            dir.path(),
            &format!("lib/task_{index}.sh"),
            &format!("task_{index}() {{\n  echo {index}\n}}\n{source}"),
        );
    }
    write(dir.path(), "run.sh", "#!/usr/bin/env bash\ntask_199\n");
    dir
}
