//! JSON-RPC messages as Windlass sees them: what a server sent, sorted
//! into responses, requests and notifications, and builders for what
//! Windlass sends. Method strings appear only at the call sites that build or
//! answer a particular method.

use serde_json::{Value, json};

/// A message read from a server, already classified.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Response {
        id: i64,
        result: Result<Value, ResponseError>,
    },
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// A body that is not a JSON-RPC message. `id` is the request it most
    /// likely answered, recovered from the raw text, so that request can
    /// fail at once instead of timing out.
    Malformed {
        id: Option<i64>,
        detail: String,
    },
    /// The server's stdout closed: it exited or is about to.
    Closed,
}

/// The `error` member of a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseError {
    pub code: i64,
    pub message: String,
}

/// Classifies one message body.
pub fn parse(body: &[u8]) -> Incoming {
    let text = String::from_utf8_lossy(body);
    let value: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(error) if error.to_string().starts_with("recursion limit exceeded") => {
            // serde_json stops at 128 levels rather than overflow the stack.
            return Incoming::Malformed {
                id: recover_id(&text),
                detail: "an answer nested more than 128 levels deep, refused".into(),
            };
        }
        Err(error) => {
            return Incoming::Malformed {
                id: recover_id(&text),
                detail: format!("invalid JSON: {error}"),
            };
        }
    };
    classify(value)
}

fn classify(mut value: Value) -> Incoming {
    let method = value
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let params = value
        .get_mut("params")
        .map(Value::take)
        .unwrap_or(Value::Null);
    match (method, value.get("id").cloned()) {
        (Some(method), Some(id)) if !id.is_null() => Incoming::Request { id, method, params },
        (Some(method), _) => Incoming::Notification { method, params },
        (None, Some(id)) => classify_response(&mut value, &id),
        (None, None) => Incoming::Malformed {
            id: None,
            detail: "message has neither method nor id".into(),
        },
    }
}

fn classify_response(value: &mut Value, id: &Value) -> Incoming {
    let Some(id) = numeric_id(id) else {
        return Incoming::Malformed {
            id: None,
            detail: format!("response id {id} is not one Windlass sent"),
        };
    };
    if let Some(error) = value.get("error") {
        let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("unknown error")
            .to_owned();
        return Incoming::Response {
            id,
            result: Err(ResponseError { code, message }),
        };
    }
    match value.get_mut("result") {
        Some(result) => Incoming::Response {
            id,
            result: Ok(result.take()),
        },
        None => Incoming::Malformed {
            id: Some(id),
            detail: "response has neither result nor error".into(),
        },
    }
}

fn numeric_id(id: &Value) -> Option<i64> {
    id.as_i64()
        .or_else(|| id.as_str().and_then(|text| text.parse().ok()))
}

/// Finds `"id": N` in text that did not parse, to attribute the failure.
pub(crate) fn recover_id(text: &str) -> Option<i64> {
    let start = text.find("\"id\"")? + 4;
    let rest = text[start..].trim_start().strip_prefix(':')?.trim_start();
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

pub fn request(id: i64, method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

pub fn notification(method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
        .to_string()
        .into_bytes()
}

pub fn response(id: &Value, result: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
        .to_string()
        .into_bytes()
}

pub fn error_response(id: &Value, code: i64, message: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes()
}

/// JSON-RPC's code for a method the receiver does not implement.
pub const METHOD_NOT_FOUND: i64 = -32601;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_messages() {
        let cases: Vec<(&str, Incoming)> = vec![
            (
                r#"{"jsonrpc":"2.0","id":3,"result":{"x":1}}"#,
                Incoming::Response {
                    id: 3,
                    result: Ok(json!({"x":1})),
                },
            ),
            (
                r#"{"jsonrpc":"2.0","id":"4","result":null}"#,
                Incoming::Response {
                    id: 4,
                    result: Ok(Value::Null),
                },
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"bad"}}"#,
                Incoming::Response {
                    id: 5,
                    result: Err(ResponseError {
                        code: -32600,
                        message: "bad".into(),
                    }),
                },
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a","method":"workspace/configuration","params":{}}"#,
                Incoming::Request {
                    id: json!("a"),
                    method: "workspace/configuration".into(),
                    params: json!({}),
                },
            ),
            (
                r#"{"jsonrpc":"2.0","method":"$/progress","params":[1]}"#,
                Incoming::Notification {
                    method: "$/progress".into(),
                    params: json!([1]),
                },
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse(text.as_bytes()), expected, "{text}");
        }
    }

    #[test]
    fn attributes_broken_json_to_its_request() {
        let parsed = parse(br#"{"jsonrpc":"2.0","id": 17,"result":{"#);
        assert!(
            matches!(parsed, Incoming::Malformed { id: Some(17), .. }),
            "{parsed:?}"
        );
        let parsed = parse(b"not json");
        assert!(
            matches!(parsed, Incoming::Malformed { id: None, .. }),
            "{parsed:?}"
        );
    }

    #[test]
    fn accepts_invalid_utf8_with_replacement() {
        let parsed = parse(b"{\"id\":1,\"result\":\"a\xffb\"}");
        assert_eq!(
            parsed,
            Incoming::Response {
                id: 1,
                result: Ok(json!("a\u{fffd}b"))
            }
        );
    }

    #[test]
    fn rejects_a_response_without_result() {
        let parsed = parse(br#"{"id":2}"#);
        assert!(
            matches!(parsed, Incoming::Malformed { id: Some(2), .. }),
            "{parsed:?}"
        );
    }
}
