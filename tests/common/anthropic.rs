//! The Anthropic Messages API as Claude Code speaks it, for the scripted
//! model: which requests are the main loop's (they carry the tools), a
//! step streamed as Server-Sent Events, the side requests answered, and a
//! tool's result read back from the request that carries it.

use super::model::{Action, Response, ToolResult};
use serde_json::{Value, json};

/// How the plugin's MCP tools are named in Claude Code: `mcp__plugin_`,
/// the plugin, its server.
pub const MCP_PREFIX: &str = "mcp__plugin_windlass_windlass__";

/// Claude Code sends the main loop's requests with its tools; side
/// requests (titles, quota checks, token counts) come without them.
pub fn is_main(path: &str, body: &Value) -> bool {
    path.starts_with("/v1/messages")
        && !path.contains("count_tokens")
        && body["tools"]
            .as_array()
            .is_some_and(|tools| !tools.is_empty())
}

/// The id of the tool call made at `turn`, by which its result is found.
fn call_id(turn: usize) -> String {
    format!("toolu_scripted_{turn}")
}

/// What the model says at a turn in Claude Code's terms.
enum Said<'a> {
    Call(String, Value),
    Text(&'a str),
}

/// Claude Code's tool and input for an action.
fn said(action: &Action) -> Said<'_> {
    match action {
        Action::Edit { file, old, new } => Said::Call(
            "Edit".to_owned(),
            json!({"file_path": file, "old_string": old, "new_string": new}),
        ),
        Action::Read { file } => Said::Call("Read".to_owned(), json!({"file_path": file})),
        Action::Mcp {
            server,
            tool,
            arguments,
        } => {
            let name = match server {
                Some(server) => format!("mcp__{server}__{tool}"),
                None => format!("{MCP_PREFIX}{tool}"),
            };
            Said::Call(name, arguments.clone())
        }
        Action::ToolSearch { query } => Said::Call(
            "ToolSearch".to_owned(),
            json!({"query": query, "max_results": 5}),
        ),
        Action::Text(text) => Said::Text(text),
        Action::Patch { .. } => panic!("Claude Code has no patch tool"),
    }
}

/// A main-loop answer: the action as one streamed message.
pub fn answer(action: &Action, turn: usize) -> Response {
    match said(action) {
        Said::Call(name, input) => streamed(
            json!({"type": "tool_use", "id": call_id(turn), "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            "tool_use",
        ),
        Said::Text(text) => streamed(
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
            "end_turn",
        ),
    }
}

/// Side requests: token counts get a count, messages a short text, as a
/// stream when one was asked for.
pub fn side(path: &str, body: &Value) -> Response {
    if path.contains("count_tokens") {
        return Response::json(&json!({"input_tokens": 1}));
    }
    if body["stream"] == true {
        return streamed(
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": "ok"}),
            "end_turn",
        );
    }
    Response::json(&json!({
        "id": "msg_scripted_side",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": null,
        "usage": usage(),
    }))
}

/// Small usage figures, so that the host never thinks its context full.
fn usage() -> Value {
    json!({"input_tokens": 10, "output_tokens": 5})
}

/// One message with one content block, as the API streams it.
fn streamed(block: Value, delta: Value, stop: &str) -> Response {
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {
                "id": "msg_scripted", "type": "message", "role": "assistant",
                "model": "claude-scripted", "content": [], "stop_reason": null,
                "stop_sequence": null, "usage": usage(),
            }}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 5}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    Response::events(
        events
            .iter()
            .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")),
    )
}

/// The result of the call made at `turn`, from a later request: the
/// `tool_result` block with its id, and as context every text after it
/// (Claude Code sends a hook's `additionalContext` as a message of its own
/// after the result).
pub fn tool_result(body: &Value, turn: usize) -> Option<ToolResult> {
    let id = call_id(turn);
    let messages = body["messages"].as_array()?;
    messages.iter().enumerate().find_map(|(index, message)| {
        let blocks = message["content"].as_array()?;
        let at = blocks
            .iter()
            .position(|block| block["type"] == "tool_result" && block["tool_use_id"] == *id)?;
        let result = &blocks[at];
        let context = blocks[at + 1..]
            .iter()
            .filter(|block| block["type"] == "text")
            .filter_map(|block| block["text"].as_str().map(str::to_owned))
            .chain(messages[index + 1..].iter().flat_map(texts))
            .collect::<Vec<_>>()
            .join("\n");
        Some(ToolResult {
            text: texts(result).join("\n"),
            context,
            is_error: result["is_error"] == true,
            tools: references(&result["content"]),
        })
    })
}

/// The texts of a message's (or a tool result's) content: a string, or
/// its text blocks.
fn texts(message: &Value) -> Vec<String> {
    match &message["content"] {
        Value::String(text) => vec![text.clone()],
        content => content
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str().map(str::to_owned))
            .collect(),
    }
}

/// The tools a ToolSearch result names (`tool_reference` blocks).
fn references(content: &Value) -> Vec<String> {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block["type"] == "tool_reference")
        .filter_map(|block| block["tool_name"].as_str().map(str::to_owned))
        .collect()
}
