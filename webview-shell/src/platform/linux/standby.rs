//! The standby screen on Linux: a trusted view laid over the embedder's child views in a
//! `gtk::Overlay`, so that hiding it uncovers the Surfaces and showing it covers them at once,
//! without moving any Surface's widget. Above both, a small host-owned label (the indicator)
//! in the top right corner, shown while the embedder has something to say over the Surfaces
//! (the agent is away).

use std::cell::Cell;
use std::rc::Rc;

use gtk::prelude::*;
use tao::window::Window;
use webkit2gtk::WebViewExt as _;

use super::trusted::{TrustedEvent, TrustedView};
use crate::error::ShellError;
use crate::notice::ActivityNotice;
use crate::standby::{status_script, StandbyScreen};

/// The standby view over `parent`'s child views.
pub(crate) struct PlatformStandby {
    view: TrustedView,
    indicator: gtk::Label,
    /// The activity notice, bottom left, in the standby's colours ([`crate::notice`]).
    notice: gtk::Label,
    /// Counts notices, so that a hide scheduled for an older one is void.
    notice_turn: Rc<Cell<u64>>,
    /// Counts show and hide requests, so that a hide scheduled before a later show is void.
    turn: Rc<Cell<u64>>,
}

impl PlatformStandby {
    /// Puts the standby screen over `parent`'s content, shown; the child views go under it.
    /// Call before the first child view is created.
    pub(crate) fn new(parent: &Window, screen: &StandbyScreen) -> Result<Self, ShellError> {
        let document = screen.document()?;
        let view = TrustedView::new(
            document,
            // The standby page posts nothing the host acts on.
            64,
            Rc::new(|event| {
                if event == TrustedEvent::Crashed {
                    tracing::error!("the standby screen's web process ended");
                }
            }),
        )?;
        // Until its page first paints, the view shows the standby background, not WebKit's
        // white: the screen goes from the window's background to the page without a flash.
        let [r, g, b] = screen.background().components();
        view.widget().set_background_color(&gtk::gdk::RGBA::new(
            f64::from(r) / 255.0,
            f64::from(g) / 255.0,
            f64::from(b) / 255.0,
            1.0,
        ));
        let overlay = super::layers::overlay_of(parent)?;
        overlay.add_overlay(view.widget());
        let indicator = indicator(screen);
        overlay.add_overlay(&indicator);
        // The indicator takes no input: a touch there reaches the Surface under it.
        overlay.set_overlay_pass_through(&indicator, true);
        let notice = label(screen, gtk::Align::Start, gtk::Align::End);
        overlay.add_overlay(&notice);
        overlay.set_overlay_pass_through(&notice, true);
        // Not `show_all`: the components' layer shows only the views of shown components.
        view.widget().show();
        indicator.show_all();
        indicator.hide();
        notice.hide();
        Ok(Self {
            view,
            indicator,
            notice,
            notice_turn: Rc::new(Cell::new(0)),
            turn: Rc::new(Cell::new(0)),
        })
    }

    /// Covers the child views now.
    pub(crate) fn show(&self) {
        self.turn.set(self.turn.get() + 1);
        self.view.widget().show();
    }

    /// What uncovers the child views when called, unless shown again meanwhile.
    pub(crate) fn hide_later(&self) -> Box<dyn FnOnce()> {
        let turn = self.turn.get() + 1;
        self.turn.set(turn);
        let current = Rc::clone(&self.turn);
        let widget = self.view.widget().clone();
        Box::new(move || {
            if current.get() == turn {
                widget.hide();
            }
        })
    }

    /// Sets the status line.
    pub(crate) fn set_status(&self, status: &str) {
        self.view.evaluate(&status_script(status), Box::new(|_| {}));
    }

    /// Shows the activity notice over everything for [`NOTICE_DURATION`](crate::notice::NOTICE_DURATION),
    /// replacing the one on screen.
    pub(crate) fn show_notice(&self, notice: &ActivityNotice) {
        self.notice.set_text(&notice.text());
        self.notice.show();
        super::notice::hide_later(&self.notice, &self.notice_turn);
    }

    /// Shows the indicator with `text` (as text, never markup), or hides it. While it is
    /// shown its box keeps the widest text's width (the text right-aligned in it): a box that
    /// shrank would leave the longer one's edge on screen, as the Surfaces under it are not
    /// drawn again there.
    pub(crate) fn set_indicator(&self, text: Option<&str>) {
        match text {
            Some(text) => {
                self.indicator.set_text(text);
                let (_, natural) = self.indicator.preferred_width();
                let (kept, _) = self.indicator.size_request();
                self.indicator.set_size_request(natural.max(kept), -1);
                self.indicator.show();
            }
            None => {
                self.indicator.hide();
                self.indicator.set_size_request(-1, -1);
            }
        }
    }
}

/// The indicator: the standby screen's colours, in the top right corner, its text plain.
fn indicator(screen: &StandbyScreen) -> gtk::Label {
    let label = label(screen, gtk::Align::End, gtk::Align::Start);
    label.set_xalign(1.0);
    label
}

/// A label over the Surfaces in the standby screen's colours at `halign`, `valign`, its text
/// plain.
fn label(screen: &StandbyScreen, halign: gtk::Align, valign: gtk::Align) -> gtk::Label {
    let label = gtk::Label::new(None);
    label.set_use_markup(false);
    label.set_xalign(0.0);
    label.set_halign(halign);
    label.set_valign(valign);
    label.set_margin_top(8);
    label.set_margin_bottom(8);
    label.set_margin_start(8);
    label.set_margin_end(8);
    let [br, bg, bb] = screen.background().components();
    let [fr, fg, fb] = screen.foreground().components();
    let css = format!(
        "label {{ background-color: rgb({br},{bg},{bb}); color: rgb({fr},{fg},{fb}); \
         padding: 6px 12px; border-radius: 6px; font-size: 14px; }}"
    );
    let provider = gtk::CssProvider::new();
    match provider.load_from_data(css.as_bytes()) {
        Ok(()) => label
            .style_context()
            .add_provider(&provider, gtk::STYLE_PROVIDER_PRIORITY_APPLICATION),
        Err(e) => tracing::warn!("the standby indicator's style: {e}"),
    }
    label
}
