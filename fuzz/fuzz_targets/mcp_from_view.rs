//! Fuzzes an MCP App view's JSON-RPC through its router and the session behind it.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    lineup_host_core::fuzz_targets::mcp_from_view(data);
});
