//! Standard components in the window of the child views (R-STD-13): when Surfaces are child
//! views of an embedder's (or the kiosk's) window, the built-in renderer puts each component
//! there too, in the layer over the Surfaces, where [`HostDelegate::request_component_placement`]
//! says; a conversation's components share one web process. Laid out again when one is shown,
//! closed or changes height, and when the window is resized.

use std::collections::HashMap;

use lineup_host_core::{ComponentKind, SessionId, SurfaceKey};
use lineup_webview_shell::tao::window::Window;
use lineup_webview_shell::{ComponentProcess, ComponentWindow};

use crate::delegate::{ComponentSlot, HostDelegate, COMPONENT_GAP};

/// The components in the window of the child views: their open order, kinds and heights, and
/// the web process each conversation's share.
#[derive(Default)]
pub(super) struct ChildComponents {
    order: Vec<(SurfaceKey, ComponentKind)>,
    heights: HashMap<SurfaceKey, u32>,
    processes: HashMap<SessionId, ComponentProcess>,
}

impl ChildComponents {
    /// The process the components of `session` share, made on first use; `None` when it
    /// cannot be made (each then gets one of its own).
    pub(super) fn process_of(&mut self, session: SessionId) -> Option<ComponentProcess> {
        if let Some(process) = self.processes.get(&session) {
            return Some(process.clone());
        }
        match ComponentProcess::new() {
            Ok(process) => {
                self.processes.insert(session, process.clone());
                Some(process)
            }
            Err(e) => {
                tracing::warn!("no shared component process: {e}");
                None
            }
        }
    }

    /// `key` was shown, after the others.
    pub(super) fn add(&mut self, key: SurfaceKey, kind: ComponentKind) {
        self.order.push((key, kind));
    }

    /// `key` went; its conversation's process goes with its last component.
    pub(super) fn remove(&mut self, key: &SurfaceKey) {
        self.order.retain(|(k, _)| k != key);
        self.heights.remove(key);
        if !self.order.iter().any(|(k, _)| k.session == key.session) {
            self.processes.remove(&key.session);
        }
    }

    /// Whether `key` is one of them.
    pub(super) fn holds(&self, key: &SurfaceKey) -> bool {
        self.order.iter().any(|(k, _)| k == key)
    }

    /// The content of `key` is `height` tall; returns whether that changed anything.
    pub(super) fn resized(&mut self, key: &SurfaceKey, height: u32) -> bool {
        if !self.holds(key) {
            return false;
        }
        self.heights.insert(key.clone(), height) != Some(height)
    }

    /// The slot of each, in open order, for a `width` × `height` content area.
    fn slots(&self, width: u32, height: u32) -> Vec<ComponentSlot<'_>> {
        let count = self.order.len();
        let mut offset = 0u32;
        let mut slots = Vec::with_capacity(count);
        for (index, (key, kind)) in self.order.iter().enumerate() {
            let content_height = self.heights.get(key).copied();
            slots.push(ComponentSlot {
                key,
                kind: *kind,
                index,
                count,
                width,
                height,
                content_height,
                offset,
            });
            offset = offset
                .saturating_add(content_height.unwrap_or(200))
                .saturating_add(COMPONENT_GAP);
        }
        slots
    }

    /// Puts each of `windows` that is here where `delegate` says, in `parent`.
    pub(super) fn relayout(
        &self,
        parent: &Window,
        windows: &HashMap<SurfaceKey, ComponentWindow>,
        delegate: &mut dyn HostDelegate,
    ) {
        let size = parent.inner_size().to_logical::<f64>(parent.scale_factor());
        // Logical pixels of a real window: far inside u32.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let (width, height) = (size.width.max(0.0) as u32, size.height.max(0.0) as u32);
        for slot in self.slots(width, height) {
            if let Some(window) = windows.get(slot.key) {
                window.set_bounds(delegate.request_component_placement(&slot));
            }
        }
    }

    /// Where `kind`, shown now as `key`, goes before it has a height: its slot at the end of
    /// the column.
    pub(super) fn first_bounds(
        &self,
        parent: &Window,
        key: &SurfaceKey,
        kind: ComponentKind,
        delegate: &mut dyn HostDelegate,
    ) -> lineup_webview_shell::Rect {
        let size = parent.inner_size().to_logical::<f64>(parent.scale_factor());
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let (width, height) = (size.width.max(0.0) as u32, size.height.max(0.0) as u32);
        let slots = self.slots(width, height);
        let offset = slots
            .last()
            .map(|s| {
                s.offset
                    .saturating_add(s.content_height.unwrap_or(200))
                    .saturating_add(COMPONENT_GAP)
            })
            .unwrap_or(0);
        delegate.request_component_placement(&ComponentSlot {
            key,
            kind,
            index: slots.len(),
            count: slots.len() + 1,
            width,
            height,
            content_height: None,
            offset,
        })
    }
}
