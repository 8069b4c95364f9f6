"""What else the machine was doing while the lab measured: load averages, and the share of the
CPUs that other processes used or the hypervisor stole, from /proc.

A timed result is only as good as the quiet it was measured in. LoadWatch reads /proc/stat and
/proc/loadavg when a run starts and when it stops; the CPU time the lab itself and the programs
it ran used (os.times of this process and its waited-for children) is subtracted from all the
busy time, and what is left was other processes'.

API::

    watch = LoadWatch.start()
    ...                                   # run things
    load = watch.stop()                   # -> Load
    load.busy                             # others + stolen above BUSY_SHARE of the CPUs
    load.as_dict()                        # for verdicts.json's machine.load
"""

from __future__ import annotations

import dataclasses
import os
import time

BUSY_SHARE = 0.10  # other processes' (and stolen) share of the CPUs above which a run is called busy


@dataclasses.dataclass(frozen=True)
class CpuTimes:
    busy: int    # jiffies of all CPUs not idle or waiting for I/O (steal included)
    steal: int
    total: int

    @staticmethod
    def read(text: str | None = None) -> "CpuTimes | None":
        try:
            if text is None:
                with open("/proc/stat", encoding="ascii") as f:
                    text = f.readline()
            parts = text.split()
            if parts[0] != "cpu":
                return None
            v = [int(x) for x in parts[1:9]] + [0] * max(0, 8 - len(parts[1:9]))
        except (OSError, ValueError, IndexError):
            return None
        user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
        total = user + nice + system + idle + iowait + irq + softirq + steal
        return CpuTimes(busy=total - idle - iowait, steal=steal, total=total)


def _loadavg() -> tuple[float, float, float] | None:
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            a, b, c = f.read().split()[:3]
        return float(a), float(b), float(c)
    except (OSError, ValueError):
        return None


def _own_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@dataclasses.dataclass(frozen=True)
class Load:
    seconds: float               # wall-clock time watched
    others_share: float | None   # of all CPUs' time, used by other processes
    steal_share: float | None    # of all CPUs' time, taken by the hypervisor
    loadavg_start: tuple | None
    loadavg_end: tuple | None
    cpus: int

    @property
    def busy(self) -> bool:
        shares = [s for s in (self.others_share, self.steal_share) if s is not None]
        return bool(shares) and sum(shares) > BUSY_SHARE

    def words(self) -> str:
        if self.others_share is None:
            return "the machine's load could not be read (/proc/stat)"
        state = "busy" if self.busy else "quiet"
        return (f"{state}: other processes used {self.others_share:.0%} of the {self.cpus} CPUs' time"
                f" and {self.steal_share:.0%} was stolen while it ran"
                + (f"; load average {self.loadavg_end[0]:.2f} at the end" if self.loadavg_end else ""))

    def as_dict(self) -> dict:
        return {"seconds": round(self.seconds, 3), "cpus": self.cpus,
                "others_share": None if self.others_share is None else round(self.others_share, 4),
                "steal_share": None if self.steal_share is None else round(self.steal_share, 4),
                "loadavg_start": self.loadavg_start, "loadavg_end": self.loadavg_end,
                "busy": self.busy, "busy_share": BUSY_SHARE}


def shares(before: CpuTimes, after: CpuTimes, own_seconds: float, hz: int) -> tuple[float, float]:
    """(others' share, stolen share) of all CPUs' time between two readings, given the CPU
    seconds the watcher's own process tree used meanwhile."""
    total = after.total - before.total
    if total <= 0:
        return 0.0, 0.0
    steal = after.steal - before.steal
    others = (after.busy - before.busy) - steal - own_seconds * hz
    return max(0.0, others / total), max(0.0, steal / total)


@dataclasses.dataclass
class LoadWatch:
    t0: float
    cpu0: CpuTimes | None
    own0: float
    loadavg0: tuple | None

    @classmethod
    def start(cls) -> "LoadWatch":
        return cls(time.monotonic(), CpuTimes.read(), _own_seconds(), _loadavg())

    def stop(self) -> Load:
        cpu1, own1 = CpuTimes.read(), _own_seconds()
        others = steal = None
        if self.cpu0 and cpu1:
            others, steal = shares(self.cpu0, cpu1, own1 - self.own0, os.sysconf("SC_CLK_TCK"))
        return Load(time.monotonic() - self.t0, others, steal, self.loadavg0, _loadavg(), os.cpu_count() or 1)
