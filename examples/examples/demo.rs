//! The lineup-host demo: an application that embeds the host and lets a scripted agent show a
//! weather dashboard Surface.
//!
//! ```sh
//! bash scripts/demo.sh                            # a window on $DISPLAY, or inside xvfb-run
//! cargo run -p lineup-examples --example demo     # the same, when a display is at hand
//! ```
//!
//! What happens, in order:
//!
//! 1. `main` creates the event loop, builds a [`Host`] with [`HostBuilder`] (an outbound callback
//!    and a [`HostDelegate`] that prints lifecycle notifications), and runs the loop on the main
//!    thread, as tao and GTK require.
//! 2. An agent thread drives the host through a [`HostHandle`] (`Send + Clone`): it opens the
//!    dashboard (`ui.open`), patches its state from 北京 to 上海 to 广州 (`ui.patch`), closes it
//!    (`ui.close`) and shuts the host down.
//! 3. Everything the host sends the agent is printed as `host → agent: {…}`. Click 刷新 in the
//!    window while it is open: the page calls `LineUpSurface.event('refresh', {unit: 'c'})`, the host
//!    validates it and sends a `lineup.v1.ui.event`, and the agent answers with fresh state.
//! 4. The host offers one App Capability, `weather.share` (`user_confirmation`): the session's
//!    first messages are `client.inventory` and `app.list` naming it. Before closing, the agent
//!    asks for it with `app.call`; the host's trusted prompt window asks the person (Allow,
//!    Always, Deny). The demo gives the host the built-in [`PromptQueue`] itself, to print what
//!    the prompt shows once it is on screen ([`PromptQueue::on_shown`]). Its handler runs only
//!    after Allow, once, on a thread of its own. Nobody at the screen (as under `xvfb-run`)? The
//!    call's `expires_at` passes, the prompt goes away and the agent gets `app.result`
//!    `expired`.
//! 5. The host renders the protocol's standard components itself (R-STD-1): beside the
//!    dashboard the agent sends a Markdown message, a `progress` it advances with patches, and a
//!    `confirm`; no agent code runs in their windows, and only a real click (or key) on the
//!    confirm after its guard delay answers it, as a `ui.event submit` with `via: "host"`.
//! 6. The demo installs the example app package `examples/apps/dashboard` (an image and a font
//!    among its assets) into a temporary app center; `client.inventory` lists it, and the agent
//!    opens it by id (`app: {id, surface}`) instead of sending code. Its page reports that its
//!    image and font loaded from its own assets.
//!
//! `RUST_LOG=debug` shows the library's own log on stderr.
#![allow(clippy::print_stdout)]

use std::cell::Cell;
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use lineup_host::protocol::{
    display_title, Capability, CapabilityName, CloseReason, HandlerError, InlineApp, JsonObject,
    Message, OpaqueVersion, ProtocolError, Risk, SurfaceKey, Timestamp, UiEvent,
};
use lineup_host::{
    event_loop, ComponentOptions, Host, HostBuilder, HostClosed, HostDelegate, HostHandle,
    PromptContent, PromptOptions, PromptQueue, Refusal,
};
use serde_json::{json, Value};

/// The Surface's instance id: the agent names it, and every message about it carries it.
const INSTANCE: &str = "weather.dashboard.01";

/// How long the agent waits between steps, so that a person can follow (and click).
const STEP: Duration = Duration::from_millis(1500);

fn main() -> ExitCode {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    match run() {
        Ok(()) => {
            println!("demo: done");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("demo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    // The event loop must be created, and run, on the main thread. Without a display this
    // fails with a clear error instead of letting GTK abort.
    let event_loop = event_loop()?;

    // What the host sends the agent: printed, and handed to the agent thread. A real embedder
    // would write these to its agent connection.
    let (to_agent, from_host) = mpsc::channel::<Message>();
    let probe_failed = Rc::new(Cell::new(false));
    let apps = AppCenter::install()?;
    // The built-in trusted prompt, the one the host would make by itself; the demo keeps a
    // clone to hear when a prompt is on screen. Nothing here answers it: only a person does.
    let prompts = PromptQueue::new(&event_loop, PromptOptions::default())?;
    prompts.on_shown(print_prompt);
    let host: Host = HostBuilder::new()
        .window_size(420, 240)
        .capability(share_capability()?, share)
        .consent_prompt(prompts.clone())
        .app_center(apps.store())
        .builtin_components(Some(ComponentOptions::default()))
        .on_outbound(move |message| {
            // The inventory and the app list as one line each (`Message::summary`).
            println!("host → agent: {}", message.summary());
            let _ = to_agent.send(message.clone());
        })
        .delegate(Lifecycle {
            probe_failed: Rc::clone(&probe_failed),
        })
        .build(&event_loop)?;

    println!("demo: click 刷新 in the 天气面板 window to send the agent a ui.event");
    let handle = host.handle();
    let agent = thread::Builder::new()
        .name("agent".into())
        .spawn(move || Agent::new(handle, from_host).script())?;

    // Returns once the agent calls `HostHandle::shutdown`.
    host.run(event_loop)?;

    drop(apps);
    match agent.join() {
        Ok(Ok(())) => {}
        Ok(Err(HostClosed)) => return Err("the host stopped before the agent was done".into()),
        Err(_) => return Err("the agent thread panicked".into()),
    }
    if probe_failed.get() {
        return Err("the isolation probe failed, so no Surface was shown".into());
    }
    Ok(())
}

/// A temporary app center holding the example app package, removed when dropped.
struct AppCenter {
    dir: std::path::PathBuf,
    store: Rc<lineup_store::Store>,
}

impl AppCenter {
    /// Reads `examples/apps/dashboard`, verifies it, and installs it in a fresh store.
    fn install() -> Result<Self, Box<dyn std::error::Error>> {
        use lineup_packages::{ManifestLimits, Package, PackageFiles, PackageLimits};
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("apps/dashboard");
        let files = PackageFiles::read(&folder, &PackageLimits::default())?;
        let package = Package::from_files(files, &ManifestLimits::default())?;
        let dir = std::env::temp_dir().join(format!("lineup-demo-{}", std::process::id()));
        let store = lineup_store::Store::open(&dir)?;
        // A real integrator installs with `lineup apps install --digest …` or a signature; the
        // demo verified the folder it ships with above.
        store.apps().install(&package, None)?;
        println!(
            "demo: installed {} {} ({}) in a temporary app center",
            package.id(),
            package.version(),
            package.digest()
        );
        Ok(Self {
            dir,
            store: Rc::new(store),
        })
    }

    fn store(&self) -> Rc<dyn lineup_host::protocol::AppCatalog> {
        Rc::clone(&self.store) as Rc<dyn lineup_host::protocol::AppCatalog>
    }
}

impl Drop for AppCenter {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Prints the host's lifecycle notifications. Every method of [`HostDelegate`] has a default, so
/// a delegate implements only what it cares about. It runs on the event-loop thread, so it
/// needs no `Send`.
struct Lifecycle {
    probe_failed: Rc<Cell<bool>>,
}

impl HostDelegate for Lifecycle {
    fn notify_opened(&mut self, key: &SurfaceKey, app: &InlineApp) {
        // `app.name` is untrusted: `display_title` is what the window title shows (R-SEC-8).
        let title = display_title(app.name.as_deref(), app.id.as_str());
        println!(
            "host: surface {key} opened in a window titled {title:?} ({} {})",
            app.id, app.version
        );
    }

    fn notify_ready(&mut self, key: &SurfaceKey) {
        println!("host: surface {key} is ready (its script ran and it has its state)");
    }

    fn notify_closed(&mut self, key: &SurfaceKey, reason: &CloseReason) {
        let why = match reason {
            CloseReason::Agent(Some(reason)) => format!("by the agent: {reason}"),
            CloseReason::Agent(None) => "by the agent".to_owned(),
            CloseReason::User => "by the user".to_owned(),
            CloseReason::Gone(why) => format!("on its own ({why})"),
            CloseReason::Failed => "because it could not be created".to_owned(),
            CloseReason::SessionEnded => "because the session ended".to_owned(),
            other => format!("({other:?})"),
        };
        println!("host: surface {key} closed {why}");
    }

    fn notify_crashed(&mut self, key: &SurfaceKey) {
        println!("host: surface {key}: its web process ended");
    }

    fn notify_rejected(&mut self, error: &ProtocolError, _line: Option<u64>) {
        println!(
            "host: refused a message from the agent ({}, {}): {}",
            error.code, error.rule, error.message
        );
    }

    fn notify_dropped(&mut self, key: &SurfaceKey, error: &ProtocolError) {
        println!(
            "host: surface {key}: dropped a message from the page: {}",
            error.message
        );
    }

    fn notify_refused(&mut self, key: &SurfaceKey, refusal: &Refusal) {
        println!("host: surface {key}: refused {refusal}");
    }

    fn notify_probe_failed(&mut self, reason: &str) {
        println!("host: the isolation probe failed, no Surface will be shown: {reason}");
        self.probe_failed.set(true);
    }
}

/// Prints what the trusted consent prompt shows, once it is on screen: what is asked, at which
/// risk, why, and how long it waits for an answer.
fn print_prompt(request: &PromptContent) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
    let waits = match (request.expires_at(), Timestamp::from_unix_seconds(now)) {
        (Some(at), Some(now)) => format!("waits {} s, until {at}", now.until(&at).as_secs()),
        _ => "waits for an answer".to_owned(),
    };
    let always = if request.remember_allowed() {
        "Deny, Always allow, Allow"
    } else {
        "Deny, Allow"
    };
    // The agent's strings were cleaned and capped when the request was built (R-SEC-6).
    println!(
        "host: the consent prompt is on screen: {} {} (version {}); risk {} ({}); reason {:?}; it {waits}; buttons: {always}",
        request.agent(),
        request.headline(),
        request.version(),
        serde_json::to_value(request.risk())
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        request.risk_words(),
        request.reason(),
    );
}

/// `weather.share`: a declared, risk-rated action. Declaring is not granting: it runs only after
/// the person allows it in the host's prompt (R-CAP-1, R-CAP-2).
fn share_capability() -> Result<Capability, Box<dyn std::error::Error>> {
    let schema: JsonObject = serde_json::from_value(json!({
        "type": "object",
        "required": ["city", "temperature"],
        "properties": {
            "city": {"type": "string", "maxLength": 40},
            "temperature": {"type": "number"}
        }
    }))?;
    Ok(Capability::new(
        CapabilityName::try_from("weather.share")?,
        OpaqueVersion::try_from("1.0")?,
        Risk::UserConfirmation,
        schema,
    )?)
}

/// The handler of `weather.share`; it runs on a thread of its own, never the GUI thread.
fn share(arguments: JsonObject) -> Result<JsonObject, HandlerError> {
    println!("host: weather.share runs with {}", arguments.to_json());
    serde_json::from_value(json!({"shared": true}))
        .map_err(|e| HandlerError::new(format!("cannot build the result: {e}")))
}

/// The dashboard's code: untrusted HTML, CSS and JS, as an agent would send it. It talks to the
/// host only through the `LineUpSurface` bridge.
const HTML: &str = r#"<main>
  <p class="label">现在</p>
  <h1 id="city">…</h1>
  <p class="temperature"><span id="temperature">--</span><span class="unit">°C</span></p>
  <p id="updates" class="muted">等待数据…</p>
  <button id="refresh">刷新</button>
</main>"#;

const CSS: &str = r#"
html { min-height: 100%; background: linear-gradient(160deg, #3a7bd5, #00d2ff); }
body { margin: 0; font-family: system-ui, "Noto Sans CJK SC", sans-serif; color: white; }
main { padding: 16px 20px; }
.label { margin: 0; opacity: 0.8; font-size: 14px; }
h1 { margin: 4px 0 0; font-size: 30px; }
.temperature { margin: 0; font-size: 56px; font-weight: 200; }
.unit { font-size: 24px; vertical-align: top; }
.muted { margin: 0 0 12px; opacity: 0.75; font-size: 13px; }
button { font-size: 16px; padding: 6px 18px; border: 0; border-radius: 6px;
         background: white; color: #3a7bd5; cursor: pointer; }
"#;

const JS: &str = r#"
const city = document.querySelector('#city');
const temperature = document.querySelector('#temperature');
const updates = document.querySelector('#updates');
const main = document.querySelector('main');
let count = 0;

// Every state the agent sends (with the open, then each patch) replaces the last one.
LineUpSurface.onState((state) => {
  city.textContent = state.city;
  temperature.textContent = String(state.temperature);
  count += 1;
  updates.textContent = `第 ${count} 次更新`;
  // Ask the host for a window as tall as the content; it clamps the height to its bounds.
  LineUpSurface.resize(main.offsetHeight);
});

// User intent goes to the agent as a ui.event.
document.querySelector('#refresh').addEventListener('click', () => {
  LineUpSurface.event('refresh', { unit: 'c' });
});
"#;

/// A scripted agent: it sends envelopes through the handle and reads what the host sends back.
struct Agent {
    handle: HostHandle,
    from_host: Receiver<Message>,
    next_id: u32,
    city: &'static str,
    temperature: i64,
}

impl Agent {
    fn new(handle: HostHandle, from_host: Receiver<Message>) -> Self {
        Self {
            handle,
            from_host,
            next_id: 0,
            city: "北京",
            temperature: 22,
        }
    }

    fn script(mut self) -> Result<(), HostClosed> {
        println!("agent → host: ui.open {INSTANCE} (天气面板, {})", self.city);
        self.send(
            "ui.open",
            json!({
                "instance_id": INSTANCE,
                "app": {
                    "id": "com.lineup.weather.dashboard",
                    "name": "天气面板",
                    "version": "1.0.0",
                    "html": HTML,
                    "css": CSS,
                    "js": JS,
                },
                "state": self.state(),
            }),
        )?;
        // Page loads and the isolation probe take a moment; the state waits for the page.
        self.wait(STEP * 2)?;

        for (city, temperature) in [("上海", 28), ("广州", 31)] {
            (self.city, self.temperature) = (city, temperature);
            self.patch()?;
            self.wait(STEP)?;
        }

        self.components()?;
        self.share()?;
        self.installed_app()?;

        println!("agent → host: ui.close {INSTANCE}");
        self.send(
            "ui.close",
            json!({"instance_id": INSTANCE, "reason": "demo finished"}),
        )?;
        self.wait(STEP / 3)?;

        // An agent that gets something wrong hears about it: the instance is gone.
        println!("agent → host: ui.patch {INSTANCE} (closed already: expect a client.error)");
        self.send(
            "ui.patch",
            json!({"instance_id": INSTANCE, "state": self.state()}),
        )?;
        self.wait(STEP / 3)?;

        println!("agent: done; shutting the host down");
        self.handle.shutdown()
    }

    /// Standard components beside the Surface: a Markdown message, a progress the agent
    /// advances, and a confirm the person may answer; then they are closed.
    fn components(&mut self) -> Result<(), HostClosed> {
        println!("agent → host: ui.open summary (markdown), fetch (progress), keep (confirm)");
        self.send(
            "ui.open",
            json!({"instance_id": "summary", "component": {"id": "markdown", "version": "1"},
                   "state": {"text": format!("**{}**: {} °C\n\n- 北京 → 上海 → 广州\n- 3 updates", self.city, self.temperature)}}),
        )?;
        self.send(
            "ui.open",
            json!({"instance_id": "fetch", "component": {"id": "progress", "version": "1",
                   "props": {"label": "Fetching the forecast", "cancel_label": "Stop"}},
                   "state": {"value": 0, "text": "0 of 5 days"}}),
        )?;
        self.wait(STEP)?;
        for day in 1..=5 {
            self.send(
                "ui.patch",
                json!({"instance_id": "fetch",
                       "state": {"value": day * 20, "text": format!("{day} of 5 days")}}),
            )?;
            self.wait(STEP / 3)?;
        }
        self.send(
            "ui.open",
            json!({"instance_id": "keep", "component": {"id": "confirm", "version": "1",
                   "props": {"title": "Keep the forecast?", "body": "5 days for **广州**",
                             "confirm_label": "Keep", "deny_label": "Discard"}}}),
        )?;
        // Someone at the screen may click; the answer arrives as a `ui.event submit`.
        self.wait(STEP * 2)?;
        for instance in ["keep", "fetch", "summary"] {
            println!("agent → host: ui.close {instance}");
            self.send("ui.close", json!({"instance_id": instance}))?;
        }
        Ok(())
    }

    /// Asks for `weather.share` and waits for its one `app.result`.
    fn share(&mut self) -> Result<(), HostClosed> {
        const ANSWER_WITHIN: i64 = 8;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
        let expires_at = Timestamp::from_unix_seconds(now + ANSWER_WITHIN)
            .and_then(|t| serde_json::to_value(t).ok())
            .unwrap_or(Value::Null);
        println!(
            "agent → host: app.call weather.share ({}; the prompt waits {ANSWER_WITHIN} s for a click)",
            self.city
        );
        self.send(
            "app.call",
            json!({
                "call_id": "call_share_01",
                "capability": "weather.share",
                "reason": "把当前天气分享给你的同事",
                "expires_at": expires_at,
                "arguments": self.state(),
            }),
        )?;
        let until = Instant::now() + Duration::from_secs(ANSWER_WITHIN as u64 + 4);
        while Instant::now() < until {
            let left = until.saturating_duration_since(Instant::now());
            match self.from_host.recv_timeout(left) {
                Ok(Message::AppResult(result)) => {
                    println!(
                        "agent: weather.share answered {}",
                        serde_json::to_value(result.payload.status).unwrap_or_default()
                    );
                    return Ok(());
                }
                Ok(Message::UiEvent(event)) => self.on_event(&event.payload)?,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return Err(HostClosed),
            }
        }
        println!("agent: weather.share was not answered in time");
        Ok(())
    }

    /// Opens the installed example app by id (no code sent), waits for it to report that its
    /// image and font loaded, and closes it.
    fn installed_app(&mut self) -> Result<(), HostClosed> {
        const APP_INSTANCE: &str = "dashboard.installed.01";
        println!("agent → host: ui.open {APP_INSTANCE} by id (com.lineup.example.dashboard, surface main)");
        self.send(
            "ui.open",
            json!({
                "instance_id": APP_INSTANCE,
                "app": {"id": "com.lineup.example.dashboard", "surface": "main"},
                "state": {"city": "Oslo", "temperature": 4.5, "summary": "Clear skies"},
            }),
        )?;
        let until = Instant::now() + STEP * 4;
        while Instant::now() < until {
            let left = until.saturating_duration_since(Instant::now());
            match self.from_host.recv_timeout(left) {
                Ok(Message::UiEvent(event)) if event.payload.event.as_str() == "drawn" => {
                    println!(
                        "agent: the installed app drew with its own assets: {}",
                        event.payload.data.to_json()
                    );
                    break;
                }
                Ok(Message::UiEvent(event)) => self.on_event(&event.payload)?,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return Err(HostClosed),
            }
        }
        self.wait(STEP)?;
        println!("agent → host: ui.close {APP_INSTANCE}");
        self.send("ui.close", json!({"instance_id": APP_INSTANCE}))
    }

    fn state(&self) -> Value {
        json!({"city": self.city, "temperature": self.temperature})
    }

    fn patch(&mut self) -> Result<(), HostClosed> {
        let state = self.state();
        println!("agent → host: ui.patch {INSTANCE} {state}");
        self.send("ui.patch", json!({"instance_id": INSTANCE, "state": state}))
    }

    /// Sends one envelope, as bytes: the host decodes and validates it like any agent's.
    fn send(&mut self, kind: &str, payload: Value) -> Result<(), HostClosed> {
        self.next_id += 1;
        let envelope = json!({
            "v": 1,
            "id": format!("msg_demo_{:02}", self.next_id),
            "type": format!("lineup.v1.{kind}"),
            "conversation_id": "conv_demo",
            "sender": {"kind": "agent", "id": "agent_demo"},
            "payload": payload,
        });
        self.handle.send_inbound(envelope.to_string().into_bytes())
    }

    /// Waits `duration`, answering the user's refresh clicks meanwhile.
    fn wait(&mut self, duration: Duration) -> Result<(), HostClosed> {
        let until = Instant::now() + duration;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.from_host.recv_timeout(left) {
                Ok(Message::UiEvent(event)) => self.on_event(&event.payload)?,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => return Ok(()),
                Err(RecvTimeoutError::Disconnected) => return Err(HostClosed),
            }
        }
    }

    fn on_event(&mut self, event: &UiEvent) -> Result<(), HostClosed> {
        if matches!(event.event.as_str(), "submit" | "cancel") {
            println!(
                "agent: {} answered {} ({})",
                event.instance_id,
                event.event.as_str(),
                event.data.to_json()
            );
        }
        if event.event.as_str() == "refresh" {
            println!(
                "agent: the user asked for a refresh ({}); sending fresh data",
                event.data.to_json()
            );
            self.temperature += 1;
            self.patch()?;
        }
        Ok(())
    }
}
