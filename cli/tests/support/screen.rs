//! The X display of the end-to-end tests that drive real windows: one test at a time on it, and
//! a connection retried while Xvfb resets.

use std::thread;
use std::time::{Duration, Instant};

use lineup_tests::x11::X11;

/// One test at a time on the display: their windows and keys must not cross.
pub(crate) fn screen() -> std::sync::MutexGuard<'static, ()> {
    static SCREEN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SCREEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A connection to the display, retried while Xvfb resets after its last client left.
pub(crate) fn display() -> X11 {
    assert!(
        std::env::var_os("DISPLAY").is_some(),
        "no DISPLAY: run under `xvfb-run -a`"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match X11::connect() {
            Ok(x) => return x,
            Err(e) if Instant::now() > deadline => panic!("no display: {e}"),
            Err(_) => thread::sleep(Duration::from_millis(100)),
        }
    }
}
