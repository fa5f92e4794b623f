//! Links in standard components (R-STD-11): a link the user activated (a real input event in
//! the component's own view, after its guard delay) is followed only when the kernel finds it
//! in the instance's current Markdown tree; the host's link confirm, the consent prompt showing
//! the link's punycode host, comes first; the answer is audited (R-CAP-6); only an allowed link
//! reaches the desktop, on a thread of its own. Under the kiosk's [`LinkPolicy::Off`] the tree
//! has no link, so nothing reaches here.
//!
//! [`LinkPolicy::Off`]: lineup_host_core::LinkPolicy::Off

use std::sync::{Arc, Mutex};

use lineup_host_core::{
    host_word_with, link_action, ComponentLink, ConsentAnswer, OpaqueVersion, Risk, WallClock,
};
use lineup_webview_shell::{Desktop, PromptContent, SystemDesktop, SystemWallClock};

use super::handle::{HostEvent, Inner};
use super::proxy::HostProxy;
use crate::capabilities::CapabilityDriver;

/// The link confirm and where allowed links open.
pub(super) struct Links {
    /// The embedder's desktop ([`HostBuilder::desktop`](super::HostBuilder::desktop)); the
    /// system's, made at the first allowed link, when `None`.
    desktop: Option<Arc<dyn Desktop>>,
    proxy: HostProxy,
}

impl Links {
    pub(super) fn new(desktop: Option<Arc<dyn Desktop>>, proxy: HostProxy) -> Self {
        Self { desktop, proxy }
    }

    /// Shows the link confirm for `link`; its answer comes back to the loop
    /// ([`Links::answered`]).
    pub(super) fn confirm(&self, link: ComponentLink, driver: &mut CapabilityDriver) {
        // The host's words, in the host context's language (R-STD-9).
        let language = driver.language().clone();
        let reason = format!(
            "{} {}",
            host_word_with(&language, "link_in_message", link.kind.as_str(), 0),
            host_word_with(&language, "link_leads_to_host", &link.link.host, 0)
        );
        let version = OpaqueVersion::try_from("1").unwrap_or_else(|_| unreachable!("valid"));
        let content = PromptContent::new(
            &link.sender,
            link_action(),
            version,
            Risk::UserConfirmation,
            &reason,
            link.arguments().as_map(),
        )
        .with_headline(host_word_with(&language, "link_headline", "", 0))
        .with_link_host(&link.link.host);
        // The proxy is `Send` but not `Sync`; a prompt may answer from another thread.
        let proxy = Mutex::new(self.proxy.clone());
        let link = Box::new(link);
        driver.ask(content, move |answer| {
            if let Ok(proxy) = proxy.lock() {
                let _ = proxy.send_event(HostEvent(Inner::LinkAnswered { link, answer }));
            }
        });
    }

    /// The link confirm answered `answer` for `link`: audited, then, when allowed, opened by
    /// the desktop on a thread of its own (a failure there is logged).
    pub(super) fn answered(
        &mut self,
        link: &ComponentLink,
        answer: ConsentAnswer,
        driver: Option<&mut CapabilityDriver>,
    ) {
        if let Some(driver) = driver {
            driver.audit(link.audit(answer, SystemWallClock.now()));
        }
        if !matches!(answer, ConsentAnswer::Allow | ConsentAnswer::AllowAlways) {
            tracing::info!(
                "link to {} in {} not opened: {answer:?}",
                link.link.host,
                link.key
            );
            return;
        }
        let Ok(url) = url::Url::parse(&link.link.url) else {
            tracing::warn!("link to {} is not a URL; not opened", link.link.host);
            return;
        };
        let desktop = match &self.desktop {
            Some(desktop) => Arc::clone(desktop),
            None => match SystemDesktop::new() {
                Ok(desktop) => {
                    let desktop: Arc<dyn Desktop> = Arc::new(desktop);
                    self.desktop = Some(Arc::clone(&desktop));
                    desktop
                }
                Err(e) => {
                    tracing::warn!("no desktop to open the link with: {e}");
                    return;
                }
            },
        };
        let host = link.link.host.clone();
        std::thread::spawn(move || {
            if let Err(e) = desktop.open_uri(&url) {
                tracing::warn!("the desktop did not open the link to {host}: {e}");
            }
        });
    }
}
