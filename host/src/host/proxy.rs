//! The way into the embedder's event loop: the host's events travel as the loop's own user-event
//! type, [`HostEvent`] itself or an embedder's enum with a variant for it ([`HostUserEvent`]).

use std::sync::{Arc, Mutex, PoisonError};

use lineup_webview_shell::tao::event_loop::EventLoopProxy;

use super::handle::{HostClosed, HostEvent};

/// A user-event type a [`Host`](crate::Host) can live in: [`HostEvent`], or an app's own enum
/// with a variant that carries it, so the app keeps its own tao user events.
///
/// ```
/// use lineup_host::{HostEvent, HostUserEvent};
///
/// #[derive(Debug)]
/// enum AppEvent {
///     Host(HostEvent),
///     NewMessage(String),
/// }
///
/// impl From<HostEvent> for AppEvent {
///     fn from(event: HostEvent) -> Self {
///         AppEvent::Host(event)
///     }
/// }
///
/// impl HostUserEvent for AppEvent {
///     fn into_host_event(self) -> Result<HostEvent, Self> {
///         match self {
///             AppEvent::Host(event) => Ok(event),
///             other => Err(other),
///         }
///     }
/// }
/// ```
///
/// [`host_user_event!`](crate::host_user_event) writes both impls for such a variant.
pub trait HostUserEvent: From<HostEvent> + Send + 'static {
    /// The host's event this is, or the event itself when it is the app's own.
    fn into_host_event(self) -> Result<HostEvent, Self>;
}

impl HostUserEvent for HostEvent {
    fn into_host_event(self) -> Result<HostEvent, Self> {
        Ok(self)
    }
}

/// Makes an app's user-event enum one a [`Host`](crate::Host) can live in: given the variant
/// that carries the host's events, writes `From<HostEvent>` and [`HostUserEvent`] for the enum.
///
/// ```
/// use lineup_host::{host_user_event, HostEvent, HostUserEvent};
///
/// #[derive(Debug)]
/// enum AppEvent {
///     Host(HostEvent),
///     NewMessage(String),
/// }
///
/// host_user_event!(AppEvent::Host);
///
/// let mine = AppEvent::NewMessage("hi".to_owned());
/// assert!(matches!(mine.into_host_event(), Err(AppEvent::NewMessage(_))));
/// ```
#[macro_export]
macro_rules! host_user_event {
    ($app:ident :: $variant:ident) => {
        impl ::core::convert::From<$crate::HostEvent> for $app {
            fn from(event: $crate::HostEvent) -> Self {
                $app::$variant(event)
            }
        }

        impl $crate::HostUserEvent for $app {
            #[allow(unreachable_patterns)]
            fn into_host_event(self) -> ::core::result::Result<$crate::HostEvent, Self> {
                match self {
                    $app::$variant(event) => ::core::result::Result::Ok(event),
                    other => ::core::result::Result::Err(other),
                }
            }
        }
    };
}

/// Sends the host's events into its event loop, whatever the loop's user-event type.
#[derive(Clone)]
pub(crate) struct HostProxy(Arc<dyn Fn(HostEvent) -> Result<(), HostClosed> + Send + Sync>);

impl HostProxy {
    /// A proxy into the loop `proxy` wakes.
    pub(crate) fn new<T: HostUserEvent>(proxy: EventLoopProxy<T>) -> Self {
        // tao's proxy is `Send`; the mutex makes the closure `Sync` whatever the platform's is.
        let proxy = Mutex::new(proxy);
        Self(Arc::new(move |event| {
            proxy
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .send_event(T::from(event))
                .map_err(|_| HostClosed)
        }))
    }

    /// A proxy that hands each event to `send` (a test's queue in place of a loop).
    #[cfg(test)]
    pub(crate) fn from_fn(
        send: impl Fn(HostEvent) -> Result<(), HostClosed> + Send + Sync + 'static,
    ) -> Self {
        Self(Arc::new(send))
    }

    /// Queues `event` on the loop; `Err` once the loop has ended.
    pub(crate) fn send_event(&self, event: HostEvent) -> Result<(), HostClosed> {
        (self.0)(event)
    }
}

impl std::fmt::Debug for HostProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostProxy")
    }
}
