#!/usr/bin/env python3
"""Counts the duplicate pairs of the project's non-test code: places sharing six or more lines
of the same shape, as the `duplicates` tool of the development machine finds them.

Usage: python3 scripts/count-duplicates.py [REV] [--list N]

Copies the tree at REV (default: the working tree's HEAD) without its test files (`tests/`
directories, `tests.rs`, `*_tests.rs`, benches, fuzz targets, the conformance cases and the
scenario harness) into a temporary directory, blanks every `#[cfg(test)]` item in what is
left (a `mod` block or file, a function, an impl, a use), keeping line numbers, and prints the
count line of `duplicates --repo COPY`; `--list N` prints the first N rows too. Needs the
`duplicates` command on PATH; without it, says so and exits 2.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_DIRS = {"tests", "benches", "fuzz", "cases"}
TEST_FILE = re.compile(r"(^|_)tests?\.rs$")


def is_test_path(path):
    parts = path.split("/")
    return any(p in TEST_DIRS for p in parts[:-1]) or bool(TEST_FILE.search(parts[-1]))


def skip_literal(text, i):
    """The index after the string, char or comment starting at `i`, or None."""
    if text.startswith("//", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if text.startswith("/*", i):
        depth, j = 1, i + 2
        while j < len(text) and depth:
            if text.startswith("/*", j):
                depth, j = depth + 1, j + 2
            elif text.startswith("*/", j):
                depth, j = depth - 1, j + 2
            else:
                j += 1
        return j
    raw = re.match(r'b?r(#*)"', text[i:i + 300])
    if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
        close = '"' + raw.group(1)
        end = text.find(close, i + raw.end())
        return len(text) if end < 0 else end + len(close)
    if text[i] == '"':
        j = i + 1
        while j < len(text) and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return j + 1
    char = re.match(r"'(\\.[^']*|[^\\'])'", text[i:i + 12])
    if char:
        return i + char.end()
    return None


def item_end(text, start):
    """The index after the item starting at `start`: through its matching `}` or its `;`."""
    depth, i = 0, start
    while i < len(text):
        after = skip_literal(text, i)
        if after is not None:
            i = after
            continue
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == ";" and depth == 0:
            return i + 1
        i += 1
    return len(text)


def blank(text):
    """`text` with every `#[cfg(test)]` item replaced by as many empty lines."""
    out, i = [], 0
    for found in re.finditer(r"#\[cfg\(test\)\]", text):
        if found.start() < i:
            continue
        end = item_end(text, found.end())
        out.append(text[i:found.start()])
        out.append("\n" * text.count("\n", found.start(), end))
        i = end
    out.append(text[i:])
    return "".join(out)


def copy_tree(rev, into):
    files = subprocess.run(["git", "-C", ROOT, "ls-tree", "-r", "--name-only", rev],
                           check=True, capture_output=True, text=True).stdout.split("\n")
    for path in filter(None, files):
        if not path.endswith(".rs") or is_test_path(path):
            continue
        text = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{path}"], check=True,
                              capture_output=True).stdout.decode("utf-8", "replace")
        target = os.path.join(into, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as f:
            f.write(blank(text))


def main():
    args = sys.argv[1:]
    rows = 0
    if "--list" in args:
        at = args.index("--list")
        rows = int(args[at + 1])
        del args[at:at + 2]
    rev = args[0] if args else "HEAD"
    if shutil.which("duplicates") is None:
        print("count-duplicates: the `duplicates` command is not on PATH", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as copy:
        copy_tree(rev, copy)
        found = subprocess.run(["duplicates", "--repo", copy, "--most", str(max(rows, 1)),
                                "--seconds", "300"], check=True, capture_output=True, text=True)
        lines = found.stdout.strip().split("\n")
        print(f"{rev}: {lines[0]}")
        for line in lines[1:1 + rows]:
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
