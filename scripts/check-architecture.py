#!/usr/bin/env python3
"""Checks that ARCHITECTURE.md's Entry points name only what exists.

Every `Type::member` in the Entry points section must exist in the workspace's Rust sources:
a lowercase member is a function defined (`fn member`) in a file that also implements or
declares `Type` (`impl Type`, `impl ... for Type`, `trait Type`); an uppercase one is a variant
or item of `Type` (`enum Type`/`struct Type` in a file that also names `Member`). Every bare
name in backticks that looks like a function (`decode`) must be defined somewhere, and every
path (`host-core/src/...`) must exist.

Every arrow `A → B` of a flow (a bullet; `;` starts a new chain) whose step `A` begins with a
function (`Type::member`, lowercase) must be a real hop: the last name of the first thing
named in step `B` (a function, a variant, a method) appears in `A`'s body, where `A` calls it
or queues it for a named hop (an effect the interpreter takes next). An arrow from a variant,
or into words (`the platform view`), is the interpreter's or the platform's hop and is not
checked. The page must stay under 400 lines. Exits 1 naming each missing name and each
broken arrow.
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
    # The cheap test first: most files do not name the type at all. Then only lines that
    # start an item are tried (`impl … Name`, `impl … for Name`, `trait`, `enum`, `struct`).
    if name not in text:
        return None
    return re.search(
        rf"^[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?"
        rf"(?:impl(?:<[^>\n]*>)?[ \t]+(?:[^\n{{]*?[ \t]+for[ \t]+)?{name}\b"
        rf"|(?:trait|enum|struct)[ \t]+{name}\b)",
        text,
        re.M,
    )


def defines_fn(text, name):
    """Whether `text` defines a function `name` (the substring test first: it is cheap)."""
    return f"fn {name}" in text and re.search(rf"\bfn {name}\b", text)


MAX_LINES = 400


def body_of(text, name):
    """The bodies of every `fn name` in `text` (from its `{` to the matching `}`)."""
    bodies = []
    for found in re.finditer(rf"\bfn {name}\b", text):
        start = text.find("{", found.end())
        if start < 0:
            continue
        depth, i = 0, start
        while i < len(text):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        bodies.append(text[start:i])
    return bodies


def broken_arrows(entry, files):
    """Each `A → B` of the flows whose `A`'s body does not name `B`."""
    broken = []
    for flow in re.split(r"\n- |;", entry):
        parts = flow.split("→")
        steps = [re.findall(r"`([^`]+)`", step) for step in parts]
        for (before, after), text in zip(zip(steps, steps[1:]), parts[1:]):
            # An arrow into words (the platform's part) is not checked.
            if not before or not after or not text.strip().startswith("`"):
                continue
            source = re.fullmatch(r"(\w+)::([a-z_]\w*)", before[0])
            if not source:
                continue
            owner, member = source.groups()
            target = after[0].split("::")[-1].split("(")[0]
            bodies = [
                body
                for _, text in files
                if declares(text, owner)
                for body in body_of(text, member)
            ]
            if not any(re.search(rf"\b{re.escape(target)}\b", body) for body in bodies):
                broken.append(f"{before[0]} → {after[0]}")
    return broken


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
                    defines_fn(text, member) and declares(text, owner)
                    for _, text in files
                )
            else:
                found = any(
                    member in text and declares(text, owner) and re.search(rf"\b{member}\b", text)
                    for _, text in files
                )
            if not found:
                missing.append(token)
        elif re.fullmatch(r"[a-z_][a-z0-9_]*", token):
            if not any(defines_fn(text, token) for _, text in files):
                missing.append(token)
    broken = broken_arrows(entry, files)
    lines = doc.count("\n")
    if missing or broken or lines >= MAX_LINES:
        if missing:
            print("ARCHITECTURE.md Entry points name what does not exist:", *missing, sep="\n  ")
        if broken:
            print("ARCHITECTURE.md Entry points: arrows whose first side does not name the second:",
                  *broken, sep="\n  ")
        if lines >= MAX_LINES:
            print(f"ARCHITECTURE.md has {lines} lines; keep it under {MAX_LINES}")
        return 1
    print(
        f"ARCHITECTURE.md Entry points: every name exists "
        f"({len(set(re.findall(r'`([^`]+)`', entry)))} checked), every arrow is a hop; {lines} lines"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
