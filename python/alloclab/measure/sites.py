"""Allocation sites: read what liballoclab_sites.so wrote, name the frames, rank and compare.

A *site* is one call stack that allocated; the *allocating function* of a site is its first
frame below the allocator's entry points (the shim's own frames and the malloc family),
as heaptrack and DHAT name it. Rows are ranked by peak bytes (held at the moment the
whole heap peaked), total bytes, calls, temporaries and leaks.

Frames are named with addr2line where the module has a symbol table (static functions,
file and line, inlined frames expanded innermost first), else with the dynamic symbol
the shim read with dladdr, else as module+offset.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Sequence

from alloclab import LabError
from alloclab.core.results.sites import KIND as FORMAT_KIND, read_record
SHIM_NAME = "liballoclab_sites.so"
# The allocator's entry points: a frame with one of these names is not the allocating function.
ENTRY_POINTS = frozenset({
    "malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "aligned_alloc",
    "memalign", "valloc", "pvalloc", "__libc_malloc", "__libc_calloc", "__libc_realloc",
    "__libc_memalign", "operator new", "operator new[]", "operator delete", "operator delete[]",
})
METRICS = ("peak_bytes", "bytes", "calls", "temporaries", "leaked_bytes")
METRIC_TITLES = {"peak_bytes": "peak bytes", "bytes": "total bytes", "calls": "calls",
                 "temporaries": "temporaries", "leaked_bytes": "leaked bytes"}


class SitesError(LabError):
    """A sites file that cannot be read or named."""


@dataclasses.dataclass(frozen=True)
class Frame:
    function: str
    module: str
    location: str = ""  # file:line where known

    def label(self) -> str:
        at = f" ({self.location})" if self.location else ""
        return f"{self.function}{at} in {Path(self.module).name}"


@dataclasses.dataclass
class Counts:
    calls: int = 0
    bytes: int = 0
    peak_bytes: int = 0
    max_live_bytes: int = 0
    leaked_bytes: int = 0
    leaked_objects: int = 0
    temporaries: int = 0
    lifetimes: int = 0

    def add(self, other: "Counts") -> None:
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclasses.dataclass
class Site:
    stack: tuple[Frame, ...]  # innermost first, the allocator's frames removed
    counts: Counts

    @property
    def function(self) -> Frame:
        return self.stack[0] if self.stack else Frame("[unknown]", "?")


@dataclasses.dataclass
class SiteProfile:
    sites: list[Site]
    allocations: int
    peak_bytes: int
    leaked_bytes: int
    temporary_window: int
    peak_at: int
    processes: int
    complete: bool


# ------------------------------------------------------------------ reading

def sites_files(path: Path) -> list[Path]:
    """The sites.PID.json files at path (a file, or a directory holding them)."""
    if path.is_dir():
        files = sorted(path.glob("sites.*.json"))
        if not files:
            raise SitesError(f"{path}: no sites.PID.json files (was the program run with --stacks?)")
        return files
    if not path.exists():
        raise SitesError(f"{path}: no such file or directory")
    return [path]


def _read(path: Path) -> dict:
    try:
        return read_record(str(path))
    except LabError as e:
        raise SitesError(str(e)) from None


def _elf_is_exec(path: str) -> bool:
    """True for a fixed-address executable (ET_EXEC): its addresses are absolute."""
    try:
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError:
        return False
    return head[:4] == b"\x7fELF" and int.from_bytes(head[16:18], "little") == 2


def _has_symtab(path: str) -> bool:
    """True when the ELF file has a full symbol table (.symtab): without one, addr2line names an
    address by the nearest exported symbol below it, which for a static function is another one."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2:  # ELF64 only
                return False
            shoff = int.from_bytes(head[40:48], "little")
            shentsize = int.from_bytes(head[58:60], "little")
            shnum = int.from_bytes(head[60:62], "little")
            f.seek(shoff)
            table = f.read(shentsize * shnum)
    except OSError:
        return False
    return any(int.from_bytes(table[i * shentsize + 4:i * shentsize + 8], "little") == 2
               for i in range(shnum))


def _addr2line(module: str, addresses: Sequence[int]) -> dict[int, list[tuple[str, str]]]:
    """address -> [(function, file:line)], innermost inlined frame first; {} when unknown."""
    tool = shutil.which("addr2line")
    if not tool or not addresses or not Path(module).is_file() or not _has_symtab(module):
        return {}
    query = "".join(f"{a:#x}\n" for a in addresses) + "0\n"  # a sentinel ends each answer
    try:
        out = subprocess.run([tool, "-f", "-C", "-i", "-a", "-e", module], input=query,
                             capture_output=True, text=True, timeout=300).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    names: dict[int, list[tuple[str, str]]] = {}
    lines = out.splitlines()
    i, cur = 0, None
    while i < len(lines):
        line = lines[i]
        if line.startswith("0x") and (i + 1 >= len(lines) or not lines[i + 1].startswith("0x")):
            cur = int(line, 16)
            names.setdefault(cur, [])
            i += 1
            continue
        if cur is not None and i + 1 < len(lines):
            fn, loc = line, lines[i + 1]
            if fn != "??":
                names[cur].append((fn, "" if loc.startswith("??") else loc.split(" (")[0]))
            i += 2
            continue
        i += 1
    return {a: v for a, v in names.items() if v}


def _short(fn: str) -> str:
    """operator new(unsigned long) -> operator new; keeps other names whole."""
    return fn.split("(")[0] if fn.startswith("operator ") else fn


def _name_frames(d: dict) -> list[list[Frame]]:
    """Each site's frames, named, innermost first (inlined frames expanded)."""
    modules = [m["path"] for m in d["modules"]]
    wanted: dict[int, set[int]] = defaultdict(set)
    for s in d["sites"]:
        for mod, off, _sym, _soff in s["frames"]:
            if mod >= 0:
                wanted[mod].add(int(off, 16))
    named: dict[int, dict[int, list[tuple[str, str]]]] = {}
    for mod, offs in wanted.items():
        path = modules[mod]
        if Path(path).name == SHIM_NAME:
            continue
        base = int(d["modules"][mod]["base"], 16) if _elf_is_exec(path) else 0
        found = _addr2line(path, sorted(o + base for o in offs))
        named[mod] = {a - base: v for a, v in found.items()}
    stacks = []
    for s in d["sites"]:
        frames: list[Frame] = []
        for mod, off, sym, _soff in s["frames"]:
            path = modules[mod] if mod >= 0 else "?"
            if Path(path).name == SHIM_NAME:
                continue
            o = int(off, 16)
            inl = named.get(mod, {}).get(o)
            if inl:
                frames.extend(Frame(_short(fn), path, loc) for fn, loc in inl)
            elif sym:
                frames.append(Frame(_short(sym), path))
            else:
                frames.append(Frame(f"{Path(path).name}+{o:#x}", path))
        while frames and frames[0].function in ENTRY_POINTS:
            frames.pop(0)
        stacks.append(frames)
    return stacks


def load(path: Path) -> SiteProfile:
    """Every process's record at path, named and merged by stack."""
    merged: dict[tuple[Frame, ...], Counts] = {}
    totals = dict(allocations=0, peak_bytes=0, leaked_bytes=0, peak_at=0)
    window, complete, n = 1, True, 0
    for f in sites_files(path):
        d = _read(f)
        n += 1
        window = d["temporary_window"]
        complete = complete and bool(d.get("complete", False))
        totals["allocations"] += d["allocations"]
        totals["leaked_bytes"] += d["leaked_bytes"]
        if d["peak_bytes"] > totals["peak_bytes"]:
            totals["peak_bytes"], totals["peak_at"] = d["peak_bytes"], d.get("peak_at", 0)
        for s, frames in zip(d["sites"], _name_frames(d)):
            c = Counts(**{k: s.get(k, 0) for k in (f.name for f in dataclasses.fields(Counts))})
            merged.setdefault(tuple(frames), Counts()).add(c)
    sites = [Site(stack, c) for stack, c in merged.items()]
    return SiteProfile(sites, totals["allocations"], totals["peak_bytes"], totals["leaked_bytes"],
                       window, totals["peak_at"], n, complete)


# ------------------------------------------------------------------ ranking

def by_function(sites: Iterable[Site]) -> dict[Frame, Counts]:
    """Counts per allocating function (a site's first frame), summed over its stacks."""
    out: dict[Frame, Counts] = {}
    for s in sites:
        out.setdefault(s.function, Counts()).add(s.counts)
    return out


def top(rows: dict[Frame, Counts], metric: str, n: int) -> list[tuple[Frame, Counts]]:
    if metric not in METRICS:
        raise SitesError(f"unknown ranking {metric!r}; one of {', '.join(METRICS)}")
    ranked = sorted(rows.items(), key=lambda kv: (-getattr(kv[1], metric), kv[0].function))
    return [(f, c) for f, c in ranked if getattr(c, metric) > 0][:n]


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def render(profile: SiteProfile, metrics: Sequence[str] = METRICS, n: int = 10) -> str:
    rows = by_function(profile.sites)
    out = [f"{profile.allocations} allocations in {profile.processes} process(es), heap peak "
           f"{_bytes(profile.peak_bytes)}, {_bytes(profile.leaked_bytes)} leaked at exit; "
           f"temporaries: freed before {profile.temporary_window} more allocation(s)"]
    if not profile.complete:
        out.append("warning: a record was cut short (too many sites for its buffer)")
    for m in metrics:
        out.append("")
        out.append(f"top {n} by {METRIC_TITLES[m]}:")
        for f, c in top(rows, m, n):
            v = getattr(c, m)
            shown = _bytes(v) if m.endswith("bytes") else f"{v:,}"
            beside = f"{_bytes(c.bytes):>10} total" if m == "calls" else f"{c.calls:>10,} calls"
            out.append(f"  {shown:>12}  {beside}  {f.label()}")
    return "\n".join(out)


# ------------------------------------------------------------------ DHAT's viewer

def to_dhat(profile: SiteProfile, command: Sequence[str]) -> dict:
    """DHAT's JSON (file version 2), which valgrind's dh_view.html opens: one program point a
    stack, time counted in allocations."""
    ftbl = ["[root]"]
    index: dict[Frame, int] = {}
    pps = []
    for s in profile.sites:
        fs = []
        for f in s.stack:
            if f not in index:
                index[f] = len(ftbl)
                ftbl.append(f"{f.function} ({f.location or Path(f.module).name})")
            fs.append(index[f])
        c = s.counts
        pps.append({"tb": c.bytes, "tbk": c.calls, "tl": c.lifetimes, "mb": c.max_live_bytes,
                    "mbk": 0, "gb": c.peak_bytes, "gbk": 0, "eb": c.leaked_bytes,
                    "ebk": c.leaked_objects, "fs": fs or [0]})
    return {"dhatFileVersion": 2, "mode": "heap", "verb": "Allocated", "bklt": True, "bkacc": False,
            "tu": "allocations", "Mtu": "Malloc", "tuth": profile.temporary_window,
            "cmd": " ".join(command), "pid": 0, "te": max(profile.allocations, 1),
            "tg": profile.peak_at, "pps": pps, "ftbl": ftbl}


# ------------------------------------------------------------------ diff

@dataclasses.dataclass(frozen=True)
class SiteChange:
    function: Frame
    bytes_a: int
    bytes_b: int
    calls_a: int
    calls_b: int
    peak_a: int
    peak_b: int

    @property
    def bytes_change(self) -> int:
        return self.bytes_b - self.bytes_a


def diff(a: SiteProfile, b: SiteProfile) -> list[SiteChange]:
    """Each allocating function's change from a to b in bytes, calls and peak bytes, the
    largest change in bytes first (functions in only one profile count from zero)."""
    ra, rb = by_function(a.sites), by_function(b.sites)
    keys = {f.function: f for f in list(ra) + list(rb)}
    by_name_a = {f.function: c for f, c in ra.items()}
    by_name_b = {f.function: c for f, c in rb.items()}
    out = []
    for name, frame in keys.items():
        ca, cb = by_name_a.get(name, Counts()), by_name_b.get(name, Counts())
        out.append(SiteChange(frame, ca.bytes, cb.bytes, ca.calls, cb.calls, ca.peak_bytes, cb.peak_bytes))
    out.sort(key=lambda c: (-abs(c.bytes_change), -abs(c.calls_b - c.calls_a), c.function.function))
    return out
