"""custom_ops: how many requests a real program's own allocator served, read from that
allocator's own counter in a counted run (untimed, clean heap, glibc) of the same command
the study times, so counting never changes the timed work. Never derived from the
variant's name: a naive variant whose allocator still served requests shows it.

    lookaside  SQLite's shell `.stats` after the work: "Successful lookaside attempts"
               (sqlite3_db_status SQLITE_DBSTATUS_LOOKASIDE_HIT)
    pymalloc   sys.getallocatedblocks() once the script has ended, its data alive: the
               blocks pymalloc holds (a lower bound of what it served; 0 when it is off)
    apr        liballoclab_apr.so's pool_ops: requests APR's pools served (0 under the emulator)
    gslice     liballoclab_gslice.so's slab_ops: requests GSlice's slabs served

API::

    count(program, timeout=300) -> int            # LabError when the run or its counter fails
    parse(how, text) -> int                       # LabError when the counter's line is missing
    drop_unverified(rows) -> (rows, warnings)    # real pairs custom_ops does not show on and off: custom rows out
"""

from __future__ import annotations

import os
import re
import tempfile

from alloclab import LabError
from alloclab.core import runner

PATTERNS = {
    "lookaside": re.compile(r"^Successful lookaside attempts:\s+(\d+)", re.M),
    "pymalloc": re.compile(r"^pymalloc blocks in use: (\d+)$", re.M),
    "apr": re.compile(r"^apr: pid=\d+ pool_ops=(\d+) malloc_ops=\d+$", re.M),
    "gslice": re.compile(r"^gslice: pid=\d+ slab_ops=(\d+) malloc_ops=\d+$", re.M),
}
NAIVE = ("malloc", "emulator")   # a real program's naive variants: its allocator switched off


def parse(how: str, text: str) -> int:
    """The count in a counted run's output (summed over the processes that logged one)."""
    found = PATTERNS[how].findall(text)
    if not found:
        raise LabError(f"the {how} counter printed no count")
    return sum(int(n) for n in found)


def count(prog, timeout: float = 300) -> int:
    """Run PROG.counted once and read its allocator's counter."""
    c = prog.counted
    if c.log:
        try:
            os.remove(c.log)
        except FileNotFoundError:
            pass
    with tempfile.TemporaryFile() as out:
        r = runner.run(c.cmd, timeout=timeout, stdout=out, stderr=out)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    if not r.ok:
        raise LabError(f"its counted run ended with status {r.status}: {text.strip()[-200:]}")
    if c.log:
        try:
            with open(c.log, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise LabError(f"its counter wrote no log ({e})") from None
    return parse(c.how, text)


def drop_unverified(rows: list) -> tuple[list, list[str]]:
    """ROWS without the custom rows of each real program whose pair (custom against its naive
    variant) custom_ops does not show on and off — its custom rows must all count more than 0
    and its naive rows all 0 — and one warning per pair dropped. The naive rows stay (a real
    program on each allocator). Real programs without an allocator of their own (no custom
    variant) are not pairs."""
    ops: dict = {}
    for r in rows:
        if r.origin == "real" and r.ok and (r.variant == "custom" or r.variant in NAIVE):
            ops.setdefault(r.workload, {}).setdefault("custom" if r.variant == "custom" else "naive",
                                                      set()).add(r.custom_ops)
    dropped, warnings = set(), []
    for w, sides in sorted(ops.items()):
        custom, naive = sides.get("custom", set()), sides.get("naive", set())
        if not custom or not naive:
            continue
        on = all(n is not None and n > 0 for n in custom)
        off = all(n == 0 for n in naive)
        if not (on and off):
            dropped.add(w)
            warnings.append(f"{w}: custom_ops does not show its allocator on and off (custom {_show(custom)}, "
                            f"naive {_show(naive)}): the pair is dropped, not judged")
    kept = [r for r in rows if not (r.workload in dropped and r.origin == "real" and r.variant == "custom")]
    return kept, warnings


def _show(values: set) -> str:
    return "/".join("empty" if v is None else str(v) for v in sorted(values, key=lambda v: -1 if v is None else v))
