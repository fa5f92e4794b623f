//! What the kernel asks the driver to do with standard components ([`ComponentEffect`], carried
//! by [`Effect::Component`](crate::Effect::Component)) and why an instance goes away.

use serde_json::Value;

use crate::json::JsonObject;
use crate::keys::SurfaceKey;
use crate::markdown::SafeMarkdown;

use super::catalog::ComponentKind;
use super::wire::Placement;

/// A component the driver is to show: validated, every display string cleaned, its Markdown
/// sink parsed into the closed tree (R-STD-3, R-STD-10).
#[derive(Debug, Clone, PartialEq)]
pub struct ShownComponent {
    /// Its identity; a later open of the same instance id is a new generation.
    pub key: SurfaceKey,
    /// Which component (version `"1"`).
    pub kind: ComponentKind,
    /// The question, fixed for the generation (R-STD-2), cleaned.
    pub props: JsonObject,
    /// The live state, cleaned.
    pub state: JsonObject,
    /// The parsed Markdown of its sink (`markdown.text`, `alert.body`, `confirm.body`,
    /// `form.description`), when it has one.
    pub markdown: Option<SafeMarkdown>,
    /// Where the agent would like it (R-STD-13).
    pub placement: Option<Placement>,
    /// The cleaned `fallback_text` of a display component (R-STD-13).
    pub fallback_text: Option<String>,
    /// The user's draft, put back into the controls: a restored instance's (R-STD-15).
    pub draft: Option<Value>,
    /// Whether it shows locked: a restored instance whose round was answered (R-STD-7).
    pub locked: bool,
}

/// Why a component instance goes away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComponentClosed {
    /// The agent sent `ui.close` (with its reason); nothing goes upstream.
    Agent(Option<String>),
    /// The user closed it; one `ui.event close {}` went upstream (R-UI-5).
    User,
    /// Its `props.expires_at` passed; `close {reason:"expired"}` went upstream (R-STD-7).
    Expired,
    /// Its renderer failed after the open was accepted; `close {reason:"renderer_failed"}`
    /// went upstream (R-STD-13).
    RendererFailed,
    /// A `ui.open` of the same instance id replaced it (R-UI-1); nothing goes upstream.
    Replaced,
    /// The session ended.
    SessionEnded,
}

/// What the driver does with standard components. Matched by name: adding a variant is a
/// compile error in every driver until it is handled.
#[derive(Debug, Clone, PartialEq)]
pub enum ComponentEffect {
    /// Show a new instance (after a [`ComponentEffect::Hide`] or a Surface's close when it
    /// replaces one, R-UI-1). Its guard starts now (R-STD-8, the driver's).
    Show(ShownComponent),
    /// The agent patched the state (R-UI-3): show `state` in place of the old.
    Update {
        /// The instance.
        key: SurfaceKey,
        /// The whole new state, cleaned.
        state: JsonObject,
        /// The parsed Markdown when the state holds the sink (`markdown`, `alert`).
        markdown: Option<SafeMarkdown>,
        /// The answer round now in force (R-STD-7).
        round: u32,
        /// Whether the patch reopened an answered instance for a new round (R-STD-7): unlock
        /// it and keep the user's draft.
        reopened: bool,
    },
    /// The user's answer was accepted and sent: lock the instance (R-STD-7).
    Lock {
        /// The instance.
        key: SurfaceKey,
        /// The round that was answered.
        round: u32,
    },
    /// Take the instance off the screen.
    Hide {
        /// The instance.
        key: SurfaceKey,
        /// Why.
        reason: ComponentClosed,
    },
}
