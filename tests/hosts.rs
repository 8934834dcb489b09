//! Windlass inside each real agent host (Claude Code, Gemini CLI, Codex,
//! Copilot CLI, OpenCode, Qwen Code), installed as a user installs it,
//! run non-interactively against a scripted model served on loopback in
//! the host's own API. Each test asserts on what reached the model: the
//! hooks' diagnostics next to an edit's result (the host's own edit tool,
//! and its `apply_patch` of several files where it has one), the MCP
//! tools' answers, roots that follow the host's directories, and Windlass
//! reached over MCP streamable HTTP as the README tells a user to add it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::host::{Host, Installed, Watchdog};
use common::http::Endpoint;
use common::model::{Model, Step};
use common::project;
use common::scenario::*;
use serde_json::json;

#[test]
fn claude_code_shows_diagnostics_after_edits_and_answers_hover() {
    edit_loop(Host::Claude, "claude edit loop");
}

#[test]
fn gemini_cli_shows_diagnostics_after_edits_and_answers_hover() {
    edit_loop(Host::Gemini, "gemini edit loop");
}

#[test]
fn codex_shows_diagnostics_after_edits_and_answers_hover() {
    edit_loop(Host::Codex, "codex edit loop");
}

#[test]
fn copilot_cli_shows_diagnostics_after_edits_and_answers_hover() {
    edit_loop(Host::Copilot, "copilot edit loop");
}

#[test]
fn opencode_shows_diagnostics_after_edits_and_answers_hover() {
    edit_loop(Host::Opencode, "opencode edit loop");
}

#[test]
fn qwen_code_shows_diagnostics_after_edits_and_answers_hover() {
    edit_loop(Host::Qwen, "qwen edit loop");
}

/// A hover through the host's MCP client, an edit that breaks the return
/// type, the edit that fixes it, and a clean edit: the hover answers with
/// pyright's signature, the first edit's result comes with the error's
/// line and message, the second's with "fixed", the third's with nothing.
fn edit_loop(host: Host, what: &'static str) {
    let _watchdog = Watchdog::arm(what, TEST_LIMIT);
    let (_dir, root) = python_project();
    let Some(installed) = Installed::new(host, &[&root]) else {
        return;
    };
    let mathutil = root.join("pkg/mathutil.py");
    let app = root.join("pkg/app.py");
    let mut script = host.prepare_edits(&[&mathutil, &app]);
    script.extend(host.load("hover"));
    let hover = script.len();
    script.extend([
        Step::mcp(
            "hover",
            json!({"file": "pkg/app.py", "line": 3, "symbol": "add"}),
        ),
        Step::edit(&mathutil, RETURN, BAD_RETURN),
        Step::edit(&mathutil, BAD_RETURN, RETURN),
        Step::edit(&app, APP_CALL, CLEAN_CALL),
        Step::text("Done."),
    ]);
    let (broken, fixed, clean) = (hover + 1, hover + 2, hover + 3);
    let model = Model::start(host.api(), host.name());
    model.script(script);
    let run = installed.run(&root, &model, &[]);

    let mut checks = Checks::new(what);
    let answer = result(&model, hover);
    checks.that(
        "hover answers with pyright's signature of add",
        !answer.is_error && squashed(&answer.text).contains("defadd(a:int,b:int)->int"),
        &shown(&answer),
    );
    let answer = result(&model, broken);
    checks.that(
        "the breaking edit's result comes with the error at 2:12 and its message",
        answer.context.contains("2:12")
            && answer
                .context
                .contains(r#"is not assignable to return type "int""#),
        &shown(&answer),
    );
    let answer = result(&model, fixed);
    checks.that(
        "the fixing edit's result comes with \"fixed: no errors left in\"",
        answer.context.contains("fixed: no errors left in")
            && answer.context.contains("mathutil.py"),
        &shown(&answer),
    );
    let answer = result(&model, clean);
    checks.that(
        "the clean edit's result comes with nothing about its file",
        // Claude Code carries earlier hooks' context along in later
        // messages: only what names app.py is this edit's.
        !answer.is_error
            && !answer.context.contains("app.py after the edit")
            && !answer
                .context
                .contains(&format!("left in {}", app.display())),
        &shown(&answer),
    );
    checks.finish_in(&[(&model, &run)], &installed.daemon);
}

/// The call in `pkg/app.py`, and the same call written another way.
const APP_CALL: &str = "total: int = add(1, 2)";
const CLEAN_CALL: &str = "total: int = add(2, 1)";

#[test]
fn codex_patch_of_several_files_is_answered_for_each() {
    patch_loop(Host::Codex, "codex patch");
}

#[test]
fn opencode_patch_of_several_files_is_answered_for_each() {
    patch_loop(Host::Opencode, "opencode patch");
}

#[test]
fn copilot_cli_patch_of_several_files_is_answered_for_each() {
    patch_loop(Host::Copilot, "copilot patch");
}

/// One `apply_patch` that breaks `mathutil.py` and adds a file with an
/// error of its own, then one that fixes the first and deletes the second:
/// the first result names both files' errors, the second says "fixed".
fn patch_loop(host: Host, what: &'static str) {
    let _watchdog = Watchdog::arm(what, TEST_LIMIT);
    let (_dir, root) = python_project();
    let Some(installed) = Installed::new(host, &[&root]) else {
        return;
    };
    let mathutil = root.join("pkg/mathutil.py");
    let extra = root.join("pkg/extra.py");
    let breaking = format!(
        "*** Begin Patch\n*** Update File: {}\n@@\n-{RETURN}\n+{BAD_RETURN}\n\
         *** Add File: {}\n+def three() -> int:\n+    return \"3\"\n*** End Patch\n",
        mathutil.display(),
        extra.display()
    );
    let fixing = format!(
        "*** Begin Patch\n*** Update File: {}\n@@\n-{BAD_RETURN}\n+{RETURN}\n\
         *** Delete File: {}\n*** End Patch\n",
        mathutil.display(),
        extra.display()
    );
    let model = Model::start(host.api(), host.name());
    model.script([
        Step::patch(&breaking, &mathutil),
        Step::patch(&fixing, &mathutil),
        Step::text("Done."),
    ]);
    let run = installed.run(&root, &model, &[common::host::PATCHING]);

    let mut checks = Checks::new(what);
    let answer = result(&model, 0);
    checks.that(
        "the patch's result names the error of each file it wrote",
        answer.context.contains("mathutil.py after the edit")
            && answer.context.contains("extra.py after the edit")
            && answer
                .context
                .matches("is not assignable to return type")
                .count()
                >= 2,
        &shown(&answer),
    );
    let answer = result(&model, 1);
    checks.that(
        "the fixing patch's result says fixed, and nothing of the deleted file",
        answer.context.contains("fixed: no errors left in")
            && !answer.context.contains("extra.py after the edit"),
        &shown(&answer),
    );
    checks.finish_in(&[(&model, &run)], &installed.daemon);
}

#[test]
fn claude_code_added_directory_becomes_a_root() {
    added_directory(Host::Claude, "--add-dir", "claude added directory");
}

#[test]
fn gemini_cli_included_directory_becomes_a_root() {
    added_directory(
        Host::Gemini,
        "--include-directories",
        "gemini included directory",
    );
}

/// The host starts with a second directory (`flag DIR`), and a Windlass
/// tool answers about a file in it: the session's roots followed.
fn added_directory(host: Host, flag: &str, what: &'static str) {
    let _watchdog = Watchdog::arm(what, TEST_LIMIT);
    let (_dir, root) = python_project();
    let extra_dir = project(&[("other.py", "def f() -> int:\n    return \"x\"\n")]);
    let extra = extra_dir.path().canonicalize().unwrap();
    let Some(installed) = Installed::new(host, &[&root, &extra]) else {
        return;
    };
    let other = extra.join("other.py");
    let mut script = host.load("diagnostics");
    let asked = script.len();
    script.extend([
        Step::mcp("diagnostics", json!({"file": other})),
        Step::text("Done."),
    ]);
    let model = Model::start(host.api(), host.name());
    model.script(script);
    let run = installed.run(&root, &model, &[flag, &extra.display().to_string()]);

    let mut checks = Checks::new(what);
    let answer = result(&model, asked);
    checks.that(
        &format!("diagnostics answers for a file of the directory given to {flag}"),
        !answer.is_error
            && answer
                .text
                .contains(r#"is not assignable to return type "int""#),
        &shown(&answer),
    );
    checks.finish(&[(&model, &run)]);
}

/// Windlass added to Claude Code as an HTTP server with the bearer token,
/// as the README says: a hover and the diagnostics of a broken file reach
/// the model from the endpoint's session, which the host's roots root.
#[test]
fn claude_code_reaches_windlass_over_http() {
    let (host, what) = (Host::Claude, "claude over http");
    let _watchdog = Watchdog::arm(what, TEST_LIMIT);
    let (_dir, root) = python_project();
    let Some(installed) = Installed::new(host, &[&root]) else {
        return;
    };
    std::fs::write(
        root.join("pkg/mathutil.py"),
        MATHUTIL.replace(RETURN, BAD_RETURN),
    )
    .unwrap();
    let endpoint = Endpoint::start(&[]);
    let header = format!("Authorization: Bearer {}", endpoint.token());
    installed.add_http_server(HTTP_SERVER, &endpoint.url(), &header, &root);
    let mut script = vec![Step::tool_search(&format!(
        "select:mcp__{HTTP_SERVER}__hover,mcp__{HTTP_SERVER}__diagnostics"
    ))];
    let hover = script.len();
    script.extend([
        Step::mcp_on(
            HTTP_SERVER,
            "hover",
            json!({"file": "pkg/app.py", "line": 3, "symbol": "add"}),
        ),
        Step::mcp_on(
            HTTP_SERVER,
            "diagnostics",
            json!({"file": "pkg/mathutil.py"}),
        ),
        Step::text("Done."),
    ]);
    let model = Model::start(host.api(), host.name());
    model.script(script);
    let run = installed.run(&root, &model, &[]);

    let mut checks = Checks::new(what);
    let answer = result(&model, hover);
    checks.that(
        "hover over HTTP answers with pyright's signature of add",
        !answer.is_error && squashed(&answer.text).contains("defadd(a:int,b:int)->int"),
        &shown(&answer),
    );
    let answer = result(&model, hover + 1);
    checks.that(
        "diagnostics over HTTP report the error at 2:12",
        !answer.is_error && answer.text.contains("2:12 error"),
        &shown(&answer),
    );
    let sessions = endpoint.windlass(&["list"]);
    checks.that(
        "the endpoint's session is listed over http with the host as its client",
        sessions.contains("over http") && sessions.contains("client claude-code"),
        &sessions,
    );
    checks.finish(&[(&model, &run)]);
}

/// The name Claude Code is told the endpoint's server by, beside the
/// plugin's.
const HTTP_SERVER: &str = "windlass-http";

/// The plugin as Claude Code's own validator sees it: nothing to report
/// on the plugin, and at the repository root no error (the root's
/// `hooks/hooks.json` is Gemini CLI's, whose events Claude Code does not
/// know: warnings only).
#[test]
fn claude_plugin_validate_finds_no_problem() {
    let _watchdog = Watchdog::arm("plugin validate", TEST_LIMIT);
    let Some(installed) = Installed::new(Host::Claude, &[]) else {
        return;
    };
    let repository = common::host::repository();
    let shown = |output: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    };
    let plugin = repository.join("plugins/windlass").display().to_string();
    let validated = installed.output(&["plugin", "validate", &plugin], &plugin);
    let text = shown(&validated);
    assert!(validated.status.success(), "{text}");
    assert!(text.contains("found nothing to report"), "{text}");
    let root = repository.display().to_string();
    let validated = installed.output(&["plugin", "validate", &root], &root);
    let text = shown(&validated);
    assert!(validated.status.success(), "{text}");
    assert!(!text.contains('✘'), "{text}");
    for warning in text.lines().filter(|line| line.contains('❯')) {
        assert!(warning.contains("unknown hook event"), "{text}");
    }
}
