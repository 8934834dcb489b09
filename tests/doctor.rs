//! `windlass doctor` on a machine built for the test: a PATH holding
//! only `windlass`, servers configured to be ready, missing, unrunnable
//! and failing to initialize, an untrusted project command, an installed
//! plugin that is current and an extension that is not.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Machine {
    home: tempfile::TempDir,
    bin: tempfile::TempDir,
    project: tempfile::TempDir,
}

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
}

fn machine() -> Machine {
    let home = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(windlass_binary(), bin.path().join("windlass")).unwrap();
    // The plugin's launcher reads a version with sed.
    std::os::unix::fs::symlink("/usr/bin/sed", bin.path().join("sed")).unwrap();
    let not_a_program = bin.path().join("not-a-program");
    std::fs::write(&not_a_program, [0u8, 1, 2, 3]).unwrap();
    std::fs::set_permissions(&not_a_program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mockls = mockls_binary().display().to_string();
    let config = format!(
        r#"
[server.mock]
command = "{mockls}"
languages = ["python"]

[server.gone]
command = "/nonexistent/bin/go-server"
languages = ["go"]

[server.garbled]
command = "{}"
languages = ["c"]

[server.crashing]
command = "{mockls}"
args = ["--crash-on", "initialize"]
languages = ["shellscript"]
"#,
        not_a_program.display()
    );
    let config_path = home.path().join("config/windlass/config.toml");
    std::fs::create_dir_all(config_path.parent().unwrap()).unwrap();
    std::fs::write(config_path, config).unwrap();
    let project = project(&[
        ("main.py", "x = 1\n"),
        (
            ".windlass.toml",
            "[server.rust]\ncommand = \"/usr/bin/true\"\nlanguages = [\"rust\"]\n",
        ),
    ]);
    // Claude Code's copy of the plugin, current; Gemini's, out of date.
    let plugin = repository().join("plugins/windlass");
    let installed = home
        .path()
        .join(".claude/plugins/cache/windlass/windlass/0.1.0");
    for file in [
        ".claude-plugin/plugin.json",
        ".mcp.json",
        "hooks/hooks.json",
        "bin/run-windlass",
    ] {
        copy(&plugin.join(file), &installed.join(file));
    }
    let extension = home.path().join(".gemini/extensions/windlass");
    copy(
        &repository().join("gemini-extension.json"),
        &extension.join("gemini-extension.json"),
    );
    std::fs::create_dir_all(extension.join("hooks")).unwrap();
    std::fs::write(extension.join("hooks/hooks.json"), r#"{"hooks": {}}"#).unwrap();
    // Copilot CLI and OpenCode load the plugins from the clone itself.
    let copilot = home.path().join(".copilot");
    std::fs::create_dir_all(&copilot).unwrap();
    let settings = serde_json::json!({
        "extraKnownMarketplaces": {"windlass": {"source": {"source": "directory", "path": repository()}}},
        "enabledPlugins": {"windlass@windlass": true},
    });
    std::fs::write(copilot.join("settings.json"), settings.to_string()).unwrap();
    let opencode = home.path().join("config/opencode");
    std::fs::create_dir_all(&opencode).unwrap();
    let module = format!("file:{}", repository().join("plugins/opencode").display());
    let config = serde_json::json!({"plugin": [module]});
    std::fs::write(opencode.join("opencode.jsonc"), config.to_string()).unwrap();
    Machine { home, bin, project }
}

fn doctor(machine: &Machine, args: &[&str]) -> Output {
    Command::new(windlass_binary())
        .arg("doctor")
        .arg("--root")
        .arg(machine.project.path())
        .args(args)
        .env("PATH", machine.bin.path())
        .env("HOME", machine.home.path())
        .env("XDG_CONFIG_HOME", machine.home.path().join("config"))
        .env("XDG_STATE_HOME", machine.home.path().join("state"))
        .env("WINDLASS_RUNTIME_DIR", machine.home.path().join("run"))
        .env_remove("WINDLASS_STATE_DIR")
        .output()
        .unwrap()
}

/// The check named `name` (a prefix) in section `section` of the report.
fn check<'a>(report: &'a Value, section: &str, name: &str) -> &'a Value {
    report["sections"][section]
        .as_array()
        .unwrap()
        .iter()
        .find(|check| check["name"].as_str().unwrap().starts_with(name))
        .unwrap_or_else(|| panic!("no {name} in {section}: {report:#}"))
}

#[test]
fn doctor_shows_each_server_and_hook_state_in_json_and_text() {
    let machine = machine();
    let output = doctor(&machine, &["--json"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "broken things fail: {output:?}"
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["broken"], true);
    let state = |section: &str, name: &str| {
        check(&report, section, name)["state"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(state("language servers", "mock"), "ready");
    let tools = &check(&report, "language servers", "mock")["tools"];
    assert!(
        tools.as_array().unwrap().contains(&Value::from("hover")),
        "{tools}"
    );
    assert_eq!(state("language servers", "gone"), "command not found");
    assert_eq!(state("language servers", "garbled"), "spawn failed");
    assert_eq!(state("language servers", "crashing"), "initialize failed");
    assert_eq!(
        state("language servers", "project configuration"),
        "untrusted project command skipped"
    );
    // A known server that is not installed breaks nothing.
    let typescript = check(&report, "language servers", "typescript");
    assert_eq!(typescript["state"], "command not found");
    assert_eq!(typescript["broken"], false);
    let detail = typescript["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("npm install -g typescript typescript-language-server"),
        "{typescript}"
    );
    assert_eq!(check(&report, "language servers", "gone")["broken"], true);
    assert_eq!(state("daemon", "daemon"), "not running");
    assert_eq!(state("hooks", "windlass on PATH"), "this binary");
    assert_eq!(
        state("hooks", "Claude Code plugin"),
        "installed, hooks current"
    );
    // Which windlass each plugin's launcher runs, and of which version.
    let runs = format!(
        "runs {} {} (PATH)",
        machine.bin.path().join("windlass").display(),
        env!("CARGO_PKG_VERSION")
    );
    for host in [
        "Claude Code plugin",
        "Copilot CLI plugin",
        "OpenCode plugin",
    ] {
        assert_eq!(state("hooks", host), "installed, hooks current");
        let plugin = check(&report, "hooks", host);
        assert!(
            plugin["detail"].as_str().unwrap().ends_with(&runs),
            "{plugin}"
        );
    }
    assert_eq!(
        state("hooks", "Gemini CLI extension"),
        "installed, hooks out of date"
    );
    assert_eq!(state("state", "store"), "healthy");

    let text = doctor(&machine, &["--nocolor"]);
    assert_eq!(text.status.code(), Some(1));
    let text = String::from_utf8(text.stdout).unwrap();
    for shown in [
        "ok   mock (python)",
        "FAIL gone (go)",
        "command not found",
        "FAIL garbled (c)",
        "spawn failed",
        "FAIL crashing (shellscript)",
        "initialize failed",
        "untrusted project command skipped",
        "installed, hooks out of date",
        "something is broken",
    ] {
        assert!(text.contains(shown), "{shown:?} in:\n{text}");
    }
    assert!(!text.contains('\x1b'), "no colour with --nocolor");
}

/// The machine with nothing broken: no configured servers, no project
/// configuration, no outdated extension.
fn sound_machine() -> Machine {
    let machine = machine();
    std::fs::remove_file(machine.home.path().join("config/windlass/config.toml")).unwrap();
    std::fs::remove_file(machine.project.path().join(".windlass.toml")).unwrap();
    std::fs::remove_dir_all(machine.home.path().join(".gemini")).unwrap();
    machine
}

#[test]
fn a_machine_with_nothing_broken_exits_0() {
    let machine = sound_machine();
    let output = doctor(&machine, &["--nocolor"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(text.contains("nothing is broken"), "{text}");
}

#[test]
fn a_daemon_that_cannot_record_is_reported_broken() {
    let daemon = Daemon::new();
    // A directory where the daemon's database file should be.
    std::fs::create_dir_all(daemon.dir.path().join("state/windlass/windlass.db")).unwrap();
    let dir = project(&[("main.py", "x = 1\n")]);
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let session = daemon.session(&args);
    session.wait_for_status(|status| status.contains("not recorded so far"));
    let output = Command::new(windlass_binary())
        .args(["doctor", "--json", "--root"])
        .arg(dir.path())
        .envs(daemon.environment())
        .env_remove("WINDLASS_STATE_DIR")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let daemon_check = check(&report, "daemon", "daemon");
    assert_eq!(
        daemon_check["state"], "running, not recording",
        "{daemon_check}"
    );
    assert_eq!(daemon_check["ok"], false, "{daemon_check}");
    assert!(
        daemon_check["detail"]
            .as_str()
            .unwrap()
            .contains("cannot be opened"),
        "{daemon_check}"
    );
}

/// A hook never fails its host, so a hook that fails says so nowhere the
/// user looks; doctor shows the last day's failures and the last reason.
#[test]
fn doctor_names_a_hook_that_failed_recently() {
    let machine = sound_machine();
    let edit = serde_json::json!({
        "session_id": "a-host-session-with-no-windlass",
        "cwd": machine.project.path(),
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": machine.project.path().join("main.py")},
    });
    let hook = run_hook(
        &machine.home.path().join("state"),
        &["release", "--format", "claude"],
        &edit.to_string(),
    );
    assert!(hook.status.success() && hook.stdout.is_empty(), "{hook:?}");
    let output = doctor(&machine, &["--json"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let runs = check(&report, "hooks", "hook runs");
    assert_eq!(runs["state"], "1 of 1 failed in the last day", "{runs}");
    let detail = runs["detail"].as_str().unwrap();
    assert!(
        detail.contains("release: no live windlass session for this host session or directory"),
        "{detail}"
    );
}
