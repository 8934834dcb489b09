//! What the Gateway tells the Recorder: each tool call (its tool,
//! arguments, duration, outcome, output size and, when it failed, what
//! its client was told) and who the client is.
//! Sent as messages, never waited on.

use super::context::Context;
use crate::messages::recorder::RecorderMsg;
use crate::store::events::Event;
use crate::vocabulary::events::EventKind;
use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, Implementation, JsonObject};
use serde_json::Value;
use std::time::Duration;

impl Context {
    pub fn record_tool_call(
        &self,
        tool: String,
        arguments: Option<JsonObject>,
        took: Duration,
        response: &Result<CallToolResponse, ErrorData>,
    ) {
        let Outcome { ok, bytes, error } = outcome(response);
        let mut event = Event::now(EventKind::ToolCall, Some(self.session));
        event.tool = Some(tool);
        event.duration_us = Some(i64::try_from(took.as_micros()).unwrap_or(i64::MAX));
        event.bytes = Some(bytes);
        event.ok = Some(ok);
        event.detail = arguments.map_or(Value::Null, Value::Object);
        event.error = error;
        let _stopped = self.shared.recorder.send_message(RecorderMsg::Event(event));
    }

    pub fn record_client(&self, client: &Implementation) {
        self.client.set(&client.name, &client.version);
        let _stopped = self.shared.recorder.send_message(RecorderMsg::Client {
            session: self.session,
            name: client.name.clone(),
            version: client.version.clone(),
        });
    }
}

/// How long a failure's text may be in the store; the client saw it all.
const ERROR_CHARS: usize = 500;

/// What a call's response says of it.
struct Outcome {
    ok: bool,
    /// The size of its text.
    bytes: i64,
    /// What the client was told, when the call failed.
    error: Option<String>,
}

fn outcome(response: &Result<CallToolResponse, ErrorData>) -> Outcome {
    let size = |text: &str| i64::try_from(text.len()).unwrap_or(i64::MAX);
    match response {
        Ok(CallToolResponse::Complete(result)) => {
            let texts = || {
                result
                    .content
                    .iter()
                    .filter_map(|block| block.as_text())
                    .map(|text| text.text.as_str())
            };
            let ok = result.is_error != Some(true);
            Outcome {
                ok,
                bytes: texts().map(size).sum(),
                error: (!ok).then(|| shortened(&texts().collect::<Vec<_>>().join("\n"))),
            }
        }
        Ok(_) => Outcome {
            ok: true,
            bytes: 0,
            error: None,
        },
        Err(error) => Outcome {
            ok: false,
            bytes: size(&error.message),
            error: Some(shortened(&error.message)),
        },
    }
}

fn shortened(text: &str) -> String {
    match text.char_indices().nth(ERROR_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}
