//! One open Surface of a session: what it was opened with, its state, its current page and its
//! budgets (R-UI-3, R-UI-9, R-UI-10, R-UI-12, R-DIAG-1, #29).

use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;

use crate::apps::{Assets, CatalogRefusal};
use crate::bridge::DocumentId;
use crate::diagnostic::Diagnostic;
use crate::error::{ErrorCode, ProtocolError};
use crate::ids::{AppVersion, ConversationId, EventName, InstanceId, MessageId};
use crate::json::JsonObject;
use crate::keys::Generation;
use crate::limits::Limits;
use crate::message::{InlineApp, InstalledSurface, Party, SurfaceSource};
use crate::recovery::{Decision, ReopenBudget};
use crate::session_config::CatalogRef;
use crate::source::SourceFiles;
use crate::{Effect, GoneReason, Stats, SurfaceKey, SurfaceOpen, SurfaceRecord};

/// The installed app a Surface was opened from: a plain value, made by the open's checks.
pub(super) struct OpenedInstalled {
    /// The Surface asked for, by id.
    pub(super) surface: InstalledSurface,
    /// The version it opened at.
    pub(super) version: AppVersion,
    /// The events its manifest declares (R-UI-9).
    pub(super) events: BTreeSet<EventName>,
    /// Its assets and sources, to serve it again on a reopen.
    pub(super) assets: Assets,
    pub(super) sources: SourceFiles,
    /// Who signed it, when a trusted key did (R-SEC-7).
    pub(super) signed_by: Option<String>,
}

/// One Surface's diagnostics within the current fixed window (R-DIAG-1).
///
/// Invariant: `count` and `bytes` are what passed since `window_start`; `suppressed` what was
/// dropped since the embedder was last told; `told` whether it heard in this window.
#[derive(Default)]
struct DiagnosticBudget {
    window_start: Duration,
    count: usize,
    bytes: usize,
    suppressed: u64,
    told: bool,
}

/// What the page in the Surface's current view has said: its `ready`, and its main frame's
/// commits (R-UI-3, R-UI-10). A new view starts a new page.
#[derive(Default)]
struct Page {
    /// The document whose `ready` was taken since the last commit.
    ready: Option<DocumentId>,
    /// When the main frame committed its recent documents, for the reload-loop bound.
    documents: VecDeque<Duration>,
    /// Whether the main frame committed its first document yet.
    committed: bool,
}

/// How a patch left a Surface (R-UI-3).
pub(super) enum Patched {
    /// It is hibernated: its record must follow the state (#29).
    Asleep,
    /// Its page took `ready`: the new state goes to it now.
    Deliver(JsonObject),
    /// Its page has not said `ready`: the state waits for it.
    Waiting,
}

/// One open Surface.
///
/// Invariants: `state` is the latest open's or patch's and `state_from` that message's id
/// (R-UI-3); `recorded` is set exactly while the store keeps its record (#29); the page's
/// `ready` is taken at most once per committed document (R-UI-10).
pub(super) struct Entry {
    generation: Generation,
    opened_by: MessageId,
    state_from: MessageId,
    recorded: bool,
    opener: Party,
    /// What it was opened with, kept to reopen it (R-UI-12).
    app: InlineApp,
    installed: Option<OpenedInstalled>,
    /// Its reopens within `Limits::reopen_window` (R-UI-12).
    reopens: ReopenBudget,
    state: JsonObject,
    page: Page,
    diagnostics: DiagnosticBudget,
}

impl Entry {
    /// A Surface opened by `opened_by` of `opener` at `now`, under `generation`.
    pub(super) fn new(
        generation: Generation,
        opened_by: MessageId,
        opener: Party,
        (app, installed): (InlineApp, Option<OpenedInstalled>),
        state: JsonObject,
        now: Duration,
    ) -> Self {
        Self {
            generation,
            state_from: opened_by.clone(),
            opened_by,
            recorded: false,
            opener,
            app,
            installed,
            reopens: ReopenBudget::default(),
            state,
            page: Page::default(),
            diagnostics: DiagnosticBudget {
                window_start: now,
                ..DiagnosticBudget::default()
            },
        }
    }

    /// The generation of its current view.
    pub(super) fn generation(&self) -> Generation {
        self.generation
    }

    /// The agent that opened it.
    pub(super) fn opener(&self) -> &Party {
        &self.opener
    }

    /// The id of the `ui.open` that made it.
    pub(super) fn opened_by(&self) -> &MessageId {
        &self.opened_by
    }

    /// Whether the store keeps its record (#29).
    pub(super) fn is_recorded(&self) -> bool {
        self.recorded
    }

    /// The store keeps its record now, or no longer.
    pub(super) fn set_recorded(&mut self, recorded: bool) {
        self.recorded = recorded;
    }

    /// It came back from its record after a restart: its state is from `state_from`, and the
    /// record is kept while it sleeps.
    pub(super) fn restored(&mut self, state_from: MessageId) {
        self.state_from = state_from;
        self.recorded = true;
    }

    /// A new page will load in a new view: it says `ready` and gets the state, and its first
    /// commit is a load, not a reload (R-UI-3, R-UI-10).
    pub(super) fn new_page(&mut self) {
        self.page = Page::default();
    }

    /// What the host makes a new view of it from, under `key`.
    pub(super) fn open_as(&self, key: SurfaceKey) -> SurfaceOpen {
        let installed = self.installed.as_ref();
        SurfaceOpen {
            key,
            app: self.app.clone(),
            assets: installed.map(|i| i.assets.clone()).unwrap_or_default(),
            sources: installed.map(|i| i.sources.clone()).unwrap_or_default(),
        }
    }

    /// Its web process was lost for `reason` at `now`: whether it is reopened within its
    /// budget, counted (R-UI-12).
    pub(super) fn reopen(&mut self, reason: GoneReason, now: Duration, limits: &Limits) -> bool {
        self.reopens.decide(reason, now, limits) != Decision::GiveUp
    }

    /// It gets a new view under `generation`, with a new page.
    pub(super) fn renew(&mut self, generation: Generation) {
        self.generation = generation;
        self.new_page();
    }

    /// The agent's patch `from` replaces the whole state (R-UI-3; before `ready`, only the
    /// latest is kept).
    pub(super) fn patch(&mut self, state: JsonObject, from: MessageId) -> Patched {
        self.state = state;
        self.state_from = from;
        if self.recorded {
            Patched::Asleep
        } else if self.page.ready.is_some() {
            Patched::Deliver(self.state.clone())
        } else {
            Patched::Waiting
        }
    }

    /// Its record as it stands, as Surface `instance` of `conversation` (#29): an installed
    /// app's Surface comes back at the version it was opened with.
    pub(super) fn record(
        &self,
        instance: &InstanceId,
        conversation: ConversationId,
    ) -> SurfaceRecord {
        let app = match &self.installed {
            Some(installed) => SurfaceSource::Installed(InstalledSurface {
                id: installed.surface.id.clone(),
                version: Some(installed.version.clone()),
                surface: installed.surface.surface.clone(),
            }),
            None => SurfaceSource::Inline(self.app.clone()),
        };
        SurfaceRecord {
            conversation,
            instance_id: instance.clone(),
            app,
            state: self.state.clone(),
            opened_by: self.opened_by.clone(),
            state_from: self.state_from.clone(),
            opener: self.opener.clone(),
        }
    }

    /// Why it may no longer stay open now that the app center changed, if it is an installed
    /// app's Surface that `catalog` no longer opens at its version (R-UI-12).
    pub(super) fn retired(&self, catalog: &CatalogRef) -> Option<GoneReason> {
        let installed = self.installed.as_ref()?;
        let asked = &installed.surface;
        match catalog
            .0
            .resolve(&asked.id, Some(&installed.version), &asked.surface)
        {
            // Loaded when it opened: a limit of this host's does not change while it runs, and
            // an unreadable catalog closes nothing.
            Ok(_) | Err(CatalogRefusal::Unavailable(_)) | Err(CatalogRefusal::OverLimit(_)) => None,
            Err(CatalogRefusal::Disabled) => Some(GoneReason::AppDisabled),
            Err(CatalogRefusal::OtherVersion { .. }) => Some(GoneReason::AppUpgraded),
            Err(_) => Some(GoneReason::AppRemoved),
        }
    }

    /// The refusal of page event `event` when it is an installed app's Surface whose manifest
    /// does not declare it (R-UI-9).
    pub(super) fn undeclared(&self, event: &EventName) -> Option<ProtocolError> {
        let installed = self
            .installed
            .as_ref()
            .filter(|i| !i.events.contains(event))?;
        Some(
            ProtocolError::new(
                ErrorCode::InvalidBridgeMessage,
                "R-UI-9",
                format!(
                    "event {:?} is not declared by surface {} of app {} in its manifest",
                    event.as_str(),
                    installed.surface.surface,
                    installed.surface.id
                ),
            )
            .field("event"),
        )
    }

    /// The page of view `key` said `ready` from `document` (R-UI-3): the first since the last
    /// commit gets the state. Another from the same document is dropped and counted, and
    /// changes nothing: a page saying `ready` twice is not a reload (R-UI-10). One from another
    /// document without a commit is a document that replaced the Surface's in place (a
    /// `javascript:` URL): the Surface's own document is loaded again (R-SEC-2a).
    pub(super) fn ready(
        &mut self,
        key: &SurfaceKey,
        document: DocumentId,
        stats: &mut Stats,
        fx: &mut Vec<Effect>,
    ) {
        match &self.page.ready {
            Some(taken) if *taken == document => {
                stats.duplicate_ready += 1;
                fx.push(Effect::Dropped {
                    key: key.clone(),
                    error: ProtocolError::new(
                        ErrorCode::InvalidBridgeMessage,
                        "R-UI-10",
                        "ready was already received from this document; dropped",
                    )
                    .field("type"),
                });
            }
            Some(_) => {
                stats.replaced_documents += 1;
                fx.push(Effect::Dropped {
                    key: key.clone(),
                    error: ProtocolError::new(
                        ErrorCode::InvalidBridgeMessage,
                        "R-SEC-2a",
                        "ready came from another document without a navigation; the surface's document is loaded again",
                    )
                    .field("document"),
                });
                fx.push(Effect::RestoreDocument(key.clone()));
            }
            None => {
                self.page.ready = Some(document);
                fx.push(Effect::Ready(key.clone()));
                fx.push(Effect::DeliverState {
                    key: key.clone(),
                    state: self.state.clone(),
                });
            }
        }
    }

    /// Its main frame committed a document at `now`: whether that stays within
    /// `Limits::max_documents_per_window` commits in `Limits::document_window` (R-UI-12).
    pub(super) fn within_reload_bound(&mut self, now: Duration, limits: &Limits) -> bool {
        let documents = &mut self.page.documents;
        while documents
            .front()
            .is_some_and(|t| now.saturating_sub(*t) >= limits.document_window)
        {
            documents.pop_front();
        }
        documents.push_back(now);
        documents.len() <= limits.max_documents_per_window
    }

    /// A commit of view `key`'s main frame that passed the reload-loop bound: after the first,
    /// a reload, and the page gets the current state after its next `ready` (R-UI-10).
    pub(super) fn committed(&mut self, key: &SurfaceKey, stats: &mut Stats, fx: &mut Vec<Effect>) {
        if self.page.committed {
            self.page.ready = None;
            stats.reloads += 1;
            fx.push(Effect::Reloaded(key.clone()));
        }
        self.page.committed = true;
    }

    /// The platform dropped `count` of its diagnostics: they count as suppressed (R-DIAG-1).
    pub(super) fn diagnostics_dropped(&mut self, count: u64) {
        self.diagnostics.suppressed += count;
    }

    /// R-DIAG-1: passes `diagnostic` of view `key` to the embedder within the budget; past it,
    /// one `suppressed` note per window, and a count of what was dropped once the next window
    /// opens.
    pub(super) fn diagnostic(
        &mut self,
        key: &SurfaceKey,
        diagnostic: Diagnostic,
        (now, limits): (Duration, &Limits),
        stats: &mut Stats,
        fx: &mut Vec<Effect>,
    ) {
        let (window, max_count, max_bytes) = (
            limits.diagnostic_window,
            limits.max_diagnostics_per_window,
            limits.max_diagnostic_bytes_per_window,
        );
        let budget = &mut self.diagnostics;
        if now.saturating_sub(budget.window_start) >= window {
            let dropped = std::mem::take(&mut budget.suppressed);
            *budget = DiagnosticBudget {
                window_start: now,
                ..DiagnosticBudget::default()
            };
            if dropped > 0 {
                fx.push(Effect::Diagnostic {
                    key: key.clone(),
                    diagnostic: Diagnostic::suppressed(format!(
                        "{dropped} diagnostics of this surface were dropped: more than {max_count} \
                         or {max_bytes} bytes within {window:?} (R-DIAG-1)"
                    )),
                });
            }
        }
        let weight = diagnostic.weight();
        if budget.count >= max_count || budget.bytes + weight > max_bytes {
            budget.suppressed += 1;
            stats.diagnostics_suppressed += 1;
            if !std::mem::replace(&mut budget.told, true) {
                fx.push(Effect::Diagnostic {
                    key: key.clone(),
                    diagnostic: Diagnostic::suppressed(format!(
                        "this surface passed its diagnostic budget of {max_count} messages or \
                         {max_bytes} bytes within {window:?}; further ones are dropped and counted \
                         (R-DIAG-1)"
                    )),
                });
            }
            return;
        }
        budget.count += 1;
        budget.bytes += weight;
        stats.diagnostics += 1;
        fx.push(Effect::Diagnostic {
            key: key.clone(),
            diagnostic,
        });
    }
}
