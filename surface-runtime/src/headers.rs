//! The security headers every response of a Surface's scheme carries, in a stable order
//! (R-SEC-2, R-SEC-3).

use crate::csp::ContentSecurityPolicy;

/// The `Content-Type` of a Surface document, served as UTF-8 (R-UI-6a).
pub(crate) const HTML_UTF8: &str = "text/html; charset=utf-8";

/// The `Content-Type` of the scheme's short error bodies.
pub(crate) const TEXT_UTF8: &str = "text/plain; charset=utf-8";

/// Powerful features no Surface may use: each is written `feature=()`, an empty allowlist
/// (R-SEC-2: no camera, microphone, geolocation, clipboard read, …).
const DENIED_FEATURES: &[&str] = &[
    "camera",
    "microphone",
    "geolocation",
    "display-capture",
    "clipboard-read",
    "clipboard-write",
    "payment",
    "usb",
    "serial",
    "bluetooth",
    "hid",
    "midi",
    "fullscreen",
    "autoplay",
    "accelerometer",
    "ambient-light-sensor",
    "gyroscope",
    "magnetometer",
    "encrypted-media",
    "gamepad",
    "idle-detection",
    "local-fonts",
    "picture-in-picture",
    "publickey-credentials-create",
    "publickey-credentials-get",
    "screen-wake-lock",
    "storage-access",
    "web-share",
    "window-management",
    "xr-spatial-tracking",
];

/// The `Permissions-Policy` value: every feature of [`DENIED_FEATURES`] with an empty allowlist.
fn permissions_policy() -> String {
    let mut out = String::new();
    for (i, feature) in DENIED_FEATURES.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(feature);
        out.push_str("=()");
    }
    out
}

/// The headers of an asset of type `mime`: as [`security_headers`] with the strict policy,
/// except `Cross-Origin-Resource-Policy: cross-origin`, since the document that loads it has an
/// opaque origin (R-SEC-3a).
pub(crate) fn security_headers_for(mime: &str) -> Vec<(&'static str, String)> {
    let mut headers = security_headers(TEXT_UTF8, Some(&ContentSecurityPolicy::strict()));
    for (name, value) in &mut headers {
        match *name {
            "Content-Type" => *value = mime.to_owned(),
            "Cross-Origin-Resource-Policy" => *value = "cross-origin".to_owned(),
            _ => {}
        }
    }
    headers
}

/// The headers of one response, in order: `Content-Type`, `Content-Security-Policy` (when `csp`
/// is given), then the fixed security headers.
pub(crate) fn security_headers(
    content_type: &'static str,
    csp: Option<&ContentSecurityPolicy>,
) -> Vec<(&'static str, String)> {
    let mut headers = vec![("Content-Type", content_type.to_owned())];
    if let Some(csp) = csp {
        headers.push(("Content-Security-Policy", csp.header_value()));
    }
    headers.extend([
        ("X-Content-Type-Options", "nosniff".to_owned()),
        ("Referrer-Policy", "no-referrer".to_owned()),
        ("Cache-Control", "no-store".to_owned()),
        ("Permissions-Policy", permissions_policy()),
        ("Cross-Origin-Opener-Policy", "same-origin".to_owned()),
        ("Cross-Origin-Resource-Policy", "same-origin".to_owned()),
    ]);
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_sec_2_permissions_policy_golden() {
        assert_eq!(
            permissions_policy(),
            "camera=(), microphone=(), geolocation=(), display-capture=(), clipboard-read=(), \
             clipboard-write=(), payment=(), usb=(), serial=(), bluetooth=(), hid=(), midi=(), \
             fullscreen=(), autoplay=(), accelerometer=(), ambient-light-sensor=(), gyroscope=(), \
             magnetometer=(), encrypted-media=(), gamepad=(), idle-detection=(), local-fonts=(), \
             picture-in-picture=(), publickey-credentials-create=(), publickey-credentials-get=(), \
             screen-wake-lock=(), storage-access=(), web-share=(), window-management=(), \
             xr-spatial-tracking=()"
        );
    }

    #[test]
    fn r_sec_2_header_names_are_unique_and_ordered() {
        let csp = ContentSecurityPolicy::strict();
        let names: Vec<&str> = security_headers(TEXT_UTF8, Some(&csp))
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(
            names,
            [
                "Content-Type",
                "Content-Security-Policy",
                "X-Content-Type-Options",
                "Referrer-Policy",
                "Cache-Control",
                "Permissions-Policy",
                "Cross-Origin-Opener-Policy",
                "Cross-Origin-Resource-Policy",
            ]
        );
        let without: Vec<&str> = security_headers(TEXT_UTF8, None)
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert!(!without.contains(&"Content-Security-Policy"));
        assert_eq!(without.len(), names.len() - 1);
    }
}
