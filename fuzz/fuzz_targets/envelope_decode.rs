//! Fuzzes inbound envelope decoding and the session behind it.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    lineup_host_core::fuzz_targets::envelope_decode(data);
});
