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
use crate::limits::Limits;
use crate::link::check_link;
use crate::message::CapabilityDecl;
use crate::redact::Fingerprint;

/// A capability as the embedder registers it: its declaration and its `input_schema`, compiled
/// once. Cloning is cheap (the compiled schema is shared), so a host with several sessions
/// compiles it once and registers clones.
#[derive(Clone)]
pub struct Capability {
    inner: Arc<Inner>,
    /// The capability's own argument rules, checked after `input_schema` and before consent.
    rules: Vec<ArgumentRule>,
    /// Whether the permission check is asked after consent whatever the risk.
    asks_hook: bool,
}

/// A rule a capability's argument must keep beyond its `input_schema`, checked right after the
/// schema and before consent, the same in every grant state (R-CAP-4, R-CAP-6): a call that
/// breaks one is `failed` `invalid_arguments`, naming the argument and the rule, and audited as
/// a policy decision; no prompt is shown and no handler runs.
///
/// ```
/// use lineup_host_core::{ArgumentRule, Limits};
/// let rule = ArgumentRule::link("url", &Limits::default());
/// assert_eq!(rule.argument(), "url");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgumentRule {
    /// The top-level string argument `argument` is a link that passes
    /// [`check_link`](crate::check_link) with the given cap in bytes.
    Link {
        /// The argument's name in `arguments`.
        argument: String,
        /// The longest link accepted, in bytes ([`Limits::max_link_url_bytes`]).
        max_bytes: usize,
    },
}

impl ArgumentRule {
    /// The link rule for the top-level argument `argument`, capped by
    /// [`Limits::max_link_url_bytes`].
    pub fn link(argument: impl Into<String>, limits: &Limits) -> Self {
        ArgumentRule::Link {
            argument: argument.into(),
            max_bytes: limits.max_link_url_bytes,
        }
    }

    /// The argument the rule is about.
    pub fn argument(&self) -> &str {
        match self {
            ArgumentRule::Link { argument, .. } => argument,
        }
    }

    /// Checks the rule against `arguments`; a missing or non-string argument breaks it.
    fn check(&self, arguments: &JsonObject) -> Result<(), RuleError> {
        match self {
            ArgumentRule::Link {
                argument,
                max_bytes,
            } => {
                let broke = |rule: &'static str, detail: String, limit: Option<usize>| RuleError {
                    argument: argument.clone(),
                    rule,
                    detail,
                    limit,
                };
                match arguments.as_map().get(argument.as_str()) {
                    Some(Value::String(text)) => check_link(text, *max_bytes)
                        .map(|_| ())
                        .map_err(|r| broke(r.rule(), r.to_string(), r.limit())),
                    _ => Err(broke(
                        "string",
                        "is missing or not a string".to_owned(),
                        None,
                    )),
                }
            }
        }
    }
}

/// How a call's arguments break one of the capability's [`ArgumentRule`]s.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct RuleError {
    /// The argument's name.
    pub(crate) argument: String,
    /// The rule's short name (`scheme`, `userinfo`, `length`, …).
    pub(crate) rule: &'static str,
    /// What is wrong, without quoting the value.
    pub(crate) detail: String,
    /// The limit exceeded, when one was.
    pub(crate) limit: Option<usize>,
}

impl RuleError {
    /// The argument as a JSON pointer within `arguments` (`/url`).
    pub(crate) fn pointer(&self) -> String {
        format!("/{}", self.argument.replace('~', "~0").replace('/', "~1"))
    }
}

impl fmt::Debug for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuleError")
            .field("argument", &self.argument)
            .field("rule", &self.rule)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
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
            rules: Vec::new(),
            asks_hook: false,
        })
    }

    /// Asks the permission check ([`crate::CapabilityEffect::Hook`]) after consent whatever the
    /// risk, for a capability that decides with a dialog of its own (a save dialog: where the
    /// file goes is the user's decision). The check is a deciding stage: it ends at the call's
    /// deadline, answered `expired`, and a dismissed dialog is `cancelled`
    /// ([`crate::HookAnswer::Dismissed`]). `system_permission` and `restricted` capabilities
    /// ask it anyway (R-CAP-3).
    pub fn with_hook(mut self) -> Self {
        self.asks_hook = true;
        self
    }

    /// Whether [`Capability::with_hook`] was asked for.
    pub fn asks_hook(&self) -> bool {
        self.asks_hook
    }

    /// Adds an argument rule, checked after `input_schema` and before consent (R-CAP-4).
    pub fn with_argument_rule(mut self, rule: ArgumentRule) -> Self {
        self.rules.push(rule);
        self
    }

    /// The argument rules beyond `input_schema`.
    pub fn argument_rules(&self) -> &[ArgumentRule] {
        &self.rules
    }

    /// Checks `arguments` against the argument rules, in order; the first broken one is named.
    pub(crate) fn check_rules(&self, arguments: &JsonObject) -> Result<(), RuleError> {
        self.rules.iter().try_for_each(|rule| rule.check(arguments))
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
        let Some(error) = self.inner.validator.iter_errors(&value).next() else {
            return Ok(());
        };
        let pointer = error.instance_path().as_str().to_owned();
        let rule = error
            .schema_path()
            .as_str()
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        Err(ArgumentError {
            pointer,
            rule,
            detail: shorten(&error.to_string(), 200),
        })
    }
}

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
