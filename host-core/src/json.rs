//! Strict JSON reading for untrusted bytes: a nesting-depth scan before parsing (R-ENV-4), duplicate
//! keys refused, and [`JsonObject`], a JSON value that is known to be an object.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::map::Entry;
use serde_json::{Map, Value};

use crate::redact::Fingerprint;

/// A JSON object (`state`, event `data`, capability `arguments` …); any other JSON type is refused
/// when it is decoded.
///
/// Its `Debug` output is the length and a digest of its compact JSON, never its members: it holds
/// agent state or page data, and `Debug` output reaches logs.
///
/// It is immutable and its members are shared: a clone (the state a session keeps and the copy
/// it hands to the shell to deliver) costs a reference count, not a copy of the state.
#[derive(Clone, Default, PartialEq)]
pub struct JsonObject(Arc<Map<String, Value>>);

impl JsonObject {
    /// An empty object.
    pub fn new() -> Self {
        Self::default()
    }

    /// The object's members.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }

    /// The object's members, by value (copied only if a clone of this object is still alive).
    pub fn into_map(self) -> Map<String, Value> {
        Arc::try_unwrap(self.0).unwrap_or_else(|shared| (*shared).clone())
    }

    /// The object's compact JSON text.
    pub fn to_json(&self) -> String {
        // Serialising a `Map` of `Value`s cannot fail: every key is a string.
        serde_json::to_string(self.as_map()).unwrap_or_else(|_| "{}".to_owned())
    }
}

impl fmt::Debug for JsonObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Fingerprint::of(self.to_json()).debug_as("JsonObject", f)
    }
}

impl Serialize for JsonObject {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_map().serialize(serializer)
    }
}

impl From<Map<String, Value>> for JsonObject {
    fn from(map: Map<String, Value>) -> Self {
        Self(Arc::new(map))
    }
}

impl TryFrom<Value> for JsonObject {
    type Error = Value;
    /// Keeps the value when it is an object and hands it back otherwise.
    fn try_from(value: Value) -> Result<Self, Value> {
        match value {
            Value::Object(map) => Ok(Self::from(map)),
            other => Err(other),
        }
    }
}

impl<'de> Deserialize<'de> for JsonObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match StrictValue::deserialize(deserializer)?.0 {
            Value::Object(map) => Ok(Self::from(map)),
            other => Err(de::Error::invalid_type(
                unexpected(&other),
                &"a JSON object",
            )),
        }
    }
}

fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("a number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

/// A `serde_json::Value` whose objects were read without duplicate keys.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StrictValue(pub(crate) Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(StrictVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // One lookup per key: the slot is found (or the duplicate refused) before the value
            // is read into it.
            match out.entry(key) {
                Entry::Occupied(taken) => {
                    return Err(de::Error::custom(format_args!(
                        "duplicate key {:?}; each key may appear once",
                        taken.key()
                    )));
                }
                Entry::Vacant(slot) => {
                    let StrictValue(value) = map.next_value_seed(StrictSeed)?;
                    slot.insert(value);
                }
            }
        }
        Ok(Value::Object(out))
    }
}

struct StrictSeed;

impl<'de> DeserializeSeed<'de> for StrictSeed {
    type Value = StrictValue;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<StrictValue, D::Error> {
        StrictValue::deserialize(d)
    }
}

/// The deepest nesting of arrays and objects in `bytes`, counted without parsing; stops counting
/// as soon as `limit` is exceeded and returns `limit + 1` then (R-ENV-4). Strings are skipped
/// with `memchr` (to their next quote or backslash), so a large state's text costs a vectorised
/// scan rather than a byte-by-byte state machine.
pub(crate) fn nesting_depth(bytes: &[u8], limit: usize) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                // Past the string: its closing quote, stepping over each escaped byte. An
                // unterminated string ends the count (the parser refuses the line).
                i += 1;
                loop {
                    let Some(at) = bytes
                        .get(i..)
                        .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
                    else {
                        return max;
                    };
                    i += at;
                    if bytes[i] == b'"' {
                        break;
                    }
                    i += 2;
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    max = depth;
                    if max > limit {
                        return max;
                    }
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    max
}

/// Parses `bytes` as one JSON value with duplicate keys refused.
pub(crate) fn parse_strict(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let StrictValue(value) = StrictValue::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-by-byte count `nesting_depth` replaced: the reference its answers are checked
    /// against.
    fn nesting_depth_bytewise(bytes: &[u8], limit: usize) -> usize {
        let (mut depth, mut max) = (0usize, 0usize);
        let (mut in_string, mut escaped) = (false, false);
        for &b in bytes {
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > max {
                        max = depth;
                        if max > limit {
                            return max;
                        }
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        max
    }

    #[test]
    fn r_env_4_depth_agrees_with_the_bytewise_count_on_generated_text() {
        // Every string over a small alphabet of the bytes that matter, up to 9 bytes long.
        let alphabet = [b'"', b'\\', b'[', b']', b'{', b'}', b'a'];
        let mut count = 0;
        for len in 0..=7u32 {
            for mut n in 0..alphabet.len().pow(len) {
                let mut text = Vec::new();
                for _ in 0..len {
                    text.push(alphabet[n % alphabet.len()]);
                    n /= alphabet.len();
                }
                for limit in [1, 3, 64] {
                    assert_eq!(
                        nesting_depth(&text, limit),
                        nesting_depth_bytewise(&text, limit),
                        "{:?} limit {limit}",
                        String::from_utf8_lossy(&text)
                    );
                }
                count += 1;
            }
        }
        assert!(count > 900_000);
    }

    #[test]
    fn r_env_4_depth_is_counted_outside_strings() {
        assert_eq!(nesting_depth(br#"{"a":[1,{"b":"[[[["}]}"#, 64), 3);
        assert_eq!(nesting_depth(br#""\"[""#, 64), 0);
        assert_eq!(nesting_depth(b"1", 64), 0);
        assert_eq!(nesting_depth(&[b'['; 1000], 10), 11);
    }

    #[test]
    fn duplicate_keys_are_refused_at_any_depth() {
        assert!(parse_strict(br#"{"a":1,"a":2}"#).is_err());
        assert!(parse_strict(br#"{"x":[{"a":1,"a":2}]}"#).is_err());
        assert!(parse_strict(br#"{"a":1,"b":{"a":2}}"#).is_ok());
    }

    #[test]
    fn json_object_refuses_other_types() {
        assert!(serde_json::from_str::<JsonObject>("{}").is_ok());
        for bad in ["[]", "null", "1", "\"s\"", "true"] {
            let err = serde_json::from_str::<JsonObject>(bad).unwrap_err();
            assert!(err.to_string().contains("a JSON object"), "{bad}: {err}");
        }
    }

    #[test]
    fn trailing_bytes_are_refused() {
        assert!(parse_strict(b"{} {}").is_err());
        assert!(parse_strict(b"{}\n").is_ok());
    }
}
