//! Where the shell's windows are made: an event loop's window target, whatever the loop's
//! user-event type, so that what makes windows need not be generic over it.

use tao::error::OsError;
use tao::event_loop::{EventLoop, EventLoopWindowTarget};
use tao::monitor::MonitorHandle;
use tao::window::{Window, WindowBuilder};

/// What makes the shell's windows: an [`EventLoop`], or its [`EventLoopWindowTarget`] as the
/// loop's callback gets it. Every function of this crate that makes a window takes
/// `&dyn WindowMaker`, so `&event_loop` and `target` both fit, and a host's logic can run
/// against one that makes none.
pub trait WindowMaker {
    /// Builds `builder`'s window in this loop.
    fn build_window(&self, builder: WindowBuilder) -> Result<Window, OsError>;

    /// The monitors this loop's display has.
    fn monitors(&self) -> Vec<MonitorHandle>;
}

impl<T: 'static> WindowMaker for EventLoopWindowTarget<T> {
    fn build_window(&self, builder: WindowBuilder) -> Result<Window, OsError> {
        builder.build(self)
    }

    fn monitors(&self) -> Vec<MonitorHandle> {
        self.available_monitors().collect()
    }
}

impl<T: 'static> WindowMaker for EventLoop<T> {
    fn build_window(&self, builder: WindowBuilder) -> Result<Window, OsError> {
        builder.build(self)
    }

    fn monitors(&self) -> Vec<MonitorHandle> {
        self.available_monitors().collect()
    }
}
