//! Real X input for the real-webview tests: window lookup, XTEST clicks and keys, and the window manager's
//! `WM_DELETE_WINDOW` close request (there is no window manager under Xvfb).

use std::fmt;

use tao::rwh_06::{HasWindowHandle, RawWindowHandle};
use tao::window::Window;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    self, Atom, AtomEnum, ClientMessageEvent, ConnectionExt as _, EventMask, BUTTON_PRESS_EVENT,
    BUTTON_RELEASE_EVENT, KEY_PRESS_EVENT, KEY_RELEASE_EVENT, MOTION_NOTIFY_EVENT,
};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

/// What went wrong talking to the X server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct X11Error(String);

impl X11Error {
    fn new(what: &str, e: impl fmt::Display) -> Self {
        Self(format!("{what}: {e}"))
    }
}

impl fmt::Display for X11Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for X11Error {}

impl From<X11Error> for String {
    fn from(e: X11Error) -> Self {
        e.0
    }
}

/// A connection to the X server named by `$DISPLAY`, and its default screen's root window.
pub struct X11 {
    conn: RustConnection,
    root: u32,
}

impl fmt::Debug for X11 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("X11").field("root", &self.root).finish()
    }
}

impl X11 {
    /// Connects to `$DISPLAY`.
    pub fn connect() -> Result<Self, X11Error> {
        Self::connect_to(None)
    }

    /// Connects to `display` (such as `:57`), or to `$DISPLAY` with `None`.
    pub fn connect_to(display: Option<&str>) -> Result<Self, X11Error> {
        let (conn, screen) = x11rb::connect(display).map_err(|e| X11Error::new("connect", e))?;
        let root = conn
            .setup()
            .roots
            .get(screen)
            .ok_or_else(|| X11Error::new("connect", format!("no screen {screen}")))?
            .root;
        Ok(Self { conn, root })
    }

    /// The root window of the default screen.
    pub fn root(&self) -> u32 {
        self.root
    }

    fn atom(&self, name: &str) -> Result<Atom, X11Error> {
        Ok(self
            .conn
            .intern_atom(false, name.as_bytes())
            .map_err(|e| X11Error::new("intern_atom", e))?
            .reply()
            .map_err(|e| X11Error::new("intern_atom", e))?
            .atom)
    }

    /// The title of `window`: its `_NET_WM_NAME` (UTF-8) if set, else its `WM_NAME`.
    pub fn title(&self, window: u32) -> Result<Option<String>, X11Error> {
        let net_wm_name = self.atom("_NET_WM_NAME")?;
        let utf8 = self.atom("UTF8_STRING")?;
        for (property, kind) in [
            (net_wm_name, utf8),
            (Atom::from(AtomEnum::WM_NAME), AtomEnum::ANY.into()),
        ] {
            let reply = self
                .conn
                .get_property(false, window, property, kind, 0, 1024)
                .map_err(|e| X11Error::new("get_property", e))?
                .reply()
                .map_err(|e| X11Error::new("get_property", e))?;
            if reply.format == 8 && !reply.value.is_empty() {
                return Ok(Some(String::from_utf8_lossy(&reply.value).into_owned()));
            }
        }
        Ok(None)
    }

    /// The first window, in a depth-first walk of the root's tree, whose title is exactly
    /// `title`; `None` if there is none (or the server could not be asked).
    pub fn find_window_by_title(&self, title: &str) -> Option<u32> {
        let mut stack = vec![self.root];
        while let Some(window) = stack.pop() {
            if window != self.root && self.title(window).ok().flatten().as_deref() == Some(title) {
                return Some(window);
            }
            let Ok(cookie) = self.conn.query_tree(window) else {
                continue;
            };
            if let Ok(tree) = cookie.reply() {
                stack.extend(tree.children.iter().rev());
            }
        }
        None
    }

    /// The window `window` is transient for (its `WM_TRANSIENT_FOR`), if it says.
    pub fn transient_for(&self, window: u32) -> Result<Option<u32>, X11Error> {
        let reply = self
            .conn
            .get_property(
                false,
                window,
                AtomEnum::WM_TRANSIENT_FOR,
                AtomEnum::WINDOW,
                0,
                1,
            )
            .map_err(|e| X11Error::new("get_property", e))?
            .reply()
            .map_err(|e| X11Error::new("get_property", e))?;
        Ok(reply.value32().and_then(|mut v| v.next()))
    }

    /// The root coordinates of the top-left corner of `window`.
    pub fn window_origin(&self, window: u32) -> Result<(i16, i16), X11Error> {
        let reply = self
            .conn
            .translate_coordinates(window, self.root, 0, 0)
            .map_err(|e| X11Error::new("translate_coordinates", e))?
            .reply()
            .map_err(|e| X11Error::new("translate_coordinates", e))?;
        Ok((reply.dst_x, reply.dst_y))
    }

    /// The width and height of `window`, in pixels.
    pub fn window_size(&self, window: u32) -> Result<(u16, u16), X11Error> {
        let reply = self
            .conn
            .get_geometry(window)
            .map_err(|e| X11Error::new("get_geometry", e))?
            .reply()
            .map_err(|e| X11Error::new("get_geometry", e))?;
        Ok((reply.width, reply.height))
    }

    fn fake(&self, kind: u8, detail: u8, x: i16, y: i16) -> Result<(), X11Error> {
        self.conn
            .xtest_fake_input(kind, detail, x11rb::CURRENT_TIME, self.root, x, y, 0)
            .map_err(|e| X11Error::new("xtest_fake_input", e))?;
        Ok(())
    }

    /// Moves the pointer to (`x`, `y`) in root coordinates and clicks `button` there (1 is
    /// the left button, 3 the right one), through XTEST, so the page sees trusted input.
    pub fn click_button(&self, x: i16, y: i16, button: u8) -> Result<(), X11Error> {
        self.fake(MOTION_NOTIFY_EVENT, 0, x, y)?;
        self.fake(BUTTON_PRESS_EVENT, button, 0, 0)?;
        self.fake(BUTTON_RELEASE_EVENT, button, 0, 0)?;
        self.conn.sync().map_err(|e| X11Error::new("sync", e))?;
        Ok(())
    }

    /// A left click at (`x`, `y`) in root coordinates; see [`X11::click_button`].
    pub fn click(&self, x: i16, y: i16) -> Result<(), X11Error> {
        self.click_button(x, y, 1)
    }

    /// A left click at (`x`, `y`) relative to the top-left corner of `window`.
    pub fn click_in(&self, window: u32, x: i16, y: i16) -> Result<(), X11Error> {
        let (ox, oy) = self.window_origin(window)?;
        self.click(ox.saturating_add(x), oy.saturating_add(y))
    }

    /// The keycode that produces `keysym` (say `0x63` for `c`, `0xffe3` for Control_L) without a
    /// modifier.
    pub fn keycode(&self, keysym: u32) -> Result<u8, X11Error> {
        let (min, per, keysyms) = self.keyboard_map()?;
        keysyms
            .chunks(per)
            .position(|syms| syms.first() == Some(&keysym))
            .and_then(|i| u8::try_from(i).ok())
            .map(|i| min + i)
            .ok_or_else(|| X11Error::new("keycode", format!("no key for keysym {keysym:#x}")))
    }

    /// The keyboard map: the first keycode, the keysyms per keycode, and the keysyms.
    fn keyboard_map(&self) -> Result<(u8, usize, Vec<u32>), X11Error> {
        let setup = self.conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let map = self
            .conn
            .get_keyboard_mapping(min, max - min + 1)
            .map_err(|e| X11Error::new("get_keyboard_mapping", e))?
            .reply()
            .map_err(|e| X11Error::new("get_keyboard_mapping", e))?;
        Ok((
            min,
            usize::from(map.keysyms_per_keycode.max(1)),
            map.keysyms,
        ))
    }

    /// Presses the keys of `keysyms` in order and releases them in reverse order, through XTEST
    /// (`[0xffe3, 0x63]` is Ctrl+C), so the page sees trusted input.
    pub fn key_chord(&self, keysyms: &[u32]) -> Result<(), X11Error> {
        let codes = keysyms
            .iter()
            .map(|k| self.keycode(*k))
            .collect::<Result<Vec<u8>, X11Error>>()?;
        for code in &codes {
            self.fake(KEY_PRESS_EVENT, *code, 0, 0)?;
        }
        for code in codes.iter().rev() {
            self.fake(KEY_RELEASE_EVENT, *code, 0, 0)?;
        }
        self.conn.sync().map_err(|e| X11Error::new("sync", e))?;
        Ok(())
    }

    /// Sends `window` a `WM_PROTOCOLS`/`WM_DELETE_WINDOW` client message, as a window manager
    /// does when the user closes the window.
    pub fn request_close(&self, window: u32) -> Result<(), X11Error> {
        let protocols = self.atom("WM_PROTOCOLS")?;
        let delete = self.atom("WM_DELETE_WINDOW")?;
        let message = ClientMessageEvent::new(
            32,
            window,
            protocols,
            [delete, x11rb::CURRENT_TIME, 0, 0, 0],
        );
        self.conn
            .send_event(false, window, EventMask::NO_EVENT, message)
            .map_err(|e| X11Error::new("send_event", e))?;
        self.conn.sync().map_err(|e| X11Error::new("sync", e))?;
        Ok(())
    }

    /// Gives `window` the keyboard focus (`XSetInputFocus`), as a window manager does for the
    /// window the user picked: with no window manager under Xvfb, keys go nowhere otherwise.
    pub fn focus(&self, window: u32) -> Result<(), X11Error> {
        self.conn
            .set_input_focus(xproto::InputFocus::PARENT, window, x11rb::CURRENT_TIME)
            .map_err(|e| X11Error::new("set_input_focus", e))?;
        self.conn.sync().map_err(|e| X11Error::new("sync", e))?;
        Ok(())
    }

    /// Moves `window` so that its top left corner is at (`x`, `y`) of the root window, as a
    /// window manager or the user dragging it would (`ConfigureWindow`).
    pub fn move_window(&self, window: u32, x: i32, y: i32) -> Result<(), X11Error> {
        let aux = xproto::ConfigureWindowAux::new().x(x).y(y);
        self.conn
            .configure_window(window, &aux)
            .map_err(|e| X11Error::new("configure_window", e))?;
        self.conn.sync().map_err(|e| X11Error::new("sync", e))?;
        Ok(())
    }

    /// Raises `window` above its siblings (`ConfigureWindow` with `stack_mode Above`).
    pub fn raise(&self, window: u32) -> Result<(), X11Error> {
        let aux = xproto::ConfigureWindowAux::new().stack_mode(xproto::StackMode::ABOVE);
        self.conn
            .configure_window(window, &aux)
            .map_err(|e| X11Error::new("configure_window", e))?;
        self.conn.sync().map_err(|e| X11Error::new("sync", e))?;
        Ok(())
    }

    /// Types `text` through XTEST, one key (with Shift where the keyboard map needs it) per
    /// character; each character must be on the keyboard map (ASCII under Xvfb's default map).
    pub fn type_text(&self, text: &str) -> Result<(), X11Error> {
        const SHIFT_L: u32 = 0xffe1;
        let (min, per, keysyms) = self.keyboard_map()?;
        let shift = self.keycode(SHIFT_L)?;
        for c in text.chars() {
            // Latin-1 keysyms are the code point itself.
            let keysym = u32::from(c);
            let found = keysyms.chunks(per).enumerate().find_map(|(i, syms)| {
                let level = syms.iter().take(2).position(|s| *s == keysym)?;
                Some((u8::try_from(i).ok()? + min, level == 1))
            });
            let Some((code, shifted)) = found else {
                return Err(X11Error::new("type_text", format!("no key for {c:?}")));
            };
            if shifted {
                self.fake(KEY_PRESS_EVENT, shift, 0, 0)?;
            }
            self.fake(KEY_PRESS_EVENT, code, 0, 0)?;
            self.fake(KEY_RELEASE_EVENT, code, 0, 0)?;
            if shifted {
                self.fake(KEY_RELEASE_EVENT, shift, 0, 0)?;
            }
        }
        self.conn.sync().map_err(|e| X11Error::new("sync", e))?;
        Ok(())
    }

    /// Presses and releases one key, through XTEST; see [`X11::key_chord`].
    pub fn key(&self, keysym: u32) -> Result<(), X11Error> {
        self.key_chord(&[keysym])
    }

    /// The root's children in stacking order, bottom first (`XQueryTree`); with no window
    /// manager these are the top-level windows themselves.
    pub fn stacking_order(&self) -> Result<Vec<u32>, X11Error> {
        Ok(self
            .conn
            .query_tree(self.root)
            .map_err(|e| X11Error::new("query_tree", e))?
            .reply()
            .map_err(|e| X11Error::new("query_tree", e))?
            .children)
    }

    /// Asks the owner of the `CLIPBOARD` selection for its text as `UTF8_STRING`, the way another
    /// application pastes; read the answer with [`X11::clipboard_answer`] while the owner's loop
    /// runs. Returns the requesting window.
    pub fn request_clipboard_text(&self) -> Result<u32, X11Error> {
        let window = self
            .conn
            .generate_id()
            .map_err(|e| X11Error::new("generate_id", e))?;
        self.conn
            .create_window(
                x11rb::COPY_DEPTH_FROM_PARENT,
                window,
                self.root,
                0,
                0,
                1,
                1,
                0,
                xproto::WindowClass::INPUT_OUTPUT,
                x11rb::COPY_FROM_PARENT,
                &xproto::CreateWindowAux::new(),
            )
            .map_err(|e| X11Error::new("create_window", e))?;
        let clipboard = self.atom("CLIPBOARD")?;
        let utf8 = self.atom("UTF8_STRING")?;
        let into = self.atom("LINEUP_PASTE")?;
        self.conn
            .convert_selection(window, clipboard, utf8, into, x11rb::CURRENT_TIME)
            .map_err(|e| X11Error::new("convert_selection", e))?;
        self.conn.flush().map_err(|e| X11Error::new("flush", e))?;
        Ok(window)
    }

    /// The answer to [`X11::request_clipboard_text`] for `window`: `None` while it has not come,
    /// `Some(None)` when the owner refused or there is none, `Some(Some(text))` otherwise.
    pub fn clipboard_answer(&self, window: u32) -> Result<Option<Option<String>>, X11Error> {
        while let Some(event) = self
            .conn
            .poll_for_event()
            .map_err(|e| X11Error::new("poll_for_event", e))?
        {
            let x11rb::protocol::Event::SelectionNotify(notify) = event else {
                continue;
            };
            if notify.requestor != window {
                continue;
            }
            if notify.property == u32::from(AtomEnum::NONE) {
                return Ok(Some(None));
            }
            let reply = self
                .conn
                .get_property(true, window, notify.property, AtomEnum::ANY, 0, 1 << 20)
                .map_err(|e| X11Error::new("get_property", e))?
                .reply()
                .map_err(|e| X11Error::new("get_property", e))?;
            return Ok(Some(Some(
                String::from_utf8_lossy(&reply.value).into_owned(),
            )));
        }
        Ok(None)
    }

    /// Whether `window` still exists on the server.
    pub fn window_exists(&self, window: u32) -> bool {
        self.conn
            .get_window_attributes(window)
            .ok()
            .and_then(|cookie| cookie.reply().ok())
            .is_some()
    }

    /// Whether `window` exists and is mapped (shown).
    pub fn is_viewable(&self, window: u32) -> bool {
        self.conn
            .get_window_attributes(window)
            .ok()
            .and_then(|cookie| cookie.reply().ok())
            .is_some_and(|a| a.map_state == xproto::MapState::VIEWABLE)
    }
}

/// The X11 window id of a tao window; an error when it is not an X11 window (Wayland).
pub fn xid_of(window: &Window) -> Result<u32, X11Error> {
    let handle = window
        .window_handle()
        .map_err(|e| X11Error::new("window_handle", e))?;
    match handle.as_raw() {
        RawWindowHandle::Xlib(h) => u32::try_from(h.window).map_err(|e| X11Error::new("xid", e)),
        RawWindowHandle::Xcb(h) => Ok(h.window.get()),
        other => Err(X11Error::new(
            "xid",
            format!("not an X11 window: {other:?}"),
        )),
    }
}

impl X11 {
    /// The colour of the root window's pixel at (`x`, `y`) as the screen shows it: red, green,
    /// blue (a 24-bit TrueColor screen).
    pub fn pixel(&self, x: i16, y: i16) -> Result<[u8; 3], X11Error> {
        match self.region(x, y, 1, 1)?.as_slice() {
            [pixel] => Ok(*pixel),
            other => Err(X11Error::new(
                "get_image",
                format!("{} pixels for one", other.len()),
            )),
        }
    }

    /// The root window's pixels in the `width` × `height` rectangle at (`x`, `y`), row by row,
    /// each red, green, blue (a 24-bit TrueColor screen, 4 bytes a pixel on the wire).
    pub fn region(
        &self,
        x: i16,
        y: i16,
        width: u16,
        height: u16,
    ) -> Result<Vec<[u8; 3]>, X11Error> {
        let reply = self
            .conn
            .get_image(
                xproto::ImageFormat::Z_PIXMAP,
                self.root,
                x,
                y,
                width,
                height,
                !0,
            )
            .map_err(|e| X11Error::new("get_image", e))?
            .reply()
            .map_err(|e| X11Error::new("get_image", e))?;
        let wanted = usize::from(width) * usize::from(height);
        if reply.data.len() < wanted * 4 {
            return Err(X11Error::new(
                "get_image",
                format!("{} bytes for {wanted} pixels", reply.data.len()),
            ));
        }
        Ok(reply
            .data
            .chunks_exact(4)
            .take(wanted)
            .map(|p| [p[2], p[1], p[0]])
            .collect())
    }
}
