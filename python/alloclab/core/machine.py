"""The machine a run was made on, and the time, as every result file records them.

API::

    machine_info() -> dict     # hostname, kernel, machine, cpus, python, cpu, memory_kb, free_page_reporting
    free_page_reporting(sys) -> str | None   # whether this guest hands free memory back to its host
    utc() -> str               # now, "2026-01-01T00:00:00Z"
    source(root) -> dict       # the tree a run was made from: commit, whether it had changes
    record(command, started) -> dict   # source() of this checkout, the command line, start and end
    during(load) -> dict       # machine_info() with the load a run measured (core.load.Load)
"""

from __future__ import annotations

import datetime
import os
import platform

from alloclab import __version__
from alloclab.core import paths, runner


def machine_info() -> dict:
    info = {"hostname": platform.node(), "kernel": platform.release(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo", encoding="utf-8") as f:
            info["memory_kb"] = int(f.readline().split()[1])
    except (OSError, ValueError, IndexError):
        pass
    reporting = free_page_reporting()
    if reporting:
        info["free_page_reporting"] = reporting
    return info


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as f:
            return f.read().strip()
    except (OSError, ValueError):
        return None


VIRTIO_BALLOON = 5             # the virtio device id of a memory balloon
BALLOON_F_REPORTING = 5        # its feature bit: free page reporting


def free_page_reporting(sys: str = "/sys") -> str | None:
    """How this machine's kernel hands free memory back to a hypervisor, or None: a virtio balloon
    that negotiated free page reporting gives the host every free block of 2^order pages or more
    (order 9: 2 MiB) that stays free a moment, and a run that takes such a block faults its pages
    in from the host again. On such a guest a run after the machine idled is slower than one right
    after another (docs/notes/2026-11-30-huge-pages-host.md), for every allocator: the record says
    so, since a run's times depend on it. SYS is sysfs's root."""
    base = os.path.join(sys, "bus", "virtio", "devices")
    try:
        devices = sorted(os.listdir(base))
    except OSError:
        return None
    for dev in devices:
        ident = _read(os.path.join(base, dev, "device"))
        bits = _read(os.path.join(base, dev, "features")) or ""
        try:
            balloon = ident is not None and int(ident, 16) == VIRTIO_BALLOON
        except ValueError:
            continue
        if balloon and len(bits) > BALLOON_F_REPORTING and bits[BALLOON_F_REPORTING] == "1":
            order = _read(os.path.join(sys, "module", "page_reporting", "parameters", "page_reporting_order"))
            return f"on ({dev}'s balloon, blocks of order {order} and up)" if order else f"on ({dev}'s balloon)"
    return None


def utc() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def source(root: str) -> dict:
    """The alloclab that made a run: its version, and, from a git checkout, the commit and whether
    tracked files differed from it (then the commit alone does not say what ran); an installed
    package has no commit."""
    out: dict = {"alloclab": __version__, "commit": None, "changed": None}
    if not os.path.exists(os.path.join(root, ".git")):  # an installed package (inside a checkout or not)
        return out
    head = runner.output(["git", "-C", root, "rev-parse", "HEAD"])
    if head:
        out["commit"] = head.strip()
        status = runner.output(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"])
        out["changed"] = None if status is None else bool(status.strip())
    return out


def record(command: list, started: str) -> dict:
    """Where a run came from, as every kept run records it (`record`): the tree (source() of the
    checkout this alloclab runs from), the command line, when the run started (STARTED, from
    utc()) and when it finished (now): what a reader needs to obtain the run again."""
    return {**source(paths.SOURCE_ROOT), "command": list(command), "started": started, "finished": utc()}


def during(load) -> dict:
    """The machine a run was made on with how busy it was meanwhile (LOAD: a core.load.Load)."""
    return {**machine_info(), "load": load.as_dict()}
