//! Token economy and search speed, run by hand:
//!
//! ```sh
//! cargo build --release --workspace && cargo bench --bench tools
//! ```
//!
//! Token economy: for questions an agent asks about a small Python project
//! (answered by pyright), the bytes Windlass returns against the bytes of
//! reading the files that hold the answer. Source economy: "show me this
//! function" with `source` on published packages (requests with pyright,
//! LZ4 with clangd, as `.ci/run` unpacks them) against reading the files
//! its spans are in. Check before writing: `check_edit` of an edit to
//! requests' `api.py` (pyright and ruff) against writing the edit and
//! asking `diagnostics`, 10 cycles each; then of a change to `utils.py`
//! that breaks two open files importing it, and the same change with no
//! importer open against pyright's command line over the tree. Hook
//! effect: the same change written between the `acquire` and `release`
//! hooks as a host writes it, and undone the same way, while another
//! session asks its own questions of the same server, each hook's time
//! against `release` alone (the edited file's own answer). Search: the `search` tool over a
//! generated tree of 10,000 files, where only the text heatmap has work.
//! `TOOLS_BENCH_ONLY=NAME` runs one of those parts (named in `main`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/common/mod.rs"]
mod common;
mod percentiles;

use common::projects::real_project;
use common::*;
use percentiles::report;
use serde_json::{Value, json};
use std::time::Instant;

fn main() {
    // `TOOLS_BENCH_ONLY=NAME` runs one part: token_economy,
    // source_economy, check_before_writing, check_with_closed_importers,
    // hook_effect or search_speed.
    let only = std::env::var("TOOLS_BENCH_ONLY").ok();
    let runs = |name: &str| only.as_deref().is_none_or(|only| only == name);
    if runs("token_economy") {
        match have("pyright-langserver") {
            true => token_economy(),
            false => println!("token economy skipped: pyright-langserver is not on PATH"),
        }
    }
    let parts: [(&str, fn()); 5] = [
        ("source_economy", source_economy),
        ("check_before_writing", check_before_writing),
        ("check_with_closed_importers", check_with_closed_importers),
        ("hook_effect", hook_effect),
        ("search_speed", search_speed),
    ];
    for (name, part) in parts {
        if runs(name) {
            part();
        }
    }
}

/// A module of the kind agents read: classes with docstrings and methods
/// of a dozen lines, about 14 KB.
fn models_source() -> String {
    let mut source = String::from(
        "\"\"\"Inventory models: items, stock levels and valuation.\"\"\"\n\nfrom dataclasses import dataclass, field\n\n\n",
    );
    source.push_str("@dataclass\nclass Item:\n    \"\"\"One stock-keeping unit.\"\"\"\n\n    sku: str\n    name: str\n    unit_price: float\n    quantity: int = 0\n    tags: list[str] = field(default_factory=list)\n\n    def value(self) -> float:\n        \"\"\"Price of everything in stock.\"\"\"\n        return self.unit_price * self.quantity\n\n\n");
    source.push_str("class Inventory:\n    \"\"\"All items, by SKU.\"\"\"\n\n    def __init__(self) -> None:\n        self.items: dict[str, Item] = {}\n\n    def add(self, item: Item) -> None:\n        \"\"\"Adds an item, replacing one with the same SKU.\"\"\"\n        self.items[item.sku] = item\n\n    def total_value(self) -> float:\n        \"\"\"Value of the whole inventory.\"\"\"\n        return sum(item.value() for item in self.items.values())\n\n");
    for index in 0..24 {
        let body = [
            format!("    def restock_plan_{index}(self, threshold: int = {index}, budget: float = 100.0) -> list[tuple[str, int]]:"),
            format!("        \"\"\"Plans restocking for report {index}: the items below the threshold,"),
            "        cheapest first, as many units as the budget allows.\"\"\"".to_owned(),
            "        low = [item for item in self.items.values() if item.quantity < threshold]".to_owned(),
            "        low.sort(key=lambda item: item.unit_price)".to_owned(),
            "        plan: list[tuple[str, int]] = []".to_owned(),
            "        for item in low:".to_owned(),
            "            units = min(threshold - item.quantity, int(budget // max(item.unit_price, 0.01)))".to_owned(),
            "            if units <= 0:".to_owned(),
            "                break".to_owned(),
            "            budget -= units * item.unit_price".to_owned(),
            "            plan.append((item.sku, units))".to_owned(),
            "        return plan".to_owned(),
        ];
        source.push_str(&body.join("\n"));
        source.push_str("\n\n");
    }
    source
}

const APP: &str = "from models import Inventory, Item\n\n\ndef main() -> float:\n    inventory = Inventory()\n    inventory.add(Item(\"a-1\", \"anchor\", 12.5, 3))\n    inventory.add(Item(\"r-2\", \"rope\", 1.25, 40))\n    return inventory.total_value()\n";

fn token_economy() {
    let models = models_source();
    let dir = project(&[("models.py", &models), ("app.py", APP)]);
    let mut args = root_arg(dir.path());
    args.extend(["--log-level".into(), "warn".into()]);
    let session = Session::start(&args);
    let files = |names: &[&str]| -> usize {
        names
            .iter()
            .map(|name| std::fs::read(dir.path().join(name)).unwrap().len())
            .sum()
    };
    let questions: [(&str, &str, Value, Vec<&str>); 4] = [
        (
            "type of Inventory.total_value (hover)",
            "hover",
            json!({"file": "app.py", "line": 8, "symbol": "total_value"}),
            vec!["models.py"],
        ),
        (
            "definition of Inventory",
            "definition",
            json!({"file": "app.py", "line": 5, "symbol": "Inventory"}),
            vec!["models.py"],
        ),
        (
            "references of Item",
            "find_references",
            json!({"file": "models.py", "line": 7, "symbol": "Item"}),
            vec!["models.py", "app.py"],
        ),
        (
            "outline of models.py",
            "document_symbols",
            json!({"file": "models.py", "depth": 2}),
            vec!["models.py"],
        ),
    ];
    println!(
        "{:<40} {:>10} {:>12} {:>8}",
        "question", "windlass B", "reading B", "ratio"
    );
    for (label, tool, arguments, holding) in questions {
        let answer = session.ok(tool, arguments);
        let read = files(&holding);
        println!(
            "{label:<40} {:>10} {:>12} {:>7.1}×",
            answer.len(),
            read,
            read as f64 / answer.len() as f64
        );
    }
}

/// A symbol of a package, and the files its spans are in.
struct Shown {
    label: &'static str,
    server: &'static str,
    project: &'static str,
    arguments: fn() -> Value,
    files: &'static [&'static str],
}

fn source_economy() {
    let cases = [
        Shown {
            label: "requests Session.request (97 of 920 lines)",
            server: "pyright-langserver",
            project: "requests-2.34.2",
            arguments: || json!({"file": "src/requests/sessions.py", "line": 557, "symbol": "request"}),
            files: &["src/requests/sessions.py"],
        },
        Shown {
            label: "requests get_auth_from_url (of 1,155)",
            server: "pyright-langserver",
            project: "requests-2.34.2",
            arguments: || json!({"file": "src/requests/utils.py", "line": 1070, "symbol": "get_auth_from_url"}),
            files: &["src/requests/utils.py"],
        },
        Shown {
            label: "requests HTTPAdapter, depth 1",
            server: "pyright-langserver",
            project: "requests-2.34.2",
            arguments: || json!({"symbol": "HTTPAdapter", "depth": 1}),
            files: &["src/requests/adapters.py"],
        },
        Shown {
            label: "lz4 LZ4_compress_default (.c and .h)",
            server: "clangd",
            project: "lz4-4.4.4",
            arguments: || json!({"file": "lz4libs/lz4.c", "line": 2659, "symbol": "LZ4_compress_default"}),
            files: &["lz4libs/lz4.c", "lz4libs/lz4.h"],
        },
    ];
    println!(
        "{:<44} {:>10} {:>12} {:>8}",
        "source of", "windlass B", "reading B", "ratio"
    );
    for case in cases {
        if !have(case.server) {
            println!("{}: skipped, {} is not on PATH", case.label, case.server);
            continue;
        }
        let Some(dir) = real_project(case.project) else {
            println!(
                "{}: skipped, target/real-projects/{} is missing",
                case.label, case.project
            );
            continue;
        };
        let mut args = root_arg(dir.path());
        args.extend(["--log-level".into(), "warn".into()]);
        let session = Session::start(&args);
        let answer = session.ok("source", (case.arguments)());
        let read: usize = case
            .files
            .iter()
            .map(|file| std::fs::read(dir.path().join(file)).unwrap().len())
            .sum();
        println!(
            "{:<44} {:>10} {:>12} {:>7.1}×",
            case.label,
            answer.len(),
            read,
            read as f64 / answer.len() as f64
        );
    }
}

fn check_before_writing() {
    if !have("pyright-langserver") || !have("ruff") {
        println!("check before writing skipped: pyright-langserver or ruff is not on PATH");
        return;
    }
    let Some(dir) = real_project("requests-2.34.2") else {
        println!("check before writing skipped: target/real-projects/requests-2.34.2 is missing");
        return;
    };
    let mut args = root_arg(dir.path());
    args.extend(["--log-level".into(), "warn".into()]);
    let session = Session::start(&args);
    let api = "src/requests/api.py";
    let path = dir.path().join(api);
    let original = std::fs::read_to_string(&path).unwrap();
    session.ok("diagnostics", json!({"file": api}));
    let (mut checked, mut written) = (Vec::new(), Vec::new());
    for cycle in 0..10 {
        let name = format!("undefined_{cycle}");
        let edit = json!({"file": api, "replacements": [
            {"old": "url=url, **kwargs)", "new": format!("url={name}, **kwargs)")},
        ]});
        let started = Instant::now();
        let answer = session.ok("check_edit", edit);
        checked.push(started.elapsed());
        assert!(
            answer.contains(&format!("\"{name}\" is not defined")),
            "{answer}"
        );
        std::fs::write(
            &path,
            original.replacen("url=url, **kwargs)", &format!("url={name}, **kwargs)"), 1),
        )
        .unwrap();
        let started = Instant::now();
        let answer = session.ok("diagnostics", json!({"file": api}));
        written.push(started.elapsed());
        assert!(
            answer.contains(&format!("\"{name}\" is not defined")),
            "{answer}"
        );
        std::fs::write(&path, &original).unwrap();
        session.ok("diagnostics", json!({"file": api}));
    }
    report("check_edit, requests api.py (pyright + ruff)", &checked);
    report("written, then diagnostics (pyright + ruff)", &written);
    check_with_importers(&session, dir.path());
}

/// A change of `get_auth_from_url`'s return type in `utils.py`, with the
/// two files that unpack its result open: the check answers what it
/// breaks there, and waits for pyright to check them again once the disk
/// text is back. Against writing the change and asking all three files'
/// diagnostics.
fn check_with_importers(session: &Session, root: &std::path::Path) {
    let utils = "src/requests/utils.py";
    let path = root.join(utils);
    let original = std::fs::read_to_string(&path).unwrap();
    let files = json!({"files": [utils, "src/requests/adapters.py", "src/requests/sessions.py"]});
    session.ok("diagnostics", files.clone());
    let (mut checked, mut written) = (Vec::new(), Vec::new());
    for cycle in 0..10 {
        // Each cycle's answer differs from the one before it.
        let size = 3 + cycle % 2;
        let replacements = returning_strings(size);
        let edit = json!({"file": utils, "replacements": replacements
            .iter()
            .map(|(old, new)| json!({"old": old, "new": new}))
            .collect::<Vec<_>>()});
        let expected = format!("received {size}");
        let started = Instant::now();
        let answer = session.ok("check_edit", edit);
        checked.push(started.elapsed());
        assert!(
            answer.contains("adapters.py, not edited") && answer.contains(&expected),
            "{answer}"
        );
        let mut changed = original.clone();
        for (old, new) in &replacements {
            changed = changed.replacen(old.as_str(), new, 1);
        }
        std::fs::write(&path, changed).unwrap();
        let started = Instant::now();
        let answer = session.ok("diagnostics", files.clone());
        written.push(started.elapsed());
        assert!(answer.contains(&expected), "{answer}");
        std::fs::write(&path, &original).unwrap();
        session.ok("diagnostics", files.clone());
    }
    report(
        "check_edit, utils.py with 2 importers open (pyright + ruff)",
        &checked,
    );
    report("written, then diagnostics of all three", &written);
}

/// The replacements that make requests' `get_auth_from_url` return
/// `size` strings (its callers unpack two).
fn returning_strings(size: usize) -> [(String, String); 3] {
    [
        (
            "def get_auth_from_url(url: str) -> tuple[str, str]:".to_owned(),
            format!(
                "def get_auth_from_url(url: str) -> tuple[{}]:",
                vec!["str"; size].join(", ")
            ),
        ),
        (
            "        auth = (\"\", \"\")\n".to_owned(),
            format!("        auth = ({})\n", vec!["\"\""; size].join(", ")),
        ),
        (
            "unquote(parsed.password))".to_owned(),
            format!("unquote(parsed.password){})", ", \"\"".repeat(size - 2)),
        ),
    ]
}

/// The same change of `get_auth_from_url` with no file open but
/// `utils.py`: the check finds the three files that use the function and
/// break (`adapters.py`, `models.py`, `sessions.py`) by its name, opens
/// them for the check and closes them after. Against pyright's command
/// line over the whole tree with the change written, the checker's own
/// time for the same answer.
fn check_with_closed_importers() {
    if !have("pyright-langserver") || !have("pyright") {
        println!("check with closed importers skipped: pyright is not on PATH");
        return;
    }
    let Some(dir) = real_project("requests-2.34.2") else {
        println!("check with closed importers skipped: requests-2.34.2 is missing");
        return;
    };
    let mut args = root_arg(dir.path());
    args.extend(["--log-level".into(), "warn".into()]);
    let session = Session::start(&args);
    let utils = "src/requests/utils.py";
    let path = dir.path().join(utils);
    let original = std::fs::read_to_string(&path).unwrap();
    session.ok("diagnostics", json!({"file": utils}));
    let (mut checked, mut checker) = (Vec::new(), Vec::new());
    for cycle in 0..10 {
        let size = 3 + cycle % 2;
        let replacements = returning_strings(size);
        let edit = json!({"file": utils, "replacements": replacements
            .iter()
            .map(|(old, new)| json!({"old": old, "new": new}))
            .collect::<Vec<_>>()});
        let started = Instant::now();
        let answer = session.ok("check_edit", edit);
        checked.push(started.elapsed());
        assert!(
            answer.contains("src/requests/models.py, not edited")
                && answer.contains(&format!("received {size}")),
            "{answer}"
        );
        let mut changed = original.clone();
        for (old, new) in &replacements {
            changed = changed.replacen(old.as_str(), new, 1);
        }
        std::fs::write(&path, changed).unwrap();
        let started = Instant::now();
        let output = std::process::Command::new("pyright")
            .args(["--outputjson", "."])
            .current_dir(dir.path())
            .output()
            .unwrap();
        checker.push(started.elapsed());
        assert!(!output.stdout.is_empty());
        std::fs::write(&path, &original).unwrap();
    }
    report(
        "check_edit, utils.py, its 3 broken users closed (pyright + ruff)",
        &checked,
    );
    report("pyright's command line over the tree, written", &checker);
}

/// The hooks around a host's edit of requests' `utils.py` that breaks
/// three closed files: `acquire` (which keeps the file and its outline),
/// then `release` (the file's diagnostics and the edit's effect on its
/// users), for the breaking edit and for its undoing; against `release`
/// of the same edits without `acquire`, which tells the edited file
/// alone.
fn hook_effect() {
    if !have("pyright-langserver") {
        println!("hook effect skipped: pyright is not on PATH");
        return;
    }
    let Some(dir) = real_project("requests-2.34.2") else {
        println!("hook effect skipped: requests-2.34.2 is missing");
        return;
    };
    let daemon = Daemon::new();
    let host = "bench-host-session";
    let session = daemon.session_as(
        &root_arg(dir.path()),
        Client {
            env: &[("CLAUDE_CODE_SESSION_ID", host)],
            ..Client::default()
        },
    );
    let utils = dir.path().join("src/requests/utils.py");
    let original = std::fs::read_to_string(&utils).unwrap();
    session.ok("diagnostics", json!({"file": "src/requests/utils.py"}));
    // Another agent's session works on the same project meanwhile, with
    // other files open: the hooks share the server with it.
    let other = daemon.session_as(&root_arg(dir.path()), Client::default());
    let working = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let worker = {
        let working = working.clone();
        std::thread::spawn(move || {
            let questions = [
                ("diagnostics", json!({"file": "src/requests/api.py"})),
                (
                    "hover",
                    json!({"file": "src/requests/api.py", "line": 59, "symbol": "request"}),
                ),
                ("find_references", json!({"symbol": "Session.send"})),
            ];
            let mut asked = 0;
            while working.load(std::sync::atomic::Ordering::Relaxed) {
                let (tool, arguments) = &questions[asked % questions.len()];
                let _answer = other.call(tool, arguments.clone());
                asked += 1;
            }
            asked
        })
    };
    let hook_input = |event: &str| {
        json!({
            "session_id": host,
            "cwd": dir.path(),
            "hook_event_name": event,
            "tool_name": "Write",
            "tool_input": {"file_path": utils},
        })
        .to_string()
    };
    let timed = |args: &[&str], event: &str| {
        let started = Instant::now();
        let output = daemon.hook(args, &hook_input(event));
        (
            started.elapsed(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let (mut acquired, mut released, mut alone) = (Vec::new(), Vec::new(), Vec::new());
    for cycle in 0..10 {
        let mut changed = original.clone();
        for (old, new) in returning_strings(3 + cycle % 2) {
            changed = changed.replacen(old.as_str(), &new, 1);
        }
        let prepared = cycle % 2 == 0;
        for text in [&changed, &original] {
            if prepared {
                let (took, _) = timed(&["acquire", "--format", "claude"], "PreToolUse");
                acquired.push(took);
            }
            std::fs::write(&utils, text).unwrap();
            let (took, told) = timed(&["release", "--format", "claude"], "PostToolUse");
            match prepared {
                true => {
                    assert!(told.contains("models.py (not edited)"), "{told}");
                    released.push(took);
                }
                false => alone.push(took),
            }
        }
    }
    working.store(false, std::sync::atomic::Ordering::Relaxed);
    let asked = worker.join().unwrap();
    println!("the other session asked {asked} questions meanwhile");
    report(
        "acquire before the edit (keeps utils.py and its outline)",
        &acquired,
    );
    report(
        "release after it: utils.py and its 3 broken users closed (pyright + ruff)",
        &released,
    );
    report("release of the edited file alone (no acquire)", &alone);
}

fn search_speed() {
    let dir = tempfile::tempdir().unwrap();
    for index in 0..10_000 {
        let folder = dir.path().join(format!("d{:02}", index % 100));
        std::fs::create_dir_all(&folder).unwrap();
        let body = format!(
            "line one of file {index}\nneedle_{} appears here\nand a last line\n",
            index % 7
        );
        std::fs::write(folder.join(format!("f{index}.txt")), body).unwrap();
    }
    let mut args = root_arg(dir.path());
    args.extend(["--log-level".into(), "warn".into()]);
    let session = Session::start(&args);
    let mut samples = Vec::new();
    for _ in 0..7 {
        let started = Instant::now();
        let answer = session.ok("search", json!({"query": "needle_3"}));
        samples.push(started.elapsed());
        assert!(
            answer.contains("text (1429 matches in 1429 files)"),
            "{answer}"
        );
    }
    report("search over 10,000 files (heatmap)", &samples);
}
