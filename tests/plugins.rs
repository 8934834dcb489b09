//! The hosts' packages (the Claude Code plugin, which Copilot CLI installs
//! too, Codex's plugin in the same directory, the Gemini CLI and Qwen Code
//! extensions, the OpenCode plugin module): their versions follow
//! Cargo.toml, their files keep to the fields each host documents (Claude
//! Code rejects keys it does not know in a hooks file), their timeouts
//! are in each host's unit and longer than the hook's own wait, and every
//! hook command they name runs.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::Value;
use std::path::PathBuf;

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn json(path: &str) -> Value {
    let path = repository().join(path);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn cargo_version() -> String {
    let manifest = std::fs::read_to_string(repository().join("Cargo.toml")).unwrap();
    let manifest: toml::Table = manifest.parse().unwrap();
    manifest["workspace"]["package"]["version"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Fails naming any key of `object` outside `allowed`, and any required
/// key missing.
fn keys_within(what: &str, object: &Value, allowed: &[&str], required: &[&str]) {
    let object = object
        .as_object()
        .unwrap_or_else(|| panic!("{what} is not an object"));
    for key in object.keys() {
        assert!(
            allowed.contains(&key.as_str()),
            "{what}: unknown key {key:?}"
        );
    }
    for key in required {
        assert!(object.contains_key(*key), "{what}: missing {key:?}");
    }
}

#[test]
fn every_manifest_carries_the_crates_version() {
    let version = cargo_version();
    let plugin = json("plugins/windlass/.claude-plugin/plugin.json");
    let marketplace = json(".claude-plugin/marketplace.json");
    let gemini = json("gemini-extension.json");
    assert_eq!(plugin["version"], version.as_str(), "plugin.json");
    assert_eq!(
        marketplace["plugins"][0]["version"],
        version.as_str(),
        "marketplace.json"
    );
    assert_eq!(gemini["version"], version.as_str(), "gemini-extension.json");
    let codex = json("plugins/windlass/.codex-plugin/plugin.json");
    assert_eq!(codex["version"], version.as_str(), "Codex's plugin.json");
    let qwen = json("qwen-extension.json");
    assert_eq!(qwen["version"], version.as_str(), "qwen-extension.json");
    let opencode = json("plugins/opencode/package.json");
    assert_eq!(
        opencode["version"],
        version.as_str(),
        "OpenCode's package.json"
    );
}

#[test]
fn the_codex_plugin_and_its_marketplace_keep_to_the_documented_fields() {
    let plugin = json("plugins/windlass/.codex-plugin/plugin.json");
    keys_within(
        "Codex's plugin.json",
        &plugin,
        &[
            "name",
            "version",
            "description",
            "mcpServers",
            "hooks",
            "interface",
            "skills",
            "apps",
        ],
        &["name", "version"],
    );
    // Codex expands no variable in a plugin's servers: the launcher is
    // found where Codex keeps the plugins it installed.
    let server = &plugin["mcpServers"]["windlass"];
    assert_eq!(server["command"], "sh");
    assert_eq!(server["args"][0], "-c");
    let script = server["args"][1].as_str().unwrap();
    let cached = format!(
        "/plugins/cache/*/windlass/{}/bin/run-windlass",
        cargo_version()
    );
    assert!(script.contains(&cached), "{script}");
    let hooks_file = plugin["hooks"].as_str().unwrap().trim_start_matches("./");
    assert_eq!(
        hooks_file, "hooks/codex.json",
        "beside Claude Code's hooks.json"
    );
    check_hooks(
        "Codex hooks",
        &json(&format!("plugins/windlass/{hooks_file}")),
        &["PreToolUse", "PostToolUse"],
        |timeout| (1..=600).contains(&timeout),
        1,
    );
    let marketplace = json(".agents/plugins/marketplace.json");
    keys_within(
        "Codex's marketplace.json",
        &marketplace,
        &["name", "interface", "plugins"],
        &["name", "plugins"],
    );
    let entry = &marketplace["plugins"][0];
    assert_eq!(entry["name"], plugin["name"]);
    assert_eq!(entry["source"]["source"], "local");
    assert_eq!(entry["source"]["path"], "./plugins/windlass");
}

#[test]
fn the_qwen_code_extension_carries_its_server_and_hooks() {
    let manifest = json("qwen-extension.json");
    keys_within(
        "qwen-extension.json",
        &manifest,
        &[
            "name",
            "version",
            "description",
            "mcpServers",
            "hooks",
            "contextFileName",
            "settings",
        ],
        &["name", "version", "mcpServers", "hooks"],
    );
    runs_the_launcher(&manifest["mcpServers"]["windlass"], QWEN_LAUNCHER);
    check_hooks(
        "Qwen Code hooks",
        &serde_json::json!({"hooks": manifest["hooks"]}),
        &["PreToolUse", "PostToolUse"],
        // Seconds: Qwen Code reads 1000 and more as milliseconds.
        |timeout| (1..1_000).contains(&timeout),
        1,
    );
}

#[test]
fn the_opencode_plugin_runs_each_hook_command_it_names() {
    let module =
        std::fs::read_to_string(repository().join("plugins/opencode/windlass.js")).unwrap();
    for command in [
        r#"["acquire", "--format", "opencode", "--timeout", "20"]"#,
        r#"["release", "--format", "opencode", "--grace", "3"]"#,
    ] {
        assert!(module.contains(command), "{command}");
        let words: Vec<String> = serde_json::from_str(command).unwrap();
        runs_quietly(
            "opencode",
            &words.iter().map(String::as_str).collect::<Vec<_>>(),
        );
    }
}

#[test]
fn the_claude_code_plugin_keeps_to_the_documented_fields() {
    let plugin = json("plugins/windlass/.claude-plugin/plugin.json");
    keys_within(
        "plugin.json",
        &plugin,
        &[
            "name",
            "version",
            "description",
            "author",
            "homepage",
            "repository",
            "license",
            "keywords",
            // Read by `claude plugin validate` (2.1.328): the hosts a
            // plugin reaches, and its listing icon.
            "network",
            "icon",
        ],
        &["name"],
    );
    let marketplace = json(".claude-plugin/marketplace.json");
    keys_within(
        "marketplace.json",
        &marketplace,
        &["name", "owner", "plugins", "metadata", "description"],
        &["name", "owner", "plugins"],
    );
    keys_within(
        "marketplace.json owner",
        &marketplace["owner"],
        &["name", "email", "url"],
        &["name"],
    );
    let listed = &marketplace["plugins"][0];
    keys_within(
        "marketplace.json plugin",
        listed,
        &["name", "source", "version", "description", "author"],
        &["name", "source"],
    );
    assert_eq!(listed["name"], plugin["name"]);
    let source = listed["source"].as_str().unwrap();
    assert!(
        repository()
            .join(source)
            .join(".claude-plugin/plugin.json")
            .exists(),
        "the marketplace points at the plugin: {source}"
    );
    let mcp = json("plugins/windlass/.mcp.json");
    keys_within(".mcp.json", &mcp, &["mcpServers"], &["mcpServers"]);
    keys_within(
        ".mcp.json server",
        &mcp["mcpServers"]["windlass"],
        &["command", "args", "env"],
        &["command"],
    );
    runs_the_launcher(&mcp["mcpServers"]["windlass"], CLAUDE_LAUNCHER);

    let hooks = json("plugins/windlass/hooks/hooks.json");
    let events = [
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "DirectoryAdded",
        "UserPromptSubmit",
    ];
    check_hooks(
        "Claude Code hooks.json",
        &hooks,
        &events,
        |timeout| {
            // Seconds, at most the default of 600.
            (1..=600).contains(&timeout)
        },
        1,
    );
}

#[test]
fn the_gemini_extension_keeps_to_the_documented_fields() {
    let manifest = json("gemini-extension.json");
    keys_within(
        "gemini-extension.json",
        &manifest,
        &[
            "name",
            "version",
            "description",
            "mcpServers",
            "contextFileName",
            "excludeTools",
            "settings",
        ],
        &["name", "version"],
    );
    let name = manifest["name"].as_str().unwrap();
    assert!(
        name.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
        "lowercase with dashes: {name}"
    );
    assert!(
        manifest.get("hooks").is_none(),
        "Gemini reads hooks only from hooks/hooks.json"
    );
    keys_within(
        "gemini mcp server",
        &manifest["mcpServers"]["windlass"],
        &["command", "args", "env", "cwd", "timeout"],
        &["command"],
    );
    runs_the_launcher(&manifest["mcpServers"]["windlass"], GEMINI_LAUNCHER);
    let hooks = json("hooks/hooks.json");
    check_hooks(
        "Gemini hooks.json",
        &hooks,
        &["BeforeTool", "AfterTool"],
        |timeout| {
            // Milliseconds: a second at least, at most ten minutes.
            (1_000..=600_000).contains(&timeout)
        },
        1_000,
    );
}

/// Each hook of `hooks`: documented keys only, a known event, a timeout
/// in the host's unit (`per_second` of them a second) longer than the
/// command's own `--timeout`, and a command that runs.
fn check_hooks(
    what: &str,
    hooks: &Value,
    events: &[&str],
    timeout_ok: impl Fn(u64) -> bool,
    per_second: u64,
) {
    keys_within(what, hooks, &["hooks"], &["hooks"]);
    for (event, entries) in hooks["hooks"].as_object().unwrap() {
        assert!(
            events.contains(&event.as_str()),
            "{what}: unknown event {event}"
        );
        for entry in entries.as_array().unwrap() {
            keys_within(
                &format!("{what} {event}"),
                entry,
                &["matcher", "hooks"],
                &["hooks"],
            );
            for hook in entry["hooks"].as_array().unwrap() {
                keys_within(
                    &format!("{what} {event} hook"),
                    hook,
                    &["type", "command", "timeout"],
                    &["type", "command"],
                );
                assert_eq!(hook["type"], "command");
                let command = hook["command"].as_str().unwrap();
                let timeout = hook["timeout"].as_u64().unwrap();
                assert!(timeout_ok(timeout), "{what} {event}: timeout {timeout}");
                let words: Vec<&str> = command.split_whitespace().collect();
                if let Some(at) = words.iter().position(|word| *word == "--timeout") {
                    let own: u64 = words[at + 1].parse().unwrap();
                    assert!(
                        own * per_second < timeout,
                        "{what} {event}: the wait ends before the host's timeout"
                    );
                }
                runs_quietly(what, &words);
            }
        }
    }
}

/// A hook command with nothing on stdin and no session: the host's
/// launcher with a hook's arguments, which exit 0 and say nothing (a
/// flag the hook does not know would exit 2).
fn runs_quietly(what: &str, words: &[&str]) {
    let arguments = match words {
        ["sh", launcher, arguments @ ..] => {
            let launcher = launcher.trim_matches('"');
            assert!(
                [CLAUDE_LAUNCHER, CODEX_LAUNCHER, GEMINI_LAUNCHER].contains(&launcher),
                "{what}: {launcher}"
            );
            arguments
        }
        // OpenCode's plugin module gives the arguments alone.
        arguments => arguments,
    };
    let state = tempfile::tempdir().unwrap();
    let output = run_hook(state.path(), arguments, "{}");
    assert!(output.status.success(), "{what} {words:?}: {output:?}");
    assert!(output.stdout.is_empty(), "{what} {words:?}: {output:?}");
}

/// The launcher as each host names it: where the host expands its
/// package's directory.
const CLAUDE_LAUNCHER: &str = "${CLAUDE_PLUGIN_ROOT}/bin/run-windlass";
const CODEX_LAUNCHER: &str = "${PLUGIN_ROOT}/bin/run-windlass";
const GEMINI_LAUNCHER: &str = "${extensionPath}/plugins/windlass/bin/run-windlass";
/// Qwen Code expands what Gemini CLI does.
const QWEN_LAUNCHER: &str = GEMINI_LAUNCHER;

/// An MCP server that is the launcher, run by `sh`: `windlass` from PATH
/// when its version fits, else the package through npx or uvx.
fn runs_the_launcher(server: &Value, launcher: &str) {
    assert_eq!(server["command"], "sh", "{server}");
    assert_eq!(server["args"], serde_json::json!([launcher]), "{server}");
}

/// The launcher asks for this version's package and accepts a
/// `windlass` of this minor version.
#[test]
fn the_launcher_names_the_crates_version() {
    let launcher =
        std::fs::read_to_string(repository().join("plugins/windlass/bin/run-windlass")).unwrap();
    let version = cargo_version();
    let minor = version.rsplit_once('.').unwrap().0;
    for line in [
        format!("accepts={minor}"),
        format!("package=windlass-mcp@{version}"),
        format!("python_package=windlass-mcp=={version}"),
    ] {
        assert!(launcher.lines().any(|said| said == line), "{line}");
    }
    let module =
        std::fs::read_to_string(repository().join("plugins/opencode/windlass.js")).unwrap();
    assert!(module.contains("\"../windlass/bin/run-windlass\""));
}
