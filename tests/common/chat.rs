//! The OpenAI Chat Completions API as Copilot CLI, OpenCode and Qwen Code
//! speak it, for the scripted model: the main loop's requests carry the
//! tools, a step is streamed as `chat.completion.chunk` events, and a
//! tool's result comes back as a `tool` message, with what the host's
//! hooks added appended to its text. Each host names its own tools: the
//! [`Dialect`].

use super::model::{Action, Response, ToolResult};
use serde_json::{Value, json};
use std::path::Path;

/// Whose tools the model calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Copilot,
    Opencode,
    Qwen,
}

/// A request with tools is the main loop's; a title request has none.
pub fn is_main(path: &str, body: &Value) -> bool {
    path.ends_with("/chat/completions")
        && body["tools"]
            .as_array()
            .is_some_and(|tools| !tools.is_empty())
}

fn call_id(turn: usize) -> String {
    format!("call_scripted_{turn}")
}

/// A side request gets a short text.
pub fn side() -> Response {
    streamed(
        &[
            json!({"role": "assistant", "content": ""}),
            json!({"content": "ok"}),
        ],
        "stop",
    )
}

/// A main-loop answer: the action as one streamed message.
pub fn answer(dialect: Dialect, action: &Action, turn: usize) -> Response {
    if let (Dialect::Copilot, Action::Patch { patch, .. }) = (dialect, action) {
        return custom_call(&call_id(turn), "apply_patch", patch);
    }
    let (name, arguments) = match call(dialect, action) {
        Some(call) => call,
        None => {
            let Action::Text(text) = action else {
                panic!("{dialect:?} has no tool for {action:?}")
            };
            return streamed(
                &[
                    json!({"role": "assistant", "content": ""}),
                    json!({"content": text}),
                ],
                "stop",
            );
        }
    };
    streamed(
        &[
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"index": 0, "id": call_id(turn), "type": "function",
                 "function": {"name": name, "arguments": ""}}]}),
            json!({"tool_calls": [{"index": 0, "function": {"arguments": arguments.to_string()}}]}),
        ],
        "tool_calls",
    )
}

/// A call of a freeform tool (Copilot CLI's `apply_patch` for GPT-5
/// models): its input is text, not JSON arguments.
fn custom_call(id: &str, name: &str, input: &str) -> Response {
    streamed(
        &[
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"index": 0, "id": id, "type": "custom",
                 "custom": {"name": name, "input": ""}}]}),
            json!({"tool_calls": [{"index": 0, "custom": {"input": input}}]}),
        ],
        "tool_calls",
    )
}

/// The host's tool and arguments for an action; `None` for a text.
fn call(dialect: Dialect, action: &Action) -> Option<(String, Value)> {
    let path = |file: &Path| file.display().to_string();
    Some(match (dialect, action) {
        (_, Action::Text(_)) => return None,
        (Dialect::Copilot, Action::Edit { file, old, new }) => (
            "edit".into(),
            json!({"path": path(file), "old_str": old, "new_str": new}),
        ),
        (Dialect::Copilot, Action::Read { file }) => ("view".into(), json!({"path": path(file)})),
        (Dialect::Opencode, Action::Edit { file, old, new }) => (
            "edit".into(),
            json!({"filePath": path(file), "oldString": old, "newString": new}),
        ),
        (Dialect::Opencode, Action::Read { file }) => {
            ("read".into(), json!({"filePath": path(file)}))
        }
        (Dialect::Opencode, Action::Patch { patch, .. }) => {
            ("apply_patch".into(), json!({"patchText": patch}))
        }
        (Dialect::Qwen, Action::Edit { file, old, new }) => (
            "edit".into(),
            json!({"file_path": path(file), "old_string": old, "new_string": new}),
        ),
        (Dialect::Qwen, Action::Read { file }) => {
            ("read_file".into(), json!({"file_path": path(file)}))
        }
        (
            Dialect::Copilot,
            Action::Mcp {
                tool, arguments, ..
            },
        ) => (format!("windlass-{tool}"), arguments.clone()),
        (
            Dialect::Opencode,
            Action::Mcp {
                tool, arguments, ..
            },
        ) => (format!("windlass_{tool}"), arguments.clone()),
        // Qwen Code defers MCP tools: they are called through its bridge.
        (
            Dialect::Qwen,
            Action::Mcp {
                tool, arguments, ..
            },
        ) => (
            "tool_call".into(),
            json!({"name": format!("mcp__windlass__{tool}"), "arguments": arguments}),
        ),
        (Dialect::Qwen, Action::ToolSearch { query }) => (
            "tool_search".into(),
            json!({"query": query, "max_results": 5}),
        ),
        (dialect, action) => panic!("{dialect:?} has no tool for {action:?}"),
    })
}

/// One assistant message as chunks: `deltas`, then the finish.
fn streamed(deltas: &[Value], finish: &str) -> Response {
    let chunk = |delta: &Value, finish: Option<&str>| {
        let mut chunk = json!({
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "scripted",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        if finish.is_some() {
            chunk["usage"] =
                json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15});
        }
        format!("data: {chunk}\n\n")
    };
    let events: Vec<String> = deltas
        .iter()
        .map(|delta| chunk(delta, None))
        .chain([
            chunk(&json!({}), Some(finish)),
            "data: [DONE]\n\n".to_owned(),
        ])
        .collect();
    Response::events(events.into_iter())
}

/// The result of the call made at `turn`: the `tool` message with its id.
/// The hooks' context is appended to its text, so it is both.
pub fn tool_result(body: &Value, turn: usize) -> Option<ToolResult> {
    let id = call_id(turn);
    let message = body["messages"]
        .as_array()?
        .iter()
        .find(|message| message["role"] == "tool" && message["tool_call_id"] == *id)?;
    let text = match &message["content"] {
        Value::String(text) => text.clone(),
        parts => parts
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let is_error = ["Denied by", "Blocked", "is being edited by another agent"]
        .iter()
        .any(|refusal| text.starts_with(refusal));
    Some(ToolResult {
        context: text.clone(),
        is_error,
        tools: found_tools(&text),
        text,
    })
}

/// The tools a tool search's result names, in its order: Qwen Code's
/// `tool_search` answers `<function>{"name": …}</function>` blocks.
fn found_tools(text: &str) -> Vec<String> {
    text.split("<function>")
        .skip(1)
        .filter_map(|block| block.split("</function>").next())
        .filter_map(|block| serde_json::from_str::<Value>(block).ok())
        .filter_map(|function| function["name"].as_str().map(str::to_owned))
        .collect()
}
