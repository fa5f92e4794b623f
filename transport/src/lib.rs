//! The agent links of lineup-host, for embedders and the `lineup` command alike: protocol lines
//! on the process's standard output ([`LineWriter`], `lineup host --stdio`) and the WebSocket
//! client that connects out to an agent ([`link`], `lineup host --connect`, `lineup kiosk`).
//!
//! Both links drain one outbound policy, [`OutboundQueue`] with its [`OutboundLimits`] (R-ENV-4):
//! answers are never dropped; page events give way when the reader is slow (or, for the
//! WebSocket, away) and are reported to the agent as `events_dropped`; when too many answers
//! wait, the link stops reading input until fewer than the low-water mark do.
//!
//! ```
//! use lineup_host_core::InstanceId;
//! use lineup_transport::{LineKind, OutboundLimits, OutboundQueue};
//!
//! let w1 = InstanceId::try_from("w1")?;
//! let mut limits = OutboundLimits::default();
//! limits.max_waiting_events = 1;
//! let mut queue = OutboundQueue::new(limits);
//! queue.offer("clicked 1".into(), LineKind::PageEvent(w1.clone()))?;
//! // A second page event waits behind the bound: dropped and counted for w1.
//! assert!(queue.offer("clicked 2".into(), LineKind::PageEvent(w1.clone())).is_err());
//! // An answer is always queued.
//! queue.offer("app.result".into(), LineKind::Answer)?;
//! let mut sent = Vec::new();
//! while let Some(line) = queue.front() {
//!     sent.push(line.to_owned()); // the link writes it here...
//!     queue.pop_sent(); // ...and removes it once written
//! }
//! assert_eq!(sent, ["clicked 1", "app.result"]);
//! // Nothing waits: the agent hears of the loss (`events_dropped`).
//! let reports = queue.take_drop_reports();
//! assert_eq!((&reports[0].instance, reports[0].counts.total()), (&w1, 1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod link;
mod outbound;
mod stdio;

pub use outbound::{DropCounts, DropReport, Dropped, LineKind, OutboundLimits, OutboundQueue};
pub use stdio::{LineWriter, StdioLink, WriteError};
