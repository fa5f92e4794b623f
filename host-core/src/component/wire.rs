//! The wire shape of a standard component's `ui.open` (R-STD-1): `payload.component` and an
//! optional `payload.placement` instead of `payload.app`.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ids::{EventName, InstanceId, OpaqueVersion, SurfaceId};
use crate::json::JsonObject;
use crate::redact::Fingerprint;

/// `lineup.v1.ui.open` of a standard component (R-STD-1): the same type, namespace,
/// replacement, patch and close as a Surface's, with `component` where a Surface has `app`.
///
/// ```
/// use lineup_host_core::{decode, Limits, Message};
/// let line = br#"{"v":1,"id":"m-41","type":"lineup.v1.ui.open","conversation_id":"c1",
///   "sender":{"kind":"agent","id":"a1"},"payload":{"instance_id":"deploy.ok",
///   "component":{"id":"confirm","version":"1","props":{"title":"Deploy?"}}}}"#;
/// let Ok(Message::ComponentOpen(env)) = decode(line, &Limits::default()) else { panic!() };
/// assert_eq!(env.payload.component.id.as_str(), "confirm");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComponentOpen {
    /// The instance to create; an open with an existing id replaces whatever holds it, Surface
    /// or component (R-UI-1, R-STD-1).
    pub instance_id: InstanceId,
    /// Which component, and the question it asks.
    pub component: ComponentRef,
    /// Where the agent would like it (R-STD-13); ignored where unsupported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// The initial live state; absent means `{}` (R-UI-3).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_object"
    )]
    pub state: Option<JsonObject>,
}

fn present_object<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<JsonObject>, D::Error> {
    JsonObject::deserialize(d).map(Some)
}

/// `payload.component`: `{id, version, props?, fallback_text?}` (R-STD-1). Unknown members are
/// refused. The props are checked against the component's frozen schema by the session, once it
/// knows the component is offered (R-STD-3, R-STD-4).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentRef {
    /// The component id, e.g. `confirm`.
    pub id: SurfaceId,
    /// Its opaque version, compared by equality (R-STD-14).
    pub version: OpaqueVersion,
    /// The question, fixed for the generation (R-STD-2); absent means `{}`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_object"
    )]
    pub props: Option<JsonObject>,
    /// Plain text a display component may fall back to (≤ 4 KiB, R-STD-13).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_text: Option<String>,
}

impl fmt::Debug for ComponentRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ComponentRef")
            .field("id", &self.id)
            .field("version", &self.version)
            .field("props", &self.props)
            .field(
                "fallback_text",
                &self.fallback_text.as_ref().map(Fingerprint::of),
            )
            .finish()
    }
}

/// `payload.placement` (R-STD-13): the instance to sit beside, never over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// The instance, usually a Surface.
    pub near: InstanceId,
}

/// A standard component the client renders natively (R-INV-1, R-STD-14).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StandardComponent {
    /// The component id, e.g. `choice`.
    pub id: SurfaceId,
    /// Its opaque version (R-CAP-2).
    pub version: OpaqueVersion,
    /// The events it may send (R-STD-5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventName>,
    /// Its frozen schemas; may be absent, like `input_schema` (R-STD-14). This host leaves them
    /// out of its inventory and names them by [`StandardComponent::schema_digest`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<ComponentSchemas>,
    /// `sha256:<64 hex digits>` of the published, frozen schema file of this id and version,
    /// `schemas/components/<id>.v<version>.json`: the schemas by reference, so that an agent
    /// that keeps the published files knows exactly which it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_digest: Option<String>,
}

/// The frozen JSON Schemas (2020-12) of one standard component version (R-STD-3, R-STD-14).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComponentSchemas {
    /// Of `payload.component.props`.
    pub props: JsonObject,
    /// Of `payload.state`.
    pub state: JsonObject,
    /// Of the `answer` in `submit` data.
    pub answer: JsonObject,
}
