//! The layers of an embedder's window that hold the host's child views, in the host's container
//! (a `gtk::Overlay` the embedder packed where it likes, else one in tao's default vbox): its
//! main child is the `gtk::Fixed` of the Surfaces' views; over it, first the standard
//! components' `gtk::Fixed` (R-STD-13: kept above every Surface, never under a Surface's
//! pixels), then the standby screen and its labels when there is one. The components' layer
//! lets input through where it has no view, so the Surfaces under it keep theirs.

use gtk::prelude::*;
use tao::platform::unix::WindowExtUnix;
use tao::window::Window;

use crate::error::ShellError;

/// The widget name of the components' layer, by which it is found again.
const COMPONENT_LAYER: &str = "lineup-component-layer";

/// The widget name of the host's container (the overlay all the layers are in), by which it
/// is found in the window again, wherever the embedder packed it.
const CONTAINER: &str = "lineup-host-container";

/// The host's container in an embedder's window (#49 item 3): an overlay whose main child is
/// the `gtk::Fixed` of the Surfaces' views, named so that the host finds it in the window
/// wherever the embedder packed it.
///
/// Invariant: `overlay` is named [`CONTAINER`] and its child is a `gtk::Fixed`.
#[derive(Clone)]
pub(crate) struct PlatformContainer {
    overlay: gtk::Overlay,
}

impl PlatformContainer {
    /// A new container, in no window yet, filling what its parent gives it.
    pub(crate) fn new() -> Self {
        let overlay = gtk::Overlay::new();
        overlay.set_widget_name(CONTAINER);
        overlay.set_hexpand(true);
        overlay.set_vexpand(true);
        let fixed = gtk::Fixed::new();
        overlay.add(&fixed);
        fixed.show();
        overlay.show();
        Self { overlay }
    }

    /// The widget the embedder packs into its own layout.
    pub(crate) fn widget(&self) -> gtk::Widget {
        self.overlay.clone().upcast()
    }
}

/// The host's container in `parent`: the one the embedder packed somewhere in the window
/// ([`PlatformContainer`]), else one packed into tao's default vbox the first time (after what
/// the embedder packed there before).
fn container_of(parent: &Window) -> Result<gtk::Overlay, ShellError> {
    let window = parent.gtk_window().clone().upcast::<gtk::Widget>();
    if let Some(overlay) = find_container(&window) {
        return Ok(overlay);
    }
    tracing::debug!("no host container in the window: one is packed into tao's default vbox");
    let vbox = parent.default_vbox().ok_or(ShellError::NoContainer)?;
    let container = PlatformContainer::new();
    vbox.pack_start(&container.overlay, true, true, 0);
    Ok(container.overlay)
}

/// The overlay named [`CONTAINER`] in `widget`'s tree, depth first.
fn find_container(widget: &gtk::Widget) -> Option<gtk::Overlay> {
    if widget.widget_name() == CONTAINER {
        if let Ok(overlay) = widget.clone().downcast::<gtk::Overlay>() {
            return Some(overlay);
        }
    }
    let container = widget.clone().downcast::<gtk::Container>().ok()?;
    container.children().iter().find_map(find_container)
}

/// The `gtk::Fixed` child views of `parent` live in: the main child of the host's container.
pub(super) fn child_container(parent: &Window) -> Result<gtk::Fixed, ShellError> {
    container_of(parent)?
        .child()
        .and_then(|c| c.downcast::<gtk::Fixed>().ok())
        .ok_or(ShellError::NoContainer)
}

/// The overlay over the Surfaces' `gtk::Fixed` of `parent`: the host's container.
pub(super) fn overlay_of(parent: &Window) -> Result<gtk::Overlay, ShellError> {
    container_of(parent)
}

/// Calls `changed` from the main loop whenever the host's container in `parent` is given a new
/// size (the window resized, or the app's own layout moved its edges).
pub(crate) fn watch_container(parent: &Window, changed: Box<dyn Fn()>) -> Result<(), ShellError> {
    let overlay = container_of(parent)?;
    let last = std::cell::Cell::new((0, 0));
    overlay.connect_size_allocate(move |_, allocation| {
        let now = (allocation.width(), allocation.height());
        if last.replace(now) != now {
            changed();
        }
    });
    Ok(())
}

/// The size of the host's container in `parent`, in logical pixels, once GTK has given it one;
/// `None` before (a container not yet allocated is 1 × 1).
pub(crate) fn container_size(parent: &Window) -> Option<(u32, u32)> {
    let overlay = container_of(parent).ok()?;
    let allocation = overlay.allocation();
    let width = u32::try_from(allocation.width()).ok()?;
    let height = u32::try_from(allocation.height()).ok()?;
    (overlay.is_visible() && width > 1 && height > 1).then_some((width, height))
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
