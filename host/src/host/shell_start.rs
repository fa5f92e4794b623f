//! The shell a host starts on: the platform's webviews, or the engine an embedder brought
//! through `HostBuilder::dangerous().engine(..)`.

use std::rc::Rc;

use lineup_webview_shell::WindowMaker;
use lineup_webview_shell::{Shell, ShellError, SurfaceEngine, ViewConfig};

use super::handle::{HostEvent, Inner};
use super::proxy::HostProxy;

/// The shell of a host being built: the platform's, or one over the engine the embedder brought
/// ([`DangerousHostBuilder::engine`](super::DangerousHostBuilder::engine)), woken through the host's own loop.
pub(super) fn start_shell(
    engine: Option<Rc<dyn SurfaceEngine>>,
    child_views: bool,
    target: &dyn WindowMaker,
    config: ViewConfig,
    proxy: HostProxy,
) -> Result<Shell, ShellError> {
    let Some(engine) = engine else {
        return Shell::start(target, config);
    };
    if child_views {
        return Err(ShellError::Unsupported(
            "child views with an engine other than the platform's",
        ));
    }
    let wake = move || {
        let _ = proxy.send_event(HostEvent(Inner::Wake));
    };
    Shell::start_with_engine(config, engine, Box::new(wake))
}
