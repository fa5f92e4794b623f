#!/usr/bin/env bash
# Runs every check CI runs: formatting, lints, docs, that four tests fail against a break of what
# they test (scripts/check-tests-fail.sh); then unit, doc and real-webview end-to-end tests, all of
# `cargo test` inside one virtual X server; then the examples' self-checks and the bench's quick run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

rustfmt_color=auto
if [[ "${CI:-}" == true ]]; then
    export CARGO_TERM_COLOR=never
    rustfmt_color=never # rustfmt has its own switch and colours its diff even in a log file
fi

# Lints, docs and the honest tests build into a side target directory that is removed before the
# main build: none of their artifacts (check-mode metadata, documentation, a patched copy of the
# tree with its own dependency features) is reused by it. With LINEUP_REMOVE_SIDE_TARGET=1 (CI
# sets it) the side directory is removed once the honest tests ran, so the disk holds one build at
# a time; otherwise it is kept, and a second run rebuilds only what changed.
main_target="${CARGO_TARGET_DIR:-$(pwd)/target}"
side_target="$main_target/side"

# Each step names itself, how long the one before it took, the time since the start, and
# what the disk holds when it starts.
run_start=$(date +%s)
step_start=$run_start
step() {
    local used free now
    now=$(date +%s)
    used="$(du -sh "$main_target" 2>/dev/null | cut -f1)" || used=0
    free="$(df -h --output=avail "$(dirname "$main_target")" 2>/dev/null | tail -n 1 | tr -d ' ')" || free="?"
    printf '\n==> %s\n    (previous step: %s s, total: %s s; target: %s, disk free: %s)\n' "$*" \
        "$((now - step_start))" "$((now - run_start))" "${used:-0}" "${free:-?}"
    step_start=$now
}

step "setup: system packages and Rust toolchain"
bash scripts/setup.sh

step "format: cargo fmt --all -- --check"
cargo fmt --all -- --check --color "$rustfmt_color"

step "lint: cargo clippy --workspace --all-targets -- -D warnings"
CARGO_TARGET_DIR="$side_target" cargo clippy --workspace --all-targets -- -D warnings

step "map: ARCHITECTURE.md's Entry points name only functions that exist"
python3 scripts/check-architecture.py

step "docs: cargo doc of the public crates, with no broken intra-doc link"
CARGO_TARGET_DIR="$side_target" RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p lineup-host -p lineup-host-core \
    -p lineup-webview-shell -p lineup-surface-runtime -p lineup-transport -p lineup-store \
    -p lineup-builtins -p lineup-authoring -p lineup-packages

step "layers: no import circle between the modules of any crate"
python3 scripts/check-layers.py

step "honest tests: each of four tests fails against a patch that breaks what it tests"
# Builds only the affected test binaries, from a scratch copy, into the side target directory.
CARGO_TARGET_DIR="$side_target" bash scripts/check-tests-fail.sh
if [[ "${LINEUP_REMOVE_SIDE_TARGET:-0}" == 1 ]]; then
    rm -rf "$side_target"
fi

step "libraries: bash scripts/libraries.sh (the real-library scenarios' pinned npm releases, cached)"
bash scripts/libraries.sh

step "test: cargo test --workspace (unit, integration, doc and webview tests, under xvfb-run)"
xvfb-run -a -s "-screen 0 1280x1024x24" cargo test --workspace

step "examples: each example that checks itself runs headless with --check"
# The whole workspace with its examples resolves dependency features as `cargo test --workspace`
# did, so this only links what that build already compiled (the bench's binary included).
cargo build --workspace --bins --examples
for example in minimal chat_layout capability tokio_agent own_events native_components kiosk; do
    xvfb-run -a -s "-screen 0 1280x1024x24" "$main_target/debug/examples/$example" --check
done

step "bench: lineup-bench --quick (completes and writes valid JSON; no timing asserts)"
bench_json="$(mktemp -t lineup-bench.XXXXXX.json)"
# lineup-bench reads the JSON back and exits non-zero unless it parses with its figures in it.
xvfb-run -a -s "-screen 0 1280x1024x24" "$main_target/debug/lineup-bench" --quick --out "$bench_json"
rm -f "$bench_json"

step "done"
printf '\nlineup-host tests: all passed\n'
