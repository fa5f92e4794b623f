//! Canonical JSON and the SHA-256 digest of a call's arguments (R-CAP-5, R-CAP-6).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::json::JsonObject;

/// The SHA-256 digest of a call's arguments in canonical JSON (object keys sorted by their UTF-8
/// bytes at every depth, no whitespace, strings and numbers as `serde_json` writes them), written
/// as 64 lowercase hex digits. Two calls with the same
/// arguments in another key order have the same digest. The arguments themselves are never stored
/// (they may hold user content); the digest is enough to tell a reused `call_id` (R-CAP-5) and to
/// audit (R-CAP-6).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ArgsDigest(pub String);

impl ArgsDigest {
    /// The digest of `arguments` in canonical JSON: keys sorted by their UTF-8 bytes at every
    /// depth, no whitespace.
    pub fn of(arguments: &JsonObject) -> Self {
        let mut text = String::new();
        canonical_object(arguments.as_map(), &mut text);
        let digest = Sha256::digest(text.as_bytes());
        let mut hex = String::with_capacity(64);
        for byte in digest {
            hex.push_str(&format!("{byte:02x}"));
        }
        ArgsDigest(hex)
    }
}

impl fmt::Debug for ArgsDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArgsDigest({})", self.0)
    }
}

impl fmt::Display for ArgsDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn canonical_object(map: &serde_json::Map<String, Value>, out: &mut String) {
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    members.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    out.push('{');
    for (i, (key, value)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::String(key.clone()).to_string());
        out.push(':');
        canonical(value, out);
    }
    out.push('}');
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => canonical_object(map, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(text: &str) -> JsonObject {
        serde_json::from_str(text).unwrap_or_default()
    }

    #[test]
    fn r_cap_5_key_order_does_not_change_the_digest() {
        let a = ArgsDigest::of(&obj(r#"{"b":1,"a":{"y":[1,{"d":2,"c":3}],"x":"é"}}"#));
        let b = ArgsDigest::of(&obj(r#"{"a":{"x":"é","y":[1,{"c":3,"d":2}]},"b":1}"#));
        assert_eq!(a, b);
        assert_eq!(a.0.len(), 64);
        assert_ne!(a, ArgsDigest::of(&obj(r#"{"b":2}"#)));
    }

    #[test]
    fn golden_digest_of_the_empty_object() {
        // sha256("{}")
        assert_eq!(
            ArgsDigest::of(&JsonObject::new()).0,
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }
}
