//! The Gemini API as Gemini CLI speaks it, for the scripted model: which
//! requests are the main loop's (streamed, with the tools), a step as a
//! `GenerateContentResponse` chunk, the side requests answered (the model
//! router's classifier, loop detection, next-speaker checks: JSON that
//! fits the schema they ask for), and a tool's result read back.

use super::model::{Action, Response, ToolResult};
use serde_json::{Map, Value, json};

/// Gemini CLI streams the main loop's requests with its tools; its side
/// requests are `generateContent` and `countTokens` calls without them.
pub fn is_main(path: &str, body: &Value) -> bool {
    path.contains(":streamGenerateContent")
        && body["tools"]
            .as_array()
            .is_some_and(|tools| !tools.is_empty())
}

/// The id of the call made at `turn`; Gemini CLI echoes it in the
/// `functionResponse`.
fn call_id(turn: usize) -> String {
    format!("scripted_{turn}")
}

/// The action as a content part of Gemini CLI's tools.
fn part(action: &Action, turn: usize) -> Value {
    let (name, args) = match action {
        Action::Text(text) => return json!({"text": text}),
        Action::Edit { file, old, new } => (
            "replace".to_owned(),
            json!({"file_path": file, "old_string": old, "new_string": new, "instruction": "scripted edit"}),
        ),
        Action::Read { file } => ("read_file".to_owned(), json!({"file_path": file})),
        // Gemini CLI names an MCP tool `mcp_SERVER_TOOL`.
        Action::Mcp {
            server,
            tool,
            arguments,
        } => {
            let server = server.as_deref().unwrap_or("windlass");
            (format!("mcp_{server}_{tool}"), arguments.clone())
        }
        Action::ToolSearch { .. } => panic!("Gemini CLI has no ToolSearch"),
        Action::Patch { .. } => panic!("Gemini CLI has no patch tool"),
    };
    json!({"functionCall": {"id": call_id(turn), "name": name, "args": args}})
}

/// A main-loop answer: one chunk with the action.
pub fn answer(action: &Action, turn: usize) -> Response {
    Response::events(std::iter::once(chunk(part(action, turn))))
}

/// Side requests: a token count, or a text (JSON fitting the requested
/// schema when there is one), streamed when asked on the streaming path.
pub fn side(path: &str, body: &Value) -> Response {
    if path.contains(":countTokens") {
        return Response::json(&json!({"totalTokens": 1}));
    }
    let config = &body["generationConfig"];
    let schema = [&config["responseJsonSchema"], &config["responseSchema"]]
        .into_iter()
        .find(|schema| schema.is_object());
    let text = schema.map_or_else(|| "ok".to_owned(), |schema| example(schema).to_string());
    let part = json!({"text": text});
    if path.contains(":streamGenerateContent") {
        return Response::events(std::iter::once(chunk(part)));
    }
    Response::json(&response(part))
}

fn response(part: Value) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
    })
}

fn chunk(part: Value) -> String {
    format!("data: {}\n\n", response(part))
}

/// The plainest value of a JSON schema (Gemini's types are upper case):
/// the first of an enumeration, zero, false, an empty list, "scripted"; so
/// a loop check finds no loop (confidence 0) and a next-speaker check
/// hands the turn to the user (the first of its enumeration).
fn example(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|values| values.first()) {
        return first.clone();
    }
    let kind = schema["type"].as_str().unwrap_or_default();
    match kind.to_ascii_lowercase().as_str() {
        "object" => Value::Object(
            schema["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(name, property)| (name.clone(), example(property)))
                .collect::<Map<_, _>>(),
        ),
        "array" => json!([]),
        "string" => json!("scripted"),
        "integer" | "number" => json!(0),
        "boolean" => json!(false),
        _ => Value::Null,
    }
}

/// The result of the call made at `turn`, from a later request: the
/// `functionResponse` with its id; an `AfterTool` hook's context is inside
/// the output, between `<hook_context>` tags.
pub fn tool_result(body: &Value, turn: usize) -> Option<ToolResult> {
    let id = call_id(turn);
    let response = body["contents"]
        .as_array()?
        .iter()
        .flat_map(|content| content["parts"].as_array().into_iter().flatten())
        .map(|part| &part["functionResponse"])
        .find(|response| response["id"] == *id)?;
    let response = &response["response"];
    let text = match (&response["output"], &response["error"]) {
        (Value::String(output), _) => output.clone(),
        (_, Value::String(error)) => error.clone(),
        _ => response.to_string(),
    };
    let context = text
        .split_once("<hook_context>")
        .and_then(|(_, rest)| rest.split_once("</hook_context>"))
        .map(|(context, _)| context.to_owned())
        .unwrap_or_default();
    Some(ToolResult {
        context,
        is_error: !response["error"].is_null(),
        tools: Vec::new(),
        text,
    })
}
