#!/usr/bin/env bash
# Fault injection with figures (#27 item 3, docs/faults.md): cli/tests/faults.rs with the host
# SIGKILLed N times (default 200) at random points of a stream of app.calls, then the disk-full,
# locked-database and web-process cases; prints the figures and writes them as JSON.
#
#   bash scripts/faults.sh [KILLS]              # LINEUP_FAULT_SEED=… repeats a run's kill points
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

kills="${1:-200}"
if ! [[ "$kills" =~ ^[0-9]+$ ]] || ((kills < 1)); then
    echo "usage: bash scripts/faults.sh [KILLS]   (a positive number, default 200)" >&2
    exit 2
fi
report="${LINEUP_FAULT_REPORT:-target/faults.json}"
# cargo runs the test in cli/: the report's path must not be relative.
[[ "$report" == /* ]] || report="$PWD/$report"
mkdir -p "$(dirname "$report")"
rm -f "$report"

run=(cargo test -p lineup-cli --test faults -- --nocapture --test-threads 1)
if [[ -z "${DISPLAY:-}" ]]; then
    run=(xvfb-run -a -s "-screen 0 1280x1024x24" "${run[@]}")
fi
printf '==> %s kills, %s, commit %s\n' "$kills" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
start=$SECONDS
LINEUP_FAULT_KILLS="$kills" LINEUP_FAULT_REPORT="$report" "${run[@]}"
printf '\n==> all fault cases passed in %d s; the kill loop'"'"'s figures: %s\n' \
    "$((SECONDS - start))" "$report"
cat "$report"
