//! Cases that a host could pass by doing nothing are refused when the cases are read, so a weak
//! case never counts as a pass:
//!
//! - a case expects something, or a canary must be hit (a positive control): a case with neither
//!   passes against a host that sends nothing;
//! - at least one expectation names more than an envelope type (a member, or a text the envelope
//!   contains): `{"type": …}` alone is met by any envelope of that type, such as the inventory every
//!   session starts with;
//! - every expected `client.error` names its `code`, and its `field` (in `match`) or says that it
//!   has none (`"absent": ["field"]`): "some error" is met by a refusal of anything else.

use std::path::Path;

use serde_json::Value;

use crate::case::{load_cases, Canaries, CanaryExpect, Case, Predicate};

/// Reads the cases under `dir` ([`load_cases`]) and refuses the first that is too weak to count.
pub(crate) fn load(dir: &Path) -> Result<Vec<Case>, String> {
    let cases = load_cases(dir)?;
    if let Some((case, why)) = cases.iter().find_map(|c| weakness(c).map(|why| (c, why))) {
        return Err(format!(
            "{}/{}: too weak to count: {why}",
            case.group, case.id
        ));
    }
    Ok(cases)
}

/// Why `case` is too weak to count, or `None`.
pub(crate) fn weakness(case: &Case) -> Option<String> {
    if case.expect.is_empty() && !hits_a_canary(&case.canary) {
        return Some(
            "expects nothing and no canary must be hit: a host that does nothing passes it".into(),
        );
    }
    if !case.expect.is_empty() && case.expect.iter().all(names_only_its_type) {
        return Some(
            "every expectation names only an envelope type: any envelope of that type meets it"
                .into(),
        );
    }
    case.expect.iter().find_map(vague_error)
}

fn hits_a_canary(canary: &Canaries) -> bool {
    [canary.http, canary.websocket, canary.dns].contains(&Some(CanaryExpect::Hit))
}

fn names_only_its_type(p: &Predicate) -> bool {
    p.contains.is_none()
        && p.absent.is_empty()
        && p.pattern
            .as_object()
            .is_some_and(|o| o.keys().all(|k| k == "type"))
}

/// Why an expected `client.error` is too vague, or `None`.
fn vague_error(p: &Predicate) -> Option<String> {
    if p.pattern["type"] != "lineup.v1.client.error" {
        return None;
    }
    let payload = &p.pattern["payload"];
    if !payload.get("code").is_some_and(Value::is_string) {
        return Some(format!(
            "expects a client.error without naming its code: {}",
            p.pattern
        ));
    }
    let field_named = payload.get("field").is_some_and(Value::is_string);
    if !field_named && !p.absent.iter().any(|f| f == "field") {
        return Some(format!(
            "expects a client.error without naming its field (or \"absent\": [\"field\"]): {}",
            p.pattern
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_case_file_passes_the_schema_and_the_lint() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases");
        let cases = load(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert!(cases.len() >= 150, "only {} cases", cases.len());
    }

    fn case(extra: Value) -> Case {
        let mut value = json!({
            "id": "lint", "group": "lint", "rules": ["R-ENV-1"], "steps": [{"wait_ms": 1}]
        });
        if let (Some(v), Some(extra)) = (value.as_object_mut(), extra.as_object()) {
            v.extend(extra.clone());
        }
        serde_json::from_value(value).expect("the case reads")
    }

    #[test]
    fn a_case_a_host_doing_nothing_passes_is_refused() {
        for (weak, why) in [
            (json!({}), "expects nothing"),
            (json!({"expect": [], "canary": "none"}), "expects nothing"),
            (
                json!({"expect": [{"match": {"type": "lineup.v1.client.inventory"}}]}),
                "names only an envelope type",
            ),
            (
                json!({"expect": [{"match": {"type": "lineup.v1.client.error"}}]}),
                "names only an envelope type",
            ),
            (
                json!({"expect": [{"match": {"type": "lineup.v1.client.error",
                    "payload": {"in_reply_to": "p1"}}}]}),
                "without naming its code",
            ),
            (
                json!({"expect": [{"match": {"type": "lineup.v1.client.error",
                    "payload": {"in_reply_to": "p1", "code": "invalid_field"}}}]}),
                "without naming its field",
            ),
        ] {
            let found = weakness(&case(weak.clone())).unwrap_or_default();
            assert!(found.contains(why), "{weak}: {found:?}");
        }
    }

    #[test]
    fn a_case_with_a_specific_expectation_or_a_positive_control_is_taken() {
        for strong in [
            json!({"expect": [], "canary": "hit"}),
            json!({"expect": [], "canary": {"dns": "hit"}}),
            json!({"expect": [{"match": {"type": "lineup.v1.client.error",
                "payload": {"in_reply_to": "p1", "code": "invalid_field", "field": "v"}}}]}),
            json!({"expect": [{"match": {"type": "lineup.v1.client.error",
                "payload": {"code": "invalid_json"}}, "absent": ["field"]}]}),
            json!({"expect": [
                {"match": {"type": "lineup.v1.client.inventory", "conversation_id": "c1"}},
                {"match": {"type": "lineup.v1.app.list"}}
            ]}),
            json!({"expect": [{"match": {"type": "lineup.v1.client.inventory"},
                "contains": "\"id\":\"form\""}]}),
        ] {
            assert_eq!(weakness(&case(strong.clone())), None, "{strong}");
        }
    }
}
