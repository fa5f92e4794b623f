//! What a kiosk host needs of the platform beside the Surfaces: a fullscreen, undecorated window
//! on a chosen monitor ([`kiosk_window`]), a pointer that hides when idle ([`CursorHider`]),
//! an orderly end on `SIGTERM` ([`on_terminate`]), and web processes that do not look for an
//! accessibility bus there is none of ([`skip_absent_a11y_bus`]).
//! The standby screen is `lineup_host::HostBuilder::standby`; the region layout
//! is the embedder's `lineup_host::HostDelegate::request_child_placement`.

use std::fmt;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::windows::WindowMaker;
use tao::monitor::MonitorHandle;
use tao::window::{Fullscreen, Window, WindowBuilder};

use crate::error::ShellError;

/// Which monitor a kiosk window fills.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MonitorChoice {
    /// The monitor at this index, in the order the display server lists them (0 is the first).
    Index(usize),
    /// The monitor with this connector name, such as `HDMI-1`.
    Name(String),
}

impl fmt::Display for MonitorChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MonitorChoice::Index(i) => write!(f, "monitor {i}"),
            MonitorChoice::Name(name) => write!(f, "monitor {name:?}"),
        }
    }
}

/// One monitor as the display server reports it, for error messages and logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MonitorInfo {
    /// Its index.
    pub index: usize,
    /// Its connector name, when known.
    pub name: Option<String>,
    /// Its position on the virtual screen, in physical pixels.
    pub position: (i32, i32),
    /// Its size, in physical pixels.
    pub size: (u32, u32),
}

impl fmt::Display for MonitorInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}x{}+{}+{}",
            self.index,
            self.name.as_deref().unwrap_or("(unnamed)"),
            self.size.0,
            self.size.1,
            self.position.0,
            self.position.1
        )
    }
}

/// The monitors the display server reports, in order.
pub fn monitors(target: &dyn WindowMaker) -> Vec<MonitorInfo> {
    target
        .monitors()
        .iter()
        .enumerate()
        .map(|(index, m)| info(index, m))
        .collect()
}

fn info(index: usize, monitor: &MonitorHandle) -> MonitorInfo {
    let (position, size) = (monitor.position(), monitor.size());
    MonitorInfo {
        index,
        name: monitor.name(),
        position: (position.x, position.y),
        size: (size.width, size.height),
    }
}

/// Creates a kiosk window: undecorated, fullscreen on `choice`, placed and sized to that
/// monitor as well (so it fills it even with no window manager, which is how many kiosks run);
/// give it to `lineup_host::HostBuilder::child_views_in` with
/// `lineup_host::HostBuilder::ignore_parent_close`.
///
/// Fails naming the monitors there are when `choice` is not one of them.
pub fn kiosk_window(
    target: &dyn WindowMaker,
    choice: &MonitorChoice,
    title: &str,
) -> Result<(Rc<Window>, MonitorInfo), ShellError> {
    let all: Vec<MonitorHandle> = target.monitors();
    let found = match choice {
        MonitorChoice::Index(i) => all.get(*i).map(|m| (*i, m)),
        MonitorChoice::Name(name) => all
            .iter()
            .enumerate()
            .find(|(_, m)| m.name().as_deref() == Some(name.as_str())),
    };
    let Some((index, monitor)) = found else {
        let listed: Vec<String> = all
            .iter()
            .enumerate()
            .map(|(i, m)| info(i, m).to_string())
            .collect();
        return Err(ShellError::Platform(format!(
            "there is no {choice}; the display has {} monitor(s): {}",
            all.len(),
            listed.join("; ")
        )));
    };
    let monitor_info = info(index, monitor);
    let window = target
        .build_window(
            WindowBuilder::new()
                .with_title(title)
                .with_decorations(false)
                .with_position(monitor.position())
                .with_inner_size(monitor.size())
                .with_fullscreen(Some(Fullscreen::Borderless(Some(monitor.clone())))),
        )
        .map_err(|e| ShellError::Platform(format!("the kiosk window: {e}")))?;
    Ok((Rc::new(window), monitor_info))
}

/// Runs `on_signal` on the event-loop thread, with the signal's name, when the process gets
/// `SIGTERM` (systemd stopping the unit) or `SIGINT` (Ctrl-C), in place of ending at once: so a
/// kiosk can log that it is shutting down, say goodbye to its agent and end its event loop
/// (`lineup_host::HostHandle::shutdown`). Call it on the event-loop thread,
/// once the event loop exists (`lineup_host::event_loop`).
///
/// ## Platform-specific
/// Linux (GLib's Unix signal sources on the main context the event loop runs); elsewhere it
/// fails with [`ShellError::Unsupported`].
pub fn on_terminate(on_signal: impl Fn(&'static str) + 'static) -> Result<(), ShellError> {
    signals::on_terminate(Rc::new(on_signal))
}

#[cfg(target_os = "linux")]
mod signals {
    use std::rc::Rc;

    use gtk::glib;

    use crate::error::ShellError;

    /// `SIGTERM` and `SIGINT` on Linux.
    const SIGNALS: [(i32, &str); 2] = [(15, "SIGTERM"), (2, "SIGINT")];

    pub(super) fn on_terminate(on_signal: Rc<dyn Fn(&'static str)>) -> Result<(), ShellError> {
        for (number, name) in SIGNALS {
            let on_signal = Rc::clone(&on_signal);
            glib::source::unix_signal_add_local(number, move || {
                on_signal(name);
                glib::ControlFlow::Continue
            });
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
mod signals {
    use std::rc::Rc;

    use crate::error::ShellError;

    pub(super) fn on_terminate(_on_signal: Rc<dyn Fn(&'static str)>) -> Result<(), ShellError> {
        Err(ShellError::Unsupported(
            "handling SIGTERM needs GLib on Linux",
        ))
    }
}

/// When no accessibility bus can exist for this process (neither `AT_SPI_BUS_ADDRESS` nor a
/// session bus, `DBUS_SESSION_BUS_ADDRESS`, is set: a kiosk run by systemd), tells WebKit not
/// to look for one (`WEBKIT_A11Y_BUS_ADDRESS` set empty), so that each web process does not
/// log "Can't connect to a11y bus" into the journal; returns whether it did. With a bus, or
/// with `WEBKIT_A11Y_BUS_ADDRESS` already set, nothing changes: accessibility works as before.
/// (`NO_AT_BRIDGE=1` and `GTK_A11Y=none` do not reach WebKit's web processes.)
///
/// Call it first in `main`, before any thread exists: it changes the process's environment.
pub fn skip_absent_a11y_bus() -> bool {
    const WEBKIT_A11Y: &str = "WEBKIT_A11Y_BUS_ADDRESS";
    if std::env::var_os(WEBKIT_A11Y).is_some() {
        return false;
    }
    let absent = |name: &str| std::env::var_os(name).is_none_or(|v| v.is_empty());
    if !absent("AT_SPI_BUS_ADDRESS") || !absent("DBUS_SESSION_BUS_ADDRESS") {
        return false;
    }
    // Sound while no other thread reads the environment (see above).
    std::env::set_var(WEBKIT_A11Y, "");
    true
}

/// When the pointer is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CursorPolicy {
    /// Always shown.
    Visible,
    /// Never shown (touch screens).
    Hidden,
    /// Hidden after the pointer has not moved for this long; shown again when it moves.
    HiddenWhenIdle(Duration),
}

/// Hides the pointer over the whole screen, Surfaces included, whatever cursor their CSS asks
/// for: through the X server's XFIXES extension, on a connection of its own, polled from a
/// thread of its own every [`CursorHider::POLL`]. Dropping it shows the pointer again (so does
/// the process's end: the X server undoes a client's hiding when it disconnects).
///
/// ## Platform-specific
/// X11 only (`$DISPLAY`); elsewhere [`CursorHider::start`] fails. Wayland kiosk compositors
/// hide the pointer themselves (for cage: `-d` and its idle setting).
#[derive(Debug)]
pub struct CursorHider {
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl CursorHider {
    /// How often the pointer's position is read.
    pub const POLL: Duration = Duration::from_millis(200);

    /// Starts hiding as `policy` says; [`CursorPolicy::Visible`] starts nothing.
    pub fn start(policy: CursorPolicy) -> Result<Self, ShellError> {
        let stop = Arc::new(AtomicBool::new(false));
        if policy == CursorPolicy::Visible {
            return Ok(Self { stop, thread: None });
        }
        let pointer = x11::Pointer::connect()?;
        let stopping = Arc::clone(&stop);
        let thread = thread::Builder::new()
            .name("lineup-cursor".into())
            .spawn(move || {
                let mut idle = IdleCursor::new(policy, pointer.position(), Instant::now());
                while !stopping.load(Ordering::Relaxed) {
                    if let Some(show) = idle.step(pointer.position(), Instant::now()) {
                        pointer.set_shown(show);
                    }
                    thread::sleep(Self::POLL);
                }
                pointer.set_shown(true);
            })
            .map_err(|e| ShellError::Platform(format!("cannot start the cursor thread: {e}")))?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for CursorHider {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The pointer's shown/hidden state from its positions over time.
#[derive(Debug)]
pub(crate) struct IdleCursor {
    policy: CursorPolicy,
    shown: bool,
    last: Option<(i32, i32)>,
    moved_at: Instant,
}

impl IdleCursor {
    pub(crate) fn new(policy: CursorPolicy, at: Option<(i32, i32)>, now: Instant) -> Self {
        Self {
            policy,
            shown: true,
            last: at,
            moved_at: now,
        }
    }

    /// Given where the pointer is now, whether to show (`Some(true)`) or hide (`Some(false)`)
    /// it, or leave it (`None`).
    pub(crate) fn step(&mut self, at: Option<(i32, i32)>, now: Instant) -> Option<bool> {
        if at != self.last {
            self.last = at;
            self.moved_at = now;
        }
        let want = match self.policy {
            CursorPolicy::Visible => true,
            CursorPolicy::Hidden => false,
            CursorPolicy::HiddenWhenIdle(idle) => now.duration_since(self.moved_at) < idle,
        };
        if want == self.shown {
            return None;
        }
        self.shown = want;
        Some(want)
    }
}

#[cfg(target_os = "linux")]
mod x11 {
    use x11rb::connection::Connection;
    use x11rb::protocol::xfixes::ConnectionExt as _;
    use x11rb::protocol::xproto::{ConnectionExt as _, Window};
    use x11rb::rust_connection::RustConnection;

    use crate::error::ShellError;

    /// The pointer of the X server at `$DISPLAY`, on a connection of its own.
    pub(super) struct Pointer {
        connection: RustConnection,
        root: Window,
    }

    impl Pointer {
        pub(super) fn connect() -> Result<Self, ShellError> {
            let fail = |e: &dyn std::fmt::Display| {
                ShellError::Platform(format!("cannot hide the pointer (X11 XFIXES): {e}"))
            };
            let (connection, screen) = x11rb::connect(None).map_err(|e| fail(&e))?;
            let root = connection.setup().roots[screen].root;
            // XFIXES 4 has HideCursor/ShowCursor; the version must be asked before any request.
            let version = connection
                .xfixes_query_version(4, 0)
                .map_err(|e| fail(&e))?
                .reply()
                .map_err(|e| fail(&e))?;
            if version.major_version < 4 {
                return Err(fail(&format!(
                    "the X server has XFIXES {}, 4 is needed",
                    version.major_version
                )));
            }
            Ok(Self { connection, root })
        }

        pub(super) fn position(&self) -> Option<(i32, i32)> {
            let reply = self
                .connection
                .query_pointer(self.root)
                .ok()?
                .reply()
                .ok()?;
            Some((i32::from(reply.root_x), i32::from(reply.root_y)))
        }

        pub(super) fn set_shown(&self, shown: bool) {
            let sent = if shown {
                self.connection.xfixes_show_cursor(self.root).map(drop)
            } else {
                self.connection.xfixes_hide_cursor(self.root).map(drop)
            };
            if let Err(e) = sent.and_then(|()| self.connection.flush()) {
                tracing::warn!(
                    "cannot {} the pointer: {e}",
                    if shown { "show" } else { "hide" }
                );
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod x11 {
    use crate::error::ShellError;

    pub(super) struct Pointer;

    impl Pointer {
        pub(super) fn connect() -> Result<Self, ShellError> {
            Err(ShellError::Unsupported("hiding the pointer needs X11"))
        }

        pub(super) fn position(&self) -> Option<(i32, i32)> {
            None
        }

        pub(super) fn set_shown(&self, _shown: bool) {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pointer_hides_after_the_idle_time_and_shows_when_it_moves() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut idle = IdleCursor::new(
            CursorPolicy::HiddenWhenIdle(Duration::from_secs(3)),
            Some((5, 5)),
            t0,
        );
        assert_eq!(idle.step(Some((5, 5)), at(2_900)), None, "not idle yet");
        assert_eq!(
            idle.step(Some((5, 5)), at(3_000)),
            Some(false),
            "idle: hide"
        );
        assert_eq!(idle.step(Some((5, 5)), at(9_000)), None, "stays hidden");
        assert_eq!(
            idle.step(Some((6, 5)), at(9_200)),
            Some(true),
            "moved: show"
        );
        assert_eq!(idle.step(Some((6, 5)), at(12_100)), None);
        assert_eq!(idle.step(Some((6, 5)), at(12_200)), Some(false));
    }

    #[test]
    fn hidden_hides_at_once_and_visible_never_hides() {
        let t0 = Instant::now();
        let mut hidden = IdleCursor::new(CursorPolicy::Hidden, None, t0);
        assert_eq!(hidden.step(None, t0), Some(false));
        assert_eq!(
            hidden.step(Some((1, 1)), t0),
            None,
            "a move does not show it"
        );
        let mut visible = IdleCursor::new(CursorPolicy::Visible, None, t0);
        assert_eq!(
            visible.step(None, t0 + Duration::from_secs(3600)),
            None,
            "never hidden"
        );
    }
}
