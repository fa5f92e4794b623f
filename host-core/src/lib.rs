//! The sans-IO protocol kernel of lineup-host.
#![forbid(unsafe_code)]

mod bundle;
mod ids;

pub use bundle::{InlineBundle, Integrity};
pub use ids::{
    AppId, AppVersion, CallId, CapabilityName, ConversationId, EventName, InstanceId,
    InvalidValue, MessageId, OpaqueVersion, PartyId, Revision, Risk, Status, SurfaceId,
};
