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
    assert_eq!(plugin["mcpServers"]["windlass"]["command"], "windlass");
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
    assert_eq!(manifest["mcpServers"]["windlass"]["command"], "windlass");
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
        runs_quietly(&format!("windlass {}", words.join(" ")));
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
                runs_quietly(command);
            }
        }
    }
}

/// A hook command with nothing on stdin and no session: exits 0, says
/// nothing (a flag it does not know would exit 2).
fn runs_quietly(command: &str) {
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[0], "windlass", "{command}");
    let state = tempfile::tempdir().unwrap();
    let output = run_hook(state.path(), &words[1..], "{}");
    assert!(output.status.success(), "{command}: {output:?}");
    assert!(output.stdout.is_empty(), "{command}: {output:?}");
}
