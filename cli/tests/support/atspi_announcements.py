"""Reads, as a screen reader does, what the application named `lineup` says through its
components' live regions: every 50 ms it reads the text of each live region (the `section`
with text directly inside a component's box, a region named "<id> — LineUp question" in either
language of the host) through AT-SPI, and prints one JSON line {"region": ..., "text": ...}
each time a region's text changes. Prints "ready" first; ends after TIMEOUT seconds.

Reading rather than listening: WebKitGTK sends no AT-SPI event when a live region's text is
replaced, so a text that changes and changes back within 50 ms is missed; every announcement
held for its 2 s is read.

Usage: atspi_announcements.py TIMEOUT
Needs python3-gi and gir1.2-atspi-2.0 (the system Python), and the session bus in
DBUS_SESSION_BUS_ADDRESS that the host runs on.
"""
import json
import sys
import time

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402

MARKERS = (" — LineUp question", " — LineUp 问题")


def children(node):
    try:
        count = node.get_child_count()
    except Exception:
        return []
    out = []
    for i in range(min(count, 500)):
        try:
            child = node.get_child_at_index(i)
        except Exception:
            continue
        if child is not None:
            out.append(child)
    return out


def text_of(node):
    try:
        text = node.get_text_iface()
        return text.get_text(0, text.get_character_count()) if text else ""
    except Exception:
        return ""


def regions(node, depth, out):
    try:
        role, name = node.get_role_name(), node.get_name() or ""
    except Exception:
        return
    if role == "landmark" and name.endswith(MARKERS):
        out.append((name, node))
        return
    if depth < 40:
        for child in children(node):
            regions(child, depth + 1, out)


def live_texts():
    found = []
    desktop = Atspi.get_desktop(0)
    for app in children(desktop):
        try:
            if app.get_name() != "lineup":
                continue
        except Exception:
            continue
        boxes = []
        regions(app, 0, boxes)
        for index, (name, box) in enumerate(boxes):
            for child in children(box):
                try:
                    if child.get_role_name() != "section":
                        continue
                except Exception:
                    continue
                found.append(((index, name), text_of(child)))
    return found


def main():
    deadline = time.time() + float(sys.argv[1])
    print("ready", flush=True)
    last = {}
    while time.time() < deadline:
        for key, text in live_texts():
            if text.strip() and last.get(key) != text:
                last[key] = text
                print(json.dumps({"region": key[1], "text": text}), flush=True)
        time.sleep(0.05)


main()
