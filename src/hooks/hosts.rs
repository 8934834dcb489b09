//! What differs between the agent hosts whose hooks run Windlass, kept as
//! data: which of a host's tools read a file, which write one by a path
//! field, which carry a patch naming several, what its hook events are
//! called, and how it is told that a tool is refused. The hooks' code is
//! the same for every host; `--format` picks the description.

use clap::ValueEnum;
use serde_json::{Value, json};

/// The host whose JSON a hook speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Claude,
    Gemini,
    Codex,
    Copilot,
    Qwen,
    Opencode,
}

/// How a host is told that a tool may not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    /// `hookSpecificOutput.permissionDecision: "deny"` with its reason
    /// (Claude Code's PreToolUse, which Codex, Copilot CLI and Qwen Code
    /// read too).
    Permission,
    /// A top-level `decision: "deny"` with a `reason` (Gemini CLI's
    /// BeforeTool; the OpenCode plugin throws it as the tool's error).
    Decision,
}

/// Where a host reads the context a hook adds for the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Context {
    /// `hookSpecificOutput.additionalContext`.
    Nested,
    /// Also a top-level `additionalContext`: Copilot CLI reads only that
    /// one after a tool, even in a hook of Claude Code's format.
    TopLevelToo,
}

/// One host's description.
#[derive(Debug)]
pub struct Host {
    /// Its name in what another agent is told.
    pub name: &'static str,
    /// Tools that only read the file named by their path field.
    reads: &'static [&'static str],
    /// Tools that write the file named by their path field.
    writes: &'static [&'static str],
    /// Tools whose input is a patch (see `patch.rs`).
    patches: &'static [&'static str],
    /// Its hook events before and after a tool, for `hookEventName`.
    before: &'static str,
    after: &'static str,
    refusal: Refusal,
    context: Context,
}

const CLAUDE: Host = Host {
    name: "Claude Code",
    reads: &["Read"],
    writes: &["Edit", "Write", "MultiEdit", "NotebookEdit"],
    patches: &[],
    before: "PreToolUse",
    after: "PostToolUse",
    refusal: Refusal::Permission,
    context: Context::Nested,
};

const GEMINI: Host = Host {
    name: "Gemini CLI",
    reads: &["read_file"],
    writes: &["write_file", "replace"],
    patches: &[],
    before: "BeforeTool",
    after: "AfterTool",
    refusal: Refusal::Decision,
    context: Context::Nested,
};

const CODEX: Host = Host {
    name: "Codex",
    // Codex reads through shell commands: nothing a hook can tell apart.
    reads: &[],
    writes: &[],
    patches: &["apply_patch"],
    before: "PreToolUse",
    after: "PostToolUse",
    refusal: Refusal::Permission,
    context: Context::Nested,
};

const COPILOT: Host = Host {
    name: "Copilot CLI",
    reads: &["view", "Read"],
    writes: &["edit", "create", "Edit", "Write", "MultiEdit"],
    patches: &["apply_patch"],
    before: "PreToolUse",
    after: "PostToolUse",
    refusal: Refusal::Permission,
    context: Context::TopLevelToo,
};

const QWEN: Host = Host {
    name: "Qwen Code",
    reads: &["read_file"],
    writes: &["write_file", "edit", "replace"],
    patches: &[],
    before: "PreToolUse",
    after: "PostToolUse",
    refusal: Refusal::Permission,
    context: Context::Nested,
};

const OPENCODE: Host = Host {
    name: "OpenCode",
    reads: &["read"],
    writes: &["edit", "write"],
    patches: &["apply_patch", "patch"],
    before: "tool.execute.before",
    after: "tool.execute.after",
    refusal: Refusal::Decision,
    context: Context::Nested,
};

/// What a tool does to the files its input names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolKind {
    Read,
    Write,
    Patch,
}

impl Format {
    /// The host that runs this hook: Copilot CLI runs the hooks of a
    /// Claude Code plugin as they are, and says so in their environment.
    pub fn running(self) -> Format {
        let copilot = std::env::var_os("COPILOT_CLI").is_some_and(|value| value == "1");
        match self {
            Format::Claude if copilot => Format::Copilot,
            other => other,
        }
    }

    pub fn host(self) -> &'static Host {
        match self {
            Format::Claude => &CLAUDE,
            Format::Gemini => &GEMINI,
            Format::Codex => &CODEX,
            Format::Copilot => &COPILOT,
            Format::Qwen => &QWEN,
            Format::Opencode => &OPENCODE,
        }
    }
}

impl Host {
    /// What `tool` does, as far as this host's tools are known; an input
    /// that carries a patch is one whatever its tool is called (a shell
    /// command that runs `apply_patch`).
    pub fn kind(&self, tool: &str, input: Option<&Value>) -> Option<ToolKind> {
        if self.patches.contains(&tool) || input.and_then(patch_text).is_some() {
            return Some(ToolKind::Patch);
        }
        if self.reads.contains(&tool) {
            return Some(ToolKind::Read);
        }
        self.writes.contains(&tool).then_some(ToolKind::Write)
    }

    /// The hook event this answer is for, when the host did not say.
    pub fn event(&self, before: bool) -> &'static str {
        match before {
            true => self.before,
            false => self.after,
        }
    }

    /// The host's answer that adds `text` for the model, for hook event
    /// `event`.
    pub fn context(&self, event: &str, text: &str) -> Value {
        let mut answer = json!({
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": text}
        });
        if self.context == Context::TopLevelToo {
            answer["additionalContext"] = Value::from(text);
        }
        answer
    }

    /// The host's refusal of a tool, with the reason the agent reads.
    pub fn refusal(&self, reason: &str) -> Value {
        match self.refusal {
            Refusal::Permission => json!({
                "hookSpecificOutput": {
                    "hookEventName": self.before,
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            }),
            Refusal::Decision => json!({"decision": "deny", "reason": reason}),
        }
    }
}

/// The patch a tool's input carries: its whole text when it is a string,
/// else the first string field that holds one (`command`, `patchText`,
/// `input`, or a shell command's argument list).
pub fn patch_text(input: &Value) -> Option<String> {
    match input {
        Value::String(text) if text.contains(super::patch::BEGIN) => Some(text.clone()),
        Value::Array(items) => items.iter().find_map(patch_text),
        Value::Object(fields) => fields.values().find_map(patch_text),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_host_tells_reads_writes_and_patches_apart() {
        let patch = json!({"command": "*** Begin Patch\n*** Add File: a.py\n*** End Patch"});
        let codex = Format::Codex.host();
        assert_eq!(codex.kind("apply_patch", None), Some(ToolKind::Patch));
        assert_eq!(
            codex.kind(
                "Bash",
                Some(&json!({"command": ["apply_patch", patch["command"]]}))
            ),
            Some(ToolKind::Patch),
            "a shell command running apply_patch"
        );
        assert_eq!(codex.kind("Bash", Some(&json!({"command": "ls"}))), None);
        let copilot = Format::Copilot.host();
        assert_eq!(copilot.kind("view", None), Some(ToolKind::Read));
        assert_eq!(copilot.kind("create", None), Some(ToolKind::Write));
        assert_eq!(Format::Gemini.host().kind("Read", None), None);
        assert_eq!(
            Format::Opencode
                .host()
                .kind("apply_patch", Some(&json!({"patchText": ""}))),
            Some(ToolKind::Patch)
        );
    }

    #[test]
    fn refusals_take_each_host_s_shape() {
        let claude = Format::Claude.host().refusal("held");
        assert_eq!(claude["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            claude["hookSpecificOutput"]["permissionDecisionReason"],
            "held"
        );
        let gemini = Format::Gemini.host().refusal("held");
        assert_eq!(gemini, json!({"decision": "deny", "reason": "held"}));
    }
}
