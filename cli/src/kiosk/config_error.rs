//! A `kiosk.toml` that does not fit its schema, said the way the kiosk's other configuration
//! errors are: `FILE:LINE:COLUMN: KEY: message`, the key in full (`agent.agent_id`,
//! `region[1].width`), never the type names of the reader.

use std::path::Path;

use serde_path_to_error::Segment;

/// `FILE:LINE:COLUMN: KEY: message` for a file that does not deserialize.
pub(super) fn describe(
    path: &Path,
    text: &str,
    error: &serde_path_to_error::Error<toml::de::Error>,
) -> String {
    let inner = error.inner();
    let mut key = key_of(error.path());
    let raw = inner.message().trim_end();
    let message = if let Some(field) = between(raw, "missing field `", "`") {
        key = join(&key, field);
        "missing".to_owned()
    } else if let Some(field) = between(raw, "unknown field `", "`") {
        let known = raw
            .split_once(", expected ")
            .map(|(_, known)| {
                let known = known.strip_prefix("one of ").unwrap_or(known);
                format!("; the keys here are {known}")
            })
            .unwrap_or_default();
        // The reader's path already ends at the unknown key.
        if !key.ends_with(field) {
            key = join(&key, field);
        }
        format!("unknown key{known}")
    } else if let Some(found) = unsigned_expected(raw) {
        format!("{found} is not a non-negative integer")
    } else if raw.starts_with("data did not match any variant") && key == "display.monitor" {
        "is neither a monitor index (0, 1, …) nor a connector name (\"HDMI-1\")".to_owned()
    } else {
        raw.to_owned()
    };
    let place = match inner.span() {
        Some(span) => {
            let (line, column) = line_column(text, span.start);
            format!("{}:{line}:{column}", path.display())
        }
        None => path.display().to_string(),
    };
    if key.is_empty() {
        format!("{place}: {message}")
    } else {
        format!("{place}: {key}: {message}")
    }
}

/// The dotted key of `path`, without the span wrapper's own fields.
fn key_of(path: &serde_path_to_error::Path) -> String {
    let mut key = String::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => key.push_str(&format!("[{index}]")),
            Segment::Map { key: name } | Segment::Enum { variant: name } => {
                if name.starts_with("$__") {
                    continue;
                }
                key = join(&key, name);
            }
            Segment::Unknown => {}
        }
    }
    key
}

fn join(key: &str, field: &str) -> String {
    if key.is_empty() {
        field.to_owned()
    } else {
        format!("{key}.{field}")
    }
}

/// The text between `start` (at the beginning of `text`) and the next `end`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(start)?;
    rest.split_once(end).map(|(inside, _)| inside)
}

/// What was found where a non-negative integer was expected: `-5` for
/// ``invalid value: integer `-5`, expected u64``.
fn unsigned_expected(raw: &str) -> Option<String> {
    let (found, expected) = raw.split_once(", expected ")?;
    if !matches!(expected, "u64" | "usize" | "u32" | "u16" | "u8") {
        return None;
    }
    let found = found
        .strip_prefix("invalid value: ")
        .or_else(|| found.strip_prefix("invalid type: "))?;
    Some(match between(found, "integer `", "`") {
        Some(number) => number.to_owned(),
        None => found.to_owned(),
    })
}

/// The 1-based line and column of byte `offset` in `text`.
pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    // A span always starts on a character boundary; should one not, the whole text is counted.
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(1, |l| l.chars().count() + 1);
    (line, column)
}
