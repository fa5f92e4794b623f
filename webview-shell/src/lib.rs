//! The platform layer of lineup-host.
