//! Agents side by side in the real hosts, as one user runs them: two
//! Claude Code agents reading one file, two editing it, and Claude Code
//! beside Codex, sharing one daemon and one pyright and each other's
//! leases, both on the dashboard.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::host::{Finished, Host, Installed, Watchdog};
use common::model::{Model, Step};
use common::scenario::*;
use serde_json::json;

#[test]
fn two_agents_read_one_file_at_once() {
    let _watchdog = Watchdog::arm("two readers", TEST_LIMIT);
    let (_dir, root) = python_project();
    let Some(installed) = Installed::new(Host::Claude, &[&root]) else {
        return;
    };
    let app = root.join("pkg/app.py");
    // A reads, then stays in its turn until B has read too; B reads once
    // A's read is done, so A's session is alive and has just read the file.
    let first = Model::start(Host::Claude.api(), "claude reader A");
    let second = Model::start(Host::Claude.api(), "claude reader B");
    first.script([
        Step::read(&app),
        Step::text("Done.").after(gate(&second, 2)),
    ]);
    second.script([Step::read(&app).after(gate(&first, 2)), Step::text("Done.")]);
    let a = installed.start(&root, &first, &[]);
    let b = installed.start(&root, &second, &[]);
    let (a, b) = (a.finish(), b.finish());

    report_wait("second reader's Read", &first, &second);
    let mut checks = Checks::new("two readers");
    for (name, model) in [("A", &first), ("B", &second)] {
        let read = result(model, 0);
        checks.that(
            &format!("reader {name}'s Read proceeds with the file's text"),
            !read.is_error && read.text.contains("from pkg.mathutil import add"),
            &shown(&read),
        );
    }
    checks.finish(&[(&first, &a), (&second, &b)]);
}

#[test]
fn a_second_editor_waits_for_the_first_then_proceeds() {
    let _watchdog = Watchdog::arm("two editors", TEST_LIMIT);
    let (_dir, root) = python_project();
    let Some(installed) = Installed::new(Host::Claude, &[&root]) else {
        return;
    };
    let mathutil = root.join("pkg/mathutil.py");
    let signature = "def add(a: int, b: int) -> int:";
    let commented = "def add(a: int, b: int) -> int:  # second editor";
    let swapped = "    return b + a";
    // A edits the body, then stays in its turn until B's edit is done; B
    // edits the signature line once A's edit has ended, while A's lease
    // on the file lasts.
    let first = Model::start(Host::Claude.api(), "claude editor A");
    let second = Model::start(Host::Claude.api(), "claude editor B");
    first.script([
        Step::edit(&mathutil, RETURN, swapped),
        Step::text("Done.").after(gate(&second, 2)),
    ]);
    second.script([
        Step::edit(&mathutil, signature, commented).after(gate(&first, 2)),
        Step::text("Done."),
    ]);
    let a = installed.start(&root, &first, &[]);
    let b = installed.start(&root, &second, &[]);
    let (a, b) = (a.finish(), b.finish());

    report_wait("second editor's Edit", &first, &second);
    let mut checks = Checks::new("two editors");
    let edit = result(&first, 0);
    checks.that("editor A's edit succeeds", !edit.is_error, &shown(&edit));
    let edit = result(&second, 0);
    let proceeded = !edit.is_error && edit.text.contains("updated successfully");
    let told = edit.is_error && session_id(&a).is_some_and(|id| edit.text.contains(&id));
    checks.that(
        "editor B's edit proceeds once A's is done, or B is told that A holds the file",
        proceeded || told,
        &shown(&edit),
    );
    if proceeded {
        let text = std::fs::read_to_string(&mathutil).unwrap();
        checks.that(
            "the file has both edits",
            text.contains(commented) && text.contains(swapped),
            &text,
        );
    }
    checks.finish(&[(&first, &a), (&second, &b)]);
}

/// Prints how long B's call took: from A's result reaching A's model
/// (when B's gate opened) to B's result reaching B's.
fn report_wait(what: &str, first: &Model, second: &Model) {
    if let (Some(opened), Some(done)) = (first.turn(1), second.turn(1)) {
        let took = done.at.duration_since(opened.at).unwrap_or_default();
        eprintln!("host: claude {what} took {} ms", took.as_millis());
    }
}

/// Claude Code and Codex in one project at once, as one user runs them:
/// each reaches the one daemon (Codex's MCP server with the few variables
/// Codex gives it), one pyright serves both, both sessions are on the
/// dashboard, and Codex's patch of the file Claude Code just edited waits
/// for Claude Code's lease (or is refused naming it).
#[test]
fn claude_code_and_codex_share_one_daemon_and_respect_each_others_lease() {
    let what = "claude and codex";
    let _watchdog = Watchdog::arm(what, TEST_LIMIT);
    let (_dir, root) = python_project();
    let Some(claude) = Installed::new(Host::Claude, &[&root]) else {
        return;
    };
    let Some(codex) = Installed::beside(&claude, Host::Codex, &[&root]) else {
        return;
    };
    let mathutil = root.join("pkg/mathutil.py");
    let swapped = "    return b + a";
    let first = Model::start(Host::Claude.api(), "claude beside codex");
    let second = Model::start(Host::Codex.api(), "codex beside claude");
    // Claude Code edits, then stays in its turn until Codex's patch is
    // done; Codex looks at the dashboard once Claude Code's edit is done,
    // then patches the same line while Claude Code's lease lasts.
    let world = claude.daemon.clone();
    let dashboard = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let seen = dashboard.clone();
    let claude_done = gate(&first, 2);
    first.script([
        Step::edit(&mathutil, RETURN, swapped),
        Step::text("Done.").after(gate(&second, 3)),
    ]);
    let mut script = vec![
        Step::mcp(
            "hover",
            json!({"file": "pkg/app.py", "line": 3, "symbol": "add"}),
        )
        .after(move || {
            claude_done();
            *seen.lock().unwrap() = top_once(&world);
        }),
    ];
    script.extend([Step::edit(&mathutil, swapped, RETURN), Step::text("Done.")]);
    second.script(script);
    let a = claude.start(&root, &first, &[]);
    let b = codex.start(&root, &second, &[]);
    let (a, b) = (a.finish(), b.finish());

    let mut checks = Checks::new(what);
    let top = dashboard.lock().unwrap().clone();
    let claude_session = session_id(&a).unwrap_or_default();
    checks.that(
        "the dashboard lists both hosts' sessions, one of them Claude Code's",
        top.contains("claude-code") && top.contains("codex-mcp-client"),
        &top,
    );
    let codex_session = thread_id(&b).unwrap_or_default();
    let listed = world_windlass(&claude, &["list"]);
    checks.that(
        "both hosts' session ids name their sessions in `list`",
        !codex_session.is_empty()
            && listed.contains(&codex_session)
            && listed.contains(&claude_session),
        &format!("codex session {codex_session:?}\n{listed}"),
    );
    let pyright_lines = top
        .lines()
        .filter(|line| line.contains("pyright-langserver"))
        .count();
    checks.that("one pyright serves both sessions", pyright_lines == 1, &top);
    let hover = result(&second, 0);
    checks.that(
        "Codex's hover answers from the shared daemon",
        squashed(&hover.text).contains("defadd(a:int,b:int)->int"),
        &shown(&hover),
    );
    let patched = result(&second, 1);
    let leases = world_events(&claude, "lock_acquired");
    let waited = leases.contains(&format!("\"waited_on\":\"{claude_session}\""));
    let refused = patched.is_error && patched.text.contains(&claude_session);
    checks.that(
        "Codex's patch waited for Claude Code's lease, or was refused naming it",
        !claude_session.is_empty() && (waited || refused),
        &format!("{}\nleases: {leases}", shown(&patched)),
    );
    checks.finish_in(&[(&first, &a), (&second, &b)], &claude.daemon);
}

/// The thread id Codex's JSON events carry: the session id its hooks get.
fn thread_id(run: &Finished) -> Option<String> {
    run.events
        .iter()
        .find_map(|(_, event)| event["thread_id"].as_str())
        .map(str::to_owned)
}

/// `windlass ARGS` in the hosts' world, its output.
fn world_windlass(installed: &Installed, args: &[&str]) -> String {
    let output = std::process::Command::new(common::windlass_binary())
        .args(args)
        .envs(installed.daemon.environment())
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `windlass top --once` in the hosts' world.
fn top_once(world: &common::Daemon) -> String {
    let output = std::process::Command::new(common::windlass_binary())
        .args(["top", "--once"])
        .envs(world.environment())
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The world's recorded events of `kind`, as compact JSON.
fn world_events(installed: &Installed, kind: &str) -> String {
    let text = world_windlass(
        installed,
        &["query", "--kind", kind, "--format", "json", "--since", "1h"],
    );
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) => value.to_string(),
        Err(_) => text,
    }
}
