//! Tool input schemas, compacted: every agent session pays for
//! `tools/list` in its context, so the schemas keep only what a model
//! needs to call a tool right. Arguments are still checked in full when
//! they are deserialized.

use serde_json::{Map, Value};

/// Keys that cost bytes and tell a model nothing it needs.
const DROPPED_KEYS: &[&str] = &["$schema", "title", "format", "additionalProperties"];

/// Inlines `$defs`, drops [`DROPPED_KEYS`] and zero minimums, and writes
/// optional types (`["integer", "null"]`, or `anyOf` an object and null)
/// as their plain type, since
/// `required` already says what may be left out.
pub fn compact(schema: &Map<String, Value>) -> Map<String, Value> {
    let definitions = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut compacted = match simplify(&Value::Object(schema.clone()), &definitions) {
        Value::Object(object) => object,
        _ => Map::new(),
    };
    compacted.remove("$defs");
    compacted
}

fn simplify(value: &Value, definitions: &Map<String, Value>) -> Value {
    match value {
        Value::Object(object) => {
            let mut out = Map::new();
            if let Some(target) = object.get("$ref").and_then(Value::as_str)
                && let Some(definition) = target
                    .strip_prefix("#/$defs/")
                    .and_then(|name| definitions.get(name))
                && let Value::Object(inlined) = simplify(definition, definitions)
            {
                out.extend(inlined);
            }
            for (key, item) in object {
                let zero_minimum = key == "minimum" && item.as_f64() == Some(0.0);
                if key == "$ref" || DROPPED_KEYS.contains(&key.as_str()) || zero_minimum {
                    continue;
                }
                out.insert(key.clone(), simplify_entry(key, item, definitions));
            }
            lift_optional(&mut out);
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| simplify(item, definitions))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// An optional object (`anyOf: [{…}, {"type": "null"}]`) written as the
/// object itself, as optional plain types are.
fn lift_optional(object: &mut Map<String, Value>) {
    let Some(Value::Array(choices)) = object.get("anyOf") else {
        return;
    };
    let concrete: Vec<&Value> = choices
        .iter()
        .filter(|choice| choice.get("type").and_then(Value::as_str) != Some("null"))
        .collect();
    let [Value::Object(single)] = concrete.as_slice() else {
        return;
    };
    let single = single.clone();
    object.remove("anyOf");
    for (key, value) in single {
        object.entry(key).or_insert(value);
    }
}

fn simplify_entry(key: &str, item: &Value, definitions: &Map<String, Value>) -> Value {
    if key == "type"
        && let Value::Array(types) = item
    {
        let concrete: Vec<&Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .collect();
        if let [single] = concrete.as_slice() {
            return (*single).clone();
        }
    }
    simplify(item, definitions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inlines_definitions_and_drops_noise() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "additionalProperties": false,
            "$defs": {
                "Direction": {"type": "string", "enum": ["in", "out"]},
                "Rename": {"type": "object", "properties": {"to": {"type": "string"}}},
            },
            "properties": {
                "line": {"type": ["integer", "null"], "format": "uint32", "minimum": 0, "description": "1-based"},
                "direction": {"$ref": "#/$defs/Direction", "description": "which way"},
                "either": {"type": ["string", "integer", "null"]},
                "rename": {"anyOf": [{"$ref": "#/$defs/Rename"}, {"type": "null"}], "description": "or"},
            },
            "required": ["direction"],
        });
        let compacted = compact(schema.as_object().unwrap());
        assert_eq!(
            Value::Object(compacted),
            json!({
                "type": "object",
                "properties": {
                    "line": {"type": "integer", "description": "1-based"},
                    "direction": {"type": "string", "enum": ["in", "out"], "description": "which way"},
                    "either": {"type": ["string", "integer", "null"]},
                    "rename": {"type": "object", "properties": {"to": {"type": "string"}}, "description": "or"},
                },
                "required": ["direction"],
            })
        );
    }
}
