#!/usr/bin/env bash
# Runs the demo: in a window on the current display, or inside a virtual X server when there is none.
# Arguments are passed to the demo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

bash scripts/setup.sh

demo=(cargo run --release -p lineup-examples --example demo -- "$@")
if [[ -n "${DISPLAY:-}" ]]; then
    exec "${demo[@]}"
fi
echo "demo: no DISPLAY, running under xvfb-run"
exec xvfb-run -a -s "-screen 0 1280x1024x24" "${demo[@]}"
