//! Runnable examples of embedding lineup-host.
