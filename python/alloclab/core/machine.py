"""The machine a run was made on, and the time, as every result file records them.

API::

    machine_info() -> dict     # hostname, kernel, machine, cpus, python, cpu, memory_kb
    utc() -> str               # now, "2026-01-01T00:00:00Z"
    source(root) -> dict       # the tree a run was made from: commit, whether it had changes
"""

from __future__ import annotations

import datetime
import os
import platform

from alloclab import __version__
from alloclab.core import runner


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
    return info


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
