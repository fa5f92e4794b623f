#!/usr/bin/env python3
"""Runs a command under a seccomp allow-list built from systemd's system call groups, as a
unit's SystemCallFilter= with SystemCallErrorNumber=EPERM does: every other system call fails
with EPERM, in the command and in everything it starts. The groups are expanded with
`systemd-analyze syscall-filter`, the filter loaded with libseccomp (through ctypes: no Python
package needed). For cli/tests/kiosk_deploy.rs.

Usage: seccomp_exec.py GROUP... -- COMMAND...   (say: @system-service @mount -- lineup kiosk …)"""
import ctypes, os, subprocess, sys

def expand(name, seen):
    if not name.startswith("@"):
        return {name}
    if name in seen:
        return set()
    seen.add(name)
    out = subprocess.run(["systemd-analyze", "syscall-filter", name], capture_output=True, text=True, check=True).stdout
    calls = set()
    for line in out.splitlines()[1:]:
        item = line.strip()
        if not item or item.startswith("#"):
            continue
        calls |= expand(item, seen)
    return calls

sep = sys.argv.index("--")
groups = " ".join(sys.argv[1:sep]).split()
command = sys.argv[sep + 1:]
allowed = set()
for g in groups:
    allowed |= expand(g, set())
lib = ctypes.CDLL("libseccomp.so.2")
lib.seccomp_init.restype = ctypes.c_void_p
lib.seccomp_init.argtypes = [ctypes.c_uint32]
lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
lib.seccomp_load.argtypes = [ctypes.c_void_p]
lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
EPERM = 1
ctx = lib.seccomp_init(0x00050000 | EPERM)  # SCMP_ACT_ERRNO(EPERM)
if not ctx:
    sys.exit("seccomp_init failed")
for name in sorted(allowed):
    nr = lib.seccomp_syscall_resolve_name(name.encode())
    if nr < 0:
        continue
    rc = lib.seccomp_rule_add(ctx, 0x7FFF0000, nr, 0)  # SCMP_ACT_ALLOW
    if rc != 0:
        sys.exit(f"seccomp_rule_add({name}) failed: {rc}")
rc = lib.seccomp_load(ctx)
if rc != 0:
    sys.exit(f"seccomp_load failed: {rc}")
print(f"seccomp: {len(allowed)} system calls allowed from {' '.join(groups)}", file=sys.stderr)
os.execvp(command[0], command)
