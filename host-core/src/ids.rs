//! Newtypes for the protocol's identifiers: each is built by `TryFrom`, so an invalid value is
//! unrepresentable, and its error carries the rejected input.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a value could not become one of the identifier newtypes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} {value:?} {reason}")]
pub struct InvalidValue {
    /// What kind of value was expected, e.g. `instance id`.
    pub kind: &'static str,
    /// The rejected input, shortened to at most 80 characters.
    pub value: String,
    /// What is wrong with it and how to fix it.
    pub reason: String,
}

impl InvalidValue {
    pub(crate) fn new(kind: &'static str, value: &str, reason: impl Into<String>) -> Self {
        Self {
            kind,
            value: shorten(value, 80),
            reason: reason.into(),
        }
    }
}

/// Shortens `s` to at most `max` characters for use in an error message.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

/// Declares a string newtype whose constructor runs `$check`.
macro_rules! string_newtype {
    ($(#[$meta:meta])* $name:ident, $kind:literal, $check:expr) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Wraps a value the crate itself built and knows to be valid.
            #[allow(dead_code)]
            pub(crate) fn known(value: impl Into<String>) -> Self {
                let value = value.into();
                debug_assert!(($check as fn(&str) -> Result<(), String>)(&value).is_ok(), "{value}");
                Self(value)
            }

            /// The identifier as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = InvalidValue;
            fn try_from(value: String) -> Result<Self, InvalidValue> {
                let check: fn(&str) -> Result<(), String> = $check;
                match check(&value) {
                    Ok(()) => Ok(Self(value)),
                    Err(reason) => Err(InvalidValue::new($kind, &value, reason)),
                }
            }
        }

        impl TryFrom<&str> for $name {
            type Error = InvalidValue;
            fn try_from(value: &str) -> Result<Self, InvalidValue> {
                Self::try_from(value.to_owned())
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> String {
                value.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

/// A non-empty string of at most 256 characters without control characters: the shape of the
/// opaque identifiers the protocol leaves free (message ids, conversation ids, call ids…).
fn opaque(s: &str) -> Result<(), String> {
    opaque_bounded(s, 256)
}

fn opaque_bounded(s: &str, max: usize) -> Result<(), String> {
    let len = s.chars().count();
    if len == 0 {
        return Err("must not be empty".into());
    }
    if len > max {
        return Err(format!("is {len} characters long; the limit is {max}"));
    }
    if let Some(c) = s.chars().find(|c| c.is_control()) {
        return Err(format!("contains the control character U+{:04X}", c as u32));
    }
    Ok(())
}

/// `[A-Za-z0-9._:-]{1,128}` (R-UI-1).
fn instance_id(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("must not be empty (R-UI-1: [A-Za-z0-9._:-]{1,128})".into());
    }
    if s.len() > 128 {
        return Err(format!(
            "is {} characters long; the limit is 128 (R-UI-1)",
            s.chars().count()
        ));
    }
    if let Some(c) = s.chars().find(|c| !is_id_char(*c)) {
        return Err(format!(
            "contains {c:?}; only A-Z a-z 0-9 . _ : - are allowed (R-UI-1)"
        ));
    }
    Ok(())
}

fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-')
}

/// `[A-Za-z][A-Za-z0-9._:-]{0,63}` (R-UI-7).
fn event_name(s: &str) -> Result<(), String> {
    match s.chars().next() {
        None => return Err("must not be empty (R-UI-7)".into()),
        Some(c) if !c.is_ascii_alphabetic() => {
            return Err(format!("must start with a letter, not {c:?} (R-UI-7)"))
        }
        Some(_) => {}
    }
    if s.len() > 64 {
        return Err(format!(
            "is {} characters long; the limit is 64 (R-UI-7)",
            s.chars().count()
        ));
    }
    if let Some(c) = s.chars().find(|c| !is_id_char(*c)) {
        return Err(format!(
            "contains {c:?}; only A-Z a-z 0-9 . _ : - are allowed (R-UI-7)"
        ));
    }
    Ok(())
}

/// Reverse-domain style: at least two dot-separated labels of `[A-Za-z0-9-]`, each 1–63
/// characters, not starting or ending with `-`; the first label starts with a letter (R-UI-2).
fn app_id(s: &str) -> Result<(), String> {
    if s.len() > 255 {
        return Err(format!("is {} bytes long; the limit is 255", s.len()));
    }
    let labels: Vec<&str> = s.split('.').collect();
    if labels.len() < 2 {
        return Err(
            "must be reverse-domain style with at least two labels, e.g. com.example.app (R-UI-2)"
                .into(),
        );
    }
    for label in &labels {
        if label.is_empty() || label.len() > 63 {
            return Err(format!(
                "has a label of {} characters; each label is 1 to 63 characters (R-UI-2)",
                label.len()
            ));
        }
        if let Some(c) = label
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '-'))
        {
            return Err(format!(
                "contains {c:?}; labels use only A-Z a-z 0-9 and - (R-UI-2)"
            ));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(format!(
                "has the label {label:?}; a label must not start or end with '-' (R-UI-2)"
            ));
        }
    }
    if !labels[0].starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err("must start with a letter (R-UI-2)".into());
    }
    Ok(())
}

/// A capability name: dot-separated labels of `[A-Za-z0-9_-]`, starting with a letter
/// (`app.open_url`, `clipboard.write`), at most 128 characters (R-CAP-2).
fn capability_name(s: &str) -> Result<(), String> {
    if s.is_empty() || s.len() > 128 {
        return Err(format!(
            "is {} characters long; it must be 1 to 128 (R-CAP-2)",
            s.chars().count()
        ));
    }
    if !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err("must start with a letter (R-CAP-2)".into());
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "contains {c:?}; only A-Z a-z 0-9 . _ - are allowed (R-CAP-2)"
        ));
    }
    if s.split('.').any(str::is_empty) {
        return Err("has an empty label between dots (R-CAP-2)".into());
    }
    Ok(())
}

string_newtype!(
    /// The id of one Surface instance within a conversation: `[A-Za-z0-9._:-]{1,128}` (R-UI-1).
    InstanceId,
    "instance id",
    instance_id
);
string_newtype!(
    /// The name of a Surface event: `[A-Za-z][A-Za-z0-9._:-]{0,63}` (R-UI-7).
    EventName,
    "event name",
    event_name
);
string_newtype!(
    /// A reverse-domain application id such as `com.lineup.svg-canvas` (R-UI-2).
    AppId,
    "app id",
    app_id
);
string_newtype!(
    /// The `id` of one envelope (R-ENV-1): a non-empty opaque string.
    MessageId,
    "message id",
    opaque
);
string_newtype!(
    /// The conversation an envelope belongs to (R-ENV-1): a non-empty opaque string.
    ConversationId,
    "conversation id",
    opaque
);
string_newtype!(
    /// The id of a sender or target (R-ENV-1): a non-empty opaque string.
    PartyId,
    "party id",
    opaque
);
string_newtype!(
    /// The idempotency key of an `app.call` (R-CAP-5): a non-empty opaque string.
    CallId,
    "call id",
    opaque
);
string_newtype!(
    /// An inventory revision (R-INV-2): opaque, compared for equality only.
    Revision,
    "revision",
    opaque
);
string_newtype!(
    /// The version of a capability or standard component (R-CAP-2): opaque, not SemVer
    /// (`"1.0"`, `"1"`).
    OpaqueVersion,
    "version",
    |s| opaque_bounded(s, 64)
);
string_newtype!(
    /// The name of an App Capability such as `app.open_url` (R-CAP-2).
    CapabilityName,
    "capability name",
    capability_name
);
string_newtype!(
    /// The identity of an agent as the embedder or the transport vouches for it when a session
    /// opens (R-SES-1), never the self-asserted `sender.id`: remembered grants and visibility
    /// policy are keyed by it. A non-empty opaque string.
    AgentIdentity,
    "agent identity",
    opaque
);
string_newtype!(
    /// The id of a Surface declared by an installed app, or of a standard component
    /// (R-UI-9, R-INV-1): `[A-Za-z0-9._:-]{1,128}`.
    SurfaceId,
    "surface id",
    instance_id
);

string_newtype!(
    /// The opaque id of the MCP server an MCP App view came from, as the agent names it
    /// (R-MCP-3): a view's requests go up with it, and the agent sends them to that server only
    /// (R-MCP-6). A non-empty opaque string.
    McpServerId,
    "server id",
    opaque
);
string_newtype!(
    /// The name of the MCP tool whose result an MCP App view shows (R-MCP-3): 1 to 128
    /// characters, no control characters.
    McpToolName,
    "tool name",
    |s| opaque_bounded(s, 128)
);

/// The SemVer version of an application (R-UI-2); only `app.version` is SemVer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct AppVersion(semver::Version);

impl AppVersion {
    /// The parsed SemVer version.
    pub fn semver(&self) -> &semver::Version {
        &self.0
    }
}

impl TryFrom<String> for AppVersion {
    type Error = InvalidValue;
    fn try_from(value: String) -> Result<Self, InvalidValue> {
        Self::try_from(value.as_str())
    }
}

impl TryFrom<&str> for AppVersion {
    type Error = InvalidValue;
    fn try_from(value: &str) -> Result<Self, InvalidValue> {
        semver::Version::parse(value).map(Self).map_err(|e| {
            InvalidValue::new(
                "app version",
                value,
                format!("is not SemVer ({e}); write e.g. 1.0.0 (R-UI-2)"),
            )
        })
    }
}

impl From<AppVersion> for String {
    fn from(value: AppVersion) -> String {
        value.0.to_string()
    }
}

impl fmt::Display for AppVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The risk level a capability declares (R-CAP-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Shows something; no lasting effect.
    DisplayOnly,
    /// Needs the user's confirmation.
    UserConfirmation,
    /// Needs a native system permission each time; never remembered (R-CAP-3).
    SystemPermission,
    /// Needs an extra identity check each time; never remembered (R-CAP-3).
    Restricted,
}

impl Risk {
    /// The level as the protocol writes it (`display_only`, `user_confirmation`,
    /// `system_permission`, `restricted`), for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::DisplayOnly => "display_only",
            Risk::UserConfirmation => "user_confirmation",
            Risk::SystemPermission => "system_permission",
            Risk::Restricted => "restricted",
        }
    }

    /// Whether a grant for this risk may be remembered (R-CAP-3).
    pub fn may_be_remembered(self) -> bool {
        matches!(self, Risk::DisplayOnly | Risk::UserConfirmation)
    }
}

/// The status of an `app.result` (R-CAP-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The capability ran and returned a result.
    Completed,
    /// The user or the policy refused the call.
    Rejected,
    /// The call was cancelled before it ran.
    Cancelled,
    /// `expires_at` passed before the call could run.
    Expired,
    /// The capability is unknown, revoked, or not supported by this host.
    Unsupported,
    /// The capability ran and failed.
    Failed,
}

impl fmt::Display for Risk {
    /// The protocol's spelling, as [`Risk::as_str`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Status {
    /// The status as the protocol writes it (`completed`, `rejected`, `cancelled`, `expired`,
    /// `unsupported`, `failed`), for messages and logs.
    ///
    /// ```
    /// use lineup_host_core::Status;
    /// assert_eq!(Status::Rejected.as_str(), "rejected");
    /// assert_eq!(Status::Expired.to_string(), "expired");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::Rejected => "rejected",
            Status::Cancelled => "cancelled",
            Status::Expired => "expired",
            Status::Unsupported => "unsupported",
            Status::Failed => "failed",
        }
    }
}

impl fmt::Display for Status {
    /// The protocol's spelling, as [`Status::as_str`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The sender or target of an envelope: `{kind, id}` (R-ENV-1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Party {
    /// What kind of party this is, e.g. `agent` or `client`.
    pub kind: PartyId,
    /// The party's id.
    pub id: PartyId,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_cap_2_r_cap_4_status_and_risk_are_spelled_as_on_the_wire() {
        for status in [
            Status::Completed,
            Status::Rejected,
            Status::Cancelled,
            Status::Expired,
            Status::Unsupported,
            Status::Failed,
        ] {
            let wire = serde_json::to_value(status).unwrap_or_default();
            assert_eq!(wire, status.as_str(), "{status:?}");
            assert_eq!(status.to_string(), status.as_str());
        }
        for risk in [
            Risk::DisplayOnly,
            Risk::UserConfirmation,
            Risk::SystemPermission,
            Risk::Restricted,
        ] {
            let wire = serde_json::to_value(risk).unwrap_or_default();
            assert_eq!(wire, risk.as_str(), "{risk:?}");
            assert_eq!(risk.to_string(), risk.as_str());
        }
    }

    #[test]
    fn r_ui_1_instance_id_bounds() {
        assert!(InstanceId::try_from("").is_err());
        assert!(InstanceId::try_from("a").is_ok());
        assert!(InstanceId::try_from("a".repeat(128)).is_ok());
        let err = InstanceId::try_from("a".repeat(129)).unwrap_err();
        assert!(err.to_string().contains("limit is 128"), "{err}");
        assert!(InstanceId::try_from("weather.dashboard.01").is_ok());
        assert!(InstanceId::try_from("a b").is_err());
        assert!(InstanceId::try_from("é").is_err());
    }

    #[test]
    fn r_ui_7_event_name_bounds() {
        assert!(EventName::try_from("a".repeat(64)).is_ok());
        assert!(EventName::try_from("a".repeat(65)).is_err());
        let err = EventName::try_from("9x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "event name \"9x\" must start with a letter, not '9' (R-UI-7)"
        );
        assert!(EventName::try_from("refresh").is_ok());
        assert!(EventName::try_from("a.b_c:d-e").is_ok());
        assert!(EventName::try_from("").is_err());
    }

    #[test]
    fn r_ui_2_app_id_allows_dash_labels() {
        assert!(AppId::try_from("com.lineup.svg-canvas").is_ok());
        assert!(AppId::try_from("com.lineup.weather.dashboard").is_ok());
        assert!(AppId::try_from("weather").is_err());
        assert!(AppId::try_from("com..x").is_err());
        assert!(AppId::try_from("com.-x").is_err());
        assert!(AppId::try_from("1com.x").is_err());
        assert!(AppId::try_from("com.x_y").is_err());
    }

    #[test]
    fn r_ui_2_app_version_is_semver() {
        assert!(AppVersion::try_from("1.0.0").is_ok());
        assert!(AppVersion::try_from("1.0").is_err());
        assert!(AppVersion::try_from("1.0.0-beta.1+build").is_ok());
    }

    #[test]
    fn r_cap_2_capability_names() {
        for ok in [
            "app.open_url",
            "clipboard.write",
            "device.pick_file",
            "artifact.save",
        ] {
            assert!(CapabilityName::try_from(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".x", "x..y", "1x", "x y"] {
            assert!(CapabilityName::try_from(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn opaque_ids_refuse_empty_and_control() {
        assert!(MessageId::try_from("").is_err());
        assert!(MessageId::try_from("a\u{7}").is_err());
        assert!(CallId::try_from("call_open_docs_01").is_ok());
        assert!(OpaqueVersion::try_from("1.0").is_ok());
    }

    #[test]
    fn r_cap_3_only_low_risks_are_remembered() {
        assert!(Risk::UserConfirmation.may_be_remembered());
        // `as_str` is the wire form.
        for risk in [
            Risk::DisplayOnly,
            Risk::UserConfirmation,
            Risk::SystemPermission,
            Risk::Restricted,
        ] {
            assert_eq!(
                serde_json::to_value(risk).ok(),
                Some(serde_json::Value::from(risk.as_str()))
            );
        }
        assert!(!Risk::SystemPermission.may_be_remembered());
        assert!(!Risk::Restricted.may_be_remembered());
    }

    #[test]
    fn shorten_cuts_on_char_boundary() {
        assert_eq!(shorten("上海上海", 2), "上海…");
        assert_eq!(shorten("ab", 2), "ab");
    }
}
