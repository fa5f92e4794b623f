//! How Surface webviews are configured and where they are placed.

use std::time::Duration;

use lineup_host_core::LanguageTag;

/// Settings shared by every Surface webview of a [`Shell`](crate::Shell).
///
/// The defaults are the hardened ones:
///
/// | setting | default |
/// | --- | --- |
/// | web inspector (devtools) | off, also in debug builds |
/// | WebKit's bubblewrap sandbox for web processes (R-SEC-8) | on |
/// | concurrent Surfaces | at most 16 |
/// | one IPC message from a page | at most 64 KiB, larger ones dropped and reported |
/// | one JSON-RPC message from an MCP App view | at most 4 MiB, larger ones dropped and reported |
/// | time the isolation probe may take | 20 s |
/// | network traffic of a Surface (R-SEC-3) | all of it sent to a proxy that refuses every connection |
/// | memory of a Surface's web process | 512 MiB, then the process is ended ([`ViewEvent::MemoryExceeded`](crate::ViewEvent::MemoryExceeded)) |
/// | language (`navigator.language`, `Intl`) | the environment's ([`language_from_environment`]) |
/// | text zoom | 1.0 (Ctrl± zoom keys stay off) |
///
/// Turning devtools on, or the web-process sandbox or the refusing network proxy off, weakens
/// isolation, so those sit behind [`ViewConfig::dangerous`].
///
/// ```
/// use lineup_webview_shell::ViewConfig;
/// let config = ViewConfig::default().with_max_views(4);
/// assert!(!config.devtools() && config.web_sandbox() && config.network_proxy());
/// let preview = config.dangerous().with_devtools();
/// assert!(preview.devtools());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ViewConfig {
    devtools: bool,
    web_sandbox: bool,
    network_proxy: bool,
    memory_limit_mib: u32,
    max_views: usize,
    max_ipc_bytes: usize,
    max_mcp_message_bytes: usize,
    probe_timeout: Duration,
    language: Option<LanguageTag>,
    text_zoom: f64,
    warm_pool: usize,
    /// The isolation probe's own proxy: a loopback listener that witnesses its page's traffic
    /// arriving at the proxy (R-SEC-3, R-SEC-8). `None` for every Surface view.
    probe_proxy: Option<u16>,
    /// No context gets the proxy settings although `network_proxy` is on: an engine that
    /// ignored them, for the probe's fail-closed test.
    proxy_ignored: bool,
}

// `text_zoom` is always finite (see `with_text_zoom`), so equality is total.
impl Eq for ViewConfig {}

impl Default for ViewConfig {
    fn default() -> Self {
        Self {
            devtools: false,
            web_sandbox: true,
            network_proxy: true,
            memory_limit_mib: 512,
            max_views: 16,
            max_ipc_bytes: 64 * 1024,
            max_mcp_message_bytes: 4 * 1024 * 1024,
            probe_timeout: Duration::from_secs(20),
            language: None,
            text_zoom: 1.0,
            warm_pool: 0,
            probe_proxy: None,
            proxy_ignored: false,
        }
    }
}

impl ViewConfig {
    /// The hardened defaults listed above.
    pub fn new() -> Self {
        Self::default()
    }

    /// At most `max` Surfaces open at once; each one is a web process.
    pub fn with_max_views(mut self, max: usize) -> Self {
        self.max_views = max;
        self
    }

    /// IPC messages longer than `max` bytes are dropped and reported as
    /// [`ViewEvent::IpcTooLarge`](crate::ViewEvent::IpcTooLarge).
    pub fn with_max_ipc_bytes(mut self, max: usize) -> Self {
        self.max_ipc_bytes = max;
        self
    }

    /// JSON-RPC messages an MCP App view posts whose JSON text is longer than `max` bytes are
    /// dropped by its relay and reported as [`McpDrop::TooLarge`](crate::McpDrop::TooLarge)
    /// (R-MCP-6, R-MCP-7); the host passes its `Limits::max_mcp_message_bytes`. The bound of the
    /// Surface bridge's IPC messages is [`ViewConfig::with_max_ipc_bytes`]'s.
    pub fn with_max_mcp_message_bytes(mut self, max: usize) -> Self {
        self.max_mcp_message_bytes = max;
        self
    }

    /// The memory ceiling of each Surface's web process, in MiB (at least 1): a web process whose
    /// footprint passes it is ended and its view reports
    /// [`ViewEvent::MemoryExceeded`](crate::ViewEvent::MemoryExceeded).
    ///
    /// ## Platform-specific
    /// Linux: WebKit's memory-pressure settings of the view's context (limit, kill threshold 1.0,
    /// polled twice a second).
    pub fn with_memory_limit_mib(mut self, mib: u32) -> Self {
        self.memory_limit_mib = mib.max(1);
        self
    }

    /// Keeps `views` blank, isolated webviews started ahead of the Surfaces that will use them
    /// (#12): each with its own ephemeral context and sandboxed web process, already loading its
    /// own future document URL, whose request is held until a Surface takes the view and binds
    /// its server. A pool view is used once and never reused; it counts toward
    /// [`ViewConfig::max_views`] (the process cap) with the open views, and is refilled one per
    /// idle turn of the event loop. 0 (the default) disables the pool; each pool view costs a
    /// web process (about 70–80 MiB PSS) while it waits. Pool views are placed as the
    /// [`Shell::fill_pool`](crate::Shell::fill_pool) caller says: in windows of their own, or
    /// hidden child views of the embedder's window, which only child placements take.
    pub fn with_warm_pool(mut self, views: usize) -> Self {
        self.warm_pool = views;
        self
    }

    /// How many blank, isolated views are kept started for the next Surfaces (0: none); see
    /// [`ViewConfig::with_warm_pool`].
    pub fn warm_pool(&self) -> usize {
        self.warm_pool
    }

    /// How long the isolation probe may take before it counts as failed (R-SEC-8).
    pub fn with_probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// The language every Surface sees as `navigator.language`, `navigator.languages` and
    /// `Intl`'s default locale (R-UI-11); by default the environment's
    /// ([`language_from_environment`]).
    ///
    /// ## Platform-specific
    /// Linux: the preferred languages of each Surface's own web context, set before its first
    /// load.
    pub fn with_language(mut self, language: LanguageTag) -> Self {
        self.language = Some(language);
        self
    }

    /// Scales the text of every Surface by `factor` (zoom text only; the layout's CSS pixels
    /// stay), clamped to 0.25 ..= 5.0; anything but a finite number leaves 1.0. The user's Ctrl±
    /// zoom keys stay off.
    ///
    /// ## Platform-specific
    /// Linux: WebKit's `zoom-text-only` setting and the view's zoom level.
    pub fn with_text_zoom(mut self, factor: f64) -> Self {
        self.text_zoom = if factor.is_finite() {
            factor.clamp(0.25, 5.0)
        } else {
            1.0
        };
        self
    }

    /// The language set with [`ViewConfig::with_language`], if any.
    pub fn language(&self) -> Option<&LanguageTag> {
        self.language.as_ref()
    }

    /// The language Surfaces get: the one set, else the environment's.
    pub fn effective_language(&self) -> LanguageTag {
        self.language
            .clone()
            .unwrap_or_else(language_from_environment)
    }

    /// The text zoom factor.
    pub fn text_zoom(&self) -> f64 {
        self.text_zoom
    }

    /// The settings that weaken isolation.
    pub fn dangerous(self) -> DangerousViewConfig {
        DangerousViewConfig(self)
    }

    /// Whether the web inspector is enabled.
    pub fn devtools(&self) -> bool {
        self.devtools
    }

    /// Whether web processes run in WebKit's bubblewrap sandbox.
    pub fn web_sandbox(&self) -> bool {
        self.web_sandbox
    }

    /// Whether every network request of a Surface goes to a proxy that refuses it (R-SEC-3).
    pub fn network_proxy(&self) -> bool {
        self.network_proxy
    }

    /// This configuration with the network proxy at loopback `port` instead of the refusing
    /// endpoint: for the isolation probe's view alone, whose proxy is a listener it owns.
    pub(crate) fn with_probe_proxy(mut self, port: u16) -> Self {
        self.probe_proxy = Some(port);
        self
    }

    /// The probe's proxy port, if this is the probe's configuration.
    pub(crate) fn probe_proxy(&self) -> Option<u16> {
        self.probe_proxy
    }

    /// Whether the contexts get the proxy settings: `network_proxy` on and not ignored.
    pub(crate) fn proxy_applied(&self) -> bool {
        self.network_proxy && !self.proxy_ignored
    }

    /// The memory ceiling of each Surface's web process, in MiB.
    pub fn memory_limit_mib(&self) -> u32 {
        self.memory_limit_mib
    }

    /// The maximum number of Surfaces open at once.
    pub fn max_views(&self) -> usize {
        self.max_views
    }

    /// The maximum length of one IPC message, in bytes.
    pub fn max_ipc_bytes(&self) -> usize {
        self.max_ipc_bytes
    }

    /// The maximum length of one JSON-RPC message from an MCP App view, in bytes.
    pub fn max_mcp_message_bytes(&self) -> usize {
        self.max_mcp_message_bytes
    }

    /// How long the isolation probe may take.
    pub fn probe_timeout(&self) -> Duration {
        self.probe_timeout
    }
}

/// The settings of a [`ViewConfig`] that weaken isolation, reached through
/// [`ViewConfig::dangerous`] so that a reviewer can grep for them.
#[derive(Clone, Debug)]
pub struct DangerousViewConfig(ViewConfig);

impl DangerousViewConfig {
    /// Enables the web inspector (R-SEC-2 allows it in preview mode only).
    pub fn with_devtools(self) -> ViewConfig {
        ViewConfig {
            devtools: true,
            ..self.0
        }
    }

    /// Keeps the refusing network proxy on in name, so the isolation probe runs its network
    /// check, but gives no context the proxy settings: what an engine that ignored them would do
    /// (R-SEC-3). The probe then fails and no Surface is served (R-SEC-8); only for the test that
    /// shows it does.
    pub fn ignoring_network_proxy(self) -> ViewConfig {
        ViewConfig {
            proxy_ignored: true,
            ..self.0
        }
    }

    /// Runs web processes outside WebKit's bubblewrap sandbox (R-SEC-8).
    pub fn without_web_sandbox(self) -> ViewConfig {
        ViewConfig {
            web_sandbox: false,
            ..self.0
        }
    }

    /// Lets Surfaces reach the network layer directly, without the proxy that refuses every
    /// connection (R-SEC-3): speculative connections (`preconnect`, link clicks) and host-name
    /// lookups then leave the host. Only for tests that prove a leak would be seen (a positive
    /// control).
    pub fn without_network_proxy(self) -> ViewConfig {
        ViewConfig {
            network_proxy: false,
            ..self.0
        }
    }
}

/// The language of this process's environment as a BCP 47 tag (R-UI-11): the first set of
/// `LC_ALL`, `LC_MESSAGES` and `LANG` mapped by [`LanguageTag::from_locale`]
/// (`de_DE.UTF-8@euro` → `de-DE`), and `en` under the POSIX locale (`C`, `POSIX`, `C.UTF-8`) or
/// when none is set, where WebKitGTK would otherwise report `C` and `Intl` would throw on it.
pub fn language_from_environment() -> LanguageTag {
    let var = |name: &str| std::env::var(name).ok();
    LanguageTag::from_locale_variables(
        var("LC_ALL").as_deref(),
        var("LC_MESSAGES").as_deref(),
        var("LANG").as_deref(),
    )
}

/// The colour scheme Surfaces see as `prefers-color-scheme` (R-UI-11).
///
/// ## Platform-specific
/// Linux: WebKitGTK follows GTK's **process-wide** `gtk-application-prefer-dark-theme` setting,
/// so [`Theme::Dark`] and [`Theme::Light`] set it for the whole process: the embedder's own GTK
/// windows switch to their theme's dark (or regular) variant too, and a desktop theme whose name
/// ends in `-dark` still reads as dark under [`Theme::Light`]. [`Theme::System`] leaves the
/// setting alone, except under an inverse high-contrast theme (`HighContrastInverse`), a dark
/// theme that WebKit alone would read as light: then it asks for dark.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Theme {
    /// Whatever the desktop says (the default).
    #[default]
    System,
    /// `prefers-color-scheme: light`.
    Light,
    /// `prefers-color-scheme: dark`.
    Dark,
}

/// Whether Surfaces get the high-contrast values of the host's CSS custom properties
/// (R-UI-11), read when each Surface opens.
///
/// A high-contrast document has `data-lineup-contrast="more"` on its root element and the
/// values of [`HIGH_CONTRAST_THEME_CSS`](lineup_surface_runtime::HIGH_CONTRAST_THEME_CSS).
///
/// ## Platform-specific
/// Linux: [`Contrast::System`] is high when GTK's theme is a high-contrast one (`HighContrast`,
/// `HighContrastInverse`, or `GTK_THEME` naming one), as GNOME's high-contrast switch sets it.
/// Under `HighContrastInverse` and [`Theme::System`], Surfaces get the dark high-contrast values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Contrast {
    /// Whatever the desktop says (the default), read at each open.
    #[default]
    System,
    /// The regular values.
    Normal,
    /// The high-contrast values.
    High,
}

/// A rectangle in logical pixels. For a child view or a component's area: relative to the top
/// left of the host's container in the parent window ([`HostContainer`](crate::HostContainer):
/// the app's, wherever it packed it, else the one the host packs into tao's default vbox).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rect {
    /// Distance from the left edge.
    pub x: i32,
    /// Distance from the top edge.
    pub y: i32,
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// Where a Surface webview lives.
#[derive(Debug)]
pub enum Placement<'a> {
    /// In a window of its own, which the view owns. A close request from the window manager is
    /// reported as [`ViewEvent::UserCloseRequested`](crate::ViewEvent::UserCloseRequested) and
    /// closes nothing by itself.
    Window {
        /// The window title, already sanitised by the caller (R-SEC-8).
        title: String,
        /// Inner width in logical pixels.
        width: u32,
        /// Inner height in logical pixels.
        height: u32,
    },
    /// As a child view inside a window the embedder owns, at `bounds`; the embedder calls
    /// [`SurfaceView::set_bounds`](crate::SurfaceView::set_bounds) when its layout changes.
    ///
    /// ## Platform-specific
    /// Linux: `parent` must have tao's default vbox (the default); the views are placed in a
    /// `gtk::Fixed` added to it, so this works on X11 and Wayland.
    Child {
        /// The window that holds the view.
        parent: &'a tao::window::Window,
        /// Where in it.
        bounds: Rect,
    },
}
