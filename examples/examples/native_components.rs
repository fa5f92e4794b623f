//! An app that draws the protocol's `confirm` and `choice` in its own GTK widgets
//! (R-STD-16): a [`ComponentRenderer`] builds a frame of labels and buttons per component in the
//! app's window, and answers through [`ComponentReply`]; the host checks each answer against
//! the props again and sends it with `via: "embedder"`. What it does not draw (here: anything
//! but confirm and choice) the built-in renderer draws.
//!
//! ```sh
//! cargo run -p lineup-examples --example native_components             # on a desktop
//! xvfb-run -a cargo run -p lineup-examples --example native_components -- --check
//! ```
//!
//! `--check` presses the buttons itself (`gtk::Button::clicked`) and exits 0 once both answers
//! went out: what CI runs.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

use lineup_host::native::gtk::{self, glib, prelude::*};
use lineup_host::protocol::{
    ComponentClosed, ComponentKind, InputKind, JsonObject, Message, SafeMarkdown, ShownComponent,
    SurfaceKey,
};
use lineup_host::tao::platform::unix::WindowExtUnix;
use lineup_host::tao::window::WindowBuilder;
use lineup_host::{event_loop, ComponentOptions, ComponentRenderer, ComponentReply, Declined};
use lineup_host::{HostBuilder, HostHandle};
use serde_json::{json, Value};

/// The app's renderer: a frame per component in `panel`.
struct Native {
    panel: gtk::Box,
    frames: HashMap<SurfaceKey, gtk::Frame>,
    /// `--check`: press the last button of each frame once it is on screen.
    check: bool,
}

impl ComponentRenderer for Native {
    fn supports(&self, kind: ComponentKind) -> bool {
        matches!(kind, ComponentKind::Confirm | ComponentKind::Choice)
    }

    fn show(&mut self, c: &ShownComponent, reply: ComponentReply) -> Result<(), Declined> {
        let props = c.props.as_map();
        let text = |name: &str| props.get(name).and_then(Value::as_str).unwrap_or_default();
        // Agent strings go into labels as text, never as markup (R-STD-10).
        let title = if c.kind == ComponentKind::Confirm {
            text("title")
        } else {
            text("label")
        };
        let frame = gtk::Frame::new(None);
        let column = gtk::Box::new(gtk::Orientation::Vertical, 6);
        column.add(&gtk::Label::new(Some(title)));
        let buttons = gtk::Box::new(gtk::Orientation::Horizontal, 6);
        let answers: Vec<(String, Value)> = match c.kind {
            ComponentKind::Confirm => vec![
                (text("deny_label").to_owned(), json!(false)),
                (text("confirm_label").to_owned(), json!(true)),
            ],
            _ => props
                .get("options")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|o| {
                    (
                        o["label"].as_str().unwrap_or_default().to_owned(),
                        o["value"].clone(),
                    )
                })
                .collect(),
        };
        let mut last = None;
        for (label, answer) in answers {
            let label = if label.is_empty() {
                answer.to_string()
            } else {
                label
            };
            let button = gtk::Button::with_label(&label);
            let reply = reply.clone();
            // The app vouches for the gesture: this is its own button's click.
            button.connect_clicked(move |_| {
                if let Err(e) = reply.submit(answer.clone(), InputKind::Pointer) {
                    eprintln!("answer refused: {e}");
                }
            });
            buttons.add(&button);
            last = Some(button);
        }
        column.add(&buttons);
        frame.add(&column);
        self.panel.add(&frame);
        frame.show_all();
        if let (true, Some(button)) = (self.check, last) {
            glib::timeout_add_local_once(Duration::from_millis(300), move || button.clicked());
        }
        self.frames.insert(c.key.clone(), frame);
        Ok(())
    }

    fn update(&mut self, _: &SurfaceKey, _: &JsonObject, _: Option<&SafeMarkdown>, _: bool) {}

    fn lock(&mut self, key: &SurfaceKey) {
        if let Some(frame) = self.frames.get(key) {
            frame.set_sensitive(false);
        }
    }

    fn hide(&mut self, key: &SurfaceKey, _: &ComponentClosed) {
        if let Some(frame) = self.frames.remove(key) {
            self.panel.remove(&frame);
        }
    }
}

fn open(handle: &HostHandle, id: &str, instance: &str, component: Value) {
    let envelope = json!({"v": 1, "id": id, "type": "lineup.v1.ui.open", "conversation_id": "c1",
        "sender": {"kind": "agent", "id": "agent"},
        "payload": {"instance_id": instance, "component": component}});
    let _ = handle.send_inbound(envelope.to_string().into_bytes());
}

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    let Ok(event_loop) = event_loop() else {
        eprintln!("no display: run it on a desktop or under xvfb-run -a");
        return ExitCode::FAILURE;
    };
    let Ok(window) = WindowBuilder::new()
        .with_title("native components")
        .build(&event_loop)
    else {
        return ExitCode::FAILURE;
    };
    let panel = gtk::Box::new(gtk::Orientation::Vertical, 12);
    if let Some(vbox) = window.default_vbox() {
        vbox.pack_start(&panel, true, true, 12);
    }
    panel.show();
    let answered = std::rc::Rc::new(std::cell::Cell::new(0));
    let seen = std::rc::Rc::clone(&answered);
    let host = HostBuilder::new()
        .component_renderer(Native {
            panel,
            frames: HashMap::new(),
            check,
        })
        .builtin_components(Some(ComponentOptions::default()))
        .on_outbound(move |m: &Message| {
            let line = m.to_json();
            // The inventory is long: its type is enough here.
            match m {
                Message::UiEvent(_) => println!("host → agent: {line}"),
                other => println!("host → agent: {}", other.message_type()),
            }
            if line.contains(r#""event":"submit""#) && line.contains(r#""via":"embedder""#) {
                seen.set(seen.get() + 1);
            }
        })
        .build(&event_loop);
    let Ok(host) = host else {
        return ExitCode::FAILURE;
    };
    let handle = host.handle();
    open(
        &handle,
        "m-1",
        "deploy",
        json!({"id": "confirm", "version": "1",
        "props": {"title": "Deploy to production?", "confirm_label": "Deploy", "deny_label": "Wait"}}),
    );
    open(
        &handle,
        "m-2",
        "region",
        json!({"id": "choice", "version": "1",
        "props": {"label": "Region", "options": [
            {"value": "eu", "label": "Europe"}, {"value": "us", "label": "US"}]}}),
    );
    if check {
        // Both answers out, or ten seconds: the host then ends its loop.
        let done = std::rc::Rc::clone(&answered);
        let handle = handle.clone();
        let started = std::time::Instant::now();
        glib::timeout_add_local(Duration::from_millis(100), move || {
            if done.get() >= 2 || started.elapsed() > Duration::from_secs(10) {
                let _ = handle.shutdown();
                return glib::ControlFlow::Break;
            }
            glib::ControlFlow::Continue
        });
    }
    if let Err(e) = host.run(event_loop) {
        eprintln!("{e}");
        return ExitCode::FAILURE;
    }
    drop(window);
    if check && answered.get() < 2 {
        eprintln!("--check: {} of 2 answers went out", answered.get());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
