#!/usr/bin/env python3
"""Checks the workspace's shape: every inherent `impl T` is in the file that defines `T` and no
non-test file globs its parent (`use super::*`), so a type owns its fields; only the platform
crate depends on the windowing and web engine crates directly; no library crate depends on the
MCP client (`lineup-mcp-agent`, `rmcp`: R-MCP-1); and no crate has an import circle between its
modules.

`cargo tree` must show wry, tao, webkit2gtk, gtk, x11rb and servo as direct dependencies of
`lineup-webview-shell` (and of `lineup-servo`, the Servo engine's crate) only, among the library and binary crates (test and bench crates may name
them for their raw baselines and X11 helpers).

For every library and binary crate under the workspace, each `.rs` file is a module (`src/a.rs`
and `src/a/mod.rs` are `a`, `src/a/b.rs` is `a::b`). A `use crate::x::…`, `crate::x::…` path or
`super::x::…` path in module `m` is an edge from `m` to the module it names, taken at the level
where the two paths part (siblings under their common parent: `a::b` using `crate::a::c::T` is
the edge `b -> c` under `a`; a module naming its own parent's items is no edge). Test modules
(`tests.rs`, `*_tests.rs`, `tests/`) are left out. Exits 1 naming each circle.
"""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SKIP = {"target", "fuzz", ".git", "node_modules"}


def crates():
    for manifest in sorted(ROOT.rglob("Cargo.toml")):
        rel = manifest.relative_to(ROOT)
        if SKIP.intersection(rel.parts) or not (manifest.parent / "src").is_dir():
            continue
        yield manifest.parent


def module_of(src, path):
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("lib", "main", "mod"):
        parts = parts[:-1]
    return tuple(parts)


def is_test(mod):
    return any(p == "tests" or p.endswith("_tests") for p in mod)


def strip_comments(text):
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def paths_in(text):
    """Every `crate::…` or `super::…` path, with `use` groups flattened one level."""
    for m in re.finditer(r"\b(crate|super)((?:::\w+)+)(::\{([^}]*)\})?", text):
        head = [m.group(1)] + [p for p in m.group(2).split("::") if p]
        if m.group(4):
            for item in m.group(4).split(","):
                item = item.strip().split(" as ")[0].strip()
                yield head + [p for p in item.split("::") if p and p != "self"]
        else:
            yield head


def resolve(mod, path, modules):
    """The module a path names, as a tuple, or None."""
    if path[0] == "crate":
        base, rest = (), path[1:]
    else:
        base = mod
        rest = path
        while rest and rest[0] == "super":
            base = base[:-1]
            rest = rest[1:]
    target = base
    for part in rest:
        if target + (part,) in modules:
            target = target + (part,)
        else:
            break
    return target


def circles(edges):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


PLATFORM_CRATES = {"wry", "tao", "webkit2gtk", "gtk", "x11rb", "servo"}
# Crates that may name the platform crates themselves: the platform crate, the Servo engine's
# (`engines/servo`, a workspace of its own), and the test and bench crates (raw baselines, X11
# helpers).
MAY_NAME_PLATFORM = {
    "lineup-webview-shell", "lineup-servo", "lineup-tests", "lineup-bench", "lineup-procs",
}


# The crates that may hold an MCP client (R-MCP-1): the agent side's crate itself, and what
# plays the agent with it, the command-line tool and the examples (and the tests that drive
# them). No library crate may depend on it, or on rmcp.
MCP_CLIENT_CRATES = {"lineup-mcp-agent", "rmcp"}
MAY_HOLD_MCP_CLIENT = {"lineup-mcp-agent", "lineup-cli", "lineup-examples", "lineup-tests"}


def platform_dependents():
    """Library and binary crates that depend directly on a windowing or web engine crate, and
    library crates that depend on an MCP client crate."""
    found = []
    for crate in crates():
        name = re.search(r'^name\s*=\s*"([^"]+)"', (crate / "Cargo.toml").read_text(), re.M)
        # lineup-servo is a workspace of its own: `cargo tree` here cannot read it.
        if not name or name.group(1) == "lineup-servo" or (
                name.group(1) in MAY_NAME_PLATFORM and name.group(1) in MAY_HOLD_MCP_CLIENT):
            continue
        tree = subprocess.run(
            ["cargo", "tree", "-p", name.group(1), "-e", "normal", "--depth", "1",
             "--prefix", "none", "--offline"],
            cwd=ROOT, capture_output=True, text=True, check=False,
        )
        if tree.returncode != 0:
            found.append(f"{name.group(1)}: cargo tree failed: {tree.stderr.strip()[:200]}")
            continue
        direct = {line.split()[0] for line in tree.stdout.splitlines()[1:] if line.strip()}
        named = sorted(direct & PLATFORM_CRATES) if name.group(1) not in MAY_NAME_PLATFORM else []
        if named:
            found.append(f"{name.group(1)} depends on {', '.join(named)} directly")
        mcp = sorted(direct & MCP_CLIENT_CRATES) if name.group(1) not in MAY_HOLD_MCP_CLIENT else []
        if mcp:
            found.append(f"{name.group(1)} depends on {', '.join(mcp)}: no library crate holds an "
                         "MCP client (R-MCP-1)")
    return found


def owners():
    """Types whose inherent impls are not all in the file that defines them, and non-test files
    with `use super::*`: a type owns its fields, so its methods are where it is defined (#50)."""
    defined, impls, globbing = {}, [], []
    for crate in crates():
        for path in (crate / "src").rglob("*.rs"):
            mod = module_of(crate / "src", path)
            if is_test(mod) or re.search(r"(^|_)tests?$", path.stem):
                continue
            text = strip_comments(path.read_text(encoding="utf-8", errors="replace"))
            text = re.split(r"#\[cfg\(test\)\]\s*mod \w+\s*\{", text)[0]
            rel = path.relative_to(ROOT)
            for m in re.finditer(r"^\s*(?:pub(?:\([^)]*\))? )?(?:struct|enum) (\w+)", text, re.M):
                defined.setdefault((crate, m.group(1)), set()).add(rel)
            for m in re.finditer(r"^impl(?:<[^>]*>)? (\w+)(?:<[^>]*>)?\s*\{", text, re.M):
                impls.append((crate, m.group(1), rel))
            if re.search(r"^\s*use super::\*;", text, re.M):
                globbing.append(f"{rel}: use super::*")
    spread = sorted(
        f"impl {name} in {rel}, defined in {', '.join(sorted(map(str, defined[(crate, name)])))}"
        for crate, name, rel in impls
        if (crate, name) in defined and rel not in defined[(crate, name)]
    )
    return spread + globbing


def main():
    sys.setrecursionlimit(10000)
    misplaced = owners()
    if misplaced:
        print("inherent impls outside their type's file, or glob imports of a parent:",
              *misplaced, sep="\n  ")
        return 1
    print("every inherent impl is in its type's file; no non-test `use super::*`")
    platform = platform_dependents()
    if platform:
        print("only lineup-webview-shell may depend on the platform crates, and only the cli and "
              "the examples on the MCP client:", *platform, sep="\n  ")
        return 1
    print("wry, tao, webkit2gtk, gtk, x11rb and servo: reached through the platform crates only")
    print("lineup-mcp-agent and rmcp: depended on by the cli and the examples only")
    found = []
    for crate in crates():
        src = crate / "src"
        files = {module_of(src, p): p for p in src.rglob("*.rs")}
        modules = set(files)
        edges = {}
        for mod, path in files.items():
            if is_test(mod):
                continue
            text = strip_comments(path.read_text(encoding="utf-8", errors="replace"))
            text = re.split(r"#\[cfg\(test\)\]\s*mod tests\s*\{", text)[0]
            for p in paths_in(text):
                target = resolve(mod, p, modules)
                if is_test(target):
                    continue
                # Where the two paths part: siblings under their common parent.
                common = 0
                while common < min(len(mod), len(target)) and mod[common] == target[common]:
                    common += 1
                if common == len(mod) or common == len(target):
                    continue  # a module and its own ancestor or descendant
                a, b = mod[: common + 1], target[: common + 1]
                edges.setdefault(a, set()).add(b)
        for comp in circles(edges):
            names = " ⇄ ".join("::".join(m) for m in comp)
            found.append(f"{crate.relative_to(ROOT)}: {names}")
    if found:
        print("import circles between modules:", *found, sep="\n  ")
        return 1
    print("no import circle between the modules of any crate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
