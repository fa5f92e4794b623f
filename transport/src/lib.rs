//! The agent links of lineup-host, for embedders and the `lineup` command alike: protocol lines
//! on the process's standard output ([`LineWriter`], `lineup host --stdio`) and the WebSocket
//! client that connects out to an agent ([`link`], `lineup host --connect`, `lineup kiosk`).
//!
//! Both keep one outbound policy (R-ENV-4): answers are never dropped; page events give way when
//! the reader is slow (or, for the WebSocket, away) and are reported to the agent as
//! `events_dropped`; when too many answers wait, the link stops reading input.

pub mod link;
mod stdio;

pub use stdio::{LineKind, LineWriter, WriteError, WriterLimits};
