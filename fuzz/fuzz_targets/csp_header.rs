//! Fuzzes what reaches the Content-Security-Policy builder and the document assembly
//! (R-SEC-2, R-SEC-3, R-SEC-3a, R-UI-6a).
//!
//! The policy is built from typed directives; the one string it takes is the Surface's own
//! origin, `lineup-surface://<token>`, which the host makes from a `SurfaceToken`. So the target
//! feeds what a token, a language tag and a bundle can be: the first line is parsed as a token
//! (`SurfaceToken::try_from`; when refused, a token is made from the line's first 16 bytes),
//! the second as a language tag (`LanguageTag::try_from`, else `LanguageTag::from_locale`), the
//! third's first byte sets the options (own assets, own scripts, high contrast), and the rest,
//! split at 0xFF, is the bundle's html, css and js.
//!
//! Checks: no panic; an accepted token is 32 lowercase hex digits and an accepted language tag
//! letters, digits and `-` only; the header is one line, its directives exactly the strict
//! policy's in order, the own origin added to `img-src`, `style-src`, `font-src` and
//! `media-src` (and `script-src` with scripts) and nowhere else, so no `;`, quote or directive
//! can come from input; a bundle that passes `InlineBundle::new` assembles into a document
//! with its three parts in place, the language as the `<html>` element's `lang`, and the same
//! header.
#![no_main]

use lineup_host_core::{InlineBundle, LanguageTag};
use lineup_surface_runtime::{
    ContentSecurityPolicy, DocumentOptions, SurfaceDocument, SurfaceToken, SCHEME,
};

/// The strict policy's directives, in order (`surface-runtime/src/csp.rs`).
const STRICT: [&str; 12] = [
    "default-src 'none'",
    "script-src 'unsafe-inline'",
    "style-src 'unsafe-inline'",
    "img-src data: blob:",
    "connect-src 'none'",
    "frame-src 'none'",
    "child-src 'none'",
    "worker-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "sandbox allow-scripts",
];

/// The header `value` must be: the strict directives, `origin` added where it belongs.
fn expected(origin: Option<&str>, scripts: bool) -> String {
    let mut out: Vec<String> = Vec::new();
    for directive in STRICT {
        let name = directive.split(' ').next().unwrap_or_default();
        match origin {
            Some(o)
                if matches!(name, "img-src" | "style-src") || (name == "script-src" && scripts) =>
            {
                out.push(format!("{directive} {o}"));
            }
            _ => out.push(directive.to_owned()),
        }
        if let (Some(o), "img-src") = (origin, name) {
            out.push(format!("font-src {o}"));
            out.push(format!("media-src {o}"));
        }
    }
    out.join("; ")
}

fn token(line: &str) -> SurfaceToken {
    match SurfaceToken::try_from(line) {
        Ok(token) => {
            assert_eq!(token.as_str(), line);
            assert!(
                line.len() == 32 && line.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
                "token {line:?} was accepted"
            );
            token
        }
        Err(_) => {
            let mut bytes = [0u8; 16];
            for (b, from) in bytes.iter_mut().zip(line.bytes()) {
                *b = from;
            }
            SurfaceToken::from_random_bytes(bytes)
        }
    }
}

fn language(line: &str) -> Option<LanguageTag> {
    let tag = LanguageTag::try_from(line)
        .ok()
        .or_else(|| LanguageTag::from_locale(line))?;
    let text = tag.to_string();
    assert!(
        !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'),
        "language tag {text:?} from {line:?}"
    );
    Some(tag)
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut lines = data.splitn(4, |&b| b == b'\n');
    let token_line = String::from_utf8_lossy(lines.next().unwrap_or_default()).into_owned();
    let language_line = String::from_utf8_lossy(lines.next().unwrap_or_default()).into_owned();
    let flags = lines.next().and_then(|l| l.first().copied()).unwrap_or(0);
    let rest = lines.next().unwrap_or_default();

    let token = token(&token_line);
    let origin = format!("{SCHEME}://{token}");
    let (own_assets, own_scripts, high_contrast) = (flags & 1 != 0, flags & 2 != 0, flags & 4 != 0);

    let mut csp = ContentSecurityPolicy::strict();
    if own_assets {
        csp = csp.with_own_assets(&origin);
    }
    if own_scripts {
        csp = csp.with_own_scripts();
    }
    let header = csp.header_value();
    assert_eq!(
        header,
        expected(own_assets.then_some(origin.as_str()), own_scripts)
    );
    assert!(!header.contains(['\r', '\n', '\0', ',']), "{header:?}");

    let mut options = DocumentOptions::default().with_high_contrast(high_contrast);
    let language = language(&language_line);
    if let Some(tag) = &language {
        options = options.with_language(tag.clone());
    }
    if own_assets {
        options = options.with_own_assets(&origin);
    }
    if own_scripts {
        options = options.with_own_scripts();
    }
    assert_eq!(
        options.csp().map(ContentSecurityPolicy::header_value),
        Some(header.clone())
    );

    let mut parts = rest.splitn(3, |&b| b == 0xFF);
    let mut part = || String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let (html, css, js) = (part(), part(), part());
    let Ok(bundle) = InlineBundle::new(html.clone(), css.clone(), js.clone()) else {
        return;
    };
    let document = SurfaceDocument::assemble(&bundle, &options);
    let page = document.html();
    let open = match &language {
        Some(tag) => format!("<!DOCTYPE html><html lang=\"{tag}\""),
        None => "<!DOCTYPE html><html".to_owned(),
    };
    assert!(page.starts_with(&open), "{open:?}");
    assert!(page.ends_with(&format!("<script>{js}</script></body></html>")));
    assert!(page.contains(&format!("<style>{css}</style></head><body>{html}<script>")));
    let served: Vec<(&str, &str)> = document
        .headers()
        .iter()
        .map(|(n, v)| (*n, v.as_str()))
        .collect();
    assert!(served.contains(&("Content-Security-Policy", header.as_str())));
    for (name, value) in served {
        assert!(!value.contains(['\r', '\n', '\0']), "{name}: {value:?}");
    }
});
