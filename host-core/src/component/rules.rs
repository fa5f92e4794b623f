//! The checks a JSON Schema cannot express (R-STD-3, R-STD-6): unique option values, a `default`
//! among the options, `min_selected`/`max_selected`, `min`/`max` and length bounds that agree, a
//! `pattern` that compiles (Rust `regex`, linear time), a progress value within its `max`, unique
//! form field names; and an answer checked against the props before it is sent.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::error::ProtocolError;
use crate::timestamp::Timestamp;

use super::catalog::ComponentKind;
use super::validate::invalid;

/// The default `max_length` of an `input` (standard-components.md §3).
pub const DEFAULT_MAX_LENGTH: u64 = 1000;
/// The longest compiled form of an `input` pattern, in bytes of the regex engine's program.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// Checks cleaned `props` of `kind` (named `base`) beyond the schema.
pub(crate) fn check_props(
    kind: ComponentKind,
    props: &Map<String, Value>,
    base: &str,
) -> Result<(), ProtocolError> {
    match kind {
        ComponentKind::Choice => check_choice(props, base),
        ComponentKind::Input => check_input(props, base),
        ComponentKind::Form => check_form(props, base),
        ComponentKind::Markdown
        | ComponentKind::Text
        | ComponentKind::Status
        | ComponentKind::Progress
        | ComponentKind::Alert
        | ComponentKind::Confirm => Ok(()),
    }
}

/// Checks cleaned `state` of `kind` (named `base`) against its props beyond the schema.
pub(crate) fn check_state(
    kind: ComponentKind,
    props: &Map<String, Value>,
    state: &Map<String, Value>,
    base: &str,
) -> Result<(), ProtocolError> {
    match kind {
        ComponentKind::Progress => {
            let max = props.get("max").and_then(Value::as_f64).unwrap_or(100.0);
            match state.get("value").and_then(Value::as_f64) {
                Some(value) if value > max => Err(invalid(
                    &format!("{base}.value"),
                    format!("{base}.value is {value}; props.max is {max}"),
                )),
                _ => Ok(()),
            }
        }
        ComponentKind::Form => {
            let names = field_names(props);
            let errors = state.get("errors").and_then(Value::as_object);
            for name in errors.into_iter().flat_map(Map::keys) {
                if !names.contains(name.as_str()) {
                    return Err(invalid(
                        &format!("{base}.errors.{name}"),
                        format!("{base}.errors names {name}, which is not a field of the form"),
                    ));
                }
            }
            Ok(())
        }
        ComponentKind::Markdown
        | ComponentKind::Text
        | ComponentKind::Status
        | ComponentKind::Alert
        | ComponentKind::Confirm
        | ComponentKind::Choice
        | ComponentKind::Input => Ok(()),
    }
}

fn field_names(props: &Map<String, Value>) -> BTreeSet<&str> {
    fields(props)
        .filter_map(|f| f.get("name").and_then(Value::as_str))
        .collect()
}

fn fields(props: &Map<String, Value>) -> impl Iterator<Item = &Map<String, Value>> {
    props
        .get("fields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

fn flag(props: &Map<String, Value>, name: &str) -> bool {
    props.get(name).and_then(Value::as_bool).unwrap_or(false)
}

fn option_values(props: &Map<String, Value>) -> Vec<&str> {
    props
        .get("options")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|o| o.get("value").and_then(Value::as_str))
        .collect()
}

/// How many options a multiple choice needs at least and may have at most.
fn selection_bounds(props: &Map<String, Value>) -> (u64, u64) {
    let count = option_values(props).len() as u64;
    let min = props
        .get("min_selected")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let max = props
        .get("max_selected")
        .and_then(Value::as_u64)
        .unwrap_or(count);
    (min, max)
}

fn check_choice(props: &Map<String, Value>, base: &str) -> Result<(), ProtocolError> {
    let values = option_values(props);
    for (i, value) in values.iter().enumerate() {
        if let Some(first) = values[..i].iter().position(|v| v == value) {
            return Err(invalid(
                &format!("{base}.options.{i}.value"),
                format!("{base}.options.{i}.value repeats options.{first}.value; option values are unique"),
            ));
        }
    }
    let multiple = flag(props, "multiple");
    let count = values.len() as u64;
    if multiple {
        if flag(props, "immediate") {
            return Err(invalid(
                &format!("{base}.immediate"),
                format!("{base}.immediate applies to a single choice only"),
            ));
        }
        let (min, max) = selection_bounds(props);
        if max > count {
            return Err(invalid(
                &format!("{base}.max_selected"),
                format!("{base}.max_selected is {max}; there are {count} options"),
            )
            .limit(values.len()));
        }
        if min > max {
            return Err(invalid(
                &format!("{base}.min_selected"),
                format!("{base}.min_selected is {min}, more than max_selected {max}"),
            ));
        }
    } else {
        for name in ["min_selected", "max_selected"] {
            if props.get(name).is_some() {
                return Err(invalid(
                    &format!("{base}.{name}"),
                    format!("{base}.{name} applies only when multiple is true"),
                ));
            }
        }
    }
    if let Some(default) = props.get("default") {
        let field = format!("{base}.default");
        check_choice_value(props, default, false)
            .map_err(|reason| invalid(&field, format!("{field} {reason}")))?;
    }
    Ok(())
}

fn check_input(props: &Map<String, Value>, base: &str) -> Result<(), ProtocolError> {
    let max_length = props
        .get("max_length")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_MAX_LENGTH);
    if let Some(min_length) = props.get("min_length").and_then(Value::as_u64) {
        if min_length > max_length {
            return Err(invalid(
                &format!("{base}.min_length"),
                format!("{base}.min_length is {min_length}, more than max_length {max_length}"),
            ));
        }
    }
    if let (Some(min), Some(max)) = (
        props.get("min").and_then(Value::as_f64),
        props.get("max").and_then(Value::as_f64),
    ) {
        if min > max {
            return Err(invalid(
                &format!("{base}.min"),
                format!("{base}.min is {min}, more than max {max}"),
            ));
        }
    }
    if let Some(pattern) = props.get("pattern").and_then(Value::as_str) {
        compile_pattern(pattern).map_err(|e| {
            let field = format!("{base}.pattern");
            invalid(&field, format!("{field} does not compile: {e}"))
        })?;
    }
    if let Some(default) = props.get("default") {
        let field = format!("{base}.default");
        check_input_value(props, default, false)
            .map_err(|reason| invalid(&field, format!("{field} {reason}")))?;
    }
    Ok(())
}

fn check_form(props: &Map<String, Value>, base: &str) -> Result<(), ProtocolError> {
    let mut seen = BTreeSet::new();
    for (i, field) in fields(props).enumerate() {
        let at = format!("{base}.fields.{i}");
        let name = field
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !seen.insert(name) {
            return Err(invalid(
                &format!("{at}.name"),
                format!("{at}.name {name} repeats an earlier field's name; names are unique"),
            ));
        }
        match field.get("kind").and_then(Value::as_str) {
            Some("choice") => check_choice(field, &at)?,
            Some("input") => check_input(field, &at)?,
            _ => {}
        }
    }
    Ok(())
}

/// Compiles an `input` pattern anchored to the whole answer, with the engine's size limits.
pub(crate) fn compile_pattern(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(&format!("^(?:{pattern})$"))
        .size_limit(PATTERN_SIZE_LIMIT)
        .dfa_size_limit(PATTERN_SIZE_LIMIT)
        .build()
}

/// Checks a user's `answer` to a question of `kind` against its cleaned `props` (R-STD-6); the
/// error is the answer's field and the rule it broke.
pub(crate) fn check_answer(
    kind: ComponentKind,
    props: &Map<String, Value>,
    answer: &Value,
) -> Result<(), (String, String)> {
    let at = |field: &str, reason: String| (field.to_owned(), reason);
    match kind {
        ComponentKind::Confirm => match answer {
            Value::Bool(_) => Ok(()),
            _ => Err(at("answer", "must be true or false".into())),
        },
        ComponentKind::Choice => {
            check_choice_value(props, answer, true).map_err(|r| at("answer", r))
        }
        ComponentKind::Input => check_input_value(props, answer, true).map_err(|r| at("answer", r)),
        ComponentKind::Form => check_form_answer(props, answer),
        ComponentKind::Markdown
        | ComponentKind::Text
        | ComponentKind::Status
        | ComponentKind::Progress
        | ComponentKind::Alert => Err(at("answer", "this component takes no answer".into())),
    }
}

fn check_form_answer(props: &Map<String, Value>, answer: &Value) -> Result<(), (String, String)> {
    let Some(map) = answer.as_object() else {
        return Err(("answer".into(), "must be an object {name: value}".into()));
    };
    for name in map.keys() {
        if !fields(props).any(|f| f.get("name").and_then(Value::as_str) == Some(name)) {
            return Err((
                format!("answer.{name}"),
                "is not a field of the form".into(),
            ));
        }
    }
    for field in fields(props) {
        let name = field
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let path = format!("answer.{name}");
        let value = map.get(name).unwrap_or(&Value::Null);
        let checked = match field.get("kind").and_then(Value::as_str) {
            Some("toggle") => match value {
                Value::Bool(_) | Value::Null => Ok(()),
                _ => Err("must be true or false".to_owned()),
            },
            Some("choice") if value.is_null() => Ok(()),
            Some("choice") => check_choice_value(field, value, true),
            _ => check_input_value(field, value, true),
        };
        checked.map_err(|reason| (path, reason))?;
    }
    Ok(())
}

/// Whether `value` is a valid pick of the choice `props`; `strict` also asks for
/// `min_selected` (a `default` may leave it to the user).
fn check_choice_value(
    props: &Map<String, Value>,
    value: &Value,
    strict: bool,
) -> Result<(), String> {
    let values = option_values(props);
    let known = |v: &str| values.contains(&v);
    if flag(props, "multiple") {
        let Some(items) = value.as_array() else {
            return Err("must be an array of option values (multiple is true)".into());
        };
        let mut seen = BTreeSet::new();
        for item in items {
            let Some(v) = item.as_str().filter(|v| known(v)) else {
                return Err(format!("holds {item}, which is not an option value"));
            };
            if !seen.insert(v) {
                return Err(format!("holds {v:?} twice"));
            }
        }
        let (min, max) = selection_bounds(props);
        let n = items.len() as u64;
        if n > max || (strict && n < min) {
            return Err(format!(
                "selects {n} options; between {min} and {max} may be selected"
            ));
        }
        Ok(())
    } else {
        match value.as_str() {
            Some(v) if known(v) => Ok(()),
            Some(_) => Err(format!("{value} is not an option value")),
            None => Err("must be one option value (a string; multiple is false)".into()),
        }
    }
}

/// Whether `value` is a valid answer of the input `props`; `strict` also applies `required`.
fn check_input_value(
    props: &Map<String, Value>,
    value: &Value,
    strict: bool,
) -> Result<(), String> {
    let kind = props.get("type").and_then(Value::as_str).unwrap_or("text");
    let required = strict && flag(props, "required");
    let empty = match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        _ => false,
    };
    if empty {
        return if required {
            Err("is required".into())
        } else {
            Ok(())
        };
    }
    if kind == "number" {
        let Some(n) = value.as_f64() else {
            return Err("must be a number".into());
        };
        return check_number_value(props, n);
    }
    let Some(s) = value.as_str() else {
        return Err(format!("must be a string ({kind})"));
    };
    let chars = s.chars().count() as u64;
    let max = props
        .get("max_length")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_MAX_LENGTH);
    let min = props.get("min_length").and_then(Value::as_u64).unwrap_or(0);
    if chars > max || chars < min {
        return Err(format!(
            "is {chars} characters long; between {min} and {max} are allowed"
        ));
    }
    if s.contains('\0') || (kind != "multiline" && s.contains(['\n', '\r'])) {
        return Err("contains a line break or U+0000".into());
    }
    if let Some(pattern) = props.get("pattern").and_then(Value::as_str) {
        let matches = compile_pattern(pattern).map(|r| r.is_match(s));
        if matches != Ok(true) {
            return Err("does not match the pattern".into());
        }
    }
    check_typed_text(kind, s)
}

fn check_number_value(props: &Map<String, Value>, n: f64) -> Result<(), String> {
    if !n.is_finite() || n.abs() > super::validate::MAX_SAFE_INTEGER as f64 {
        return Err("must be a finite number of magnitude at most 2^53".into());
    }
    let min = props.get("min").and_then(Value::as_f64);
    let max = props.get("max").and_then(Value::as_f64);
    if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
        return Err(format!("{n} is outside {min:?}..={max:?}"));
    }
    if flag(props, "integer") && n.fract() != 0.0 {
        return Err(format!("{n} is not an integer"));
    }
    if let Some(step) = props.get("step").and_then(Value::as_f64) {
        let steps = (n - min.unwrap_or(0.0)) / step;
        if (steps - steps.round()).abs() > 1e-9 {
            return Err(format!("{n} is not a multiple of step {step}"));
        }
    }
    Ok(())
}

/// The checks of the typed text inputs: the shape of an e-mail address, a URL, a date
/// (`YYYY-MM-DD`), a time (`HH:MM` or `HH:MM:SS`), a date and time (RFC 3339, or
/// `YYYY-MM-DDTHH:MM` without a zone). Such answers are never opened (standard-components.md §3).
fn check_typed_text(kind: &str, s: &str) -> Result<(), String> {
    let ok = match kind {
        "email" => {
            let mut parts = s.split('@');
            let local = parts.next().unwrap_or_default();
            let domain = parts.next().unwrap_or_default();
            parts.next().is_none()
                && !local.is_empty()
                && domain.contains('.')
                && !s.chars().any(char::is_whitespace)
        }
        "url" => url::Url::parse(s).is_ok(),
        "date" => is_date(s),
        "time" => is_time(s),
        "datetime" => {
            Timestamp::parse(s).is_some()
                || s.split_once('T')
                    .is_some_and(|(d, t)| is_date(d) && t.len() == 5 && is_time(t))
        }
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("is not a valid {kind}"))
    }
}

/// The numbers of `s` split at `sep`, each of exactly `widths` ASCII digits.
fn numbers(s: &str, sep: char, widths: &[usize]) -> Option<Vec<u32>> {
    let parts: Vec<&str> = s.split(sep).collect();
    if parts.len() != widths.len() {
        return None;
    }
    parts
        .iter()
        .zip(widths)
        .map(|(p, w)| {
            (p.len() == *w && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse().ok())
                .flatten()
        })
        .collect()
}

fn is_date(s: &str) -> bool {
    let Some(n) = numbers(s, '-', &[4, 2, 2]) else {
        return false;
    };
    let month = u8::try_from(n[1])
        .ok()
        .and_then(|m| time::Month::try_from(m).ok());
    match (i32::try_from(n[0]), month, u8::try_from(n[2])) {
        (Ok(y), Some(m), Ok(d)) => time::Date::from_calendar_date(y, m, d).is_ok(),
        _ => false,
    }
}

fn is_time(s: &str) -> bool {
    let n = numbers(s, ':', &[2, 2]).or_else(|| numbers(s, ':', &[2, 2, 2]));
    n.is_some_and(|n| n[0] < 24 && n[1] < 60 && n.get(2).is_none_or(|s| *s < 60))
}
