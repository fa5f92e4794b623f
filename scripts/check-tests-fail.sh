#!/usr/bin/env bash
# Checks that four tests which once could pass without checking anything now fail when the code
# they test breaks. For each, a patch under scripts/breaks/ breaks the SUBJECT (never the test)
# in a scratch copy of the tree; the script builds just that test binary (the build must
# succeed), runs just that test, and requires that it fails, and fails by that test's own
# assertion (its name is reported failed). The patch is then reverted.
#
# The breaks:
#
#   store-crash.patch         store/src/audit.rs: `Store::append_audit` returns its record without
#                             committing (the transaction rolls back). A record the child reported
#                             committed is not in the file after the SIGKILL, so
#                             store/tests/crash.rs `sigkill_at_random_moments_loses_no_committed_record`
#                             fails. (Before, its child `crash_child` also counted as a test that
#                             passed, checking nothing.)
#   capability-revoked.patch  host-core/src/capability/pipeline/decide.rs: a call to a capability that
#                             was offered and then withdrawn gets no answer at all instead of
#                             `revoked` (R-INV-4). host-core/tests/capabilities/registry.rs
#                             `r_inv_4_once_offered_then_unregistered_or_hidden_is_revoked` fails
#                             (before, its loop over the answers passed over none).
#   fuzz-open.patch           host-core/src/session/agent.rs: `ui.open` of a new instance registers the
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
# display) with a filter that matches none of its scenarios in any of its groups, unpatched: it
# must exit non-zero and name the filter.
#
# The scratch copy is the working tree's files (tracked and untracked, not ignored) at
# $CARGO_TARGET_DIR/check-tests-fail/tree, kept between runs: a file is copied only when it
# differs, so only the crates a break touches (and those above them) are rebuilt, into the same
# target directory as the tree's own build. A run that is interrupted may leave a break in the
# copy; the next run's copying puts the file back.
#
# Usage: bash scripts/check-tests-fail.sh [NAME…]   (NAME: a patch name without .patch)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/env.sh
source scripts/env.sh

root="$(pwd)"
# Proptest panics once per shrinking step: one line each, not a backtrace each.
export RUST_BACKTRACE=0
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
mkdir -p "$CARGO_TARGET_DIR"
CARGO_TARGET_DIR="$(cd "$CARGO_TARGET_DIR" && pwd)"
scratch_parent="$CARGO_TARGET_DIR/check-tests-fail"
scratch="$scratch_parent/tree"
log_dir="$scratch_parent/logs"
mkdir -p "$scratch" "$log_dir"

# name | package | cargo test target selection | test name (run with --exact)
# The runner first: it is the one above WebKitGTK, built before the host-core breaks touch what
# it depends on, so that one run builds the webview crates of the copy once.
breaks=(
    "runner-filter|lineup-tests|--lib|runner::tests::a_filter_that_matches_no_scenario_fails_the_run_and_is_named"
    "store-crash|lineup-store|--test crash|sigkill_at_random_moments_loses_no_committed_record"
    "capability-revoked|lineup-host-core|--test capabilities|registry::r_inv_4_once_offered_then_unregistered_or_hidden_is_revoked"
    "fuzz-open|lineup-host-core|--test properties|no_bytes_panic_the_bridge"
)

# Brings the scratch copy up to the working tree: copies the files that differ (with a fresh
# modification time, so cargo rebuilds what they belong to) and removes the ones that are gone.
sync_scratch() {
    local list="$scratch_parent/files"
    git ls-files -z --cached --others --exclude-standard >"$list"
    local f
    while IFS= read -r -d '' f; do
        [[ -f "$f" ]] || continue
        if ! cmp -s "$f" "$scratch/$f" 2>/dev/null; then
            mkdir -p "$scratch/$(dirname "$f")"
            cp "$f" "$scratch/$f"
        fi
    done <"$list"
    # Files of an earlier run that the working tree no longer has.
    (cd "$scratch" && find . -type f -printf '%P\0') | while IFS= read -r -d '' f; do
        [[ -f "$f" ]] || rm -f "$scratch/$f"
    done
}

# `git apply` in the scratch copy as a plain patch tool: the copy may lie inside this
# repository (under target/), and git must not take the repository's index for the copy's.
scratch_apply() {
    (cd "$scratch" && GIT_CEILING_DIRECTORIES="$scratch_parent" git apply "$@")
}

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
    if ! scratch_apply --check "$patch" 2>"$log"; then
        fail "$name: the break no longer applies (update scripts/breaks/$name.patch): $(cat "$log")"
        return
    fi
    scratch_apply "$patch"
    # shellcheck disable=SC2086 # $selection is two words on purpose
    if ! (cd "$scratch" && cargo test -q -p "$package" $selection --no-run) >"$log" 2>&1; then
        scratch_apply -R "$patch"
        fail "$name: the tree with the break does not build (see $log)"
        tail -n 20 "$log"
        return
    fi
    local status=0
    # shellcheck disable=SC2086
    (cd "$scratch" && cargo test -p "$package" $selection -- --exact "$test_name") \
        >>"$log" 2>&1 || status=$?
    scratch_apply -R "$patch"
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

# Runs the real-webview binary `scenarios` with a filter that matches none of its scenarios.
run_unmatched_filter() {
    local filter="no_scenario_is_called_this"
    local log="$log_dir/unmatched-filter.log"
    printf -- '--> unmatched-filter: lineup-tests --test scenarios -- %s\n' "$filter"
    local xvfb=()
    if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
        xvfb=(xvfb-run -a -s "-screen 0 1280x1024x24")
    fi
    local status=0
    "${xvfb[@]}" cargo test -q -p lineup-tests --test scenarios -- "$filter" >"$log" 2>&1 ||
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

sync_scratch
for entry in "${breaks[@]}"; do
    IFS='|' read -r name package selection test_name <<<"$entry"
    if selected "$name"; then
        run_break "$name" "$package" "$selection" "$test_name"
    fi
done
if selected unmatched-filter; then
    run_unmatched_filter
fi

if [[ $failures -gt 0 ]]; then
    printf '\ncheck-tests-fail: %s check(s) failed\n' "$failures"
    exit 1
fi
printf '\ncheck-tests-fail: every test failed against its break\n'
