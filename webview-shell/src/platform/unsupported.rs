//! Platforms without a Surface webview yet: every constructor returns
//! [`ShellError::Unsupported`], nothing pretends to work.

use std::collections::HashSet;
use std::convert::Infallible;

use crate::windows::WindowMaker;
use lineup_surface_runtime::{SurfaceDocument, SurfaceServer};
use tao::event::WindowEvent;
use tao::window::{Window, WindowId};

use crate::config::{Placement, Rect, Theme, ViewConfig};
use crate::error::ShellError;
use crate::event::ViewEvent;
use crate::hardening::Hardening;

const UNSUPPORTED: &str = "surface webviews need WebKitGTK, so Linux, for now";

/// Never constructed.
pub(crate) struct PlatformView {
    never: Infallible,
}

impl PlatformView {
    pub(crate) fn new(
        _target: &dyn WindowMaker,
        _server: SurfaceServer,
        _config: &ViewConfig,
        _placement: Placement<'_>,
        _start: crate::view_start::ViewStart,
        _sink: Box<dyn Fn(ViewEvent)>,
        _gate: std::rc::Rc<crate::gate::Gate>,
    ) -> Result<Self, ShellError> {
        Err(ShellError::Unsupported(UNSUPPORTED))
    }

    pub(crate) fn url(&self) -> &str {
        match self.never {}
    }

    pub(crate) fn deliver_state(&self, _state_json: &str) -> Result<(), ShellError> {
        match self.never {}
    }

    pub(crate) fn post_to_mcp_view(&self, _json: &str) -> Result<(), ShellError> {
        match self.never {}
    }

    pub(crate) fn delivery_stats(&self) -> crate::DeliveryStats {
        match self.never {}
    }

    pub(crate) fn restore_document(&self) -> Result<(), ShellError> {
        match self.never {}
    }

    pub(crate) fn replace_document(&self, _document: SurfaceDocument) -> Result<(), ShellError> {
        match self.never {}
    }

    pub(crate) fn snapshot_png(&self, _done: Box<dyn FnOnce(Result<Vec<u8>, ShellError>)>) {
        match self.never {}
    }

    pub(crate) fn screen_pixels(&self) -> Result<crate::WindowPixels, ShellError> {
        match self.never {}
    }

    pub(crate) fn presses(&self) -> u64 {
        match self.never {}
    }

    pub(crate) fn ping(&self, _done: Box<dyn FnOnce()>) {
        match self.never {}
    }

    pub(crate) fn when_drawn(&self, _done: Box<dyn FnOnce()>) {
        match self.never {}
    }

    pub(crate) fn web_process_responsive(&self) -> bool {
        match self.never {}
    }

    pub(crate) fn terminate_web_process(&self) {
        match self.never {}
    }

    pub(crate) fn window_bounds(&self) -> Option<Rect> {
        match self.never {}
    }

    pub(crate) fn set_visible(&self, _visible: bool) {
        match self.never {}
    }

    pub(crate) fn set_bounds(&self, _bounds: Rect) -> Result<(), ShellError> {
        match self.never {}
    }

    pub(crate) fn window(&self) -> Option<&Window> {
        match self.never {}
    }

    pub(crate) fn handle_window_event(&self, _id: WindowId, _event: &WindowEvent<'_>) -> bool {
        match self.never {}
    }

    pub(crate) fn hardening(&self) -> Hardening {
        match self.never {}
    }

    pub(crate) fn close(self) {
        match self.never {}
    }
}

pub(crate) fn web_processes() -> HashSet<u32> {
    HashSet::new()
}

pub(crate) fn check_web_processes_sandboxed(_pids: &HashSet<u32>) -> crate::probe::SandboxCheck {
    crate::probe::SandboxCheck::Failed(UNSUPPORTED.to_owned())
}

pub fn check_display() -> Result<(), ShellError> {
    Err(ShellError::Unsupported(UNSUPPORTED))
}

/// Never: there is no display support on this platform yet.
pub fn open_display() -> Result<(), ShellError> {
    Err(ShellError::Unsupported(UNSUPPORTED))
}

const PROMPT_UNSUPPORTED: &str = "the built-in consent prompt needs WebKitGTK, so Linux, for now";

/// The window a prompt is attached to: nothing to keep where there is no prompt.
pub(crate) struct PromptParent;

impl PromptParent {
    pub(crate) fn of(_window: &tao::window::Window) -> Self {
        Self
    }
}

/// Never constructed: the built-in consent prompt's window.
pub(crate) struct PlatformPrompt {
    never: Infallible,
}

impl PlatformPrompt {
    pub(crate) fn supported() -> Result<(), ShellError> {
        Err(ShellError::Unsupported(PROMPT_UNSUPPORTED))
    }

    pub(crate) fn new(
        _document: crate::trusted::TrustedDocument,
        _options: &crate::prompt::PromptOptions,
        _parent: Option<&PromptParent>,
        _request: &crate::PromptContent,
        _withdrawal: crate::consent::ConsentHandle,
        _on_outcome: Box<dyn Fn(crate::prompt::PromptOutcome)>,
        _on_shown: Box<dyn FnOnce()>,
    ) -> Result<Self, ShellError> {
        Err(ShellError::Unsupported(PROMPT_UNSUPPORTED))
    }

    pub(crate) fn accepts_input(&self) -> bool {
        match self.never {}
    }

    pub(crate) fn snapshot(&self, _done: Box<dyn FnOnce(Option<crate::prompt::PromptSnapshot>)>) {
        match self.never {}
    }

    #[cfg(feature = "test-controls")]
    pub(crate) fn plant_markup_for_test(&self, _html: &str) {
        match self.never {}
    }
}

/// A shared component process: none here.
#[derive(Clone)]
pub(crate) struct PlatformComponentProcess {
    never: Infallible,
}

impl PlatformComponentProcess {
    pub(crate) fn new() -> Result<Self, ShellError> {
        Err(ShellError::Unsupported(PROMPT_UNSUPPORTED))
    }
}

/// A component board: none here.
#[derive(Clone)]
pub(crate) struct PlatformBoard {
    never: Infallible,
}

/// Where a board's view goes (the Linux variants; none is built here).
pub(crate) enum PlatformBoardPlace<'a> {
    /// A window of its own.
    Window {
        /// Its title.
        title: &'a str,
    },
    /// An embedder's window.
    Child {
        /// The window.
        parent: &'a tao::window::Window,
        /// Where.
        area: crate::config::Rect,
    },
}

impl PlatformBoard {
    pub(crate) fn new(
        _place: PlatformBoardPlace<'_>,
        _process: Option<&PlatformComponentProcess>,
        _options: &crate::components::ComponentOptions,
    ) -> Result<Self, ShellError> {
        Err(ShellError::Unsupported(PROMPT_UNSUPPORTED))
    }

    pub(crate) fn set_area(&self, _area: crate::config::Rect) {
        match self.never {}
    }

    pub(crate) fn set_visible(&self, _visible: bool) {
        match self.never {}
    }

    pub(crate) fn is_empty(&self) -> bool {
        match self.never {}
    }

    pub(crate) fn is_in_parent(&self) -> bool {
        match self.never {}
    }
}

/// Never constructed.
pub(crate) struct PlatformComponent {
    never: Infallible,
}

impl PlatformComponent {
    pub(crate) fn new(
        board: &PlatformBoard,
        _content: &crate::components::ComponentContent,
        _options: &crate::components::ComponentOptions,
        _on_action: std::rc::Rc<dyn Fn(crate::components::ComponentAction)>,
    ) -> Self {
        match board.never {}
    }

    pub(crate) fn snapshot(
        &self,
        _done: Box<dyn FnOnce(Option<crate::component_snapshot::ComponentSnapshot>)>,
    ) {
        match self.never {}
    }

    pub(crate) fn snapshot_png(&self, _done: Box<dyn FnOnce(Result<Vec<u8>, ShellError>)>) {
        match self.never {}
    }

    pub(crate) fn is_shown(&self) -> bool {
        match self.never {}
    }

    pub(crate) fn accepts_input(&self) -> bool {
        match self.never {}
    }

    pub(crate) fn update(
        &self,
        _state: &lineup_host_core::JsonObject,
        _markdown: Option<&lineup_host_core::SafeMarkdown>,
        _reopened: bool,
    ) {
        match self.never {}
    }

    pub(crate) fn lock(&self) {
        match self.never {}
    }

    pub(crate) fn restart_guard(&self, _why: &str) {
        match self.never {}
    }
}

pub fn apply_theme(_theme: Theme) {}

/// No desktop setting to read here: dark only when asked.
pub fn theme_is_dark(theme: Theme) -> bool {
    theme == Theme::Dark
}

/// No screen can be read back here: [`ShellError::Unsupported`].
pub fn screen_pixels_of(
    _window: &tao::window::Window,
) -> Result<crate::window_pixels::WindowPixels, ShellError> {
    Err(ShellError::Unsupported("reading the screen back"))
}

/// No window can be read back here: [`ShellError::Unsupported`].
pub fn window_pixels(
    _window: &tao::window::Window,
) -> Result<crate::window_pixels::WindowPixels, ShellError> {
    Err(ShellError::Unsupported("reading a window back"))
}

/// No desktop setting to read here: regular contrast unless the embedder asks.
pub fn desktop_high_contrast() -> bool {
    false
}

/// The built-ins' desktop: nothing here yet, so [`SystemDesktop`](crate::SystemDesktop) cannot
/// be built and every effect says so.
pub(crate) mod desktop {
    use crate::desktop::{ChooseFile, DesktopError, PickedFile, SaveFile, SaveLocation};
    use crate::error::ShellError;

    const UNSUPPORTED: &str = "the built-in capabilities' desktop needs GTK, so Linux, for now";

    pub(crate) fn supported() -> Result<(), ShellError> {
        Err(ShellError::Unsupported(UNSUPPORTED))
    }

    pub(crate) fn open_uri(_uri: &str) -> Result<(), DesktopError> {
        Err(DesktopError::Unsupported(UNSUPPORTED))
    }

    pub(crate) fn set_clipboard_text(_text: &str) -> Result<(), DesktopError> {
        Err(DesktopError::Unsupported(UNSUPPORTED))
    }

    pub(crate) fn choose_file(_request: &ChooseFile) -> Result<Option<PickedFile>, DesktopError> {
        Err(DesktopError::Unsupported(UNSUPPORTED))
    }

    pub(crate) fn choose_save_location(
        _request: &SaveFile,
    ) -> Result<Option<SaveLocation>, DesktopError> {
        Err(DesktopError::Unsupported(UNSUPPORTED))
    }
}

/// No container here: there are no child views to hold.
#[derive(Clone)]
pub(crate) struct PlatformContainer;

impl PlatformContainer {
    pub(crate) fn new() -> Self {
        Self
    }
}

/// No container, so nothing to watch.
pub(crate) fn watch_container(
    _parent: &tao::window::Window,
    _changed: Box<dyn Fn()>,
) -> Result<(), ShellError> {
    Ok(())
}

/// No container, so no size of one.
pub(crate) fn container_size(_parent: &tao::window::Window) -> Option<(u32, u32)> {
    None
}

/// No placeholder here: there are no child views to stand in for.
pub(crate) struct PlatformPlaceholder {
    never: std::convert::Infallible,
}

impl PlatformPlaceholder {
    pub(crate) fn new(
        _parent: &tao::window::Window,
        _pixels: &crate::window_pixels::WindowPixels,
        _bounds: crate::config::Rect,
    ) -> Result<Self, ShellError> {
        Err(ShellError::Unsupported("a placeholder for a child view"))
    }

    pub(crate) fn set_bounds(&self, _bounds: crate::config::Rect) {
        match self.never {}
    }
}

/// No activity notice window here: the embedder hears of each activity through its delegate.
#[derive(Default)]
pub(crate) struct PlatformNotice;

impl PlatformNotice {
    pub(crate) fn show(&mut self, _notice: &crate::notice::ActivityNotice) {}
}

/// Never constructed.
pub(crate) struct PlatformStandby {
    never: Infallible,
}

impl PlatformStandby {
    pub(crate) fn new(
        _parent: &Window,
        _screen: &crate::standby::StandbyScreen,
    ) -> Result<Self, ShellError> {
        Err(ShellError::Unsupported(UNSUPPORTED))
    }

    pub(crate) fn show(&self) {
        match self.never {}
    }

    pub(crate) fn show_notice(&self, _notice: &crate::notice::ActivityNotice) {
        match self.never {}
    }

    pub(crate) fn hide_later(&self) -> Box<dyn FnOnce()> {
        match self.never {}
    }

    pub(crate) fn set_status(&self, _status: &str) {
        match self.never {}
    }

    pub(crate) fn set_indicator(&self, _text: Option<&str>) {
        match self.never {}
    }
}

/// Never armed: there is no event loop support on this platform yet.
pub(crate) struct PlatformWakeTimer;

impl PlatformWakeTimer {
    pub(crate) fn new(_wake: std::rc::Rc<dyn Fn()>) -> Self {
        Self
    }

    pub(crate) fn arm(&self, _at: Option<std::time::Instant>) {}

    pub(crate) fn armed(&self) -> Option<std::time::Instant> {
        None
    }
}
