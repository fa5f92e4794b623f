//! One component instance and its answer state machine (R-STD-6, R-STD-7): open → answered
//! (locked) once per round, reopened by a patch of `state.error`/`state.errors`, and the
//! `submit`/`cancel` data built from the checked answer.

use serde_json::{json, Map, Value};

use crate::ids::MessageId;
use crate::ids::Party;
use crate::json::JsonObject;
use crate::timestamp::Timestamp;

use super::catalog::ComponentKind;
use super::rules::check_answer;

/// Who vouches for the user's gesture (R-STD-6, R-STD-16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The host's own renderer, after its input gate (R-STD-8).
    Host,
    /// The embedder's renderer, which vouches for the gesture (R-STD-16).
    Embedder,
}

impl Via {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Host => "host",
            Via::Embedder => "embedder",
        }
    }
}

/// The kind of input event that carried the answer (R-STD-6, R-STD-8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A pointer release.
    Pointer,
    /// A permitted key release.
    Keyboard,
    /// A touch end.
    Touch,
}

impl InputKind {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            InputKind::Pointer => "pointer",
            InputKind::Keyboard => "keyboard",
            InputKind::Touch => "touch",
        }
    }
}

/// What the driver reports the user did, after its own activation checks (R-STD-8).
#[derive(Debug, Clone, PartialEq)]
pub enum UserAnswer {
    /// The user submitted `answer`.
    Submit {
        /// The typed answer, checked against the props before it is sent (R-STD-6).
        answer: Value,
        /// Who vouches for the gesture.
        via: Via,
        /// Which input event carried it.
        input: InputKind,
    },
    /// The user cancelled (Escape, the cancel button).
    Cancel {
        /// Who vouches for the gesture.
        via: Via,
        /// Which input event carried it.
        input: InputKind,
    },
}

/// Why an answer was dropped (counted, nothing sent). A delegate hears it as its
/// `InvalidAnswer` (R-STD-16).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerRefusal {
    /// The key names no open component instance of this generation (replaced or closed).
    #[error("the instance is not open at this generation")]
    Stale,
    /// This component takes no such answer (a display component, or `submit` on `progress`).
    #[error("component {kind} takes no {what}")]
    NotAnswerable {
        /// The component.
        kind: ComponentKind,
        /// `submit` or `cancel`.
        what: &'static str,
    },
    /// The round was answered already (R-STD-7).
    #[error("round {round} was answered already")]
    Locked {
        /// The round.
        round: u32,
    },
    /// The answer breaks the props (R-STD-6).
    #[error("{field} {reason}")]
    Invalid {
        /// The offending part of the answer, e.g. `answer.email`.
        field: String,
        /// Which rule it broke.
        reason: String,
    },
    /// The event data would be 16 KiB or more (R-UI-7, R-STD-6).
    #[error("the answer's data is {bytes} bytes; it must be smaller than {limit}")]
    TooLarge {
        /// Its size.
        bytes: usize,
        /// The limit it must stay under.
        limit: usize,
    },
}

/// Checks `answer` against the answer schema of `kind` and against `props` (the options of a
/// choice, an input's type, length, range and pattern, a form's fields), as the kernel checks
/// every answer before it is sent (R-STD-6, R-STD-16): `Err(AnswerRefusal::Invalid)` names the
/// field and why.
///
/// ```
/// use lineup_host_core::{validate_answer, ComponentKind, JsonObject};
/// let props = JsonObject::try_from(serde_json::json!({"label": "Region",
///     "options": [{"value": "eu", "label": "Europe"}]})).unwrap_or_default();
/// assert!(validate_answer(ComponentKind::Choice, &props, &serde_json::json!("eu")).is_ok());
/// assert!(validate_answer(ComponentKind::Choice, &props, &serde_json::json!("us")).is_err());
/// ```
pub fn validate_answer(
    kind: ComponentKind,
    props: &JsonObject,
    answer: &Value,
) -> Result<(), AnswerRefusal> {
    if let Some(error) = kind.schemas().answer.validator.iter_errors(answer).next() {
        let field = super::validate::dotted("answer", error.instance_path().as_str());
        return Err(AnswerRefusal::Invalid {
            field,
            reason: crate::ids::shorten(&error.to_string(), 160),
        });
    }
    check_answer(kind, props.as_map(), answer)
        .map_err(|(field, reason)| AnswerRefusal::Invalid { field, reason })
}

/// Where an instance stands in its round (R-STD-7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Waiting for the user.
    Open,
    /// Answered (submit or cancel): locked until a reopening patch.
    Answered,
}

/// One open component instance.
#[derive(Debug, Clone)]
pub(crate) struct Instance {
    pub(crate) generation: crate::keys::Generation,
    pub(crate) kind: ComponentKind,
    pub(crate) props: JsonObject,
    pub(crate) state: JsonObject,
    /// The `id` of the `ui.open` that made this generation (R-STD-6).
    pub(crate) opened_by: MessageId,
    /// The `id` of the last open or patch applied (R-STD-6).
    pub(crate) state_from: MessageId,
    pub(crate) opener: Party,
    pub(crate) round: u32,
    pub(crate) status: Status,
    pub(crate) expires_at: Option<Timestamp>,
    /// The user's unsent draft, as the view last reported it (R-STD-15).
    pub(crate) draft: Option<Value>,
    /// The event (`submit` or `cancel`) and data of the last answer (R-STD-15 `last`).
    pub(crate) last: Option<(&'static str, JsonObject)>,
}

impl Instance {
    /// Checks the user's `answer` and, if it stands, locks the round and returns the
    /// `ui.event` name and data (R-STD-6, R-STD-7).
    pub(crate) fn answer(
        &mut self,
        answer: &UserAnswer,
        answer_id: &str,
        max_data_bytes: usize,
    ) -> Result<(&'static str, JsonObject), AnswerRefusal> {
        let (event, via, input, value) = match answer {
            UserAnswer::Submit { answer, via, input } => ("submit", via, input, Some(answer)),
            UserAnswer::Cancel { via, input } => ("cancel", via, input, None),
        };
        let answerable =
            self.kind.is_question() || (event == "cancel" && self.kind == ComponentKind::Progress);
        if !answerable {
            return Err(AnswerRefusal::NotAnswerable {
                kind: self.kind,
                what: event,
            });
        }
        if self.status == Status::Answered {
            return Err(AnswerRefusal::Locked { round: self.round });
        }
        if let Some(value) = value {
            validate_answer(self.kind, &self.props, value)?;
        }
        let mut data = Map::new();
        if let Some(value) = value {
            data.insert("answer".into(), value.clone());
        }
        data.insert("answer_id".into(), json!(answer_id));
        data.insert("opened_by".into(), json!(self.opened_by.as_str()));
        data.insert("state_from".into(), json!(self.state_from.as_str()));
        data.insert("round".into(), json!(self.round));
        data.insert("via".into(), json!(via.as_str()));
        data.insert("input".into(), json!(input.as_str()));
        let data = JsonObject::from(data);
        let bytes = data.to_json().len();
        if bytes >= max_data_bytes {
            return Err(AnswerRefusal::TooLarge {
                bytes,
                limit: max_data_bytes,
            });
        }
        self.status = Status::Answered;
        self.draft = None;
        self.last = Some((event, data.clone()));
        Ok((event, data))
    }

    /// Applies a patch's `state` sent by envelope `by`; returns whether it reopened an answered
    /// `input`, `choice` or `form` for a new round (R-STD-7).
    pub(crate) fn patched(&mut self, state: JsonObject, by: MessageId) -> bool {
        let flags_error = |key: &str| match state.as_map().get(key) {
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Object(m)) => !m.is_empty(),
            _ => false,
        };
        let reopen = self.status == Status::Answered
            && self.kind.reopens_on_error()
            && (flags_error("error") || flags_error("errors"));
        self.state = state;
        self.state_from = by;
        if reopen {
            self.status = Status::Open;
            self.round += 1;
        }
        reopen
    }
}
