//! Servo's options and preferences for Surfaces: every feature a Surface has no use for off,
//! and nothing that could end the process on a page's error.

use servo::{Opts, Preferences};

/// The process-wide options: a page's panic is reported (`notify_crashed`), not the process's
/// end (`hard_fail` off); single process (Servo 0.7's sandbox does not work on Linux); no
/// configuration directory and temporary storage, so nothing a Surface does is written to disk.
pub(crate) fn options() -> Opts {
    Opts {
        hard_fail: false,
        multiprocess: false,
        sandbox: false,
        config_dir: None,
        temporary_storage: true,
        ..Opts::default()
    }
}

/// The preferences: no devtools server, no JIT, no network proxy of the system's, and the web
/// APIs that reach past the page (devices, notifications, service workers, storage managers,
/// the async clipboard) off. `test_helpers` turns on `ServoTestUtils` (its `panic()` is the
/// crash test's script-thread panic); never outside tests.
pub(crate) fn preferences(test_helpers: bool) -> Preferences {
    let mut prefs = Preferences::default();
    prefs.devtools_server_enabled = false;
    prefs.js_disable_jit = true;
    prefs.js_baseline_jit_enabled = false;
    prefs.js_ion_enabled = false;
    prefs.js_wasm_enabled = false;
    prefs.network_http_proxy_uri = String::new();
    prefs.network_https_proxy_uri = String::new();
    prefs.dom_async_clipboard_enabled = false;
    prefs.dom_bluetooth_enabled = false;
    prefs.dom_gamepad_enabled = false;
    prefs.dom_geolocation_enabled = false;
    prefs.dom_notification_enabled = false;
    prefs.dom_serviceworker_enabled = false;
    prefs.dom_storage_manager_api_enabled = false;
    prefs.dom_webgpu_enabled = false;
    prefs.dom_webxr_enabled = false;
    prefs.dom_servo_helpers_enabled = test_helpers;
    prefs.layout_threads = 1;
    prefs.thread_pool_webrender_workers_max = 1;
    prefs
}
