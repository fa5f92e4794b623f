//! The kiosk's fixed layout: each Surface goes to a region chosen by its instance id or app id,
//! and the host's other notifications go on to the log.

use std::collections::BTreeMap;

use lineup_host::{ChildSlot, ComponentSlot, HostDelegate, Rect, Refusal};
use lineup_host_core::{CloseReason, Diagnostic, InlineApp, Message, ProtocolError, SurfaceKey};

use super::config::Region;

/// Places Surfaces into regions; logs everything through `inner`.
pub(crate) struct RegionLayout<D> {
    regions: Vec<Region>,
    placed: BTreeMap<SurfaceKey, usize>,
    inner: D,
}

impl<D: HostDelegate> RegionLayout<D> {
    pub(crate) fn new(regions: Vec<Region>, inner: D) -> Self {
        Self {
            regions,
            placed: BTreeMap::new(),
            inner,
        }
    }

    /// The region of a Surface with this instance id and app id.
    fn region_for(&self, instance: &str, app: &str) -> usize {
        let by = |f: &dyn Fn(&Region) -> bool| self.regions.iter().position(f);
        by(&|r| r.instances.iter().any(|i| i == instance))
            .or_else(|| by(&|r| r.apps.iter().any(|a| a == app)))
            .or_else(|| by(&|r| r.default))
            .unwrap_or(0)
    }
}

/// `region` of a `width` × `height` area, in whole logical pixels.
fn bounds(region: &Region, width: u32, height: u32) -> Rect {
    let (w, h) = (f64::from(width), f64::from(height));
    let x = (region.x / 100.0 * w).round();
    let y = (region.y / 100.0 * h).round();
    let right = ((region.x + region.width) / 100.0 * w).round();
    let bottom = ((region.y + region.height) / 100.0 * h).round();
    // Percentages are within 0 ..= 100 (checked when read), so these fit.
    Rect {
        x: x as i32,
        y: y as i32,
        width: (right - x).max(1.0) as u32,
        height: (bottom - y).max(1.0) as u32,
    }
}

impl<D: HostDelegate> HostDelegate for RegionLayout<D> {
    fn notify_outbound(&mut self, message: &Message) {
        self.inner.notify_outbound(message);
    }

    fn notify_opened(&mut self, key: &SurfaceKey, app: &InlineApp) {
        let region = self.region_for(key.instance.as_str(), app.id.as_str());
        if let Some(r) = self.regions.get(region) {
            tracing::info!("surface {key}: in region {}", r.name);
        }
        self.placed.insert(key.clone(), region);
        self.inner.notify_opened(key, app);
    }

    fn notify_ready(&mut self, key: &SurfaceKey) {
        self.inner.notify_ready(key);
    }

    fn notify_reloaded(&mut self, key: &SurfaceKey) {
        self.inner.notify_reloaded(key);
    }

    fn notify_closed(&mut self, key: &SurfaceKey, reason: &CloseReason) {
        self.placed.remove(key);
        self.inner.notify_closed(key, reason);
    }

    fn notify_crashed(&mut self, key: &SurfaceKey) {
        self.inner.notify_crashed(key);
    }

    fn notify_unresponsive(&mut self, key: &SurfaceKey) {
        self.inner.notify_unresponsive(key);
    }

    fn notify_rejected(&mut self, error: &ProtocolError, line: Option<u64>) {
        self.inner.notify_rejected(error, line);
    }

    fn notify_dropped(&mut self, key: &SurfaceKey, error: &ProtocolError) {
        self.inner.notify_dropped(key, error);
    }

    fn notify_refused(&mut self, key: &SurfaceKey, refusal: &Refusal) {
        self.inner.notify_refused(key, refusal);
    }

    fn notify_diagnostic(&mut self, key: &SurfaceKey, diagnostic: &Diagnostic) {
        self.inner.notify_diagnostic(key, diagnostic);
    }

    fn notify_resize(&mut self, key: &SurfaceKey, height: u32) {
        // A kiosk's regions are fixed: a page's resize request changes nothing on screen.
        self.inner.notify_resize(key, height);
    }

    /// The Surface's region; a page's resize request is not honoured.
    fn request_child_placement(&mut self, slot: &ChildSlot<'_>) -> Rect {
        // Recorded when the Surface opened, which the host tells before it asks (issue 30: a
        // Surface placed before it was recorded went to the first region); should a view be
        // asked for all the same, its instance id still finds its region.
        let region = match self.placed.get(slot.key) {
            Some(region) => *region,
            None => self.region_for(slot.key.instance.as_str(), ""),
        };
        match self.regions.get(region) {
            Some(r) => bounds(r, slot.width, slot.height),
            None => Rect {
                x: 0,
                y: 0,
                width: slot.width,
                height: slot.height,
            },
        }
    }

    /// R-STD-13: a component goes to the region naming its instance id, any other to the
    /// default region; the components of one region are boxes of one view there, from its top,
    /// as tall as they are (at most the region). Over the Surfaces there either way.
    fn request_component_placement(&mut self, slot: &ComponentSlot<'_>) -> Rect {
        let instance = slot.key.instance.as_str();
        let region = self
            .regions
            .iter()
            .position(|r| r.instances.iter().any(|i| i == instance))
            .unwrap_or_else(|| self.regions.iter().position(|r| r.default).unwrap_or(0));
        match self.regions.get(region) {
            Some(r) => bounds(r, slot.width, slot.height),
            None => slot.column(),
        }
    }

    fn notify_probe_failed(&mut self, reason: &str) {
        self.inner.notify_probe_failed(reason);
    }
}

#[cfg(test)]
mod tests {
    use lineup_host::NoDelegate;

    use super::*;

    fn region(name: &str, x: f64, y: f64, w: f64, h: f64) -> Region {
        Region {
            name: name.to_owned(),
            x,
            y,
            width: w,
            height: h,
            instances: Vec::new(),
            apps: Vec::new(),
            default: false,
        }
    }

    #[test]
    fn surfaces_go_by_instance_then_app_then_default() {
        let mut main = region("main", 0.0, 0.0, 100.0, 85.0);
        main.apps = vec!["com.example.dashboard".into()];
        let mut strip = region("strip", 0.0, 85.0, 100.0, 15.0);
        strip.instances = vec!["status".into()];
        let mut other = region("other", 50.0, 0.0, 50.0, 50.0);
        other.default = true;
        let layout = RegionLayout::new(vec![main, strip, other], NoDelegate);
        assert_eq!(layout.region_for("status", "com.example.dashboard"), 1);
        assert_eq!(layout.region_for("w1", "com.example.dashboard"), 0);
        assert_eq!(layout.region_for("w1", "com.example.other"), 2);
    }

    #[test]
    fn regions_are_percent_of_the_window_and_tile_without_gaps() {
        let top = bounds(&region("a", 0.0, 0.0, 100.0, 85.0), 1280, 1024);
        let bottom = bounds(&region("b", 0.0, 85.0, 100.0, 15.0), 1280, 1024);
        assert_eq!((top.x, top.y, top.width, top.height), (0, 0, 1280, 870));
        assert_eq!(
            (bottom.x, bottom.y, bottom.width, bottom.height),
            (0, 870, 1280, 154)
        );
    }
}
