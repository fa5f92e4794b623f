//! Everything wry leaves open, closed on the engine's view directly: settings, every policy
//! signal (navigation, new window, download, permission, dialogs, drag and drop, context menu)
//! and the web process's end, told to the view's owner.

use std::rc::{Rc, Weak};

use gtk::gdk;
use gtk::glib::{self, prelude::*};
use gtk::prelude::*;
use webkit2gtk::{
    AuthenticationRequestExt, FileChooserRequestExt, LoadEvent, NavigationPolicyDecision,
    NavigationPolicyDecisionExt, PermissionRequestExt, PolicyDecision, PolicyDecisionExt,
    PolicyDecisionType, ResponsePolicyDecision, ResponsePolicyDecisionExt, ScriptDialogType,
    SettingsExt, URIRequestExt, UserContentInjectedFrames, UserContentManagerExt, UserScript,
    UserScriptInjectionTime, WebProcessTerminationReason, WebViewExt,
};

use super::clipboard::{is_clipboard_key, CLIPBOARD_FEATURES, CLIPBOARD_GUARD_JS};
use super::events::{push, EventQueue};
use super::features::set_feature_enabled;
use super::handlers::disconnect_all_handlers;
use crate::config::ViewConfig;
use crate::event::ViewEvent;
use crate::navigation::{navigation_allowed, same_document};

/// What every view of the host refuses without telling anyone, a Surface's and the host's
/// own trusted views alike: the context menu, printing, full screen, notifications and HTTP
/// authentication.
pub(super) fn refuse_chrome(view: &webkit2gtk::WebView) {
    view.connect_context_menu(|_, _, _, _| true);
    view.connect_print(|_, _| true);
    view.connect_enter_fullscreen(|_| true);
    view.connect_show_notification(|_, _| true);
    view.connect_authenticate(|_, request| {
        request.cancel();
        true
    });
}

/// The engine settings every view of the host has, a Surface's and the host's own trusted
/// views alike: devtools as asked (set explicitly: wry turns them on in debug builds), no
/// windows opened by script, no clipboard access (R-SEC-5), no media without a gesture, no
/// camera, microphone or WebRTC, no swipe navigation, no file-URL access, nothing written to
/// the process's standard output (R-DIAG-1), and text zoom that scales text only (R-UI-11).
pub(super) fn lock_down(settings: &webkit2gtk::Settings, devtools: bool) {
    settings.set_enable_developer_extras(devtools);
    settings.set_javascript_can_open_windows_automatically(false);
    settings.set_javascript_can_access_clipboard(false);
    settings.set_media_playback_requires_user_gesture(true);
    settings.set_enable_media_stream(false);
    settings.set_enable_webrtc(false);
    settings.set_enable_back_forward_navigation_gestures(false);
    settings.set_allow_file_access_from_file_urls(false);
    settings.set_allow_universal_access_from_file_urls(false);
    // Read back into `Hardening::console_to_stdout` and checked by the probe.
    settings.set_enable_write_console_messages_to_stdout(false);
    // The embedder's text zoom scales text only; the zoom keys stay off (wry).
    settings.set_zoom_text_only(true);
    // No clipboard API and no script paste; wry exposes none of these.
    for feature in CLIPBOARD_FEATURES {
        set_feature_enabled(settings, feature, false);
    }
}

/// Everything wry leaves open, closed on the engine's view directly.
pub(super) fn harden(
    view: &webkit2gtk::WebView,
    config: &ViewConfig,
    url: &str,
    queue: &Rc<EventQueue>,
) {
    if let Some(settings) = WebViewExt::settings(view) {
        lock_down(&settings, config.devtools());
    }
    view.set_zoom_level(config.text_zoom());
    // R-SEC-5: execCommand copy, cut and paste refused in every frame, and the keys and the
    // middle click that copy or paste never reach the engine.
    if let Some(manager) = view.user_content_manager() {
        manager.add_script(&UserScript::new(
            CLIPBOARD_GUARD_JS,
            UserContentInjectedFrames::AllFrames,
            UserScriptInjectionTime::Start,
            &[],
            &[],
        ));
        // R-SEC-3: no WebAssembly in any frame (`WEBASSEMBLY_GUARD_JS`).
        manager.add_script(&UserScript::new(
            lineup_surface_runtime::WEBASSEMBLY_GUARD_JS,
            UserContentInjectedFrames::AllFrames,
            UserScriptInjectionTime::Start,
            &[],
            &[],
        ));
    }
    view.connect_key_press_event(|_, event| {
        if is_clipboard_key(event) {
            tracing::debug!("clipboard key refused (R-SEC-5)");
            glib::Propagation::Stop
        } else {
            glib::Propagation::Proceed
        }
    });
    view.connect_button_press_event(|_, event| {
        if event.button() == 2 {
            glib::Propagation::Stop
        } else {
            glib::Propagation::Proceed
        }
    });

    // R-UI-5: wry destroys the view when the page calls window.close(); that handler goes, and
    // the attempt is only reported.
    let removed = disconnect_all_handlers(view, "close");
    tracing::debug!(removed, "close handlers replaced");
    let q = Rc::downgrade(queue);
    view.connect_close(move |_| {
        tracing::debug!("window.close() from the page ignored (R-UI-5)");
        push(&q, ViewEvent::PageCloseAttempt);
    });

    // R-SEC-2, R-SEC-2a: navigation only to the document itself and to about:srcdoc
    // subframes; new windows and non-displayable responses (downloads) refused.
    let document = url.to_owned();
    let q = Rc::downgrade(queue);
    view.connect_decide_policy(move |_, decision, kind| {
        decide(&document, decision, kind, &q);
        true
    });

    let q = Rc::downgrade(queue);
    view.connect_permission_request(move |_, request| {
        request.deny();
        tracing::debug!(kind = %request.type_().name(), "permission request denied (R-SEC-2)");
        push(&q, ViewEvent::PermissionDenied);
        true
    });

    let q = Rc::downgrade(queue);
    view.connect_script_dialog(move |_, dialog| {
        match dialog.dialog_type() {
            ScriptDialogType::Confirm | ScriptDialogType::BeforeUnloadConfirm => {
                dialog.confirm_set_confirmed(false);
            }
            _ => {}
        }
        push(&q, ViewEvent::DialogSuppressed);
        true
    });

    refuse_chrome(view);

    let q = Rc::downgrade(queue);
    view.connect_run_file_chooser(move |_, request| {
        request.cancel();
        push(&q, ViewEvent::FileChooserRefused);
        true
    });

    // Drags that start outside this view (files from a file manager, another Surface) are
    // refused; drag and drop inside the page keeps working.
    view.connect_drag_motion(|view, drag, _, _, time| {
        if started_here(view, drag) {
            return false;
        }
        drag.drag_status(gdk::DragAction::empty(), time);
        true
    });
    let q = Rc::downgrade(queue);
    view.connect_drag_drop(move |view, drag, _, _, time| {
        if started_here(view, drag) {
            return false;
        }
        drag.drop_finish(false, time);
        push(&q, ViewEvent::DropRefused);
        true
    });
    view.connect_drag_data_received(|view, drag, _, _, _, _, time| {
        if !started_here(view, drag) {
            drag.drag_finish(false, false, time);
            view.stop_signal_emission_by_name("drag-data-received");
        }
    });

    let q = Rc::downgrade(queue);
    let document = url.to_owned();
    view.connect_load_changed(move |view, event| match event {
        // load-changed is the main frame's alone; same-document navigations (fragments,
        // pushState) do not commit (R-UI-10).
        LoadEvent::Committed => {
            let uri = view.uri().map(|u| u.to_string()).unwrap_or_default();
            if same_document(&document, &uri) {
                tracing::debug!(target: "lineup_phase", phase = "committed", %uri);
                push(&q, ViewEvent::DocumentCommitted);
            } else {
                tracing::warn!(%uri, "the main frame committed a document that is not the surface's");
            }
        }
        LoadEvent::Finished => push(&q, ViewEvent::LoadFinished),
        _ => {}
    });
    // No engine error page: a document request the host refused (a gated view whose probe
    // failed, R-SEC-8) must leave the view empty, not commit a page the bridge would run in.
    view.connect_load_failed(|_, _, uri, error| {
        tracing::debug!(%uri, %error, "surface document load failed; no error page");
        true
    });
    let q = Rc::downgrade(queue);
    view.connect_web_process_terminated(move |_, reason| {
        tracing::warn!("surface web process ended: {}", termination_words(reason));
        push(&q, termination_event(reason));
    });
}

/// What the owner hears when the web process ended: its memory ceiling and the host's own
/// request (the hang watchdog's, R-UI-12) apart from the rest.
/// Why a web process ended, in words for the log (never the binding's `Debug` form).
pub(crate) fn termination_words(reason: WebProcessTerminationReason) -> &'static str {
    match reason {
        WebProcessTerminationReason::ExceededMemoryLimit => "it passed its memory limit",
        WebProcessTerminationReason::TerminatedByApi => "the host ended it",
        WebProcessTerminationReason::Crashed => "it crashed",
        _ => "for a reason the engine does not name",
    }
}

pub(super) fn termination_event(reason: WebProcessTerminationReason) -> ViewEvent {
    match reason {
        WebProcessTerminationReason::ExceededMemoryLimit => ViewEvent::MemoryExceeded,
        WebProcessTerminationReason::TerminatedByApi => ViewEvent::Unresponsive,
        _ => ViewEvent::Crashed,
    }
}

/// Answers one policy decision; anything not positively allowed is ignored (refused).
pub(super) fn decide(
    document: &str,
    decision: &PolicyDecision,
    kind: PolicyDecisionType,
    q: &Weak<EventQueue>,
) {
    match kind {
        PolicyDecisionType::NavigationAction => {
            let uri = navigation_uri(decision);
            match uri {
                Some(uri) if navigation_allowed(document, &uri) => decision.use_(),
                _ => {
                    decision.ignore();
                    let uri = uri.unwrap_or_default();
                    tracing::debug!(%uri, "navigation refused (R-SEC-2a)");
                    push(q, ViewEvent::NavigationRefused(uri));
                }
            }
        }
        PolicyDecisionType::NewWindowAction => {
            decision.ignore();
            let uri = navigation_uri(decision).unwrap_or_default();
            tracing::debug!(%uri, "new window refused (R-SEC-2)");
            push(q, ViewEvent::NewWindowRefused(uri));
        }
        PolicyDecisionType::Response => {
            let response = decision.downcast_ref::<ResponsePolicyDecision>();
            if response.is_some_and(|r| r.is_mime_type_supported()) {
                decision.use_();
            } else {
                decision.ignore();
                let uri = response
                    .and_then(|r| r.request())
                    .and_then(|r| r.uri())
                    .map(|u| u.to_string())
                    .unwrap_or_default();
                tracing::debug!(%uri, "download refused (R-SEC-2)");
                push(q, ViewEvent::DownloadRefused(uri));
            }
        }
        _ => decision.ignore(),
    }
}

/// The URI a navigation or new-window decision is about.
pub(super) fn navigation_uri(decision: &PolicyDecision) -> Option<String> {
    decision
        .downcast_ref::<NavigationPolicyDecision>()?
        .navigation_action()?
        .request()?
        .uri()
        .map(|u| u.to_string())
}

/// Whether a drag started in this very view.
pub(super) fn started_here(view: &webkit2gtk::WebView, drag: &gdk::DragContext) -> bool {
    drag.drag_get_source_widget()
        .is_some_and(|source| &source == view.upcast_ref::<gtk::Widget>())
}
