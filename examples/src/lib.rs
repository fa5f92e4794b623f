//! Runnable examples of embedding lineup-host, and the screen check their `--check` modes share:
//! a Surface (or the app's own content beside it) must be painted on screen in its colour.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use lineup_host::protocol::InstanceId;
use lineup_host::{HostHandle, WindowPixels};

/// How close a channel must be to count as the expected colour.
const TOLERANCE: u8 = 12;
/// How many pixels of the expected colour make it "shown".
const MIN_PIXELS: usize = 200;
/// How often, and how many times, the screen is read again while the colour is not there yet
/// (a page that has just said it is ready may not be painted yet).
const RETRY: Duration = Duration::from_millis(100);
const TRIES: u32 = 50;

/// Whether `pixels` show `rgb` (within a small tolerance) on at least 200 pixels; `what` names
/// the thing checked in the error.
pub fn expect_colour(what: &str, pixels: &WindowPixels, rgb: [u8; 3]) -> Result<(), String> {
    let all = [0, 0, pixels.width(), pixels.height()];
    let found = pixels.count_near(all, rgb, TOLERANCE);
    if found >= MIN_PIXELS {
        Ok(())
    } else {
        Err(format!(
            "{what}: {found} pixels of rgb{rgb:?} on screen in {}×{}, expected {MIN_PIXELS}",
            pixels.width(),
            pixels.height()
        ))
    }
}

/// A `--check` that reads what a Surface shows on screen, from any thread, and keeps the
/// verdict for after the event loop ended.
#[derive(Clone, Debug, Default)]
pub struct ScreenCheck(Arc<Mutex<Option<Result<(), String>>>>);

impl ScreenCheck {
    /// Reads what Surface `instance` shows (reading again for up to five seconds while the
    /// colour is not there yet); it must show `rgb`. Then shuts the host down.
    pub fn ask_then_stop(&self, handle: &HostHandle, instance: &str, rgb: [u8; 3]) {
        self.read(handle.clone(), instance.to_owned(), rgb, TRIES, true);
    }

    /// As [`ScreenCheck::ask_then_stop`], leaving the host running; [`ScreenCheck::is_done`]
    /// says when the verdict is in.
    pub fn ask(&self, handle: &HostHandle, instance: &str, rgb: [u8; 3]) {
        self.read(handle.clone(), instance.to_owned(), rgb, TRIES, false);
    }

    fn read(&self, handle: HostHandle, instance: String, rgb: [u8; 3], tries: u32, stop: bool) {
        let Ok(id) = InstanceId::try_from(instance.clone()) else {
            let verdict = Err(format!("{instance} is not an instance id"));
            return self.end(&handle, verdict, stop);
        };
        let this = self.clone();
        let again = handle.clone();
        let asked = handle.screen_pixels(id, move |read| {
            let verdict = read
                .map_err(|e| format!("{instance}: {e}"))
                .and_then(|pixels| expect_colour(&instance, &pixels, rgb));
            match verdict {
                Err(_) if tries > 1 => {
                    std::thread::spawn(move || {
                        std::thread::sleep(RETRY);
                        this.read(again, instance, rgb, tries - 1, stop);
                    });
                }
                verdict => this.end(&again, verdict, stop),
            }
        });
        if asked.is_err() {
            let verdict = Err("the host ended before the screen was read".to_owned());
            self.end(&handle, verdict, stop);
        }
    }

    fn end(&self, handle: &HostHandle, verdict: Result<(), String>, stop: bool) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(verdict);
        }
        if stop {
            let _ = handle.shutdown();
        }
    }

    /// Whether the verdict is in.
    pub fn is_done(&self) -> bool {
        self.0.lock().map(|slot| slot.is_some()).unwrap_or(true)
    }

    /// The verdict: an error when the screen was never read or did not show the colour.
    pub fn verdict(&self) -> Result<(), String> {
        match self.0.lock() {
            Ok(slot) => slot
                .clone()
                .unwrap_or_else(|| Err("the Surface's screen was never read".to_owned())),
            Err(_) => Err("the check's verdict was lost".to_owned()),
        }
    }
}
