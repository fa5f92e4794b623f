//! Shared support of the integration tests, above all the real-webview end-to-end tests that run
//! real WebKitGTK webviews under Xvfb (`xvfb-run -a cargo test -p lineup-tests`).
//!
//! - [`runner`]: the scenario runner of the `harness = false` binary `scenarios` (one process per
//!   group of scenarios) and the `ensure!` macro;
//! - [`view_harness`]: views opened straight from a [`Shell`](lineup_host::platform::Shell);
//! - [`host_harness`]: a whole [`Host`](lineup_host::Host) driven by lineup.v1
//!   envelopes, with a recording delegate;
//! - [`x11`]: real X input (XTEST clicks) and the window manager's close request;
//! - [`xvfb`]: a virtual X server of one's own, so that groups of tests run side by side;
//! - [`canary`]: a loopback listener that counts who reached it;
//! - [`dns`]: a DNS stub that records the names it is asked for, named by `/etc/resolv.conf` in a
//!   private mount namespace;
//! - [`procs`]: the processes of the test process (WebKit's web and network processes, sandbox
//!   helpers) and their memory: the `lineup-procs` crate, the one `/proc` walker of the tests and
//!   the bench;
//! - [`home`]: a private HOME per test process;
//! - [`prompt`]: the built-in consent prompt's buttons on the X screen.

pub mod canary;
#[cfg(target_os = "linux")]
pub mod dns;
pub mod home;
#[cfg(target_os = "linux")]
pub mod host_harness;
pub use lineup_procs as procs;
#[cfg(target_os = "linux")]
pub mod prompt;
pub mod runner;
#[cfg(target_os = "linux")]
pub mod view_harness;
#[cfg(target_os = "linux")]
pub mod x11;
#[cfg(target_os = "linux")]
pub mod xvfb;
