//! `lineup preview <folder | bundle.json>`: a Surface in the real sandbox for its author, reloaded
//! in place when its files change, every event, resize, refusal and diagnostic printed on stdout;
//! or, with `--screenshot` and `--check`, a non-interactive run for an author's CI.
//!
//! The Surface is opened exactly as an agent's `ui.open` would open it, through the same
//! [`HostBuilder`] defaults: the same sandbox, CSP, bridge and limits. A preview's own reloads do
//! not count toward the reload-loop bound (R-UI-10); everything else does what production does.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use clap::Args;
use lineup_authoring::{
    AuthoringError, PackageReading, PreviewBundle, PreviewCatalog, PreviewSource, DEBOUNCE,
};
use lineup_host::{HostBuilder, HostHandle};
use lineup_host_core::{
    ConversationId, InlineApp, InstanceId, JsonObject, Limits, Message, SurfaceKey,
};

mod component;
mod delegate;
use delegate::Delegate;

/// Exit codes of `lineup preview` (`--check` and `--screenshot`).
mod exit {
    /// Everything passed (or the interactive preview was closed).
    pub(super) const OK: u8 = 0;
    /// The preview could not run: the source is unreadable or refused (R-UI-6a), there is no
    /// display, the host refused the open, the Surface closed or crashed, or the screenshot
    /// could not be written.
    pub(super) const FAILED: u8 = 1;
    // 2 is clap's usage error.
    /// `--check`: the page threw an uncaught error or left a promise rejection unhandled; or,
    /// with `--check` or `--screenshot`, its script has a syntax error, found before it is
    /// loaded (the interactive preview waits for a save that parses instead).
    pub(super) const PAGE_ERROR: u8 = 3;
    /// `--check`: the page caused a Content-Security-Policy violation.
    pub(super) const CSP_VIOLATION: u8 = 4;
    /// The bundle is over the size limit (R-UI-2): the host would refuse it.
    pub(super) const OVERSIZE: u8 = 5;
    /// No `ready` (or no `--wait-event`) within `--timeout`.
    pub(super) const TIMED_OUT: u8 = 6;
}

/// Opens a bundle folder (or a bundle JSON file) in the real sandbox and reloads it as you edit.
///
/// An app package folder (with manifest.json) is previewed as the installed app would run: its
/// main (or first) Surface opened by id, its assets served from its own host under the
/// installed app's policy; nothing is installed.
///
/// A JSON file whose `ui.open` carries `component` (a standard component, R-STD-1) is checked
/// as the host checks it and shown in the host's own renderer; each answer is printed as the
/// `ui.event` the agent would get, and `--screenshot` writes the window's document as PNG.
///
/// Exit codes: 0 passed; 1 could not run (unreadable or refused source, no display, open
/// refused, Surface closed or crashed, screenshot not written); 2 usage; 3 page error (uncaught
/// error or unhandled rejection, with --check; a syntax error in the script, found before it
/// is loaded, with --check or --screenshot); 4 CSP violation (with --check); 5 bundle over
/// the 160 KiB limit (with --check or --screenshot); 6 timed out waiting for ready or
/// --wait-event. With both page errors and CSP violations, 3.
#[derive(Debug, Args)]
pub(crate) struct PreviewArgs {
    /// A bundle folder (index.html, style.css, script.js, optional state.json), an app package
    /// folder (manifest.json and its files), or a JSON file with a ui.open envelope or an app
    /// object.
    source: PathBuf,
    /// Enable the web inspector (right-click → Inspect Element); weakens nothing else.
    #[arg(long)]
    devtools: bool,
    /// Write WebKit's snapshot of the full document to FILE as PNG, then exit. It is taken after
    /// onState has returned and two animation frames have passed, or after --wait-event.
    #[arg(long, value_name = "FILE")]
    screenshot: Option<PathBuf>,
    /// Exit non-zero on any page error, CSP violation or oversize (see the exit codes), after
    /// the settle time.
    #[arg(long)]
    check: bool,
    /// With --screenshot or --check: wait for the page to send this event (LineUpSurface.event)
    /// instead of for its state.
    #[arg(long, value_name = "NAME")]
    wait_event: Option<String>,
    /// With --check or --screenshot: how long to keep listening for errors after the state (or
    /// the --wait-event), in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    settle: u64,
    /// With --check or --screenshot: give up after this many seconds without ready (or the
    /// --wait-event).
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    timeout: u64,
    /// For an app package folder: which of its Surfaces to open (default: main, else the
    /// first by id).
    #[arg(long, value_name = "ID")]
    surface: Option<String>,
    /// The web engine: `webkit` (this binary's) or `servo`, which runs `lineup-servo preview`
    /// (built by `scripts/servo.sh`; found beside this binary, on PATH, or at $LINEUP_SERVO).
    #[arg(long, value_name = "ENGINE", default_value = "webkit")]
    engine: crate::engine::Engine,
    #[command(flatten)]
    look: crate::look::LookArgs,
}

impl PreviewArgs {
    fn interactive(&self) -> bool {
        self.screenshot.is_none() && !self.check
    }
}

/// Runs the preview; the exit code is one of [`exit`]'s.
pub(crate) fn run(args: PreviewArgs) -> ExitCode {
    let out = Printer::new();
    match preview(args, &out) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            out.line(format_args!("error: {e}"));
            ExitCode::from(exit::FAILED)
        }
    }
}

fn preview(args: PreviewArgs, out: &Printer) -> Result<u8, Box<dyn std::error::Error>> {
    if args.engine == crate::engine::Engine::Servo {
        let unsupported = [
            (args.check, "--check"),
            (args.devtools, "--devtools"),
            (args.wait_event.is_some(), "--wait-event"),
            (args.surface.is_some(), "--surface"),
        ];
        if let Some((_, flag)) = unsupported.iter().find(|(set, _)| *set) {
            out.line(format_args!(
                "error: {flag} is not available with --engine servo (lineup-servo preview takes \
                 a bundle folder and --screenshot)"
            ));
            return Ok(2);
        }
        return crate::engine::servo_preview(&args.source, args.screenshot.as_deref());
    }
    if let Some(payload) = component::read(&args.source) {
        let timeout = std::time::Duration::from_secs(args.timeout);
        return component::run(payload, &args.look, args.screenshot, timeout, out);
    }
    let mut source = PreviewSource::new(&args.source)?;
    if let Some(surface) = &args.surface {
        source = source.with_surface(lineup_host_core::SurfaceId::try_from(surface.as_str())?)?;
    }
    let bundle = match source.read() {
        Ok(bundle) => bundle,
        // R-UI-6a: found before loading; loaded, the engine would say only "Script error.".
        Err(e @ AuthoringError::Syntax { .. }) if args.interactive() => {
            out.line(format_args!("{e}"));
            wait_until_it_parses(&source, out)?
        }
        Err(e @ AuthoringError::Syntax { .. }) => {
            out.line(format_args!("{e}"));
            out.line(format_args!(
                "not opened: the page would stop at this SyntaxError (exit {})",
                exit::PAGE_ERROR
            ));
            return Ok(exit::PAGE_ERROR);
        }
        Err(e) => return Err(e.into()),
    };
    for warning in &bundle.warnings {
        out.line(format_args!("warning: {warning}"));
    }
    let limits = Limits::default();
    let report = bundle.size_report(&limits);
    out.line(format_args!("{}: {report}", source.path().display()));
    if report.is_over() && !args.interactive() {
        return Ok(exit::OVERSIZE);
    }
    let state = match source.read_state() {
        Ok(state) => state,
        Err(e) if args.interactive() => {
            out.line(format_args!("{e}; opening without a state"));
            None
        }
        Err(e) => return Err(e.into()),
    };
    if !has_display() {
        out.line(format_args!(
            "no display: lineup preview needs one for its webview; run it under Xvfb:\n  \
             xvfb-run -a -s \"-screen 0 1280x1024x24\" {}",
            shell_line()
        ));
        return Ok(exit::FAILED);
    }
    let conversation = ConversationId::try_from("preview")?;
    let ctx = Arc::new(Context {
        out: out.clone(),
        status: Mutex::new(Status::default()),
        handle: OnceLock::new(),
        instance: bundle.instance_id.clone(),
        screenshot: args.screenshot.clone(),
        wait_event: args.wait_event.clone(),
        settle: Duration::from_millis(args.settle),
        interactive: args.interactive(),
    });
    let event_loop = lineup_host::event_loop()?;
    let mut builder = args.look.apply(HostBuilder::new().limits(limits.clone()));
    // A package is served as the installed app would be: by id, with its assets (R-SEC-3a).
    let catalog = bundle.package.as_ref().map(|reading| {
        out.line(format_args!(
            "package {} {}, Surface {}: opened by id as the installed app would run, its {} \
             assets from its own host; nothing is installed",
            reading.package.id(),
            reading.package.version(),
            reading.surface,
            reading.package.assets().len()
        ));
        out.line(format_args!(
            "package code: {} bytes of script assets, of the per-package limit of {} \
             (R-SEC-3a)",
            reading.package.code_bytes(),
            lineup_packages::ManifestLimits::default().max_code_bytes
        ));
        PreviewCatalog::new((*reading.package).clone())
    });
    if let Some(catalog) = &catalog {
        builder = builder.app_center(std::rc::Rc::new(catalog.clone()));
    }
    if args.devtools {
        // A page paused in the inspector's debugger does not answer the hang watchdog.
        builder = builder.without_hang_watchdog().dangerous().with_devtools();
        out.line(format_args!(
            "devtools: on (right-click in the Surface, Inspect Element)"
        ));
    }
    let outbound = Arc::clone(&ctx);
    let host = builder
        .conversation_id(conversation.clone())
        .on_outbound(move |message| outbound.outbound(message))
        .delegate(Delegate(Arc::clone(&ctx)))
        .build(&event_loop)?;
    let handle = host.handle();
    let _ = ctx.handle.set(handle.clone());
    let open = bundle.ui_open(&conversation, state.clone())?;
    ctx.status().last_open = Some(Arc::new(Mutex::new(Applied {
        app: bundle.app.clone(),
        package: bundle.package.clone(),
        catalog,
        state: state.clone(),
        state_error: None,
        patches: 0,
    })));
    handle.send_inbound(open.to_json().into_bytes())?;
    let _watcher = if ctx.interactive {
        let watching = Arc::clone(&ctx);
        let watched = source.clone();
        let bundle_now = bundle.clone();
        let conversation = conversation.clone();
        let applied = ctx
            .status()
            .last_open
            .clone()
            .ok_or("the preview lost its state")?;
        out.line(format_args!(
            "watching {} (saves are read {} ms after the last change); close the window to quit",
            source.path().display(),
            DEBOUNCE.as_millis()
        ));
        Some(source.watch(DEBOUNCE, move || {
            watching.changed(&watched, &bundle_now, &conversation, &applied, &limits)
        })?)
    } else {
        let timeout = Duration::from_secs(args.timeout);
        let timer = Arc::clone(&ctx);
        thread::Builder::new()
            .name("lineup-preview-timeout".into())
            .spawn(move || {
                thread::sleep(timeout);
                let mut status = timer.status();
                if !status.triggered {
                    status.timed_out = true;
                    drop(status);
                    timer.out.line(format_args!(
                        "timed out after {} s waiting for {}",
                        timeout.as_secs(),
                        timer
                            .wait_event
                            .as_deref()
                            .map_or("ready".to_owned(), |e| format!("event {e}"))
                    ));
                    timer.shutdown();
                }
            })?;
        None
    };
    host.run(event_loop)?;
    let status = ctx.status();
    Ok(status.exit_code(args.check))
}

/// The interactive preview of a source whose script does not parse yet: nothing to show, so
/// it waits for a save that parses, printing each error meanwhile.
fn wait_until_it_parses(
    source: &PreviewSource,
    out: &Printer,
) -> Result<PreviewBundle, Box<dyn std::error::Error>> {
    out.line(format_args!(
        "not opened: waiting for a save of {} that parses",
        source.path().display()
    ));
    let (saved, saves) = std::sync::mpsc::channel();
    let _watcher = source.watch(DEBOUNCE, move || {
        let _ = saved.send(());
    })?;
    loop {
        saves.recv()?;
        match source.read() {
            Ok(bundle) => return Ok(bundle),
            Err(e) => out.line(format_args!("{e}; still not opened")),
        }
    }
}

fn has_display() -> bool {
    let has = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    has("DISPLAY") || has("WAYLAND_DISPLAY")
}

/// This command line, quoted for a POSIX shell, to paste after `xvfb-run -a`.
fn shell_line() -> String {
    std::env::args()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
            {
                a
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Human-readable lines on stdout, each stamped with the time since the preview started.
#[derive(Clone)]
struct Printer {
    start: Instant,
}

impl Printer {
    fn new() -> Self {
        Self {
            start: Instant::now(),
        }
    }

    fn line(&self, text: std::fmt::Arguments<'_>) {
        let elapsed = self.start.elapsed().as_secs_f64();
        let mut stdout = std::io::stdout().lock();
        // A closed stdout (the author piped into `head`) must not end the preview.
        let _ = writeln!(stdout, "[{elapsed:7.3}s] {text}");
        let _ = stdout.flush();
    }
}

/// What the preview last gave the Surface, for the watcher to compare with.
struct Applied {
    app: InlineApp,
    /// For a package: the one on screen, and the catalog that serves it.
    package: Option<PackageReading>,
    catalog: Option<PreviewCatalog>,
    state: Option<JsonObject>,
    /// The last state-file error printed, so a broken file is reported once per change.
    state_error: Option<String>,
    patches: u64,
}

#[derive(Default)]
struct Status {
    /// The Surface that is open now, if any.
    open: Option<SurfaceKey>,
    ready: bool,
    /// `--check`/`--screenshot`: the moment to take the snapshot and settle came.
    triggered: bool,
    /// `--screenshot`: the snapshot was taken and written (`Ok`) or not.
    snapshot: Option<Result<(), String>>,
    settled: bool,
    page_errors: usize,
    csp_violations: usize,
    /// Why the run failed before it could finish: refused, closed, crashed.
    failure: Option<String>,
    timed_out: bool,
    last_open: Option<Arc<Mutex<Applied>>>,
}

impl Status {
    fn exit_code(&self, check: bool) -> u8 {
        if self.timed_out {
            exit::TIMED_OUT
        } else if self.failure.is_some() || matches!(self.snapshot, Some(Err(_))) {
            exit::FAILED
        } else if check && self.page_errors > 0 {
            exit::PAGE_ERROR
        } else if check && self.csp_violations > 0 {
            exit::CSP_VIOLATION
        } else {
            exit::OK
        }
    }
}

/// Shared by the host's delegate and outbound callback (event-loop thread), the watcher and
/// the timers.
struct Context {
    out: Printer,
    status: Mutex<Status>,
    handle: OnceLock<HostHandle>,
    instance: InstanceId,
    screenshot: Option<PathBuf>,
    wait_event: Option<String>,
    settle: Duration,
    interactive: bool,
}

impl Context {
    fn status(&self) -> MutexGuard<'_, Status> {
        // A panic elsewhere while holding it leaves counters that are still worth reporting.
        self.status.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn shutdown(&self) {
        if let Some(handle) = self.handle.get() {
            let _ = handle.shutdown();
        }
    }

    /// What the agent would get: the page's events, and the host's answers.
    fn outbound(self: &Arc<Self>, message: &Message) {
        match message {
            Message::UiEvent(env) => {
                let event = &env.payload;
                self.out.line(format_args!(
                    "event {} {}",
                    event.event.as_str(),
                    event.data.to_json()
                ));
                if self.wait_event.as_deref() == Some(event.event.as_str()) {
                    self.trigger();
                }
            }
            Message::ClientError(env) => self.out.line(format_args!(
                "client.error {}: {}",
                env.payload.code, env.payload.message
            )),
            other => self
                .out
                .line(format_args!("to the agent: {}", other.to_json())),
        }
    }

    /// `--check`/`--screenshot`: the page has its state (or sent `--wait-event`): take the
    /// snapshot, and end once it is written and the settle time has passed.
    fn trigger(self: &Arc<Self>) {
        if self.interactive {
            return;
        }
        {
            let mut status = self.status();
            if status.triggered {
                return;
            }
            status.triggered = true;
        }
        if let (Some(path), Some(handle)) = (self.screenshot.clone(), self.handle.get()) {
            let ctx = Arc::clone(self);
            let sent = handle.snapshot_png(self.instance.clone(), move |png| {
                let written = png.map_err(|e| e.to_string()).and_then(|png| {
                    std::fs::write(&path, &png)
                        .map(|()| png.len())
                        .map_err(|e| format!("{}: {e}", path.display()))
                });
                match &written {
                    Ok(len) => ctx.out.line(format_args!(
                        "screenshot: {} ({len} bytes, full document)",
                        path.display()
                    )),
                    Err(e) => ctx.out.line(format_args!("screenshot failed: {e}")),
                }
                ctx.status().snapshot = Some(written.map(|_| ()));
                ctx.maybe_finish();
            });
            if sent.is_err() {
                self.status().snapshot = Some(Err("the host has ended".to_owned()));
            }
        }
        let ctx = Arc::clone(self);
        let settle = self.settle;
        let spawned = thread::Builder::new()
            .name("lineup-preview-settle".into())
            .spawn(move || {
                thread::sleep(settle);
                ctx.status().settled = true;
                ctx.maybe_finish();
            });
        if spawned.is_err() {
            self.status().settled = true;
            self.maybe_finish();
        }
    }

    fn maybe_finish(&self) {
        let done = {
            let status = self.status();
            status.settled && (self.screenshot.is_none() || status.snapshot.is_some())
        };
        if done {
            self.shutdown();
        }
    }

    /// The watcher saw a burst of changes: reload edited code in place, send an edited state
    /// as a patch; a broken file is reported and the last good version stays.
    fn changed(
        &self,
        source: &PreviewSource,
        first: &PreviewBundle,
        conversation: &ConversationId,
        applied: &Mutex<Applied>,
        limits: &Limits,
    ) {
        let Some(handle) = self.handle.get() else {
            return;
        };
        let mut applied = applied.lock().unwrap_or_else(|e| e.into_inner());
        let open = self.status().open.is_some();
        match source.read() {
            Err(e) => self
                .out
                .line(format_args!("{e}; the last good version stays on screen")),
            Ok(bundle)
                if bundle.app.bundle != applied.app.bundle
                    || bundle.package != applied.package
                    || !open =>
            {
                for warning in &bundle.warnings {
                    self.out.line(format_args!("warning: {warning}"));
                }
                let report = bundle.size_report(limits);
                self.out
                    .line(format_args!("{}: {report}", source.path().display()));
                if report.is_over() {
                    self.out
                        .line(format_args!("not reloaded: the last good version stays"));
                } else if open && bundle.package.is_none() {
                    self.out
                        .line(format_args!("code changed: reloading in place"));
                    let _ = handle.reload_bundle(self.instance.clone(), bundle.app.bundle.clone());
                    applied.app = bundle.app;
                } else {
                    // Refused or closed before, or a package (its assets too may have changed):
                    // open it again, with the state it had.
                    if let (Some(catalog), Some(reading)) = (&applied.catalog, &bundle.package) {
                        catalog.replace((*reading.package).clone());
                    }
                    let mut again = first.clone();
                    again.app = bundle.app.clone();
                    again.package.clone_from(&bundle.package);
                    match again.ui_open(conversation, applied.state.clone()) {
                        Ok(open) => {
                            self.out.line(format_args!("opening again"));
                            let _ = handle.send_inbound(open.to_json().into_bytes());
                            applied.app = bundle.app;
                            applied.package = bundle.package;
                        }
                        Err(e) => self.out.line(format_args!("{e}")),
                    }
                }
            }
            Ok(_) => {}
        }
        match source.read_state() {
            Err(e) => {
                let text = e.to_string();
                if applied.state_error.as_deref() != Some(text.as_str()) {
                    self.out
                        .line(format_args!("{text}; the last good state stays"));
                    applied.state_error = Some(text);
                }
            }
            Ok(state) => {
                applied.state_error = None;
                let Some(state) = state else { return };
                if applied.state.as_ref() == Some(&state) {
                    return;
                }
                applied.patches += 1;
                match first.ui_patch(conversation, state.clone(), applied.patches) {
                    Ok(patch) => {
                        self.out.line(format_args!(
                            "state changed: sent as ui.patch {}",
                            state.to_json()
                        ));
                        let _ = handle.send_inbound(patch.to_json().into_bytes());
                        applied.state = Some(state);
                    }
                    Err(e) => self.out.line(format_args!("{e}")),
                }
            }
        }
    }
}
