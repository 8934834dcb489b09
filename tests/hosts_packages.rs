//! A host whose user has no `windlass` on PATH, as most of the hosts'
//! users are: the plugin's launcher fetches the windlass-mcp package
//! through npx (from a loopback registry serving what `scripts/dist.py`
//! packed) and runs it, for the MCP server and for every hook; with
//! neither windlass nor npx nor uvx, the host's own MCP status says why.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::host::{Host, Installed, Watchdog};
use common::model::{Model, Step};
use common::registry::Registry;
use common::scenario::*;
use common::{Daemon, skip, which};
use serde_json::json;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The npm packages `scripts/dist.py` made, or why there are none.
fn packed() -> Option<PathBuf> {
    let packed = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/dist/npm");
    if !packed.is_dir() {
        skip("target/dist/npm is missing: `python3 scripts/dist.py` makes it (.ci/run does)");
        return None;
    }
    Some(packed)
}

/// This machine's PATH without any directory holding a `windlass`.
fn path_without_windlass() -> OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept =
        std::env::split_paths(&path).filter(|directory| !directory.join("windlass").exists());
    std::env::join_paths(kept).unwrap()
}

#[test]
fn claude_code_without_windlass_on_path_fetches_it_through_npx() {
    let what = "claude through npx";
    let _watchdog = Watchdog::arm(what, TEST_LIMIT);
    let Some(packed) = packed() else {
        return;
    };
    let version = env!("CARGO_PKG_VERSION");
    let registry = Registry::serve(&packed, version);
    let (_dir, root) = python_project();
    let mut world = Daemon::at_home();
    world.env.extend([
        (
            "PATH".to_owned(),
            path_without_windlass().to_string_lossy().into_owned(),
        ),
        ("npm_config_registry".to_owned(), registry.url.clone()),
        ("npm_config_update_notifier".to_owned(), "false".to_owned()),
    ]);
    let Some(claude) = Installed::in_home(Host::Claude, &[&root], world) else {
        return;
    };
    let mathutil = root.join("pkg/mathutil.py");
    let model = Model::start(Host::Claude.api(), what);
    let mut script = Host::Claude.prepare_edits(&[&mathutil]);
    script.extend(Host::Claude.load("hover"));
    let hover = script.len();
    script.extend([
        Step::mcp(
            "hover",
            json!({"file": "pkg/app.py", "line": 3, "symbol": "add"}),
        ),
        Step::mcp("status", json!({})),
        Step::edit(&mathutil, RETURN, BAD_RETURN),
        Step::text("Done."),
    ]);
    let (status, broken) = (hover + 1, hover + 2);
    model.script(script);
    let run = claude.run(&root, &model, &[]);

    let mut checks = Checks::new(what);
    let answer = result(&model, hover);
    checks.that(
        "hover answers from the windlass npx fetched",
        squashed(&answer.text).contains("defadd(a:int,b:int)->int"),
        &shown(&answer),
    );
    let answer = result(&model, status);
    let daemon = answer
        .text
        .split("daemon pid ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).ok());
    let platform = format!("windlass-mcp-linux-x64-gnu-{version}.tgz");
    checks.that(
        "the daemon is the binary of the platform package npx fetched",
        daemon.as_ref().is_some_and(|exe| {
            exe.ends_with("node_modules/windlass-mcp-linux-x64-gnu/bin/windlass")
        }) && registry.tarballs_fetched().contains(&platform),
        &format!(
            "{daemon:?}, fetched {:?}\n{}",
            registry.tarballs_fetched(),
            answer.text
        ),
    );
    let answer = result(&model, broken);
    checks.that(
        "the hooks run it too: the breaking edit's result comes with the error",
        answer
            .context
            .contains(r#"is not assignable to return type "int""#),
        &shown(&answer),
    );
    checks.finish_in(&[(&model, &run)], &claude.daemon);
}

#[test]
fn claude_code_with_no_way_to_run_windlass_says_why_in_its_mcp_list() {
    let _watchdog = Watchdog::arm("claude mcp list", TEST_LIMIT);
    // Claude Code and what its plugin's launcher uses; no npx, no uvx.
    let bin = tempfile::tempdir().unwrap();
    for command in ["claude", "node", "sh", "sed", "cat", "mkdir", "tail", "env"] {
        let Some(found) = which(command) else {
            return skip(&format!("{command} is not on PATH"));
        };
        std::os::unix::fs::symlink(found, bin.path().join(command)).unwrap();
    }
    let (_dir, root) = python_project();
    let mut world = Daemon::at_home();
    world
        .env
        .push(("PATH".to_owned(), bin.path().display().to_string()));
    let Some(claude) = Installed::in_home(Host::Claude, &[&root], world) else {
        return;
    };
    let listed = claude.output(&["mcp", "list"], &root.display().to_string());
    let printed = String::from_utf8_lossy(&listed.stdout);
    let why = format!(
        "windlass: not on PATH, and neither npx nor uvx is there to fetch it: install it with \
         'npm install -g windlass-mcp@{0}' or 'pipx install windlass-mcp=={0}'",
        env!("CARGO_PKG_VERSION")
    );
    assert!(
        printed
            .lines()
            .any(|line| line.contains("Failed to connect") && line.contains(&why)),
        "{printed}\n{}",
        String::from_utf8_lossy(&listed.stderr)
    );
}
