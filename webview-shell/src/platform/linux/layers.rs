//! The layers of an embedder's window that hold the host's child views, in tao's default vbox:
//! a `gtk::Overlay` whose main child is the `gtk::Fixed` of the Surfaces' views; over it, first
//! the standard components' `gtk::Fixed` (R-STD-13: kept above every Surface, never under a
//! Surface's pixels), then the standby screen and its labels when there is one. The components'
//! layer lets input through where it has no view, so the Surfaces under it keep theirs.

use gtk::prelude::*;
use tao::platform::unix::WindowExtUnix;
use tao::window::Window;

use crate::error::ShellError;

/// The widget name of the components' layer, by which it is found again.
const COMPONENT_LAYER: &str = "lineup-component-layer";

/// The `gtk::Fixed` child views of `parent` live in, added to its default vbox the first time;
/// under the overlay of the other layers when there is one.
pub(super) fn child_container(parent: &Window) -> Result<gtk::Fixed, ShellError> {
    let vbox = parent.default_vbox().ok_or(ShellError::NoContainer)?;
    if let Some(fixed) =
        vbox.children()
            .into_iter()
            .find_map(|child| match child.downcast::<gtk::Overlay>() {
                Ok(overlay) => overlay
                    .child()
                    .and_then(|c| c.downcast::<gtk::Fixed>().ok()),
                Err(child) => child.downcast::<gtk::Fixed>().ok(),
            })
    {
        return Ok(fixed);
    }
    let fixed = gtk::Fixed::new();
    vbox.pack_start(&fixed, true, true, 0);
    fixed.show();
    Ok(fixed)
}

/// The overlay over the Surfaces' `gtk::Fixed` of `parent`, made (with the `Fixed` moved into
/// it) the first time.
pub(super) fn overlay_of(parent: &Window) -> Result<gtk::Overlay, ShellError> {
    let fixed = child_container(parent)?;
    if let Some(overlay) = fixed
        .parent()
        .and_then(|p| p.downcast::<gtk::Overlay>().ok())
    {
        return Ok(overlay);
    }
    let vbox = parent.default_vbox().ok_or(ShellError::NoContainer)?;
    vbox.remove(&fixed);
    let overlay = gtk::Overlay::new();
    overlay.add(&fixed);
    vbox.pack_start(&overlay, true, true, 0);
    overlay.show();
    Ok(overlay)
}

/// The standard components' layer of `parent`: the first overlay over the Surfaces, made the
/// first time.
pub(super) fn component_layer(parent: &Window) -> Result<gtk::Fixed, ShellError> {
    let overlay = overlay_of(parent)?;
    if let Some(layer) = overlay
        .children()
        .into_iter()
        .filter(|c| c.widget_name() == COMPONENT_LAYER)
        .find_map(|c| c.downcast::<gtk::Fixed>().ok())
    {
        return Ok(layer);
    }
    let layer = gtk::Fixed::new();
    layer.set_widget_name(COMPONENT_LAYER);
    overlay.add_overlay(&layer);
    overlay.reorder_overlay(&layer, 0);
    // Input where the layer has no view goes to the Surfaces under it; its views take their
    // own (GDK's pass-through leaves child windows their events).
    overlay.set_overlay_pass_through(&layer, true);
    layer.show();
    Ok(layer)
}
