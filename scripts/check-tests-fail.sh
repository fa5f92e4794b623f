#!/usr/bin/env bash
# Checks that four tests which once could pass without checking anything now fail when the code
# they test breaks. For each, a patch under scripts/breaks/ breaks the SUBJECT (never the test)
# in the work tree itself; the script builds just that test binary into the tree's own target
# directory (the build must succeed), runs just that test, and requires that it fails, and fails
# by that test's own assertion (its name is reported failed). The patch is then reverted.
#
# The breaks:
#
#   store-crash.patch         store/src/audit.rs: `AuditLog::append` returns its record without
#                             committing (the transaction rolls back). A record the child reported
#                             committed is not in the file after the SIGKILL, so
#                             store/tests/crash.rs `sigkill_at_random_moments_loses_no_committed_record`
#                             fails. (Before, its child `crash_child` also counted as a test that
#                             passed, checking nothing.)
#   capability-revoked.patch  host-core/src/capability/pipeline/calls.rs: `Pipeline::admit` gives a call
#                             to a capability that was offered and then withdrawn no answer at
#                             all instead of `revoked` (R-INV-4). host-core/tests/capabilities/registry.rs
#                             `r_inv_4_once_offered_then_unregistered_or_hidden_is_revoked` fails
#                             (before, its loop over the answers passed over none).
#   fuzz-open.patch           host-core/src/session/surfaces.rs: `ui.open` of a new instance registers the
#                             Surface but no longer yields `Effect::Open` (R-UI-1), so no webview
#                             would ever open. host-core/tests/properties.rs
#                             `no_bytes_panic_the_bridge`, which runs the fuzz target
#                             `fuzz_targets::bridge_decode`, fails (before, the target returned
#                             early and checked nothing).
#   runner-filter.patch       tests/src/runner.rs: `Runner::select` notes every filter as having
#                             selected a scenario, so a filter that matches none passes again.
#                             tests/src/runner.rs's unit test
#                             `a_filter_that_matches_no_scenario_fails_the_run_and_is_named` fails.
#
# Besides the breaks, the real-webview binary `scenarios` is run (under xvfb-run when there is no
# display) with a filter that matches none of its scenarios in any of its groups, unpatched and
# first, while the tree's own build of it is current: it must exit non-zero and name the filter.
#
# The breaks are applied in place so that only the crate a break touches, and the one test binary
# above it, are rebuilt: a scratch copy would build every workspace crate below the test again
# under other paths. So the script refuses to start when a file a break touches differs from
# HEAD (your edits there are never overwritten), reverts each break as soon as its test ran, and
# reverts any break still applied when it is interrupted. Each revert rewrites the file, so the
# next build of the tree rebuilds the crates a break touched; `scripts/test.sh` runs this last.
#
# Usage: bash scripts/check-tests-fail.sh [NAME…]   (NAME: a patch name without .patch)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

root="$(pwd)"
# Proptest panics once per shrinking step: one line each, not a backtrace each.
export RUST_BACKTRACE=0
log_dir="${CARGO_TARGET_DIR:-$root/target}/check-tests-fail"
mkdir -p "$log_dir"

# name | package | cargo test target selection | test name (run with --exact)
# The runner first: its test binary is the one above WebKitGTK, built while the crates below it
# are still the tree's own build.
breaks=(
    "runner-filter|lineup-tests|--lib|runner::tests::a_filter_that_matches_no_scenario_fails_the_run_and_is_named"
    "store-crash|lineup-store|--test crash|sigkill_at_random_moments_loses_no_committed_record"
    "capability-revoked|lineup-host-core|--test capabilities|registry::r_inv_4_once_offered_then_unregistered_or_hidden_is_revoked"
    "fuzz-open|lineup-host-core|--test properties|no_bytes_panic_the_bridge"
)

# The files a patch touches.
patched_files() {
    git apply --numstat "$1" | cut -f3
}

# The patch applied now, reverted by `revert_applied` (also on an interrupt).
applied=""
revert_applied() {
    if [[ -n "$applied" ]]; then
        git apply -R "$applied"
        applied=""
    fi
}
trap revert_applied EXIT
trap 'exit 130' INT TERM

failures=0
fail() {
    printf 'FAILED %s\n' "$*"
    failures=$((failures + 1))
}

run_break() {
    local name="$1" package="$2" selection="$3" test_name="$4"
    local patch="$root/scripts/breaks/$name.patch"
    local log="$log_dir/$name.log"
    printf -- '--> %s: %s %s %s\n' "$name" "$package" "$selection" "$test_name"
    if ! git apply --check "$patch" 2>"$log"; then
        fail "$name: the break no longer applies (update scripts/breaks/$name.patch): $(cat "$log")"
        return
    fi
    git apply "$patch"
    applied="$patch"
    # shellcheck disable=SC2086 # $selection is two words on purpose
    if ! cargo test -q -p "$package" $selection --no-run >"$log" 2>&1; then
        revert_applied
        fail "$name: the tree with the break does not build (see $log)"
        tail -n 20 "$log"
        return
    fi
    local status=0
    # shellcheck disable=SC2086
    cargo test -p "$package" $selection -- --exact "$test_name" >>"$log" 2>&1 || status=$?
    revert_applied
    if [[ $status -eq 0 ]]; then
        fail "$name: $test_name passed against the break (see $log)"
    elif ! grep -q -- "$test_name.*FAILED\|FAILED.*$test_name\|^---- $test_name " "$log"; then
        fail "$name: cargo failed (status $status) but not by $test_name failing (see $log)"
        tail -n 20 "$log"
    else
        printf 'ok %s: %s fails against the break (status %s):\n' "$name" "$test_name" "$status"
        # The test's own words: its first panic message.
        awk '/panicked at/ { on = 1 } on && (/^stack backtrace:/ || /^note: / || /^$/ || n == 4) { exit }
             on { print "    " $0; n++ }' "$log"
    fi
}

# Runs the real-webview binary `scenarios` with a filter that matches none of its scenarios, in
# one group's process (the `consent` group's): a group run on its own fails naming the filter, as
# the whole run does; how the whole run merges its groups' reports is unit-tested in
# `tests/src/runner.rs` (`merged_verdict`). Most of this step's minute is the build of the
# package on its own (`-p lineup-tests`), not the run.
run_unmatched_filter() {
    local filter="no_scenario_is_called_this"
    local log="$log_dir/unmatched-filter.log"
    printf -- '--> unmatched-filter: LINEUP_SCENARIO_GROUP=consent lineup-tests --test scenarios -- %s\n' "$filter"
    local xvfb=()
    if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
        xvfb=(xvfb-run -a -s "-screen 0 1280x1024x24")
    fi
    local status=0
    LINEUP_SCENARIO_GROUP=consent "${xvfb[@]}" \
        cargo test -q -p lineup-tests --test scenarios -- "$filter" >"$log" 2>&1 ||
        status=$?
    if [[ $status -eq 0 ]]; then
        fail "unmatched-filter: scenarios passed with a filter that matches nothing (see $log)"
    elif ! grep -q "no scenario matches the filter \`$filter\`" "$log"; then
        fail "unmatched-filter: scenarios failed (status $status) without naming the filter (see $log)"
        tail -n 20 "$log"
    else
        printf 'ok unmatched-filter: status %s, %s\n' "$status" \
            "$(grep -m 1 'no scenario matches' "$log")"
    fi
}

wanted=("$@")
selected() {
    [[ ${#wanted[@]} -eq 0 ]] && return 0
    local w
    for w in "${wanted[@]}"; do [[ "$w" == "$1" ]] && return 0; done
    return 1
}

# Every file a break touches is as committed: a break never lands on top of your edits, and its
# revert gives back exactly what is committed.
for entry in "${breaks[@]}"; do
    IFS='|' read -r name _ <<<"$entry"
    selected "$name" || continue
    while IFS= read -r file; do
        if ! git diff --quiet HEAD -- "$file"; then
            printf 'check-tests-fail: %s differs from HEAD; commit or stash it first (the %s break patches it in place)\n' \
                "$file" "$name"
            exit 1
        fi
    done < <(patched_files "scripts/breaks/$name.patch")
done

# The unpatched run first, while the tree's own build is current.
if selected unmatched-filter; then
    run_unmatched_filter
fi
for entry in "${breaks[@]}"; do
    IFS='|' read -r name package selection test_name <<<"$entry"
    if selected "$name"; then
        run_break "$name" "$package" "$selection" "$test_name"
    fi
done

if [[ $failures -gt 0 ]]; then
    printf '\ncheck-tests-fail: %s check(s) failed\n' "$failures"
    exit 1
fi
printf '\ncheck-tests-fail: every test failed against its break\n'
