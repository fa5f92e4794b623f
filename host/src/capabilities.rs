//! Carries out what the capability kernel asks (R-SEC-5, R-CAP-2..6): handlers on threads of
//! their own (never the GUI thread), the consent prompt and the embedder's permission hook; and
//! the kernel's [`StorePort`] over the embedder's stores, whose failures are logged here.
//! [`Host`](crate::Host) owns one [`CapabilityDriver`] when capabilities are enabled on its
//! builder.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use lineup_host_core::{
    host_word_with, Answer, CapabilityEffect, CapabilityName, ConsentAnswer, ConsentRequest,
    ConversationId, HandlerError, HookRequest, InstanceStore, JsonObject, LanguageTag, RunRequest,
    SessionId, StoreOp, StorePort, Ticket,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use lineup_builtins::BuiltinConfig;
use lineup_host_core::{AnswerSink, CapabilityProvider};
use lineup_webview_shell::{ConsentHandle, ConsentPrompt, PendingConsent, PromptContent};

use crate::held_prompts::{HeldPrompts, HiddenConversationPrompts};

/// A capability's handler. It runs on a thread of its own, never on the GUI thread, with the
/// arguments already valid against the capability's `input_schema`; its result is the
/// `app.result` `result` (`completed`), its error the `message` of a `failed` result.
///
/// Closures `Fn(JsonObject) -> Result<JsonObject, HandlerError>` are handlers; [`typed`] makes
/// one from a closure over serde types.
pub trait CapabilityHandler: Send + Sync + 'static {
    /// Runs the capability once.
    fn call(&self, arguments: JsonObject) -> Result<JsonObject, HandlerError>;
}

impl<F> CapabilityHandler for F
where
    F: Fn(JsonObject) -> Result<JsonObject, HandlerError> + Send + Sync + 'static,
{
    fn call(&self, arguments: JsonObject) -> Result<JsonObject, HandlerError> {
        self(arguments)
    }
}

/// A handler from a closure over serde types: the arguments are deserialized into `A` (a
/// mismatch is a `failed` result naming the serde error), the result serialized from `R`, which
/// must serialize to a JSON object.
///
/// ```
/// use lineup_host_core::HandlerError;
/// use lineup_host::{typed, CapabilityHandler};
///
/// #[derive(serde::Deserialize)]
/// struct Args { text: String }
/// #[derive(serde::Serialize)]
/// struct Copied { chars: usize }
///
/// let handler = typed(|args: Args| Ok::<_, HandlerError>(Copied { chars: args.text.chars().count() }));
/// let arguments = serde_json::from_str(r#"{"text":"北京"}"#).unwrap();
/// let result = handler.call(arguments).unwrap();
/// assert_eq!(result.to_json(), r#"{"chars":2}"#);
/// ```
pub fn typed<A, R, F>(f: F) -> impl CapabilityHandler
where
    A: DeserializeOwned,
    R: Serialize,
    F: Fn(A) -> Result<R, HandlerError> + Send + Sync + 'static,
{
    move |arguments: JsonObject| {
        let value = serde_json::Value::Object(arguments.into_map());
        let args: A = serde_json::from_value(value)
            .map_err(|e| HandlerError::new(format!("the arguments do not fit the handler: {e}")))?;
        let result = f(args)?;
        match serde_json::to_value(result) {
            Ok(serde_json::Value::Object(map)) => Ok(JsonObject::from(map)),
            Ok(_) => Err(HandlerError::new(
                "the handler's result is not a json object",
            )),
            Err(e) => Err(HandlerError::new(format!(
                "the handler's result cannot be serialized: {e}"
            ))),
        }
    }
}

/// A handler from an async closure, for embedders whose capability code runs on tokio: each call
/// is spawned onto `runtime` and awaited from the handler's own thread, so the GUI thread never
/// waits and the runtime stays the embedder's choice. Use a multi-thread runtime (a
/// current-thread one only makes progress while its owner drives it).
///
/// ```no_run
/// # use lineup_host_core::{HandlerError, JsonObject};
/// let runtime = tokio::runtime::Builder::new_multi_thread().build().unwrap();
/// let handler = lineup_host::tokio_handler(runtime.handle().clone(), |args: JsonObject| async move {
///     Ok::<_, HandlerError>(args)
/// });
/// # let _ = handler;
/// ```
#[cfg(feature = "tokio")]
pub fn tokio_handler<F, Fut>(runtime: tokio::runtime::Handle, f: F) -> impl CapabilityHandler
where
    F: Fn(JsonObject) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<JsonObject, HandlerError>> + Send + 'static,
{
    move |arguments: JsonObject| {
        let task = runtime.spawn(f(arguments));
        match runtime.block_on(task) {
            Ok(outcome) => outcome,
            Err(e) => Err(HandlerError::new(format!(
                "the async handler did not finish: {e}"
            ))),
        }
    }
}

/// The embedder's extra check for `system_permission` and `restricted` calls (R-CAP-3): the OS
/// permission or an extra identity check. The default denies.
pub type PermissionHook = Box<dyn FnMut(&HookRequest) -> bool>;

/// The kernel's store port over the embedder's capability store `calls` and, if any, its
/// component store `records` (R-STD-15): every failure is logged here, by what failed (a call
/// record, a grant or the audit as errors; a restoration record, a convenience for a restart,
/// as a warning), and the kernel decides what it means for the call or record at hand.
pub(crate) fn logged_port(calls: StorePort, records: Option<Box<dyn InstanceStore>>) -> StorePort {
    let port = match records {
        Some(records) => calls.with_records(records),
        None => calls,
    };
    port.on_failure(|failure| match failure.op() {
        StoreOp::WriteRecord | StoreOp::ForgetRecord | StoreOp::ReadRecords => {
            tracing::warn!("component store: {failure}");
        }
        _ => tracing::error!("capability store: {failure}"),
    })
}

/// Executes capability effects for the host, for every session: the answer to an effect goes
/// back to the session it came from.
pub(crate) struct CapabilityDriver {
    /// The kernel's store, shared, for the host's own audit records (a component's link).
    store: StorePort,
    handlers: HashMap<CapabilityName, Arc<dyn CapabilityHandler>>,
    prompt: Option<Box<dyn ConsentPrompt>>,
    hook: PermissionHook,
    /// Prompts showing or waiting, by session and ticket, so the kernel can withdraw them.
    prompts: BTreeMap<(SessionId, Ticket), ConsentHandle>,
    sink: AnswerSink,
    /// The enabled built-in capabilities, which run their own handlers and, for
    /// `device.pick_file`, their own permission check.
    builtins: Option<Box<dyn CapabilityProvider>>,
    /// What the host's prompts call the conversations and in which language they speak.
    words: HostPromptWords,
    /// Requests of hidden conversations held until they are shown, when the embedder chose so.
    held: HeldPrompts,
}

/// What the host says in the prompts it asks for: the embedder's names for its conversations
/// (#49 item 4) and the host context's language of its own words (R-STD-9).
struct HostPromptWords {
    labels: HashMap<ConversationId, String>,
    language: LanguageTag,
}

impl HostPromptWords {
    /// `content` in the host's language, naming `conversation` of `session` as the embedder
    /// labelled it (or by the agent's id).
    fn apply(
        &self,
        content: PromptContent,
        conversation: &ConversationId,
        session: SessionId,
    ) -> PromptContent {
        content
            .with_language(self.language.clone())
            .with_conversation(
                conversation,
                session,
                self.labels.get(conversation).map(String::as_str),
            )
    }
}

impl CapabilityDriver {
    /// The embedder names `conversation` `label` in its prompts (`None`: by the agent's id).
    pub(crate) fn set_label(&mut self, conversation: &ConversationId, label: Option<&str>) {
        match label {
            Some(label) => self
                .words
                .labels
                .insert(conversation.clone(), label.to_owned()),
            None => self.words.labels.remove(conversation),
        };
    }

    pub(crate) fn new(
        store: StorePort,
        handlers: HashMap<CapabilityName, Arc<dyn CapabilityHandler>>,
        prompt: Option<Box<dyn ConsentPrompt>>,
        hook: PermissionHook,
        sink: AnswerSink,
        builtins: Option<Box<dyn CapabilityProvider>>,
        language: LanguageTag,
    ) -> Self {
        Self {
            store,
            handlers,
            prompt,
            hook,
            prompts: BTreeMap::new(),
            sink,
            builtins,
            words: HostPromptWords {
                labels: HashMap::new(),
                language,
            },
            held: HeldPrompts::new(HiddenConversationPrompts::default()),
        }
    }

    /// What becomes of the prompts of hidden conversations from now on.
    pub(crate) fn set_hidden_prompts(&mut self, policy: HiddenConversationPrompts) {
        self.held = HeldPrompts::new(policy);
    }

    /// Records that the embedder showed or hid `conversation`; shown, the prompts it held for
    /// it are asked now, in order.
    pub(crate) fn set_conversation_visible(
        &mut self,
        conversation: &ConversationId,
        visible: bool,
    ) {
        let released = self.held.set_visible(conversation, visible);
        if let Some(prompt) = self.prompt.as_mut() {
            for pending in released {
                prompt.request(pending);
            }
        }
    }

    /// How many prompts wait for `conversation` to be shown.
    pub(crate) fn waiting_prompts(&self, conversation: &ConversationId) -> usize {
        self.held.waiting(conversation)
    }

    /// Carries out `effect` of `session`; an answer there is at once (no prompt configured, the
    /// embedder's hook) is returned, one that comes later (the user's, a built-in's dialog, a
    /// handler's) reaches the kernel through the sink, naming `session`.
    pub(crate) fn execute(
        &mut self,
        session: SessionId,
        effect: CapabilityEffect,
    ) -> Option<(Ticket, Answer)> {
        match effect {
            CapabilityEffect::Prompt(request) => self.prompt(session, request),
            CapabilityEffect::Hook(request) => {
                if let Some(builtins) = self.builtins.as_mut().filter(|b| b.owns_hook(&request)) {
                    builtins.hook(session, request, &self.sink);
                    return None;
                }
                let allowed = (self.hook)(&request);
                Some((request.ticket, Answer::Hook(allowed.into())))
            }
            CapabilityEffect::Withdraw(ticket) => {
                if let Some(handle) = self.prompts.remove(&(session, ticket)) {
                    handle.withdraw();
                }
                if let Some(builtins) = self.builtins.as_mut() {
                    builtins.withdraw(session, ticket);
                }
                None
            }
            CapabilityEffect::Run(request) => {
                // A built-in runs itself (and `?` returns); any other goes to its handler.
                let request = match &self.builtins {
                    Some(builtins) => builtins.run(session, request, &self.sink)?,
                    None => request,
                };
                self.run(session, request);
                None
            }
            // Told to the user and the embedder by the host (`host/activity.rs`), not here.
            CapabilityEffect::Activity(_) => None,
        }
    }

    fn prompt(&mut self, session: SessionId, request: ConsentRequest) -> Option<(Ticket, Answer)> {
        let ticket = request.ticket;
        let Some(prompt) = self.prompt.as_mut() else {
            tracing::warn!(
                "no consent prompt is configured; call {} failed",
                request.call.key
            );
            return Some((ticket, Answer::Consent(ConsentAnswer::Unavailable)));
        };
        let agent = request.call.agent.as_ref().map_or_else(
            || host_word_with(&self.words.language, "unidentified_agent", "", 0),
            ToString::to_string,
        );
        let shown = PromptContent::new(
            &agent,
            request.call.capability.clone(),
            request.call.version.clone(),
            request.call.risk,
            &request.reason,
            request.call.arguments.as_map(),
        )
        .with_remember(request.may_remember)
        .with_expires_at(request.expires_at);
        let mut shown = self
            .words
            .apply(shown, &request.call.key.conversation_id, session);
        // R-CAP-4: a capability's owner words its own prompt; the platform knows no name.
        let wording = self.builtins.as_ref().and_then(|provider| {
            provider.prompt_wording(&request.call.capability, &request.call.arguments)
        });
        match wording {
            Some(Ok(wording)) => {
                shown = shown.with_headline(&wording.headline);
                if let Some(host) = &wording.link_host {
                    shown = shown.with_link_host(host);
                }
            }
            Some(Err(why)) => {
                tracing::warn!("call {}: no prompt can be shown: {why}", request.call.key);
                return Some((ticket, Answer::Consent(ConsentAnswer::Unavailable)));
            }
            None => {}
        }
        let sink = Arc::clone(&self.sink);
        let (pending, handle) = PendingConsent::new(shown, move |answer| {
            sink(session, ticket, Answer::Consent(answer));
        });
        self.prompts.insert((session, ticket), handle);
        if let Some(pending) = self.held.hold(&request.call.key.conversation_id, pending) {
            prompt.request(pending);
        }
        None
    }

    /// Runs the handler on a thread of its own; its outcome reaches the kernel through the sink.
    /// The kernel bounds how many run at once and how long it waits (R-CAP-4).
    fn run(&mut self, session: SessionId, request: RunRequest) {
        let ticket = request.ticket;
        let Some(handler) = self.handlers.get(&request.capability).cloned() else {
            (self.sink)(
                session,
                ticket,
                Answer::Ran(Err(HandlerError::new(format!(
                    "capability {} has no handler on this host",
                    request.capability
                )))),
            );
            return;
        };
        let sink = Arc::clone(&self.sink);
        let name = format!("lineup-capability-{}", request.capability);
        let arguments = request.arguments;
        let spawned = std::thread::Builder::new().name(name).spawn(move || {
            let outcome = handler.call(arguments);
            sink(session, ticket, Answer::Ran(outcome));
        });
        if let Err(e) = spawned {
            (self.sink)(
                session,
                ticket,
                Answer::Ran(Err(HandlerError::new(format!(
                    "the handler could not be started: {e}"
                )))),
            );
        }
    }

    /// Forgets a prompt once its answer arrived.
    pub(crate) fn answered(&mut self, session: SessionId, ticket: Ticket) {
        self.prompts.remove(&(session, ticket));
    }

    /// Shows `content` in the consent prompt, which answers through `respond` (exactly once,
    /// `Dismissed` when it is dropped); [`ConsentAnswer::Unavailable`] at once when no prompt
    /// is configured. The host's own questions (a component's link confirm, R-STD-11) use it.
    /// The host context's language, of the words the host adds to its prompts (R-STD-9).
    pub(crate) fn language(&self) -> &LanguageTag {
        &self.words.language
    }

    /// Asks the prompt about `content` (a host-made request, such as the link confirm) in the
    /// host's language; `respond` hears the answer.
    pub(crate) fn ask(
        &mut self,
        content: PromptContent,
        respond: impl FnOnce(lineup_host_core::ConsentAnswer) + Send + 'static,
    ) {
        let Some(prompt) = self.prompt.as_mut() else {
            respond(lineup_host_core::ConsentAnswer::Unavailable);
            return;
        };
        let content = content.with_language(self.words.language.clone());
        let (pending, _handle) = PendingConsent::new(content, respond);
        prompt.request(pending);
    }

    /// Appends `record` to the audit (R-CAP-6); a failure is logged by the port.
    pub(crate) fn audit(&mut self, record: lineup_host_core::AuditRecord) {
        let _logged_by_the_port = self.store.append_audit(&record);
    }
}

/// Where the consent prompt comes from.
pub(crate) enum PromptChoice {
    /// The built-in trusted prompt window ([`PromptQueue`](crate::PromptQueue)), created when the
    /// host is built.
    BuiltIn,
    /// The embedder's.
    Custom(Box<dyn ConsentPrompt>),
}

/// A [`MemoryStore`](lineup_host_core::MemoryStore) whose revision epochs start after a random
/// base, so a host without a durable store does not repeat the revisions of its last run
/// (R-INV-2), except by a 2⁻³² chance.
fn fresh_memory_store() -> lineup_host_core::MemoryStore {
    let mut random = [0u8; 4];
    let base = match getrandom::fill(&mut random) {
        Ok(()) => u64::from(u32::from_le_bytes(random)),
        // No random source: the clock's nanoseconds are the next best thing here.
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| u64::from(d.subsec_nanos()) ^ d.as_secs()),
    } & 0xffff_ffff;
    lineup_host_core::MemoryStore::starting_after(lineup_host_core::RevisionEpoch(base << 32))
}

/// What a [`HostBuilder`](crate::HostBuilder) collected about capabilities.
pub(crate) struct CapabilityConfig {
    pub(crate) registrations: Vec<(lineup_host_core::Capability, Arc<dyn CapabilityHandler>)>,
    /// The embedder's capability store; the component store joins it at build.
    pub(crate) store: StorePort,
    pub(crate) prompt: PromptChoice,
    pub(crate) hook: PermissionHook,
    pub(crate) builtins: BuiltinConfig,
    pub(crate) hidden_prompts: HiddenConversationPrompts,
}

impl Default for CapabilityConfig {
    fn default() -> Self {
        Self {
            registrations: Vec::new(),
            store: StorePort::new(fresh_memory_store()),
            prompt: PromptChoice::BuiltIn,
            hook: Box::new(|_| false),
            builtins: BuiltinConfig::default(),
            hidden_prompts: HiddenConversationPrompts::default(),
        }
    }
}
