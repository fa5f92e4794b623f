#!/usr/bin/env bash
# Runs every check CI runs: formatting, lints, docs; then the unit tests with no display at all;
# then unit, doc and real-webview end-to-end tests, all of `cargo test` (scripts/run-tests.py)
# under virtual X servers; then the examples' self-checks, the
# bench's quick run, and last that four tests fail against a break of what they test
# (scripts/check-tests-fail.sh). Each step's time is printed against scripts/ci-budget.txt.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

rustfmt_color=auto
if [[ "${CI:-}" == true ]]; then
    export CARGO_TERM_COLOR=never
    rustfmt_color=never # rustfmt has its own switch and colours its diff even in a log file
fi

# Lints and docs build into a side target directory that is removed before the main build: none
# of their artifacts (check-mode metadata, documentation) is reused by it. With
# LINEUP_REMOVE_SIDE_TARGET=1 (CI sets it) the side directory is removed once the docs are built,
# so the disk holds one build at a time; otherwise it is kept, and a second run rebuilds only what
# changed.
main_target="${CARGO_TARGET_DIR:-$(pwd)/target}"
side_target="$main_target/side"

# Each step names itself, how long the one before it took against its budget in
# scripts/ci-budget.txt (a step over its budget is flagged, never failed), the time since the
# start, and what the disk holds when it starts; the last step prints the whole breakdown.
run_start=$(date +%s)
step_start=$run_start
step_name=""
breakdown=""
budget_of() {
    awk -v key="$1" '$1 == key { print $2; exit }' scripts/ci-budget.txt
}
step() {
    local used free now took budget="" spent
    now=$(date +%s)
    took=$((now - step_start))
    used="$(du -sh "$main_target" 2>/dev/null | cut -f1)" || used=0
    free="$(df -h --output=avail "$(dirname "$main_target")" 2>/dev/null | tail -n 1 | tr -d ' ')" || free="?"
    spent="$took s"
    if [[ -n "$step_name" ]]; then
        budget="$(budget_of "$step_name")"
        if [[ -z "$budget" ]]; then
            spent+=", no budget"
        elif [[ "$took" -gt "$budget" ]]; then
            spent+=" of its $budget s budget: OVER BUDGET by $((took - budget)) s"
        else
            spent+=" of its $budget s budget"
        fi
        breakdown+="$(printf '    %-10s %s' "$step_name" "$spent")"$'\n'
    fi
    printf '\n==> %s\n    (previous step: %s; total: %s s; target: %s, disk free: %s)\n' "$*" \
        "$spent" "$((now - run_start))" "${used:-0}" "${free:-?}"
    step_name="${1%%:*}"
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
    -p lineup-builtins -p lineup-authoring -p lineup-packages -p lineup-mcp-agent

step "layers: no import circle between the modules of any crate"
python3 scripts/check-layers.py

if [[ "${LINEUP_REMOVE_SIDE_TARGET:-0}" == 1 ]]; then
    rm -rf "$side_target"
fi

step "libraries: bash scripts/libraries.sh (the real-library scenarios' pinned npm releases, cached)"
bash scripts/libraries.sh

step "logic: cargo test --workspace --lib with no display (the kernels, the store, the host's engine on a fake view port)"
# No X server and no xvfb-run: a unit test that needs a display fails here. The lib test binaries
# built here are the next step's; it runs them again beside the rest (seconds).
env -u DISPLAY -u WAYLAND_DISPLAY cargo test --workspace --lib

step "test: every test of cargo test --workspace (unit, integration, doc and webview tests, under xvfb-run)"
# scripts/run-tests.py runs the same binaries as `cargo test --workspace`: the `lineup` binary's
# integration tests, which mostly wait on the hosts they start, two at a time, each lane on an X
# server of its own; the rest one after another on this one; then the doc tests.
xvfb-run -a -s "-screen 0 1280x1024x24" python3 scripts/run-tests.py

step "examples: each example that checks itself runs headless with --check"
# The whole workspace with its examples resolves dependency features as `cargo test --workspace`
# did, so this only links what that build already compiled (the bench's binary included).
cargo build --workspace --bins --examples
for example in minimal ask chat_layout capability tokio_agent own_events native_components kiosk; do
    xvfb-run -a -s "-screen 0 1280x1024x24" "$main_target/debug/examples/$example" --check
done
# The MCP Apps embedder plays the agent of an official example server (the setup step cached it).
mcp_servers="${LINEUP_MCP_SERVERS_DIR:-$HOME/.cache/lineup-mcp-servers}"
xvfb-run -a -s "-screen 0 1280x1024x24" "$main_target/debug/examples/mcp_app" --check -- \
    "$mcp_servers/bin/node" \
    "$mcp_servers/node_modules/@modelcontextprotocol/server-customer-segmentation/dist/index.js" --stdio

step "bench: lineup-bench --quick (completes and writes valid JSON; no timing asserts)"
bench_json="$(mktemp -t lineup-bench.XXXXXX.json)"
# lineup-bench reads the JSON back and exits non-zero unless it parses with its figures in it.
xvfb-run -a -s "-screen 0 1280x1024x24" "$main_target/debug/lineup-bench" --quick --out "$bench_json"
rm -f "$bench_json"

step "honest: each of four tests fails against a patch that breaks what it tests"
# Last: the breaks are applied in the work tree and built into the main target directory, so only
# the crates they touch are rebuilt, and the next build rebuilds them again.
bash scripts/check-tests-fail.sh

step "done"
printf '\nthe steps, in seconds, against scripts/ci-budget.txt:\n%s' "$breakdown"
printf '\nlineup-host tests: all passed\n'
