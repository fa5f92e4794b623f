//! Checking a component's props and state against its frozen schema (R-STD-3): size, depth,
//! U+0000 and numbers first, then the JSON Schema, then the caps the schema annotates
//! (`x-lineup-max-graphemes` after display cleaning, `x-lineup-max-bytes`), which also clean
//! every display string for the driver.

use jsonschema::error::ValidationErrorKind;
use serde_json::{Map, Value};
use unicode_segmentation::UnicodeSegmentation as _;

use crate::display::{display_line, display_text};
use crate::error::{ErrorCode, ProtocolError};
use crate::ids::shorten;

use super::catalog::Part;

/// The most bytes of component JSON (`payload.component` and `payload.state`) an open or a
/// patch may carry (R-STD-3).
pub const MAX_COMPONENT_BYTES: usize = 64 * 1024;
/// The deepest nesting of props or state, the object itself being level 1 (R-STD-3).
pub const MAX_COMPONENT_DEPTH: usize = 8;
/// The largest magnitude of a number in props, state or an answer: 2^53 (R-STD-3).
pub const MAX_SAFE_INTEGER: u64 = 1 << 53;

const RULE: &str = "R-STD-3";

/// An `invalid_field` refusal of `field` under R-STD-3.
pub(crate) fn invalid(field: &str, message: impl Into<String>) -> ProtocolError {
    ProtocolError::new(ErrorCode::InvalidField, RULE, message).field(field)
}

/// Checks `value` (props or state, named `base` on the wire) against `part` and returns it with
/// every display string cleaned by the display rules (R-STD-3, R-SEC-6).
pub(crate) fn check_part(part: &Part, base: &str, value: &Value) -> Result<Value, ProtocolError> {
    check_values(value, base, 1)?;
    if let Some(error) = part.validator.iter_errors(value).next() {
        return Err(schema_error(base, &error));
    }
    clean(&part.value, &part.value, value, base)
}

/// Depth, U+0000 and numbers of every value under `path` (R-STD-3).
pub(crate) fn check_values(value: &Value, path: &str, depth: usize) -> Result<(), ProtocolError> {
    if depth > MAX_COMPONENT_DEPTH {
        return Err(invalid(
            path,
            format!("{path} nests {depth} levels deep; the limit is {MAX_COMPONENT_DEPTH}"),
        )
        .limit(MAX_COMPONENT_DEPTH));
    }
    match value {
        Value::String(s) => no_nul(s, path),
        Value::Number(n) => check_number(n, path),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| check_values(v, &format!("{path}.{i}"), depth + 1)),
        Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            let inner = format!("{path}.{k}");
            no_nul(k, &inner)?;
            check_values(v, &inner, depth + 1)
        }),
        Value::Null | Value::Bool(_) => Ok(()),
    }
}

fn no_nul(s: &str, path: &str) -> Result<(), ProtocolError> {
    if s.contains('\0') {
        return Err(invalid(path, format!("{path} contains U+0000")));
    }
    Ok(())
}

fn check_number(n: &serde_json::Number, path: &str) -> Result<(), ProtocolError> {
    let too_big = match (n.as_u64(), n.as_i64(), n.as_f64()) {
        (Some(u), _, _) => u > MAX_SAFE_INTEGER,
        (None, Some(i), _) => i.unsigned_abs() > MAX_SAFE_INTEGER,
        (None, None, Some(f)) if f.is_finite() => f.abs() > MAX_SAFE_INTEGER as f64,
        (None, None, _) => {
            return Err(invalid(path, format!("{path} is not a finite number")));
        }
    };
    if too_big {
        return Err(invalid(
            path,
            format!("{path} = {n} is larger in magnitude than 2^53"),
        )
        .limit(MAX_SAFE_INTEGER as usize));
    }
    Ok(())
}

/// The dotted field of a JSON pointer under `base` (`/options/3/label` → `base.options.3.label`).
pub(crate) fn dotted(base: &str, pointer: &str) -> String {
    let mut out = base.to_owned();
    for segment in pointer.split('/').skip(1) {
        out.push('.');
        out.push_str(&segment.replace("~1", "/").replace("~0", "~"));
    }
    out
}

/// The refusal for the first schema error: the exact field (the unknown or missing member
/// itself), and the limit when a limit was hit.
pub(crate) fn schema_error(base: &str, error: &jsonschema::ValidationError<'_>) -> ProtocolError {
    let at = dotted(base, error.instance_path().as_str());
    let said = shorten(&error.to_string(), 160);
    let (code, field, limit) = match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let member = unexpected.first().cloned().unwrap_or_default();
            let field = format!("{at}.{member}");
            let message = format!("{field} is not a member of this component; unknown members are refused, never ignored");
            return invalid(&field, message);
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            let field = format!("{at}.{name}");
            return ProtocolError::new(
                ErrorCode::MissingField,
                RULE,
                format!("{field} is required"),
            )
            .field(field);
        }
        ValidationErrorKind::PropertyNames { error } => {
            let name = error.instance().as_str().unwrap_or_default().to_owned();
            (ErrorCode::InvalidField, format!("{at}.{name}"), None)
        }
        ValidationErrorKind::MaxItems { limit }
        | ValidationErrorKind::MinItems { limit }
        | ValidationErrorKind::MaxLength { limit }
        | ValidationErrorKind::MinLength { limit }
        | ValidationErrorKind::MaxProperties { limit }
        | ValidationErrorKind::MinProperties { limit } => {
            (ErrorCode::InvalidField, at, usize::try_from(*limit).ok())
        }
        ValidationErrorKind::Maximum { limit }
        | ValidationErrorKind::Minimum { limit }
        | ValidationErrorKind::ExclusiveMaximum { limit }
        | ValidationErrorKind::ExclusiveMinimum { limit } => (
            ErrorCode::InvalidField,
            at,
            limit.as_u64().and_then(|l| usize::try_from(l).ok()),
        ),
        ValidationErrorKind::AdditionalItems { .. }
        | ValidationErrorKind::AnyOf { .. }
        | ValidationErrorKind::BacktrackLimitExceeded { .. }
        | ValidationErrorKind::RegexEngineFailure { .. }
        | ValidationErrorKind::Constant { .. }
        | ValidationErrorKind::Contains
        | ValidationErrorKind::ContentEncoding { .. }
        | ValidationErrorKind::ContentMediaType { .. }
        | ValidationErrorKind::Custom { .. }
        | ValidationErrorKind::Enum { .. }
        | ValidationErrorKind::FalseSchema
        | ValidationErrorKind::Format { .. }
        | ValidationErrorKind::FromUtf8 { .. }
        | ValidationErrorKind::MultipleOf { .. }
        | ValidationErrorKind::Not { .. }
        | ValidationErrorKind::OneOfMultipleValid { .. }
        | ValidationErrorKind::OneOfNotValid { .. }
        | ValidationErrorKind::Pattern { .. }
        | ValidationErrorKind::Type { .. }
        | ValidationErrorKind::UnevaluatedItems { .. }
        | ValidationErrorKind::UnevaluatedProperties { .. }
        | ValidationErrorKind::UniqueItems
        | ValidationErrorKind::Referencing(_) => (ErrorCode::InvalidField, at, None),
    };
    let mut err =
        ProtocolError::new(code, RULE, format!("{field} is invalid: {said}")).field(field);
    if let Some(limit) = limit {
        err = err.limit(limit);
    }
    err
}

/// The subschema `schema` stands for, following a local `$ref` (`#/$defs/name`) of `root`.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
            .unwrap_or(schema),
        None => schema,
    }
}

/// For an object whose schema chooses its shape by `kind` (`allOf` of `if kind = …` / `then`,
/// the form's fields), the `then` schema that applies to `map`.
fn branch<'a>(root: &'a Value, schema: &'a Value, map: &Map<String, Value>) -> Option<&'a Value> {
    let kind = map.get("kind")?;
    schema.get("allOf")?.as_array()?.iter().find_map(|arm| {
        let wanted = arm.pointer("/if/properties/kind/const")?;
        (wanted == kind).then(|| arm.get("then").map(|t| resolve(root, t)))?
    })
}

/// `value` with its display strings cleaned, each checked against its annotated cap; `value`
/// passed the schema already.
fn clean(root: &Value, schema: &Value, value: &Value, path: &str) -> Result<Value, ProtocolError> {
    let schema = resolve(root, schema);
    match value {
        Value::String(s) => clean_string(schema, s, path).map(Value::String),
        Value::Array(items) => {
            let item_schema = schema.get("items").unwrap_or(&Value::Bool(true));
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                out.push(clean(root, item_schema, item, &format!("{path}.{i}"))?);
            }
            Ok(Value::Array(out))
        }
        Value::Object(map) => {
            let schema = branch(root, schema, map).unwrap_or(schema);
            let mut out = Map::with_capacity(map.len());
            for (k, v) in map {
                let sub = schema
                    .get("properties")
                    .and_then(|p| p.get(k))
                    .or_else(|| schema.get("additionalProperties"))
                    .unwrap_or(&Value::Bool(true));
                out.insert(k.clone(), clean(root, sub, v, &format!("{path}.{k}"))?);
            }
            Ok(Value::Object(out))
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(value.clone()),
    }
}

/// How a display string of a component is cleaned and capped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextKind {
    /// One line: [`display_line`].
    Line,
    /// Several lines: [`display_text`].
    Text,
    /// Markdown: kept as sent, capped in bytes, parsed into a closed tree later (R-STD-10).
    Markdown,
}

fn clean_string(schema: &Value, s: &str, path: &str) -> Result<String, ProtocolError> {
    let kind = match schema.get("x-lineup-text").and_then(Value::as_str) {
        Some("line") => TextKind::Line,
        Some("text") => TextKind::Text,
        Some("markdown") => TextKind::Markdown,
        _ => return Ok(s.to_owned()),
    };
    if let Some(max) = schema.get("x-lineup-max-bytes").and_then(Value::as_u64) {
        check_bytes(s, path, usize::try_from(max).unwrap_or(usize::MAX))?;
    }
    check_not_consent(s, path)?;
    let cleaned = match kind {
        TextKind::Line => display_line(s, usize::MAX),
        TextKind::Text => display_text(s, usize::MAX),
        TextKind::Markdown => return Ok(s.to_owned()),
    };
    if let Some(max) = schema.get("x-lineup-max-graphemes").and_then(Value::as_u64) {
        let max = usize::try_from(max).unwrap_or(usize::MAX);
        check_graphemes(&cleaned, path, max)?;
    }
    let required = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) > 0;
    if required && cleaned.is_empty() {
        return Err(invalid(
            path,
            format!("{path} has no visible characters after display cleaning"),
        ));
    }
    Ok(cleaned)
}

/// Refuses agent text that imitates a line of the consent prompt (R-STD-5, R-SEC-5): no
/// component draws the prompt's title, its "Always allow" line, its risk words, or its capability
/// and risk lines, whatever the case, spacing or confusable letters.
fn check_not_consent(s: &str, path: &str) -> Result<(), ProtocolError> {
    match crate::imitates_consent_prompt_line(s) {
        Some(line) => Err(invalid(
            path,
            format!(
                "{path} imitates the consent prompt's {line:?} line, which only the host draws \
                 (R-STD-5)"
            ),
        )),
        None => Ok(()),
    }
}

/// Refuses `cleaned` longer than `max` extended grapheme clusters, with the limit (R-STD-3).
pub(crate) fn check_graphemes(cleaned: &str, path: &str, max: usize) -> Result<(), ProtocolError> {
    let count = cleaned.graphemes(true).count();
    if count > max {
        return Err(invalid(
            path,
            format!("{path} is {count} graphemes long after display cleaning; the limit is {max}"),
        )
        .limit(max));
    }
    Ok(())
}

/// Refuses `s` longer than `max` bytes: `too_large`, with the limit (R-STD-3).
pub(crate) fn check_bytes(s: &str, path: &str, max: usize) -> Result<(), ProtocolError> {
    if s.len() > max {
        return Err(ProtocolError::new(
            ErrorCode::TooLarge,
            RULE,
            format!("{path} is {} bytes; the limit is {max} bytes", s.len()),
        )
        .field(path)
        .limit(max));
    }
    Ok(())
}
