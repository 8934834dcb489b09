//! What the Gateway tells the Recorder: each tool call (its tool,
//! arguments, duration, outcome and output size) and who the client is.
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
        let (ok, bytes) = outcome(response);
        let mut event = Event::now(EventKind::ToolCall, Some(self.session.to_string()));
        event.tool = Some(tool);
        event.duration_us = Some(i64::try_from(took.as_micros()).unwrap_or(i64::MAX));
        event.bytes = Some(bytes);
        event.ok = Some(ok);
        event.detail = arguments.map_or(Value::Null, Value::Object);
        let _stopped = self.shared.recorder.send_message(RecorderMsg::Event(event));
    }

    pub fn record_client(&self, client: &Implementation) {
        let _stopped = self.shared.recorder.send_message(RecorderMsg::Client {
            session: self.session.to_string(),
            name: client.name.clone(),
            version: client.version.clone(),
        });
    }
}

/// Whether the call succeeded, and the size of its text.
fn outcome(response: &Result<CallToolResponse, ErrorData>) -> (bool, i64) {
    let size = |text: &str| i64::try_from(text.len()).unwrap_or(i64::MAX);
    match response {
        Ok(CallToolResponse::Complete(result)) => (
            result.is_error != Some(true),
            result
                .content
                .iter()
                .filter_map(|block| block.as_text())
                .map(|text| size(&text.text))
                .sum(),
        ),
        Ok(_) => (true, 0),
        Err(error) => (false, size(&error.message)),
    }
}
