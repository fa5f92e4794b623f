//! WebKit's feature list (WebKitGTK 2.42), which the `webkit2gtk` crate has no bindings for:
//! setting and reading back a feature by its identifier, through a few audited FFI calls.

use gtk::glib::{self, translate::ToGlibPtr};

/// Sets WebKit feature `identifier` on `settings` and returns what the engine reads back, or
/// `None` if this WebKit has no such feature. The `webkit2gtk` crate has no bindings for the
/// feature list (WebKitGTK 2.42), hence the FFI calls.
#[allow(unsafe_code)]
pub(super) fn set_feature_enabled(
    settings: &webkit2gtk::Settings,
    identifier: &str,
    enabled: bool,
) -> Option<bool> {
    feature_with(identifier, |feature| {
        let raw: *mut webkit2gtk::ffi::WebKitSettings = settings.to_glib_none().0;
        // SAFETY: `raw` is a live WebKitSettings (`settings` holds a reference) and `feature` a
        // live entry of a feature list `feature_with` keeps alive for this call.
        unsafe {
            webkit_settings_set_feature_enabled(raw, feature, glib::ffi::gboolean::from(enabled));
            webkit_settings_get_feature_enabled(raw, feature) != 0
        }
    })
}

/// Whether WebKit feature `identifier` is enabled on `settings`; `None` if there is none.
#[allow(unsafe_code)]
pub(super) fn feature_enabled(settings: &webkit2gtk::Settings, identifier: &str) -> Option<bool> {
    feature_with(identifier, |feature| {
        let raw: *mut webkit2gtk::ffi::WebKitSettings = settings.to_glib_none().0;
        // SAFETY: as in `set_feature_enabled`.
        unsafe { webkit_settings_get_feature_enabled(raw, feature) != 0 }
    })
}

/// Runs `f` with WebKit's feature named `identifier`, while the list that holds it is alive.
#[allow(unsafe_code)]
fn feature_with<R>(identifier: &str, f: impl FnOnce(*mut WebKitFeature) -> R) -> Option<R> {
    // SAFETY: returns a new reference to a list of every feature (transfer full), never null;
    // it is released below.
    let list = unsafe { webkit_settings_get_all_features() };
    if list.is_null() {
        return None;
    }
    let mut found = None;
    // SAFETY: `list` is the live list from above.
    let length = unsafe { webkit_feature_list_get_length(list) };
    for index in 0..length {
        // SAFETY: `index` is below the list's length; the feature is owned by the list (transfer
        // none) and lives as long as it.
        let feature = unsafe { webkit_feature_list_get(list, index) };
        if feature.is_null() {
            continue;
        }
        // SAFETY: `feature` is live; the identifier is a NUL-terminated string it owns, read
        // before anything else happens to it.
        let id = unsafe { webkit_feature_get_identifier(feature) };
        if !id.is_null()
            && unsafe { std::ffi::CStr::from_ptr(id) }.to_bytes() == identifier.as_bytes()
        {
            found = Some(feature);
            break;
        }
    }
    let result = found.map(f);
    // SAFETY: releases the reference taken above; no feature pointer is used after this.
    unsafe { webkit_feature_list_unref(list) };
    result
}

/// `WebKitFeature`, opaque.
#[repr(C)]
struct WebKitFeature {
    _private: [u8; 0],
}

/// `WebKitFeatureList`, opaque.
#[repr(C)]
struct WebKitFeatureList {
    _private: [u8; 0],
}

// WebKitGTK 2.42 API (`webkit/WebKitFeature.h`, `webkit/WebKitSettings.h`), from the library the
// `webkit2gtk-sys` crate already links.
#[allow(unsafe_code)]
#[link(name = "webkit2gtk-4.1")]
extern "C" {
    fn webkit_settings_get_all_features() -> *mut WebKitFeatureList;
    fn webkit_feature_list_get_length(list: *mut WebKitFeatureList) -> usize;
    fn webkit_feature_list_get(list: *mut WebKitFeatureList, index: usize) -> *mut WebKitFeature;
    fn webkit_feature_list_unref(list: *mut WebKitFeatureList);
    fn webkit_feature_get_identifier(feature: *mut WebKitFeature) -> *const std::ffi::c_char;
    fn webkit_settings_set_feature_enabled(
        settings: *mut webkit2gtk::ffi::WebKitSettings,
        feature: *mut WebKitFeature,
        enabled: glib::ffi::gboolean,
    );
    fn webkit_settings_get_feature_enabled(
        settings: *mut webkit2gtk::ffi::WebKitSettings,
        feature: *mut WebKitFeature,
    ) -> glib::ffi::gboolean;
}
