#!/usr/bin/env bash
# Builds the Servo engine backend (#28, `engines/servo`, a workspace of its own) and runs its suite
# under Xvfb. A cold build took 34 minutes on two cores here (debug, no debug info, SpiderMonkey
# from source with clang 19); the target directory (4.5 GB) lives outside the work tree
# (LINEUP_SERVO_TARGET, default ~/.cache/lineup-servo-target) so that it is reused.
#   bash scripts/servo.sh           # install, build, test (the suite, then the kit on the host)
#   bash scripts/servo.sh build     # install and build only
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
    clang-19 libclang-19-dev llvm-19-dev # SpiderMonkey from source (mozjs_sys) and its bindgen
    python3 m4 pkg-config cmake          # SpiderMonkey's configure, harfbuzz and friends
    libfontconfig1-dev                   # Servo's system font list
    libegl1-mesa-dev libgles-dev libgl1-mesa-dri # surfman's software GL (llvmpipe)
    libx11-dev libx11-xcb-dev libxkbcommon-dev # X11 for the window a Surface is shown in (softbuffer)
)
missing=()
for package in "${packages[@]}"; do
    if [[ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" != "install ok installed" ]]; then
        missing+=("$package")
    fi
done
if ((${#missing[@]})); then
    runner=()
    [[ "$(id -u)" -ne 0 ]] && runner=(sudo -n)
    "${runner[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${runner[@]}" apt-get install -y -qq "${missing[@]}"
fi
bash scripts/setup.sh >/dev/null

export CARGO_TARGET_DIR="${LINEUP_SERVO_TARGET:-$HOME/.cache/lineup-servo-target}"
# Servo's GL wants a runtime directory; CI's root shell has none.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
export MOZJS_FROM_SOURCE=1
export CC=clang-19 CXX=clang++-19
export LIBCLANG_PATH=/usr/lib/llvm-19/lib
manifest=engines/servo/Cargo.toml

# The store's own suite on the SQLite that Servo's workspace resolves (#53): a build holds one
# `links = "sqlite3"`, so the store must pass on Servo's rusqlite as on the workspace's. A copy of
# the work tree, its lock moved to Servo's rusqlite (and so its libsqlite3-sys), builds into a
# target directory of its own.
store_sqlite() {
    local rusqlite tree
    rusqlite=$(awk '/^name = "rusqlite"$/ { getline; gsub(/version = |"/, ""); print; exit }' \
        engines/servo/Cargo.lock)
    tree=$(mktemp -d)
    tar --exclude=./target --exclude=./.git -cf - . | tar -xf - -C "$tree"
    cargo update -q --manifest-path "$tree/Cargo.toml" -p rusqlite --precise "$rusqlite"
    echo "servo: the store's suite on rusqlite $rusqlite ($(awk '/^name = "libsqlite3-sys"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$tree/Cargo.lock"))"
    CARGO_TARGET_DIR="$CARGO_TARGET_DIR/store-sqlite" cargo test -q --manifest-path "$tree/Cargo.toml" -p lineup-store
    rm -rf "$tree"
}

start=$(date +%s)
cargo build --manifest-path "$manifest" --all-targets
echo "servo: built in $(($(date +%s) - start)) s (target $CARGO_TARGET_DIR)"
[[ "${1:-}" == build ]] && exit 0

start=$(date +%s)
store_sqlite
# The suite: one process, one Servo, its scenarios in turn (see engines/servo/tests/servo.rs).
xvfb-run -a -s "-screen 0 1280x1024x24" cargo test --manifest-path "$manifest" --test servo
# The probe's positive control needs an engine of its own (one Servo per process).
xvfb-run -a -s "-screen 0 1280x1024x24" cargo test --manifest-path "$manifest" --test servo -- probe-control
# The host on Servo through its embedding API: a process of its own.
xvfb-run -a -s "-screen 0 1280x1024x24" cargo test --manifest-path "$manifest" --test host
# A script thread's panic, through Servo's test bindings (a second build of Servo's script crate).
xvfb-run -a -s "-screen 0 1280x1024x24" cargo test --manifest-path "$manifest" --features crash-tests --test servo -- crash
echo "servo: suite passed in $(($(date +%s) - start)) s"

# The host on Servo: the conformance kit against `lineup host --engine servo` (which runs
# lineup-servo host --stdio), group by group. The main workspace's binaries are built with its
# own environment and target directory. The capability group is left out: lineup-servo host has
# no App Capabilities (no store beside Servo's SQLite), so every app.call is `unsupported`.
start=$(date +%s)
servo_bin="$CARGO_TARGET_DIR/debug/lineup-servo"
env -u CARGO_TARGET_DIR -u CC -u CXX -u MOZJS_FROM_SOURCE -u LIBCLANG_PATH \
    cargo build -q -p lineup-cli -p lineup-conformance
mkdir -p target/conformance-servo
for group in envelope ui ipc navigation exfil; do
    LINEUP_SERVO="$servo_bin" xvfb-run -a -s "-screen 0 1280x1024x24" \
        target/debug/lineup-conformance --engine servo --fresh-hosts --filter "$group" \
        --json "target/conformance-servo/$group.json" -- \
        target/debug/lineup host --stdio --engine servo --dangerous-weaker-isolation
done
LINEUP_SERVO="$servo_bin" xvfb-run -a -s "-screen 0 1280x1024x24" \
    target/debug/lineup-conformance --engine servo --fresh-hosts --filter components \
    --json target/conformance-servo/components.json -- \
    target/debug/lineup host --stdio --engine servo --dangerous-weaker-isolation --builtin-components
echo "servo: the conformance kit on the Servo host passed in $(($(date +%s) - start)) s"
