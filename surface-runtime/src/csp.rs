//! The Content-Security-Policy a Surface document is served with (R-SEC-2, R-SEC-3), built from
//! typed directives in a stable order.

/// A source expression of a fetch directive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// `'none'`: nothing may be loaded.
    None,
    /// `'unsafe-inline'`: inline `<script>`/`<style>` elements, which is how a Surface ships its code.
    UnsafeInline,
    /// `data:` URLs.
    Data,
    /// `blob:` URLs the page made itself.
    Blob,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Source::None => "'none'",
            Source::UnsafeInline => "'unsafe-inline'",
            Source::Data => "data:",
            Source::Blob => "blob:",
        }
    }
}

/// What a directive governs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    DefaultSrc,
    ScriptSrc,
    StyleSrc,
    ImgSrc,
    FontSrc,
    MediaSrc,
    ConnectSrc,
    FrameSrc,
    ChildSrc,
    WorkerSrc,
    ObjectSrc,
    BaseUri,
    FormAction,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::DefaultSrc => "default-src",
            Kind::ScriptSrc => "script-src",
            Kind::StyleSrc => "style-src",
            Kind::ImgSrc => "img-src",
            Kind::FontSrc => "font-src",
            Kind::MediaSrc => "media-src",
            Kind::ConnectSrc => "connect-src",
            Kind::FrameSrc => "frame-src",
            Kind::ChildSrc => "child-src",
            Kind::WorkerSrc => "worker-src",
            Kind::ObjectSrc => "object-src",
            Kind::BaseUri => "base-uri",
            Kind::FormAction => "form-action",
        }
    }
}

/// A flag of the `sandbox` directive that lifts one of its restrictions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SandboxAllow {
    /// `allow-scripts`: the only one a Surface gets (R-SEC-2).
    Scripts,
}

impl SandboxAllow {
    fn as_str(self) -> &'static str {
        match self {
            SandboxAllow::Scripts => "allow-scripts",
        }
    }
}

/// One directive of the policy.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Directive {
    /// A fetch or document directive with its source list.
    Sources(Kind, &'static [Source]),
    /// `sandbox` with the restrictions it lifts: an opaque origin, no forms, no popups, no top
    /// navigation (R-SEC-2).
    Sandbox(&'static [SandboxAllow]),
}

impl Directive {
    fn write(&self, out: &mut String) {
        let (name, values): (&str, &mut dyn Iterator<Item = &str>) = match self {
            Directive::Sources(kind, sources) => {
                (kind.as_str(), &mut sources.iter().map(|s| s.as_str()))
            }
            Directive::Sandbox(allows) => ("sandbox", &mut allows.iter().map(|a| a.as_str())),
        };
        out.push_str(name);
        for value in values {
            out.push(' ');
            out.push_str(value);
        }
    }
}

/// A script every engine runs in every frame of a Surface before the page's own (R-SEC-3, host
/// choice): it removes the `WebAssembly` namespace. The policy has no `'wasm-unsafe-eval'`, so a
/// conforming engine refuses to compile a module, as it refuses `eval`; WebKitGTK 2.50 compiles
/// one anyway (measured by the kit's `ui-webassembly-blocked`), so the host takes the namespace
/// away. A frame cannot reach another frame's: each has an opaque origin of its own.
pub const WEBASSEMBLY_GUARD_JS: &str = "delete globalThis.WebAssembly;";

/// The strict policy's directives, in the order they are written (R-SEC-2, R-SEC-3).
const STRICT: &[Directive] = {
    use Kind::*;
    use Source as S;
    &[
        Directive::Sources(DefaultSrc, &[S::None]),
        Directive::Sources(ScriptSrc, &[S::UnsafeInline]),
        Directive::Sources(StyleSrc, &[S::UnsafeInline]),
        Directive::Sources(ImgSrc, &[S::Data, S::Blob]),
        // No `font-src` and no `media-src` for an inline Surface: `default-src 'none'` closes
        // both (font and media decoders are attack surface, R-SEC-3); an installed app gets its
        // own host for both (R-SEC-3a, `with_own_assets`).
        Directive::Sources(ConnectSrc, &[S::None]),
        Directive::Sources(FrameSrc, &[S::None]),
        Directive::Sources(ChildSrc, &[S::None]),
        Directive::Sources(WorkerSrc, &[S::None]),
        Directive::Sources(ObjectSrc, &[S::None]),
        Directive::Sources(BaseUri, &[S::None]),
        Directive::Sources(FormAction, &[S::None]),
        Directive::Sandbox(&[SandboxAllow::Scripts]),
    ]
};

/// Content-Security-Policy built from typed directives in a stable order.
///
/// [`strict`](Self::strict), the default, allows inline scripts and styles and `data:`/`blob:`
/// images, and nothing else: no fonts or media at all, no network, no frames, no workers, no
/// plugins, no `<base>`, no forms; `sandbox allow-scripts` gives the document an opaque origin
/// (R-SEC-2, R-SEC-3). It is only ever served as a response header, which a page cannot remove.
///
/// ```
/// use lineup_surface_runtime::ContentSecurityPolicy;
/// let csp = ContentSecurityPolicy::default();
/// assert!(csp.header_value().starts_with("default-src 'none'; "));
/// assert!(csp.header_value().ends_with("; sandbox allow-scripts"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContentSecurityPolicy {
    directives: &'static [Directive],
    /// `lineup-surface://<token>`, added to the directives of passive content when the Surface
    /// has assets of its own (R-SEC-3a).
    own_assets: Option<String>,
    /// Whether `own_assets` also names a source of scripts (R-SEC-3a's script assets).
    own_scripts: bool,
}

impl ContentSecurityPolicy {
    /// The strict policy every Surface document is served with (R-SEC-2, R-SEC-3).
    pub fn strict() -> Self {
        Self {
            directives: STRICT,
            own_assets: None,
            own_scripts: false,
        }
    }

    /// This policy, also allowing images, fonts, style sheets and media from `origin`, the
    /// Surface's own scheme host `lineup-surface://<token>`, where its installed app's assets
    /// are served (R-SEC-3a). The document's origin is opaque (`sandbox`), so `'self'` would
    /// not name it; the token names this Surface alone. Scripts, connections and frames stay
    /// closed.
    ///
    /// ```
    /// use lineup_surface_runtime::ContentSecurityPolicy;
    /// let csp = ContentSecurityPolicy::strict().with_own_assets("lineup-surface://0a1b");
    /// assert!(csp.header_value().contains("; img-src data: blob: lineup-surface://0a1b; "));
    /// assert!(csp.header_value().contains("; connect-src 'none'; "));
    /// ```
    pub fn with_own_assets(mut self, origin: &str) -> Self {
        self.own_assets = Some(origin.to_owned());
        self
    }

    /// This policy, also allowing scripts from the Surface's own host where the assets are
    /// ([`with_own_assets`](Self::with_own_assets); no effect without it): an installed app's
    /// script assets, code signed with its package (R-SEC-3a). Only `script-src` changes:
    /// `'unsafe-eval'` stays out, so `eval`, `new Function` and string timers stay blocked for
    /// them as for inline code, and workers, connections and frames stay closed.
    ///
    /// ```
    /// use lineup_surface_runtime::ContentSecurityPolicy;
    /// let csp = ContentSecurityPolicy::strict()
    ///     .with_own_assets("lineup-surface://0a1b")
    ///     .with_own_scripts();
    /// assert!(csp.header_value().contains("; script-src 'unsafe-inline' lineup-surface://0a1b; "));
    /// assert!(!csp.header_value().contains("unsafe-eval"));
    /// assert!(csp.header_value().contains("; worker-src 'none'; "));
    /// ```
    pub fn with_own_scripts(mut self) -> Self {
        self.own_scripts = true;
        self
    }

    /// The value of the `Content-Security-Policy` header: directives joined by `"; "`.
    pub fn header_value(&self) -> String {
        let mut out = String::new();
        for (i, directive) in self.directives.iter().enumerate() {
            if i > 0 {
                out.push_str("; ");
            }
            directive.write(&mut out);
            if let (Directive::Sources(kind, _), Some(origin)) = (directive, &self.own_assets) {
                if matches!(kind, Kind::ImgSrc | Kind::StyleSrc)
                    || (*kind == Kind::ScriptSrc && self.own_scripts)
                {
                    out.push(' ');
                    out.push_str(origin);
                }
                // R-SEC-3a: fonts and media of an installed app come from its own host only.
                if *kind == Kind::ImgSrc {
                    for own in [Kind::FontSrc, Kind::MediaSrc] {
                        out.push_str("; ");
                        out.push_str(own.as_str());
                        out.push(' ');
                        out.push_str(origin);
                    }
                }
            }
        }
        out
    }
}

impl Default for ContentSecurityPolicy {
    /// [`ContentSecurityPolicy::strict`].
    fn default() -> Self {
        Self::strict()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_sec_3_strict_csp_golden() {
        assert_eq!(
            ContentSecurityPolicy::strict().header_value(),
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
             img-src data: blob:; connect-src 'none'; \
             frame-src 'none'; child-src 'none'; worker-src 'none'; object-src 'none'; \
             base-uri 'none'; form-action 'none'; sandbox allow-scripts"
        );
        assert_eq!(
            ContentSecurityPolicy::default(),
            ContentSecurityPolicy::strict()
        );
    }

    /// R-SEC-3 names a minimum; the strict policy must contain each part of it.
    #[test]
    fn r_sec_3_strict_csp_contains_the_required_minimum() {
        let value = ContentSecurityPolicy::strict().header_value();
        let directives: Vec<&str> = value.split("; ").collect();
        for required in [
            "default-src 'none'",
            "connect-src 'none'",
            "img-src data: blob:",
            "style-src 'unsafe-inline'",
            "script-src 'unsafe-inline'",
        ] {
            assert!(directives.contains(&required), "missing {required:?}");
        }
    }

    /// R-SEC-3, R-SEC-3a: each kind exactly. Inline = the spec minimum plus the host's stricter
    /// extras (no frames, workers, plugins, `<base>`, forms; `sandbox allow-scripts`), with no
    /// `font-src` or `media-src`; installed = that plus its own host for images, fonts, style
    /// sheets and media, and nothing else.
    #[test]
    fn r_sec_3_each_kind_exactly() {
        let extras = [
            "frame-src 'none'",
            "child-src 'none'",
            "worker-src 'none'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'none'",
            "sandbox allow-scripts",
        ];
        let mut inline = vec![
            "default-src 'none'",
            "script-src 'unsafe-inline'",
            "style-src 'unsafe-inline'",
            "img-src data: blob:",
            "connect-src 'none'",
        ];
        inline.extend(extras);
        let value = ContentSecurityPolicy::strict().header_value();
        let mut got: Vec<&str> = value.split("; ").collect();
        got.sort_unstable();
        let mut want = inline.clone();
        want.sort_unstable();
        assert_eq!(got, want);
        assert!(!value.contains("font-src") && !value.contains("media-src"));

        let own = "lineup-surface://0a1b";
        let value = ContentSecurityPolicy::strict()
            .with_own_assets(own)
            .header_value();
        let mut got: Vec<&str> = value.split("; ").collect();
        got.sort_unstable();
        let mut want: Vec<String> = inline
            .iter()
            .map(|d| match *d {
                "style-src 'unsafe-inline'" => format!("{d} {own}"),
                "img-src data: blob:" => format!("{d} {own}"),
                _ => (*d).to_owned(),
            })
            .collect();
        want.push(format!("font-src {own}"));
        want.push(format!("media-src {own}"));
        want.sort_unstable();
        assert_eq!(got, want);

        // With script assets: that, and its own host for scripts, and nothing else.
        let value = ContentSecurityPolicy::strict()
            .with_own_assets(own)
            .with_own_scripts()
            .header_value();
        let mut got: Vec<&str> = value.split("; ").collect();
        got.sort_unstable();
        let want: Vec<String> = want
            .into_iter()
            .map(|d| {
                if d == "script-src 'unsafe-inline'" {
                    format!("{d} {own}")
                } else {
                    d
                }
            })
            .collect();
        assert_eq!(got, want);
        // Without own assets, scripts get no host.
        assert_eq!(
            ContentSecurityPolicy::strict()
                .with_own_scripts()
                .header_value(),
            ContentSecurityPolicy::strict().header_value()
        );
    }

    /// R-SEC-2: the header's sandbox gives an opaque origin and lifts nothing but scripts.
    #[test]
    fn r_sec_2_sandbox_allows_scripts_only() {
        let value = ContentSecurityPolicy::strict().header_value();
        let sandbox: Vec<&str> = value
            .split("; ")
            .filter(|d| d.starts_with("sandbox"))
            .collect();
        assert_eq!(sandbox, ["sandbox allow-scripts"]);
        assert!(!value.contains("allow-same-origin"));
        assert!(!value.contains("unsafe-eval"));
    }
}
