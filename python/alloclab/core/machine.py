"""The machine a run was made on, and the time, as every result file records them.

API::

    machine_info() -> dict     # hostname, kernel, machine, cpus, python, cpu, memory_kb
    utc() -> str               # now, "2026-01-01T00:00:00Z"
"""

from __future__ import annotations

import datetime
import os
import platform


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
