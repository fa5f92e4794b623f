# shellcheck shell=bash
# Sourced by the other scripts here: puts rustup's cargo on PATH when the calling shell has not
# read ~/.cargo/env (a non-login shell, sudo -u, CI).
lineup_cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
if ! command -v cargo >/dev/null 2>&1 && [[ -x "$lineup_cargo_bin/cargo" ]]; then
    export PATH="$lineup_cargo_bin:$PATH"
fi
unset lineup_cargo_bin
