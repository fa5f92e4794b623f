#!/usr/bin/env bash
# Runs the full benchmark (issue #12) in release mode under a virtual X server: the host's Surface
# paths beside raw wry baselines, written to BENCHMARKS.json and BENCHMARKS.md at the repository
# root. Takes a few minutes; extra arguments go to lineup-bench (e.g. --quick).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

# The `lineup` binary beside lineup-bench adds the `lineup host --stdio` measurement.
cargo build --release -p lineup-cli -p lineup-bench
xvfb-run -a -s "-screen 0 1280x1024x24" target/release/lineup-bench \
    --out BENCHMARKS.json --md BENCHMARKS.md "$@"
