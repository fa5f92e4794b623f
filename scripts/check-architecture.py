#!/usr/bin/env python3
"""Checks that ARCHITECTURE.md's Entry points name only what exists.

Every `Type::member` in the Entry points section must exist in the workspace's Rust sources:
a lowercase member is a function defined (`fn member`) in a file that also implements or
declares `Type` (`impl Type`, `impl ... for Type`, `trait Type`); an uppercase one is a variant
or item of `Type` (`enum Type`/`struct Type` in a file that also names `Member`). Every bare
name in backticks that looks like a function (`decode`) must be defined somewhere, and every
path (`host-core/src/...`) must exist. Exits 1 naming each missing name.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SKIP = {"target", "fuzz", ".git", "node_modules"}


def sources():
    for path in ROOT.rglob("*.rs"):
        if not SKIP.intersection(path.relative_to(ROOT).parts):
            yield path, path.read_text(encoding="utf-8", errors="replace")


def section(text, title):
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", text, re.S | re.M)
    if not match:
        sys.exit(f"ARCHITECTURE.md has no '## {title}' section")
    return match.group(1)


def declares(text, name):
    return re.search(
        rf"\b(impl(<[^>]*>)?\s+([\w:<>, ]+\s+for\s+)?{name}\b|trait\s+{name}\b|enum\s+{name}\b|struct\s+{name}\b)",
        text,
    )


def main():
    doc = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    if not re.search(r"\A# Architecture\n(?:.*\n){0,6}## Entry points\n", doc):
        sys.exit("ARCHITECTURE.md must start with its Entry points")
    entry = section(doc, "Entry points")
    files = list(sources())
    missing = []
    for token in sorted(set(re.findall(r"`([^`]+)`", entry))):
        if "/" in token:
            if not (ROOT / token).exists():
                missing.append(f"path {token}")
            continue
        qualified = re.fullmatch(r"(\w+)::(\w+)", token)
        if qualified:
            owner, member = qualified.groups()
            if member[0].islower():
                found = any(
                    re.search(rf"\bfn {member}\b", text) and declares(text, owner)
                    for _, text in files
                )
            else:
                found = any(
                    declares(text, owner) and re.search(rf"\b{member}\b", text)
                    for _, text in files
                )
            if not found:
                missing.append(token)
        elif re.fullmatch(r"[a-z_][a-z0-9_]*", token):
            if not any(re.search(rf"\bfn {token}\b", text) for _, text in files):
                missing.append(token)
    if missing:
        print("ARCHITECTURE.md Entry points name what does not exist:", *missing, sep="\n  ")
        return 1
    print(f"ARCHITECTURE.md Entry points: every name exists ({len(set(re.findall(r'`([^`]+)`', entry)))} checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
