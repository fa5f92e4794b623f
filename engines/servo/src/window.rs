//! A Surface shown in a tao window: Servo draws the page in software, the window shows each
//! frame (through `softbuffer`, so no GL context is shared with GTK), and the window's pointer
//! and keys go to the page.

use std::num::NonZeroU32;
use std::rc::Rc;

use servo::{
    DevicePoint, InputEvent, Key, KeyState, KeyboardEvent, MouseButton, MouseButtonAction,
    MouseButtonEvent, MouseMoveEvent, NamedKey, RenderingContext, WebViewPoint,
};
use tao::event::{ElementState, MouseButton as TaoButton, WindowEvent};
use tao::event_loop::EventLoopWindowTarget;
use tao::keyboard::Key as TaoKey;
use tao::window::{Window, WindowBuilder, WindowId};

use crate::surface::ServoSurface;
use crate::ServoError;

/// A window of its own for one Surface.
pub struct SurfaceWindow {
    window: Rc<Window>,
    surface: softbuffer::Surface<Rc<Window>, Rc<Window>>,
    /// Where the pointer is, in device pixels of the page.
    pointer: std::cell::Cell<DevicePoint>,
    /// The last frame shown, RGBA top-down, to show again on an expose.
    frame: Option<servo::RgbaImage>,
    /// When a frame was last put on the window.
    shown_at: Option<std::time::Instant>,
}

/// How often the last frame is shown again when no new one came.
pub const RESHOW: std::time::Duration = std::time::Duration::from_millis(250);

impl SurfaceWindow {
    /// Opens a window of `width` × `height` (logical pixels, as the view was opened with).
    pub fn new<T: 'static>(
        target: &EventLoopWindowTarget<T>,
        title: &str,
        width: u32,
        height: u32,
    ) -> Result<Self, ServoError> {
        let window = WindowBuilder::new()
            .with_title(title)
            .with_inner_size(tao::dpi::PhysicalSize::new(width, height))
            .with_resizable(false)
            .build(target)
            .map_err(|e| ServoError::Engine(format!("window: {e}")))?;
        Self::from_window(window)
    }

    /// Shows the Surface in `window`, made by its owner (a host's shell).
    pub fn from_window(window: Window) -> Result<Self, ServoError> {
        let window = Rc::new(window);
        let context = softbuffer::Context::new(Rc::clone(&window))
            .map_err(|e| ServoError::Engine(format!("window buffer: {e}")))?;
        let surface = softbuffer::Surface::new(&context, Rc::clone(&window))
            .map_err(|e| ServoError::Engine(format!("window buffer: {e}")))?;
        Ok(Self {
            window,
            surface,
            pointer: std::cell::Cell::new(DevicePoint::new(0.0, 0.0)),
            frame: None,
            shown_at: None,
        })
    }

    /// The window the Surface is shown in.
    pub fn window(&self) -> &Rc<Window> {
        &self.window
    }

    /// The window's id, to route tao's events.
    pub fn id(&self) -> WindowId {
        self.window.id()
    }

    /// Reads the view's newest frame, if it drew one, and shows it; without a new frame, shows
    /// the last one again at most every [`RESHOW`] (an expose the window was not told of), so
    /// that a busy loop does not put the same pixels on the display at every turn.
    pub fn present(&mut self, view: &ServoSurface) -> Result<(), ServoError> {
        if view.take_frame_ready() {
            let context = view.rendering_context();
            // Every view draws into a context of its own: read from this one.
            let _ = context.make_current();
            let size = context.size();
            let rect = servo::DeviceIntRect::from_size(servo::DeviceIntSize::new(
                size.width as i32,
                size.height as i32,
            ));
            if let Some(image) = context.read_to_image(rect) {
                self.frame = Some(image);
            }
            context.present();
        } else if self.shown_at.is_some_and(|at| at.elapsed() < RESHOW) {
            return Ok(());
        }
        self.shown_at = Some(std::time::Instant::now());
        self.show()
    }

    /// Shows the last frame again (an expose).
    pub fn show(&mut self) -> Result<(), ServoError> {
        let Some(frame) = &self.frame else {
            return Ok(());
        };
        let (Some(width), Some(height)) = (
            NonZeroU32::new(frame.width()),
            NonZeroU32::new(frame.height()),
        ) else {
            return Ok(());
        };
        let fail =
            |e: softbuffer::SoftBufferError| ServoError::Engine(format!("window buffer: {e}"));
        self.surface.resize(width, height).map_err(fail)?;
        let mut buffer = self.surface.buffer_mut().map_err(fail)?;
        for (out, pixel) in buffer.iter_mut().zip(frame.pixels()) {
            let [r, g, b, _] = pixel.0;
            *out = (u32::from(r) << 16) | (u32::from(g) << 8) | u32::from(b);
        }
        buffer.present().map_err(fail)
    }

    /// The last frame shown, RGBA, top row first: what the window shows.
    pub fn frame(&self) -> Option<&servo::RgbaImage> {
        self.frame.as_ref()
    }

    /// Passes a window event to the page: pointer moves and buttons, keys. Returns whether it
    /// was this window's.
    pub fn handle_window_event(
        &mut self,
        view: &ServoSurface,
        window_id: WindowId,
        event: &WindowEvent<'_>,
    ) -> bool {
        if window_id != self.window.id() {
            return false;
        }
        let input = match event {
            WindowEvent::CursorMoved { position, .. } => {
                let point = DevicePoint::new(position.x as f32, position.y as f32);
                self.pointer.set(point);
                Some(InputEvent::MouseMove(MouseMoveEvent::new(
                    WebViewPoint::Device(point),
                )))
            }
            WindowEvent::MouseInput { state, button, .. } => {
                let action = match state {
                    ElementState::Pressed => MouseButtonAction::Down,
                    _ => MouseButtonAction::Up,
                };
                let button = match button {
                    TaoButton::Left => MouseButton::Primary,
                    TaoButton::Right => MouseButton::Secondary,
                    TaoButton::Middle => MouseButton::Auxiliary,
                    _ => return true,
                };
                Some(InputEvent::MouseButton(MouseButtonEvent::new(
                    action,
                    button,
                    WebViewPoint::Device(self.pointer.get()),
                )))
            }
            WindowEvent::KeyboardInput { event, .. } => key(&event.logical_key).map(|key| {
                let state = match event.state {
                    ElementState::Pressed => KeyState::Down,
                    _ => KeyState::Up,
                };
                InputEvent::Keyboard(KeyboardEvent::from_state_and_key(state, key))
            }),
            WindowEvent::Focused(focused) => {
                view.set_focused(*focused);
                None
            }
            _ => None,
        };
        if let Some(input) = input {
            view.notify_input(input);
        }
        true
    }
}

/// The page's key for a tao key: characters and the keys a form needs.
fn key(key: &TaoKey<'_>) -> Option<Key> {
    let named = match key {
        TaoKey::Character(text) => return Some(Key::Character((*text).to_owned())),
        TaoKey::Space => return Some(Key::Character(" ".to_owned())),
        TaoKey::Enter => NamedKey::Enter,
        TaoKey::Tab => NamedKey::Tab,
        TaoKey::Backspace => NamedKey::Backspace,
        TaoKey::Delete => NamedKey::Delete,
        TaoKey::Escape => NamedKey::Escape,
        TaoKey::ArrowLeft => NamedKey::ArrowLeft,
        TaoKey::ArrowRight => NamedKey::ArrowRight,
        TaoKey::ArrowUp => NamedKey::ArrowUp,
        TaoKey::ArrowDown => NamedKey::ArrowDown,
        TaoKey::Home => NamedKey::Home,
        TaoKey::End => NamedKey::End,
        TaoKey::Shift => NamedKey::Shift,
        TaoKey::Control => NamedKey::Control,
        TaoKey::Alt => NamedKey::Alt,
        _ => return None,
    };
    Some(Key::Named(named))
}
