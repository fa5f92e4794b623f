#!/usr/bin/env bash
# Fetches the real JavaScript libraries of the `libraries` and `mcp_view` scenario groups
# (tests/tests/scenarios/libraries.rs, mcp_view.rs): the releases pinned in tests/libraries/package.json, at the
# integrity hashes of tests/libraries/package-lock.json, from the npm registry with `npm ci
# --ignore-scripts` (no install script of theirs runs), into a cache outside the work tree:
# ${LINEUP_LIBRARIES_DIR:-$HOME/.cache/lineup-libraries}. Then it makes the one-file builds of the
# ES-module-only libraries with the pinned esbuild: CodeMirror 6 as an IIFE, Lit as an ES module,
# and the MCP Apps SDK's browser bundle as an IIFE (for the `mcp_view` group).
# Skipped when the cache's stamp matches the lock file, the entries and this script. Nothing is
# vendored into git: each package keeps its own licence in the cache. Safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

src="tests/libraries"
dir="${LINEUP_LIBRARIES_DIR:-$HOME/.cache/lineup-libraries}"
say() { printf 'libraries: %s\n' "$*"; }

for tool in npm node sha256sum; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        say "error: $tool is not installed (bash scripts/setup.sh installs Node.js and npm)" >&2
        exit 1
    fi
done

# shellcheck source=scripts/npm-cache.sh
source scripts/npm-cache.sh
stamp="$(cat "$src/package.json" "$src/package-lock.json" "$src"/entries/*.js \
    "${BASH_SOURCE[0]}" scripts/npm-cache.sh | sha256sum | cut -d' ' -f1)"
if npm_cache_fresh "$dir" "$stamp"; then
    say "up to date in $dir (stamp $stamp)"
    exit 0
fi

start=$SECONDS
npm_cache_fill "$dir" "$src"

# The one-file builds: the entries are ours (a few export lines each); esbuild resolves the
# packages from the cache's node_modules.
rm -rf "$dir/entries" "$dir/bundles"
cp -r "$src/entries" "$dir/entries"
mkdir -p "$dir/bundles"
esbuild="$dir/node_modules/.bin/esbuild"
say "esbuild $("$esbuild" --version): CodeMirror 6 as one IIFE, Lit as one ES module, the MCP Apps SDK as one IIFE"
"$esbuild" "$dir/entries/codemirror.js" --bundle --format=iife --global-name=CM --minify \
    --legal-comments=inline --log-level=warning --outfile="$dir/bundles/codemirror.iife.min.js"
"$esbuild" "$dir/entries/lit.js" --bundle --format=esm --minify \
    --legal-comments=inline --log-level=warning --outfile="$dir/bundles/lit.min.mjs"
"$esbuild" "$dir/entries/ext-apps.js" --bundle --format=iife --global-name=McpApps --minify \
    --legal-comments=inline --log-level=warning --outfile="$dir/bundles/ext-apps.iife.min.js"

# The cache holds the lock it was made from: the scenarios compare it with the committed one.
printf '%s\n' "$stamp" >"$dir/stamp"
say "fetched and built in $((SECONDS - start)) s: $(du -sh "$dir" | cut -f1) in $dir"
ls -l "$dir/bundles" | tail -n +2 | sed 's/^/libraries:   /'
