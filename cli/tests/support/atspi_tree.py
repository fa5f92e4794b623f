"""Reads the accessibility tree of the application named `lineup` through AT-SPI, as a screen
reader does, and prints it as JSON: one object per accessible, {frame, document, role, name,
text, depth}: the title of the window it is in, the name of the web document or the named
region (a component's box, named for its component by the host, in either language of the
host) it is in ("" outside one), and its text (up to 500 characters, where it has any).

Usage: atspi_tree.py TIMEOUT_SECONDS TITLE...; waits until a frame or a document named each
TITLE holds a push button, an entry, a progress bar, a radio button or a status region (or the
time is up).
Needs python3-gi and gir1.2-atspi-2.0 (the system Python), and the session bus in
DBUS_SESSION_BUS_ADDRESS that the host runs on.
"""
import json
import sys
import time

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402

REGIONS = {"landmark", "section", "panel", "form"}
MARKERS = (" — LineUp question", " — LineUp 问题")
CONTENT = {"push button", "entry", "progress bar", "radio button", "status bar",
           "notification", "heading", "paragraph", "toggle button"}


def walk(node, frame, document, depth, out):
    try:
        role, name = node.get_role_name(), node.get_name() or ""
    except Exception:
        return
    if role == "frame":
        frame = name
    if role == "document web" or (role in REGIONS and name.endswith(MARKERS)):
        document = name
    try:
        iface = node.get_text_iface()
        text = iface.get_text(0, min(iface.get_character_count(), 500)) if iface else ""
    except Exception:
        text = ""
    out.append({"frame": frame, "document": document, "role": role, "name": name,
                "text": text, "depth": depth})
    try:
        count = node.get_child_count()
    except Exception:
        return
    for i in range(min(count, 500)):
        try:
            child = node.get_child_at_index(i)
        except Exception:
            continue
        if child is not None and depth < 60:
            walk(child, frame, document, depth + 1, out)


def tree():
    out = []
    desktop = Atspi.get_desktop(0)
    for i in range(desktop.get_child_count()):
        app = desktop.get_child_at_index(i)
        if app is not None and app.get_name() == "lineup":
            walk(app, "", "", 0, out)
    return out


def main():
    deadline = time.time() + float(sys.argv[1])
    titles = sys.argv[2:]
    while True:
        out = tree()
        ready = all(any(t in (n["frame"], n["document"]) and n["role"] in CONTENT for n in out)
                    for t in titles)
        if ready or time.time() > deadline:
            print(json.dumps(out))
            return
        time.sleep(0.3)


main()
