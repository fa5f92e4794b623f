#!/usr/bin/env bash
# Runs every check CI runs: formatting, lints, then unit, doc and real-webview end-to-end tests,
# all of `cargo test` inside one virtual X server; then that four tests fail against a break of
# what they test (scripts/check-tests-fail.sh), and the bench's quick run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

rustfmt_color=auto
if [[ "${CI:-}" == true ]]; then
    export CARGO_TERM_COLOR=never
    rustfmt_color=never # rustfmt has its own switch and colours its diff even in a log file
fi

step() { printf '\n==> %s\n' "$*"; }

step "setup: system packages and Rust toolchain"
bash scripts/setup.sh

step "format: cargo fmt --all -- --check"
cargo fmt --all -- --check --color "$rustfmt_color"

step "lint: cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "map: ARCHITECTURE.md's Entry points name only functions that exist"
python3 scripts/check-architecture.py

step "docs: cargo doc of the public crates, with no broken intra-doc link"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p lineup-host -p lineup-host-core \
    -p lineup-webview-shell -p lineup-surface-runtime -p lineup-transport -p lineup-store \
    -p lineup-builtins -p lineup-authoring -p lineup-packages

step "layers: no import circle between the modules of any crate"
python3 scripts/check-layers.py

step "libraries: bash scripts/libraries.sh (the real-library scenarios' pinned npm releases, cached)"
bash scripts/libraries.sh

step "test: cargo test --workspace (unit, integration, doc and webview tests, under xvfb-run)"
xvfb-run -a -s "-screen 0 1280x1024x24" cargo test --workspace

step "examples: each example that checks itself runs headless with --check"
cargo build -p lineup-examples --examples
for example in minimal chat_layout capability tokio_agent own_events native_components kiosk; do
    xvfb-run -a -s "-screen 0 1280x1024x24" "target/debug/examples/$example" --check
done

step "honest tests: each of four tests fails against a patch that breaks what it tests"
# Builds only the affected test binaries, from a scratch copy, into the same target directory.
bash scripts/check-tests-fail.sh

step "bench: lineup-bench --quick (completes and writes valid JSON; no timing asserts)"
cargo build -p lineup-cli -p lineup-bench
bench_json="$(mktemp -t lineup-bench.XXXXXX.json)"
# lineup-bench reads the JSON back and exits non-zero unless it parses with its figures in it.
xvfb-run -a -s "-screen 0 1280x1024x24" target/debug/lineup-bench --quick --out "$bench_json"
rm -f "$bench_json"

printf '\nlineup-host tests: all passed\n'
