"""rss_series.csv: the resident memory of one run per cell, sampled over time (compare
--rss-series), its one writer and its one reader.

One row per sample: the cell (allocator, littering level as a number, as in results.csv), the seconds since the program
started, and the resident KiB of the program and its descendants (/proc/PID/statm, as RSS
counts it: pages given back with MADV_FREE count until the kernel takes them).

API::

    write_rss_series(path, series)   # series: {(allocator, Level): [[t_s, rss_kb], ...]}
    read_rss_series(path) -> {(allocator, Level): [[t_s, rss_kb], ...]}   # LabError: not this file
    COLUMNS
"""

from __future__ import annotations

import csv

from alloclab import LabError
from alloclab.core.levels import Level

COLUMNS = ["allocator", "adv", "t_s", "rss_kb"]


def write_rss_series(path: str, series: dict) -> str:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for (allocator, level), samples in series.items():
            for t, kb in samples:
                w.writerow([allocator, int(level), f"{t:.4f}", int(kb)])
    return path


def read_rss_series(path: str) -> dict:
    out: dict = {}
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = csv.reader(f)
            if next(rows, None) != COLUMNS:
                raise LabError(f"{path!r} is not an RSS series (expected the columns {', '.join(COLUMNS)})")
            for a, adv, t, kb in rows:
                out.setdefault((a, Level.of(int(adv))), []).append([float(t), int(kb)])
    except OSError as e:
        raise LabError(f"cannot read RSS series {path!r}: {e.strerror or e}") from None
    except ValueError as e:
        raise LabError(f"malformed RSS series {path!r}: {e}") from None
    return out
