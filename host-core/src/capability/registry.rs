//! The capability registry: what the embedder registered (name, version, risk, compiled
//! `input_schema`) and the visibility policy that hides a capability from one agent (R-CAP-2).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

use jsonschema::{Retrieve, Uri, Validator};
use serde_json::Value;

use crate::error::UsageError;
use crate::ids::{shorten, AgentIdentity, CapabilityName, OpaqueVersion, Risk};
use crate::json::JsonObject;
use crate::link::check_link;
use crate::message::CapabilityDecl;
use crate::redact::Fingerprint;

/// A capability as the embedder registers it: its declaration and its `input_schema`, compiled
/// once. Cloning is cheap (the compiled schema is shared), so a host with several sessions
/// compiles it once and registers clones.
#[derive(Clone)]
pub struct Capability {
    inner: Arc<Inner>,
    /// Top-level arguments that must pass the host's link rule ([`check_link`]), checked after
    /// the schema and before consent.
    links: Vec<String>,
}

struct Inner {
    decl: CapabilityDecl,
    validator: Validator,
}

impl fmt::Debug for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capability")
            .field("name", &self.inner.decl.name)
            .field("version", &self.inner.decl.version)
            .field("risk", &self.inner.decl.risk)
            .finish_non_exhaustive()
    }
}

/// Refuses every `$ref` outside the schema itself: remote and file references are never
/// resolved, whatever features another crate turns on for `jsonschema`.
struct NoRetrieval;

impl Retrieve for NoRetrieval {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!(
            "$ref {} is not resolved: remote and file references are refused",
            shorten(uri.as_str(), 120)
        )
        .into())
    }
}

impl Capability {
    /// Compiles `input_schema` (remote and file `$ref`s refused; `pattern` uses the linear-time
    /// `regex` engine, since arguments are untrusted) and builds the capability. A schema that
    /// does not compile is refused with [`UsageError::InvalidInputSchema`] naming the capability.
    pub fn new(
        name: CapabilityName,
        version: OpaqueVersion,
        risk: Risk,
        input_schema: JsonObject,
    ) -> Result<Self, UsageError> {
        let schema = Value::Object(input_schema.as_map().clone());
        let validator = jsonschema::options()
            .with_retriever(NoRetrieval)
            .with_pattern_options(jsonschema::PatternOptions::regex())
            .build(&schema)
            .map_err(|e| UsageError::InvalidInputSchema {
                name: name.to_string(),
                reason: shorten(&e.to_string(), 300),
            })?;
        Ok(Self {
            inner: Arc::new(Inner {
                decl: CapabilityDecl {
                    name,
                    version,
                    risk,
                    input_schema: Some(input_schema),
                },
                validator,
            }),
            links: Vec::new(),
        })
    }

    /// Makes top-level argument `name`, when it is a string, pass the host's one link rule
    /// ([`check_link`]: http or https, a host, no userinfo, at most 8 KiB) before consent, the
    /// same in every grant state (R-CAP-4): a link that breaks it is answered `failed`
    /// `invalid_arguments` naming the argument and the rule, a policy decision, never the
    /// user's. Call it before the capability is registered (a clone registered earlier keeps
    /// the rules it had).
    pub fn with_link_argument(mut self, name: &str) -> Self {
        self.links.push(name.to_owned());
        self
    }

    /// The name.
    pub fn name(&self) -> &CapabilityName {
        &self.inner.decl.name
    }

    /// The opaque version.
    pub fn version(&self) -> &OpaqueVersion {
        &self.inner.decl.version
    }

    /// The risk level.
    pub fn risk(&self) -> Risk {
        self.inner.decl.risk
    }

    /// The declaration as the inventory lists it (R-CAP-2).
    pub fn decl(&self) -> &CapabilityDecl {
        &self.inner.decl
    }

    /// Checks `arguments` against the compiled schema; the error names the first failing value
    /// by its JSON pointer and the rule it broke.
    pub(crate) fn check(&self, arguments: &JsonObject) -> Result<(), ArgumentError> {
        let value = Value::Object(arguments.as_map().clone());
        if let Some(error) = self.inner.validator.iter_errors(&value).next() {
            let pointer = error.instance_path().as_str().to_owned();
            let rule = error
                .schema_path()
                .as_str()
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_owned();
            return Err(ArgumentError {
                pointer,
                rule,
                detail: shorten(&error.to_string(), 200),
            });
        }
        // R-CAP-4: the host's own rules for its arguments, after the schema, before consent.
        for name in &self.links {
            if let Some(Value::String(url)) = arguments.as_map().get(name) {
                if let Err(refusal) = check_link(url) {
                    return Err(ArgumentError {
                        pointer: format!("/{name}"),
                        rule: LINK_RULE.to_owned(),
                        detail: format!("the link {refusal}"),
                    });
                }
            }
        }
        Ok(())
    }
}

/// The `rule` of an [`ArgumentError`] from the host's link rule rather than the schema.
pub(crate) const LINK_RULE: &str = "link";

/// The first way a call's arguments fail their schema. `Debug` shows the validator's sentence,
/// which quotes the failing value, as a [`Fingerprint`].
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ArgumentError {
    /// The JSON pointer of the failing value within `arguments` (`""` for the object itself).
    pub(crate) pointer: String,
    /// The schema keyword that failed, e.g. `required`.
    pub(crate) rule: String,
    /// The validator's sentence.
    pub(crate) detail: String,
}

impl fmt::Debug for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArgumentError")
            .field("pointer", &self.pointer)
            .field("rule", &self.rule)
            .field("detail", &Fingerprint::of(&self.detail))
            .finish()
    }
}

/// The registered capabilities and the visibility policy. Registering a name twice is an error;
/// hiding works per vouched agent identity and may name a capability not registered yet.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    capabilities: BTreeMap<CapabilityName, Capability>,
    hidden: BTreeSet<(AgentIdentity, CapabilityName)>,
}

impl Registry {
    /// Adds a capability; [`UsageError::CapabilityRegistered`] when the name is taken.
    pub fn register(&mut self, capability: Capability) -> Result<(), UsageError> {
        let name = capability.name().clone();
        if self.capabilities.contains_key(&name) {
            return Err(UsageError::CapabilityRegistered {
                name: name.to_string(),
            });
        }
        self.capabilities.insert(name, capability);
        Ok(())
    }

    /// Removes a capability; [`UsageError::CapabilityNotRegistered`] when there is none.
    pub fn unregister(&mut self, name: &CapabilityName) -> Result<Capability, UsageError> {
        self.capabilities
            .remove(name)
            .ok_or_else(|| UsageError::CapabilityNotRegistered {
                name: name.to_string(),
            })
    }

    /// Hides `name` from `agent` (`visible: false`) or shows it again.
    pub fn set_visible(&mut self, agent: &AgentIdentity, name: &CapabilityName, visible: bool) {
        let key = (agent.clone(), name.clone());
        if visible {
            self.hidden.remove(&key);
        } else {
            self.hidden.insert(key);
        }
    }

    /// The capability `name`, if it is registered and visible to `agent` (an agent without a
    /// vouched identity sees every registered capability).
    pub fn visible(
        &self,
        name: &CapabilityName,
        agent: Option<&AgentIdentity>,
    ) -> Option<&Capability> {
        let hidden = agent.is_some_and(|a| self.hidden.contains(&(a.clone(), name.clone())));
        self.capabilities.get(name).filter(|_| !hidden)
    }

    /// The capabilities visible to `agent`, by name.
    pub fn visible_to<'a>(
        &'a self,
        agent: Option<&'a AgentIdentity>,
    ) -> impl Iterator<Item = &'a Capability> + 'a {
        self.capabilities
            .keys()
            .filter_map(move |name| self.visible(name, agent))
    }

    /// Every registered capability, by name.
    pub fn iter(&self) -> impl Iterator<Item = &Capability> {
        self.capabilities.values()
    }
}
