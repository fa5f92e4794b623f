#!/usr/bin/env bash
# Builds every fuzz target of fuzz/ and runs each for SECONDS (default 600), one after another,
# on the installed stable toolchain: cargo-fuzz (`cargo install cargo-fuzz --locked`) with
# RUSTC_BOOTSTRAP=1 for the sanitizer flags it passes (-Zsanitizer=address and the coverage
# passes), so no nightly is needed.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     every target, or the ones named
#
# Each target runs until SECONDS have passed or it fails (libFuzzer's -max_total_time), from
# its checked-in corpus, fuzz/corpus/<target>/ (read only), adding what it finds to
# fuzz/target/corpus/<target>/; a crash, a timeout (a unit over 10 s) or an out-of-memory leaves
# its input in fuzz/artifacts/<target>/ and its log in fuzz/target/logs/ (CARGO_TARGET_DIR, when
# set, in place of fuzz/target). Prints one line per
# target (seconds, runs, runs per second, coverage, corpus, crashes) and writes the same as a
# table to $FUZZ_RESULTS (default fuzz/RESULTS.md) with the command, date, commit and toolchain.
# Exits 1 if any target failed. Long: run it under `nice -n 19`; it is not part of .ci/run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-600}
shift || true
if ! [[ $seconds =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then
    echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]" >&2
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz is not installed: cargo install cargo-fuzz --locked" >&2
    exit 2
fi
export RUSTC_BOOTSTRAP=1
results=${FUZZ_RESULTS:-fuzz/RESULTS.md}
triple=$(rustc -vV | sed -n 's/^host: //p')
# CARGO_TARGET_DIR, when set, holds the build, the growing corpora and the logs.
target_dir=$(realpath -m "${CARGO_TARGET_DIR:-fuzz/target}")
bin=$target_dir/$triple/release

if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list)
fi

# One build for the whole run, so that every target fuzzes the same sources (optimised, with
# debug assertions, overflow checks and AddressSanitizer: cargo-fuzz's defaults).
if [ $# -gt 0 ]; then
    for target in "${targets[@]}"; do
        cargo fuzz build --sanitizer address --target-dir "$target_dir" "$target"
    done
else
    cargo fuzz build --sanitizer address --target-dir "$target_dir"
fi

# FUZZ_COMMIT names the commit of a tree that is not a git work tree (a `git archive` export).
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo "${FUZZ_COMMIT:-unknown}")
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    commit="$commit (with uncommitted changes)"
fi
started=$(date -u +%Y-%m-%dT%H:%MZ)
rows=()
failed=0
for target in "${targets[@]}"; do
    work=$target_dir/corpus/$target
    artifacts=fuzz/artifacts/$target
    log=$target_dir/logs/$target.log
    mkdir -p "$work" "$artifacts" "$(dirname "$log")" "fuzz/corpus/$target"
    status=0
    begin=$(date +%s)
    "$bin/$target" "$work" "fuzz/corpus/$target" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1 || status=$?
    took=$(($(date +%s) - begin))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corpus=$(sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p' <<<"$last")
    crashes=0
    if [ "$status" -ne 0 ]; then
        crashes=1
        failed=1
        why=$(grep -m1 -E 'panicked at|ERROR: (libFuzzer|AddressSanitizer)' "$log" || echo "exit status $status")
    fi
    line="$target: ${took} s, ${runs:-?} runs, ${rate:-?} exec/s, cov ${cov:-?}, ft ${ft:-?}, corpus ${corpus:-?}, crashes $crashes"
    echo "$line"
    if [ "$crashes" -ne 0 ]; then
        echo "  $why"
        echo "  input: $(ls -t "$artifacts" | head -n 1 | sed "s|^|$artifacts/|"); log: $log"
    fi
    rows+=("| \`$target\` | $took | ${runs:-?} | ${rate:-?} | ${cov:-?} | ${corpus:-?} | $crashes |")
done

{
    echo "# Fuzzing results"
    echo
    echo "\`scripts/fuzz.sh $seconds${*:+ $*}\`, started $started, commit $commit,"
    echo "$(rustc --version) with RUSTC_BOOTSTRAP=1, cargo-fuzz $(cargo fuzz --version | awk '{print $2}'),"
    echo "AddressSanitizer, $(nproc) cores; one target after another."
    echo
    echo "| target | seconds | runs | exec/s | coverage (edges) | corpus (units/bytes) | crashes |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    printf '%s\n' "${rows[@]}"
} >"$results"
echo "wrote $results"
exit "$failed"
