# A cache folder that `npm ci` fills from a committed package.json and lock file, and the stamp
# that says it is finished; sourced by scripts/libraries.sh and scripts/mcp-servers.sh, whose
# `say` it uses.

# npm_cache_fresh DIR STAMP: whether DIR was finished from the inputs whose digest is STAMP.
npm_cache_fresh() {
    [[ -f "$1/stamp" && "$(cat "$1/stamp")" == "$2" ]]
}

# npm_cache_fill DIR SRC: DIR unfinished (its stamp removed), SRC's package.json and
# package-lock.json copied into it, and `npm ci --ignore-scripts` run there: every tarball is
# checked against the lock's integrity hash, and no install script of theirs runs.
npm_cache_fill() {
    mkdir -p "$1"
    rm -f "$1/stamp"
    cp "$2/package.json" "$2/package-lock.json" "$1/"
    say "npm ci --ignore-scripts in $1 (every tarball checked against the lock's integrity hash)"
    (cd "$1" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
}
