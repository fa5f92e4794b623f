#!/usr/bin/env python3
"""Runs the workspace's tests as `cargo test --workspace` does, with the `lineup` binary's
integration tests (cli/tests: each starts real `lineup host` processes and mostly waits on them)
two at a time, each lane on an X server of its own; then every other test binary one after the
other on the caller's display; then the doc tests.

    python3 scripts/run-tests.py [--lanes N]

Build first with the same selection (`cargo test --workspace --no-run`); this builds nothing new.
A binary runs from its package's directory, as cargo runs it. Each binary's output is printed
whole when it ends, with its time; the run fails, naming them, if any binary failed. The kiosk
binaries run one after another in one lane (they start display servers of their own).
"""

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time


# Seconds each lane binary took in a fresh clone's run on 2 idle cores: the longest start first,
# so the lanes end together. An unknown binary counts as 10 s.
KNOWN = {
    "components": 107,
    "faults": 45,
    "revocation": 43,
    "preview": 34,
    "ws_link": 19,
    "consent_truth": 17,
    "idle_deadlines": 16,
    "stdio_agent": 10,
    "mcp": 28,
}

# Binaries of a group run one after another in one lane.
GROUPS = {"kiosk": ("kiosk", "kiosk_deploy", "kiosk_link", "kiosk_regions")}

print_lock = threading.Lock()


def artifacts():
    """Every test executable of `cargo test --workspace`, in cargo's order, with its package."""
    build = subprocess.run(
        ["cargo", "test", "--workspace", "--no-run", "--message-format=json-render-diagnostics"],
        stdout=subprocess.PIPE,
        check=True,
        text=True,
    )
    found = []
    for line in build.stdout.splitlines():
        message = json.loads(line)
        if message.get("reason") != "compiler-artifact":
            continue
        if not message["profile"]["test"] or not message.get("executable"):
            continue
        target = message["target"]
        # `path+file:///…/cli#lineup-cli@0.1.0` (or `lineup-cli 0.1.0 (path+file://…)`).
        package_id = message["package_id"]
        package = package_id.split("#")[-1].split("@")[0].split(" ")[0]
        found.append(
            {
                "exe": message["executable"],
                "dir": os.path.dirname(message["manifest_path"]),
                "package": package,
                "name": target["name"],
                "kind": target["kind"][0],
            }
        )
    return found


def xvfb():
    """Starts an X server on a free display: the server picks the number and writes it once it
    listens (`-displayfd`), so servers started at once never take the same one."""
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", "1", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    number = server.stdout.readline().strip()
    if not number.isdigit():
        server.kill()
        raise RuntimeError(f"Xvfb did not say which display it took ({number!r})")
    return server, f":{number}"


def run(binary, display, failed):
    """Runs one test binary on `display` (the caller's when `None`); prints its output whole
    when it ends."""
    start = time.monotonic()
    # As cargo runs it: from its package's directory, with the package's variables.
    env = dict(os.environ, CARGO_MANIFEST_DIR=binary["dir"], CARGO_PKG_NAME=binary["package"])
    if display is not None:
        env["DISPLAY"] = display
        env.pop("XAUTHORITY", None)
    done = subprocess.run(
        [binary["exe"]],
        cwd=binary["dir"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    took = time.monotonic() - start
    label = f"{os.path.relpath(binary['dir'])}: {binary['kind']} {binary['name']}"
    with print_lock:
        print(f"     Running {label} ({took:.0f} s)", flush=True)
        sys.stdout.write(done.stdout)
        if done.returncode != 0:
            print(f"error: {label} failed (exit {done.returncode})", flush=True)
            failed.append(label)
        sys.stdout.flush()


def lane_items(binaries):
    """The lane binaries as items of one or more binaries, longest first."""
    items = []
    grouped = {name: [] for name in GROUPS}
    for binary in binaries:
        group = next((g for g, names in GROUPS.items() if binary["name"] in names), None)
        if group is None:
            items.append([binary])
        else:
            grouped[group].append(binary)
    items.extend(group for group in grouped.values() if group)
    cost = lambda item: sum(KNOWN.get(b["name"], 10) for b in item)
    return sorted(items, key=cost, reverse=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lanes", type=int, default=2)
    lanes = parser.parse_args().lanes
    binaries = artifacts()
    in_lanes = [b for b in binaries if b["package"] == "lineup-cli" and b["kind"] == "test"]
    rest = [b for b in binaries if b not in in_lanes]
    failed = []
    ran = []

    start = time.monotonic()
    work = queue.Queue()
    for item in lane_items(in_lanes):
        work.put(item)

    def lane():
        try:
            server, display = xvfb()
        except (OSError, RuntimeError) as e:
            with print_lock:
                print(f"error: a lane's X server: {e}", flush=True)
                failed.append("a lane's X server")
            return
        try:
            while True:
                try:
                    item = work.get_nowait()
                except queue.Empty:
                    return
                for binary in item:
                    run(binary, display, failed)
                    ran.append(binary["name"])
        finally:
            server.terminate()
            server.wait()

    threads = [threading.Thread(target=lane) for _ in range(max(1, lanes))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if len(ran) != len(in_lanes):
        failed.append(f"{len(in_lanes) - len(ran)} of the lineup binary's test binaries never ran")
    print(
        f"     the lineup binary's {len(in_lanes)} test binaries: "
        f"{time.monotonic() - start:.0f} s in {lanes} lanes",
        flush=True,
    )

    for binary in rest:
        run(binary, None, failed)

    doc = subprocess.run(["cargo", "test", "--workspace", "--doc"])
    if doc.returncode != 0:
        failed.append("doc tests")

    if failed:
        print(f"error: {len(failed)} failed: " + "; ".join(failed), flush=True)
        return 1
    print(f"every test binary passed ({len(binaries)} and the doc tests)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
