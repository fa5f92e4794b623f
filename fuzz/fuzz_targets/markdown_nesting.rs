//! Fuzzes the Markdown sanitizer with deeply nested input: the tree is bounded where it is
//! built (R-STD-10).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    lineup_host_core::fuzz_targets::markdown_nesting(data);
});
