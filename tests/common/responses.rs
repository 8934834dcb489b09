//! The OpenAI Responses API as Codex speaks it, for the scripted model:
//! every request is the main loop's (`POST …/responses`), a step is one
//! output item streamed as `response.output_item.done` and then
//! `response.completed`, and a tool's result is the `*_call_output` item
//! with its call id; what Codex's hooks added comes as developer
//! messages between the call and its output.

use super::model::{Action, Response, ToolResult};
use serde_json::{Value, json};
use std::path::Path;

pub fn is_main(path: &str, _body: &Value) -> bool {
    path.ends_with("/responses")
}

fn call_id(turn: usize) -> String {
    format!("call_scripted_{turn}")
}

/// A main-loop answer: the action as one output item.
pub fn answer(action: &Action, turn: usize) -> Response {
    let id = call_id(turn);
    let item = match action {
        Action::Text(text) => json!({
            "type": "message", "role": "assistant", "id": format!("msg_{turn}"),
            "content": [{"type": "output_text", "text": text}],
        }),
        Action::Edit { file, old, new } => patch_call(&id, turn, &update(file, old, new)),
        Action::Patch { patch, .. } => patch_call(&id, turn, patch),
        // Codex calls an MCP tool in its server's namespace.
        Action::Mcp {
            server,
            tool,
            arguments,
        } => json!({
            "type": "function_call", "id": format!("fc_{turn}"), "call_id": id,
            "name": tool,
            "namespace": format!("mcp__{}", server.as_deref().unwrap_or("windlass")),
            "arguments": arguments.to_string(),
        }),
        Action::ToolSearch { query } => json!({
            "type": "tool_search_call", "call_id": id, "execution": "client",
            "arguments": {"query": query, "limit": 5},
        }),
        Action::Read { .. } => panic!("Codex reads through its shell: no read tool"),
    };
    let events = [
        json!({"type": "response.created", "response": {"id": format!("resp_{turn}")}}),
        json!({"type": "response.output_item.done", "item": item}),
        json!({"type": "response.completed", "response": {"id": format!("resp_{turn}"),
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 15}}}),
    ];
    Response::events(events.into_iter().map(|event| {
        format!(
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().unwrap()
        )
    }))
}

/// Codex's `apply_patch`: a freeform tool whose input is the patch.
fn patch_call(id: &str, turn: usize, patch: &str) -> Value {
    json!({
        "type": "custom_tool_call", "id": format!("ctc_{turn}"), "call_id": id,
        "name": "apply_patch", "input": patch,
    })
}

/// A patch that replaces `old` with `new` in `file`.
pub fn update(file: &Path, old: &str, new: &str) -> String {
    let lines = |prefix: char, text: &str| -> String {
        text.lines()
            .map(|line| format!("{prefix}{line}\n"))
            .collect()
    };
    format!(
        "*** Begin Patch\n*** Update File: {}\n@@\n{}{}*** End Patch\n",
        file.display(),
        lines('-', old),
        lines('+', new)
    )
}

/// The result of the call made at `turn`, from a later request: its
/// output item, and as context the developer messages between the call
/// and the output (the hooks' additional context).
pub fn tool_result(body: &Value, turn: usize) -> Option<ToolResult> {
    let id = call_id(turn);
    let items = body["input"].as_array()?;
    let call = items
        .iter()
        .position(|item| item["call_id"] == *id && kind_ends(item, "_call"))?;
    let output = call
        + items[call..]
            .iter()
            .position(|item| item["call_id"] == *id && kind_ends(item, "_output"))?;
    let context = items[call + 1..output]
        .iter()
        .filter(|item| item["type"] == "message" && item["role"] == "developer")
        .flat_map(|item| texts(&item["content"]))
        .collect::<Vec<_>>()
        .join("\n");
    let result = &items[output];
    let text = match &result["output"] {
        Value::String(text) => text.clone(),
        parts => texts(parts).join("\n"),
    };
    let tools = result["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|namespace| {
            let prefix = namespace["name"].as_str().unwrap_or_default().to_owned();
            namespace["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(move |tool| Some(format!("{prefix}__{}", tool["name"].as_str()?)))
        })
        .collect();
    Some(ToolResult {
        is_error: text.contains("blocked by PreToolUse hook"),
        context,
        tools,
        text,
    })
}

fn kind_ends(item: &Value, suffix: &str) -> bool {
    item["type"]
        .as_str()
        .is_some_and(|kind| kind.ends_with(suffix))
}

fn texts(content: &Value) -> Vec<String> {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|part| part["text"].as_str().map(str::to_owned))
        .collect()
}
