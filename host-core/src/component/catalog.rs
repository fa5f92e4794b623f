//! The v1 catalog of standard components (R-STD-3, R-STD-14): the nine ids, their frozen JSON
//! Schemas (embedded from `schemas/components/`), the events each may send, and the set of
//! `(id, version)` the driver can render now.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;

use sha2::Digest as _;

use super::wire::{ComponentSchemas, StandardComponent};
use crate::error::UsageError;
use crate::ids::{EventName, OpaqueVersion, SurfaceId};
use crate::json::JsonObject;

/// One component of the v1 catalog (standard-components.md §3). The id on the wire is
/// [`ComponentKind::as_str`]; every kind exists in version `"1"` only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ComponentKind {
    /// `markdown`: Markdown parsed into a closed tree (R-STD-10). Display only.
    Markdown,
    /// `text`: plain text with a variant. Display only.
    Text,
    /// `status`: a task's status and steps. Display only.
    Status,
    /// `progress`: a progress bar the user may cancel.
    Progress,
    /// `alert`: an alert with a severity. Display only.
    Alert,
    /// `confirm`: a yes/no question; only `true` approves.
    Confirm,
    /// `choice`: one option, or several.
    Choice,
    /// `input`: one typed value.
    Input,
    /// `form`: 1–10 flat fields answered together.
    Form,
}

/// The only version of each v1 component.
pub const V1: &str = "1";

impl ComponentKind {
    /// Every kind, in catalog order.
    pub const ALL: [ComponentKind; 9] = [
        ComponentKind::Markdown,
        ComponentKind::Text,
        ComponentKind::Status,
        ComponentKind::Progress,
        ComponentKind::Alert,
        ComponentKind::Confirm,
        ComponentKind::Choice,
        ComponentKind::Input,
        ComponentKind::Form,
    ];

    /// The component id on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ComponentKind::Markdown => "markdown",
            ComponentKind::Text => "text",
            ComponentKind::Status => "status",
            ComponentKind::Progress => "progress",
            ComponentKind::Alert => "alert",
            ComponentKind::Confirm => "confirm",
            ComponentKind::Choice => "choice",
            ComponentKind::Input => "input",
            ComponentKind::Form => "form",
        }
    }

    /// The kind whose id is `id`, if the catalog has one.
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == id)
    }

    /// Whether the user answers it (`submit`): confirm, choice, input and form (R-STD-6).
    pub fn is_question(self) -> bool {
        match self {
            ComponentKind::Confirm
            | ComponentKind::Choice
            | ComponentKind::Input
            | ComponentKind::Form => true,
            ComponentKind::Markdown
            | ComponentKind::Text
            | ComponentKind::Status
            | ComponentKind::Progress
            | ComponentKind::Alert => false,
        }
    }

    /// Whether it is a display component that may carry `fallback_text` (R-STD-13).
    pub fn is_display(self) -> bool {
        match self {
            ComponentKind::Markdown
            | ComponentKind::Text
            | ComponentKind::Status
            | ComponentKind::Progress
            | ComponentKind::Alert => true,
            ComponentKind::Confirm
            | ComponentKind::Choice
            | ComponentKind::Input
            | ComponentKind::Form => false,
        }
    }

    /// Whether a patch of `state.error`/`state.errors` reopens it for a new round (R-STD-7).
    pub fn reopens_on_error(self) -> bool {
        match self {
            ComponentKind::Choice | ComponentKind::Input | ComponentKind::Form => true,
            ComponentKind::Markdown
            | ComponentKind::Text
            | ComponentKind::Status
            | ComponentKind::Progress
            | ComponentKind::Alert
            | ComponentKind::Confirm => false,
        }
    }

    /// The frozen schema file of this kind's version `"1"`.
    fn schema_text(self) -> &'static str {
        match self {
            ComponentKind::Markdown => {
                include_str!("../../../schemas/components/markdown.v1.json")
            }
            ComponentKind::Text => include_str!("../../../schemas/components/text.v1.json"),
            ComponentKind::Status => include_str!("../../../schemas/components/status.v1.json"),
            ComponentKind::Progress => {
                include_str!("../../../schemas/components/progress.v1.json")
            }
            ComponentKind::Alert => include_str!("../../../schemas/components/alert.v1.json"),
            ComponentKind::Confirm => {
                include_str!("../../../schemas/components/confirm.v1.json")
            }
            ComponentKind::Choice => include_str!("../../../schemas/components/choice.v1.json"),
            ComponentKind::Input => include_str!("../../../schemas/components/input.v1.json"),
            ComponentKind::Form => include_str!("../../../schemas/components/form.v1.json"),
        }
    }

    /// The compiled schemas of this kind (compiled once per process).
    pub(crate) fn schemas(self) -> &'static Compiled {
        static COMPILED: OnceLock<Vec<Compiled>> = OnceLock::new();
        let all = COMPILED.get_or_init(|| ComponentKind::ALL.map(Compiled::load).into());
        // `ALL` lists every kind once, in the order of the vector.
        &all[self.index()]
    }

    fn index(self) -> usize {
        ComponentKind::ALL
            .iter()
            .position(|k| *k == self)
            .unwrap_or_default()
    }

    /// The events it may send (R-STD-5), as the inventory lists them.
    pub fn events(self) -> Vec<EventName> {
        self.schemas()
            .events
            .iter()
            .map(|e| EventName::known(e.as_str()))
            .collect()
    }

    /// Its inventory entry: `{id, version, events, schema_digest}` (R-STD-14). The schemas are
    /// named, not carried: `schema_digest` is the SHA-256 of the published, frozen file
    /// `schemas/components/<id>.v<version>.json`, so that the first line of every conversation
    /// stays small (nine entries in about 1 KiB, where the schemas themselves are 17 KB).
    /// [`ComponentKind::schema_entry`] is the entry with them.
    pub fn inventory_entry(self) -> StandardComponent {
        StandardComponent {
            id: SurfaceId::known(self.as_str()),
            version: OpaqueVersion::known(V1),
            events: self.events(),
            schema: None,
            schema_digest: Some(self.schemas().digest.clone()),
        }
    }

    /// Its entry with the schemas themselves, `schema:{props, state, answer}` (R-STD-14), as
    /// the published file holds them.
    pub fn schema_entry(self) -> StandardComponent {
        let compiled = self.schemas();
        StandardComponent {
            schema: Some(ComponentSchemas {
                props: compiled.props.object.clone(),
                state: compiled.state.object.clone(),
                answer: compiled.answer.object.clone(),
            }),
            ..self.inventory_entry()
        }
    }

    /// The published schema file's name under `schemas/components/`.
    pub fn schema_file(self) -> String {
        format!("{}.v{V1}.json", self.as_str())
    }
}

impl fmt::Display for ComponentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One part (props, state or answer) of a component's schema: its JSON and its validator.
pub(crate) struct Part {
    /// The schema as JSON, for the inventory and for [`super::validate`]'s walk.
    pub(crate) object: JsonObject,
    /// The schema as a JSON value.
    pub(crate) value: Value,
    /// The compiled validator (formats asserted, no retrieval).
    pub(crate) validator: jsonschema::Validator,
}

/// The compiled schemas of one component version.
pub(crate) struct Compiled {
    pub(crate) props: Part,
    pub(crate) state: Part,
    pub(crate) answer: Part,
    events: Vec<String>,
    /// `sha256:<hex>` of the published file's bytes.
    digest: String,
}

impl Compiled {
    fn load(kind: ComponentKind) -> Compiled {
        // The schema files are part of the crate and tested (`r_std_3_every_schema_compiles`):
        // a broken file is a build defect, never agent input.
        let doc: Value = serde_json::from_str(kind.schema_text()).unwrap_or(Value::Null);
        let part = |name: &str| {
            let value = doc
                .pointer(&format!("/$defs/{name}"))
                .cloned()
                .unwrap_or(Value::Bool(false));
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .with_pattern_options(jsonschema::PatternOptions::regex())
                .build(&value)
                .unwrap_or_else(|_| never_valid());
            let object = JsonObject::try_from(value.clone()).unwrap_or_default();
            Part {
                object,
                value,
                validator,
            }
        };
        let events = doc
            .pointer("/x-lineup-component/events")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let mut digest = String::from("sha256:");
        for byte in sha2::Sha256::digest(kind.schema_text().as_bytes()) {
            digest.push_str(&format!("{byte:02x}"));
        }
        Compiled {
            props: part("props"),
            state: part("state"),
            answer: part("answer"),
            events,
            digest,
        }
    }
}

/// A validator that refuses everything: what a schema file that failed to compile stands for.
fn never_valid() -> jsonschema::Validator {
    #[allow(clippy::expect_used)]
    jsonschema::validator_for(&Value::Bool(false)).expect("the schema `false` always compiles")
}

/// The `(id, version)` of a standard component, compared by equality (R-STD-14, R-CAP-2).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComponentKey {
    /// The component id, e.g. `choice`.
    pub id: SurfaceId,
    /// Its opaque version, e.g. `1`.
    pub version: OpaqueVersion,
}

impl ComponentKey {
    /// The key of a catalog kind in version `"1"`.
    pub fn v1(kind: ComponentKind) -> Self {
        Self {
            id: SurfaceId::known(kind.as_str()),
            version: OpaqueVersion::known(V1),
        }
    }

    /// The catalog kind this key names, when the kernel has its schema.
    pub fn kind(&self) -> Option<ComponentKind> {
        ComponentKind::from_id(self.id.as_str()).filter(|_| self.version.as_str() == V1)
    }
}

impl fmt::Display for ComponentKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} v{}", self.id, self.version)
    }
}

/// The standard components the driver can render now (R-STD-14: "the list is exactly what will
/// render now"). It is the driver's fact, not the kernel's: the kernel only validates, and
/// lists and opens exactly this set. Empty by default, so a driver that renders none offers
/// none.
///
/// ```
/// use lineup_host_core::{ComponentKind, ComponentSet};
/// let set = ComponentSet::of([ComponentKind::Confirm, ComponentKind::Markdown]);
/// assert!(set.contains_kind(ComponentKind::Confirm));
/// assert!(!set.contains_kind(ComponentKind::Form));
/// assert!(ComponentSet::default().is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ComponentSet(BTreeSet<ComponentKind>);

impl ComponentSet {
    /// The v1 components of these kinds.
    pub fn of(kinds: impl IntoIterator<Item = ComponentKind>) -> Self {
        Self(kinds.into_iter().collect())
    }

    /// Every component of the v1 catalog.
    pub fn all_v1() -> Self {
        Self::of(ComponentKind::ALL)
    }

    /// The set of these `(id, version)` pairs; refused when the kernel has no schema for one,
    /// since it could neither validate nor list it (R-STD-3).
    pub fn from_keys(keys: impl IntoIterator<Item = ComponentKey>) -> Result<Self, UsageError> {
        let mut set = BTreeSet::new();
        for key in keys {
            let Some(kind) = key.kind() else {
                return Err(UsageError::UnknownComponent {
                    component: key.to_string(),
                });
            };
            set.insert(kind);
        }
        Ok(Self(set))
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the driver renders this kind now.
    pub fn contains_kind(&self, kind: ComponentKind) -> bool {
        self.0.contains(&kind)
    }

    /// Whether the driver renders this `(id, version)` now.
    pub fn contains(&self, key: &ComponentKey) -> bool {
        key.kind().is_some_and(|k| self.contains_kind(k))
    }

    /// The kinds, in catalog order.
    pub fn kinds(&self) -> impl Iterator<Item = ComponentKind> + '_ {
        self.0.iter().copied()
    }

    /// The keys, in catalog order.
    pub fn keys(&self) -> impl Iterator<Item = ComponentKey> + '_ {
        self.kinds().map(ComponentKey::v1)
    }

    /// The inventory entries, in catalog order (R-STD-14).
    pub fn inventory(&self) -> Vec<StandardComponent> {
        self.kinds().map(ComponentKind::inventory_entry).collect()
    }

    /// The versions of `id` in this set, for an `unsupported` message (R-STD-4).
    pub(crate) fn versions_of(&self, id: &str) -> Vec<&'static str> {
        self.kinds()
            .filter(|k| k.as_str() == id)
            .map(|_| V1)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_std_3_every_schema_compiles_and_refuses_unknown_members() {
        for kind in ComponentKind::ALL {
            let doc: Value = serde_json::from_str(kind.schema_text()).unwrap_or(Value::Null);
            assert_eq!(
                doc.pointer("/x-lineup-component/id"),
                Some(&Value::from(kind.as_str()))
            );
            for part in ["props", "state"] {
                let schema = doc.pointer(&format!("/$defs/{part}")).cloned();
                let schema = schema.unwrap_or(Value::Null);
                assert!(
                    jsonschema::validator_for(&schema).is_ok(),
                    "{kind} {part} compiles"
                );
                assert_eq!(
                    schema.get("additionalProperties"),
                    Some(&Value::Bool(false)),
                    "{kind} {part}: additionalProperties false (R-STD-3)"
                );
                let compiled = kind.schemas();
                let validator = if part == "props" {
                    &compiled.props.validator
                } else {
                    &compiled.state.validator
                };
                assert!(
                    !validator.is_valid(&serde_json::json!({"color": "red"})),
                    "{kind} {part} refuses `color`"
                );
            }
        }
    }

    #[test]
    fn r_std_14_events_are_fixed_per_component() {
        let names = |k: ComponentKind| {
            k.events()
                .iter()
                .map(|e| e.as_str().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(ComponentKind::Confirm),
            ["submit", "cancel", "close", "restored"]
        );
        assert_eq!(
            names(ComponentKind::Markdown),
            ["close", "restored", "degraded"]
        );
        assert_eq!(
            names(ComponentKind::Progress),
            ["cancel", "close", "restored", "degraded"]
        );
    }

    #[test]
    fn r_std_14_a_key_without_a_schema_is_refused_by_the_set() {
        let chart = ComponentKey {
            id: SurfaceId::known("chart"),
            version: OpaqueVersion::known("1"),
        };
        assert!(ComponentSet::from_keys([chart]).is_err());
        let nine = ComponentKey {
            id: SurfaceId::known("confirm"),
            version: OpaqueVersion::known("9"),
        };
        assert!(ComponentSet::from_keys([nine]).is_err());
        let ok = ComponentSet::from_keys([ComponentKey::v1(ComponentKind::Confirm)]);
        assert_eq!(ok, Ok(ComponentSet::of([ComponentKind::Confirm])));
    }
}
