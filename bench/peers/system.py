"""What the harness reads from the machine: CPU ticks of processes and of
the whole system (/proc), free ports, binaries, CPUs to pin to, and a
description of the machine for the report."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path
from typing import Optional

from .common import CLK_TCK, log


def find_binary(name: str) -> Optional[str]:
    """`name` on PATH, or in the places Go, cargo and Debian put binaries."""
    found = shutil.which(name)
    if found:
        return found
    candidates = [
        Path(os.environ.get("GOPATH", Path.home() / "go")) / "bin" / name,
        Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo")) / "bin" / name,
        Path("/usr/sbin") / name,
        Path("/usr/local/sbin") / name,
    ]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def proc_cpu_ticks(pid: int) -> int:
    """utime + stime of a process, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    # The command name (field 2) may contain spaces: split after its ')'.
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[11]) + int(fields[12])


def system_busy_ticks() -> int:
    """user + nice + system over all CPUs, in clock ticks (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[1]) + int(fields[2]) + int(fields[3])


def process_ticks() -> dict[int, tuple[str, int]]:
    """Every process's command name and utime + stime (clock ticks)."""
    snapshot = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
        except OSError:
            continue
        comm = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        snapshot[int(entry)] = (comm, int(fields[11]) + int(fields[12]))
    return snapshot


def top_others(before: dict, after: dict, exclude: set[int], wall: float) -> list[list]:
    """The processes (other than `exclude`) that used the most CPU between
    two snapshots, as [name, share of one core]; those that exited in between
    are not seen."""
    used: dict[str, int] = {}
    for pid, (comm, ticks) in after.items():
        if pid in exclude:
            continue
        delta = ticks - before.get(pid, (comm, 0))[1]
        if delta > 0:
            used[comm] = used.get(comm, 0) + delta
    ranked = sorted(used.items(), key=lambda kv: -kv[1])[:3]
    return [[comm, round(ticks / CLK_TCK / wall, 3)] for comm, ticks in ranked if ticks / CLK_TCK / wall >= 0.01]


def children_of(pid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
        except OSError:
            continue
        ppid = int(text[text.rindex(")") + 2 :].split()[1])
        if ppid == pid:
            kids.append(int(entry))
    return kids

def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def port_accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False

def machine_info() -> dict:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "kernel": os.uname().release,
        "hostname_hidden": True,
    }

def pick_cpus() -> tuple[Optional[int], Optional[int]]:
    """(client CPU, server CPU): 0 and 1 when both are ours."""
    allowed = sorted(os.sched_getaffinity(0))
    if 0 in allowed and 1 in allowed:
        return 0, 1
    if len(allowed) >= 2:
        return allowed[0], allowed[1]
    log("warning: fewer than 2 CPUs available; running without CPU pinning")
    return None, None
