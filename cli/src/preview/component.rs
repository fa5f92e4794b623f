//! `lineup preview FILE` of a standard component: FILE holds a `ui.open` envelope (or its
//! payload) that carries `component`. The payload is checked as the host checks it (R-STD-3: a
//! refusal names the field, exit 1) and shown in the built-in renderer's window, in the theme
//! asked for; each answer is printed as the `ui.event` the agent would get. With
//! `--screenshot FILE`, WebKit's snapshot of the window's document is written once it is on
//! screen, and the preview exits.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use lineup_host::platform::{ComponentAction, ComponentContent, ComponentWindow};
use lineup_host::tao::event_loop::{ControlFlow, EventLoop};
use lineup_host::tao::platform::run_return::EventLoopExtRunReturn;
use lineup_host::ComponentOptions;
use lineup_host_core::{
    Clock, ComponentEffect, ComponentSet, Effect, Message, PageInput, PartyId, Session,
    SessionConfig, UserAnswer, Via,
};
use serde_json::{json, Value};

use super::{exit, Printer};

/// The `ui.open` payload in `path`, when it opens a standard component.
pub(super) fn read(path: &Path) -> Option<Value> {
    if path.is_dir() {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    let payload = match value.get("payload") {
        Some(payload) => payload.clone(),
        None => value,
    };
    payload.get("component").is_some().then_some(payload)
}

struct Monotonic(Instant);

impl Clock for Monotonic {
    fn monotonic(&self) -> Duration {
        self.0.elapsed()
    }
}

/// What the preview heard from the window.
#[derive(Default)]
struct Heard {
    actions: Vec<ComponentAction>,
    png: Option<Result<Vec<u8>, String>>,
}

/// Shows `payload`'s component; returns the exit code.
pub(super) fn run(
    payload: Value,
    look: &crate::look::LookArgs,
    screenshot: Option<PathBuf>,
    timeout: Duration,
    out: &Printer,
) -> Result<u8, Box<dyn std::error::Error>> {
    let mut config = SessionConfig::new(PartyId::try_from("lineup-preview")?, "preview");
    config.standard_components = ComponentSet::all_v1();
    let mut session = Session::new(config, Box::new(Monotonic(Instant::now())))?;
    let envelope = json!({"v": 1, "id": "preview-open", "type": "lineup.v1.ui.open",
        "conversation_id": "preview", "sender": {"kind": "agent", "id": "preview"},
        "payload": payload});
    let effects = session.handle_inbound(envelope.to_string().as_bytes());
    let shown = effects.iter().find_map(|e| match e {
        Effect::Component(ComponentEffect::Show(shown)) => Some(shown.clone()),
        _ => None,
    });
    print_sent(&effects, out);
    let Some(shown) = shown else {
        out.line(format_args!("not opened: the host refuses this component"));
        return Ok(exit::FAILED);
    };
    out.line(format_args!(
        "{} v1 {}: shown in the built-in renderer",
        shown.kind, shown.key.instance
    ));
    let event_loop = EventLoop::new();
    // After the event loop: GTK is initialised now.
    let high_contrast = look.apply_to_process();
    let heard: Rc<RefCell<Heard>> = Rc::default();
    let sink = Rc::clone(&heard);
    let options = ComponentOptions::new().with_high_contrast(high_contrast);
    let window = ComponentWindow::new(
        &event_loop,
        &ComponentContent::from(&shown),
        &options,
        move |action| sink.borrow_mut().actions.push(action),
    )?;
    let deadline = Instant::now() + timeout;
    let mut asked = false;
    let mut code = exit::OK;
    let mut event_loop = event_loop;
    event_loop.run_return(|_, _, flow| {
        *flow = ControlFlow::WaitUntil(Instant::now() + Duration::from_millis(50));
        let actions = std::mem::take(&mut heard.borrow_mut().actions);
        for action in actions {
            if let ComponentAction::Link { url, .. } = &action {
                // R-STD-11: a host asks its link confirm here; the preview opens nothing.
                match session.component_link(&shown.key, url) {
                    Some(link) => out.line(format_args!(
                        "user → link to {} (a host asks its link confirm first; not opened)",
                        link.link.host
                    )),
                    None => out.line(format_args!("user → a link the host does not follow")),
                }
                continue;
            }
            match answered(&mut session, &shown.key, action) {
                Some(effects) => print_sent(&effects, out),
                None => {
                    *flow = ControlFlow::Exit;
                    return;
                }
            }
        }
        let Some(path) = &screenshot else { return };
        if !asked && window.is_shown() {
            asked = true;
            let sink = Rc::clone(&heard);
            window.snapshot_png(move |png| {
                sink.borrow_mut().png = Some(png.map_err(|e| e.to_string()));
            });
        }
        if let Some(png) = heard.borrow_mut().png.take() {
            code = match png.map(|bytes| std::fs::write(path, bytes)) {
                Ok(Ok(())) => {
                    out.line(format_args!("screenshot written to {}", path.display()));
                    exit::OK
                }
                Ok(Err(e)) => {
                    out.line(format_args!("error: {}: {e}", path.display()));
                    exit::FAILED
                }
                Err(e) => {
                    out.line(format_args!("error: no snapshot: {e}"));
                    exit::FAILED
                }
            };
            *flow = ControlFlow::Exit;
        } else if Instant::now() > deadline {
            out.line(format_args!(
                "error: the component was not on screen in time"
            ));
            code = exit::TIMED_OUT;
            *flow = ControlFlow::Exit;
        }
    });
    drop(window);
    Ok(code)
}

/// What the session makes of the window's `action`; `None` once the window is gone.
fn answered(
    session: &mut Session,
    key: &lineup_host_core::SurfaceKey,
    action: ComponentAction,
) -> Option<Vec<Effect>> {
    let answer = match action {
        ComponentAction::Submit { answer, input } => UserAnswer::Submit {
            answer,
            via: Via::Host,
            input,
        },
        ComponentAction::Cancel { input } => UserAnswer::Cancel {
            via: Via::Host,
            input,
        },
        ComponentAction::Draft(draft) => {
            return Some(session.handle_page(key, PageInput::ComponentDraft(&draft)))
        }
        ComponentAction::Close | ComponentAction::Failed => return None,
        // Only views in an embedder's window report their height; links are handled above.
        ComponentAction::Link { .. } => return Some(Vec::new()),
    };
    Some(session.component_answered(key, answer).unwrap_or_default())
}

/// Prints the envelopes of `effects` the agent would get.
fn print_sent(effects: &[Effect], out: &Printer) {
    for effect in effects {
        if let Effect::Send(message) = effect {
            if !matches!(message, Message::ClientInventory(_)) {
                out.line(format_args!("host → agent: {}", message.to_json()));
            }
        }
    }
}
