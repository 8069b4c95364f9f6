"""Two comparisons of the same program side by side: how each common cell moved.

A cell is one allocator at one littering level. For each cell the two directories share, its
ratio is the median program time of B over A's (program_s: wall minus littering), with the
paired 95% interval of the per-round ratios (round i of B over round i of A: the rounds of two
runs are as alike as two rounds of one), and whether that interval excludes 1.

API::

    CellMove                                   # one cell's move
    diff_runs(a_rows, b_rows) -> list[CellMove]  # cells in A's order
"""

from __future__ import annotations

import dataclasses

from alloclab import stats
from alloclab.core.levels import cell_key


@dataclasses.dataclass(frozen=True)
class CellMove:
    cell: str                 # "glibc/Adv_3"
    median_a: float
    median_b: float
    ratio: float              # median_b / median_a
    paired: stats.PairedRatio | None   # of the per-round ratios
    runs_a: int
    runs_b: int

    @property
    def clear(self) -> bool:
        return self.paired is not None and self.paired.n > 1 and self.paired.clear


def _by_cell(rows) -> dict:
    """cell -> {repeat: program seconds} of the ok runs, cells in the rows' order."""
    out: dict[str, dict] = {}
    for r in rows:
        if r.ok:
            out.setdefault(cell_key(r.allocator, r.adv), {})[r.repeat] = r.program_s
    return out


def diff_runs(a_rows, b_rows) -> list[CellMove]:
    a, b = _by_cell(a_rows), _by_cell(b_rows)
    moves = []
    for cell, ta in a.items():
        tb = b.get(cell)
        if not tb:
            continue
        ma, mb = stats.median(ta.values()), stats.median(tb.values())
        if not ma or mb is None:
            continue
        ratios = [tb[k] / ta[k] for k in sorted(set(ta) & set(tb)) if ta[k] > 0]
        moves.append(CellMove(cell, ma, mb, mb / ma, stats.paired_ratio(ratios), len(ta), len(tb)))
    return moves
