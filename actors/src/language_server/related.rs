//! Hints that are places of a problem published elsewhere, given that
//! problem's severity.
//!
//! rust-analyzer publishes each place `cargo check` names beside an error
//! as a hint of its own, tied to the error by a related location with the
//! message "original diagnostic". Dropping a parameter of num-traits'
//! `Real::max` is an error in the macro that writes the method
//! (`macros.rs`) and, on the trait's line in `real.rs`, the hint "trait
//! requires 1 parameter": `real.rs` read as having no problem, where
//! `cargo check` puts the error on that very line. Answered, such a hint
//! takes the severity of the problem it points at, if that problem is
//! among the cached publications.

use super::diagnostics::Cache;
use serde_json::Value;
use std::sync::Arc;

/// What related information names the problem a hint is a place of.
const ORIGINAL: &str = "original diagnostic";

/// `items` with each hint that is a place of a cached problem given that
/// problem's severity; the same items when none is.
pub(super) fn with_original_severities(items: Arc<[Value]>, cache: &Cache) -> Arc<[Value]> {
    let severities: Vec<Option<u64>> = items
        .iter()
        .map(|item| original_severity(item, cache))
        .collect();
    if severities.iter().all(Option::is_none) {
        return items;
    }
    items
        .iter()
        .zip(severities)
        .map(|(item, severity)| match severity {
            Some(severity) => {
                let mut item = item.clone();
                item["severity"] = severity.into();
                item
            }
            None => item.clone(),
        })
        .collect()
}

/// The severity of the problem `item` is a place of, if `item` is a hint
/// pointing at one the cache holds that is more severe.
fn original_severity(item: &Value, cache: &Cache) -> Option<u64> {
    const HINT: u64 = 4;
    if item.get("severity").and_then(Value::as_u64) != Some(HINT) {
        return None;
    }
    let original = item
        .get("relatedInformation")?
        .as_array()?
        .iter()
        .find(|related| related.get("message").and_then(Value::as_str) == Some(ORIGINAL))?;
    let location = original.get("location")?;
    let uri = location.get("uri")?.as_str()?;
    let start = location.get("range")?.get("start")?;
    let problem = cache.entry(uri)?.items.iter().find(|problem| {
        problem.get("range").and_then(|range| range.get("start")) == Some(start)
            && problem.get("code") == item.get("code")
    })?;
    // A problem without a severity is an error, as LSP leaves it to the
    // client and Windlass shows it.
    let severity = problem.get("severity").and_then(Value::as_u64).unwrap_or(1);
    (severity < HINT).then_some(severity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Instant;

    const MACROS: &str = "file:///w/src/macros.rs";

    fn hint() -> Value {
        json!({
            "range": {"start": {"line": 437, "character": 11}, "end": {"line": 437, "character": 12}},
            "severity": 4, "code": "E0050", "message": "trait requires 1 parameter",
            "relatedInformation": [{
                "location": {"uri": MACROS, "range": {"start": {"line": 15, "character": 4}, "end": {"line": 15, "character": 9}}},
                "message": "original diagnostic"
            }]
        })
    }

    #[test]
    fn a_hint_takes_the_severity_of_the_problem_it_is_a_place_of() {
        let mut cache = Cache::default();
        let items: Arc<[Value]> = vec![hint()].into();
        assert_eq!(
            with_original_severities(items.clone(), &cache)[0]["severity"],
            4,
            "the problem not published yet: a hint, as sent"
        );
        let error = json!({
            "range": {"start": {"line": 15, "character": 4}, "end": {"line": 15, "character": 9}},
            "severity": 1, "code": "E0050", "message": "method `max` has 2 parameters"
        });
        cache.publish(MACROS, None, vec![error], Instant::now());
        let answered = with_original_severities(items, &cache);
        assert_eq!(answered[0]["severity"], 1);
        assert_eq!(answered[0]["message"], "trait requires 1 parameter");
    }

    #[test]
    fn a_hint_of_another_problem_at_the_place_stays_a_hint() {
        let mut cache = Cache::default();
        let other = json!({
            "range": {"start": {"line": 15, "character": 4}, "end": {"line": 15, "character": 9}},
            "severity": 2, "code": "unused_variables", "message": "unused"
        });
        cache.publish(MACROS, None, vec![other], Instant::now());
        let answered = with_original_severities(vec![hint()].into(), &cache);
        assert_eq!(answered[0]["severity"], 4);
    }
}
