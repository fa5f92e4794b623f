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
    Preferences {
        devtools_server_enabled: false,
        js_disable_jit: true,
        js_baseline_jit_enabled: false,
        js_ion_enabled: false,
        js_wasm_enabled: false,
        network_http_proxy_uri: String::new(),
        network_https_proxy_uri: String::new(),
        dom_async_clipboard_enabled: false,
        dom_bluetooth_enabled: false,
        dom_gamepad_enabled: false,
        dom_geolocation_enabled: false,
        dom_notification_enabled: false,
        dom_serviceworker_enabled: false,
        dom_storage_manager_api_enabled: false,
        dom_webgpu_enabled: false,
        dom_webxr_enabled: false,
        dom_servo_helpers_enabled: test_helpers,
        // R-UI-11: the environment's language as a BCP 47 tag (`en` under the POSIX locale,
        // whose `C` Servo would otherwise hand the page, and `Intl` refuse).
        intl_locale_override: lineup_webview_shell::language_from_environment().to_string(),
        layout_threads: 1,
        thread_pool_webrender_workers_max: 1,
        ..Preferences::default()
    }
}
