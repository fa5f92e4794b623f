//! The host's session factory: each new session's clock and capability kernel, the capability
//! driver and store port it shares with the host, and the app center's watch.

use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lineup_host_core::{
    AgentIdentity, AppCatalog, Capability, CapabilitySetup, Clock, InstanceStore, SessionFactory,
    StorePort,
};
use lineup_webview_shell::WindowMaker;

use crate::capabilities::{logged_port, CapabilityConfig, CapabilityDriver, PromptChoice};
use lineup_host_core::AnswerSink;
use lineup_webview_shell::{ConsentPrompt, ShellError, SystemWallClock};
use lineup_webview_shell::{PromptOptions, PromptQueue};

use crate::host::{HostEvent, HostProxy, Inner};

/// What starting capabilities hands back beside the driver: the registered capabilities, for
/// the session table to fan out, and the store's unfinished call records (R-CAP-5).
pub(super) type Started = (Vec<Capability>, Vec<lineup_host_core::CallRecord>);

/// Starts capabilities from `config`: the driver that carries out every session's capability
/// effects, the store port it shares with the sessions and their factory (joined by the
/// embedder's component store `records`, if any), the registrations and the store's unfinished
/// records. With `parent` (child views), the built-in prompt is attached to it; the host's
/// words in every prompt are in `language` (R-STD-9).
pub(super) fn start_capabilities(
    (config, records): (CapabilityConfig, Option<Box<dyn InstanceStore>>),
    target: &dyn WindowMaker,
    proxy: HostProxy,
    parent: Option<&lineup_webview_shell::tao::window::Window>,
    language: lineup_host_core::LanguageTag,
) -> Result<(CapabilityDriver, StorePort, Started), ShellError> {
    let CapabilityConfig {
        registrations,
        store,
        prompt,
        hook,
        builtins,
        hidden_prompts,
    } = config;
    let store = logged_port(store, records);
    let unfinished = store
        .unfinished_calls()
        .map_err(|e| ShellError::Store(Box::new(e)))?;
    let mut capabilities = Vec::new();
    let mut handlers = std::collections::HashMap::new();
    for (capability, handler) in registrations {
        handlers.insert(capability.name().clone(), handler);
        capabilities.push(capability);
    }
    let builtins = match lineup_builtins::Builtins::start(builtins)? {
        Some((builtins, builtin_capabilities)) => {
            capabilities.extend(builtin_capabilities);
            Some(Box::new(builtins) as Box<dyn lineup_host_core::CapabilityProvider>)
        }
        None => None,
    };
    let prompt: Box<dyn ConsentPrompt> = match prompt {
        PromptChoice::Custom(prompt) => prompt,
        PromptChoice::BuiltIn => {
            let queue = PromptQueue::new(target, PromptOptions::default())?;
            // With child views, the prompt belongs to the embedder's window (#24).
            if let Some(parent) = parent {
                queue.attach_to(parent);
            }
            Box::new(queue)
        }
    };
    // The proxy is `Send` but not `Sync`; answers come from handler and prompt threads.
    let proxy = std::sync::Mutex::new(proxy);
    let sink: AnswerSink = Arc::new(move |session, ticket, answer| {
        if let Ok(proxy) = proxy.lock() {
            let _ = proxy.send_event(HostEvent(Inner::CapabilityAnswer {
                session,
                ticket,
                answer,
            }));
        }
    });
    let mut driver = CapabilityDriver::new(
        store.clone(),
        handlers,
        Some(prompt),
        hook,
        sink,
        builtins,
        language,
    );
    driver.set_hidden_prompts(hidden_prompts);
    Ok((driver, store, (capabilities, unfinished)))
}

/// How often the host looks at the app center's change marker: a revoked app's Surfaces must
/// close within 2 s of the change (R-INV-4, R-UI-12), and a look is one read of one row.
const APPS_POLL: Duration = Duration::from_millis(250);

/// The app center and the change marker last seen.
pub(super) struct AppsWatch {
    catalog: Rc<dyn AppCatalog>,
    seen: Option<u64>,
    next: Instant,
}

impl AppsWatch {
    /// Watches `catalog` from its change marker now.
    pub(super) fn new(catalog: Rc<dyn AppCatalog>) -> Self {
        Self {
            seen: catalog.change_marker(),
            catalog,
            next: Instant::now() + APPS_POLL,
        }
    }

    /// Looks at the app center's change marker when due: whether it moved since the last look,
    /// and when to look again.
    pub(super) fn poll(&mut self) -> (bool, Instant) {
        let now = Instant::now();
        if now < self.next {
            return (false, self.next);
        }
        self.next = now + APPS_POLL;
        let marker = self.catalog.change_marker();
        let moved = marker != self.seen;
        self.seen = marker;
        (moved, self.next)
    }
}

/// The host's one monotonic clock: time since its sessions' start.
struct MonotonicClock(Instant);

impl Clock for MonotonicClock {
    fn monotonic(&self) -> Duration {
        self.0.elapsed()
    }
}

/// Starts the host's sessions: one monotonic clock origin for all, and, with capabilities on,
/// a revision epoch of the store for each (R-INV-2).
pub(super) struct HostSessions {
    pub(super) start: Instant,
    pub(super) store: Option<StorePort>,
    /// [`HostBuilder::unvouched_grants_scope`].
    pub(super) unvouched_scope: Option<String>,
}

impl SessionFactory for HostSessions {
    fn clock(&mut self) -> Box<dyn Clock> {
        Box::new(MonotonicClock(self.start))
    }

    fn capabilities(
        &mut self,
        agent: Option<&AgentIdentity>,
    ) -> Result<Option<CapabilitySetup>, String> {
        let Some(store) = &self.store else {
            return Ok(None);
        };
        let epoch = store
            .next_revision_epoch()
            .map_err(|e| format!("capability store: {e}"))?;
        let mut setup = CapabilitySetup::new(epoch, Box::new(SystemWallClock));
        if let Some(agent) = agent {
            // R-INV-4: what this identity was offered before, also by an earlier process; a
            // read that fails (logged by the port) offers nothing before.
            if let Ok(names) = store.offered(agent) {
                setup.offered_before = names.into_iter().collect();
            }
        }
        setup.agent = agent.cloned();
        setup.unvouched_scope = self.unvouched_scope.clone();
        Ok(Some(setup))
    }
}
