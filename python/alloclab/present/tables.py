"""Markdown tables, written in one place.

Every Markdown table the lab prints or exports (compare's results, the
study's verdicts, the ablation, the benchmarks under bench/) is built here,
so they share one dialect: GitHub-flavoured pipes, a header rule that aligns
text columns left and number columns right, `|` inside a cell escaped (a
program named `a|b` must not add a column) and a missing value shown as one
mark.

Why not `tabulate` or `rich`: the lab needs exactly this dialect, and both
would be a dependency for one function (neither ships in Debian's default
Python nor in the offline bootstrap); `tabulate`'s padded columns would also
make every exported table change width when one value does.

API::

    markdown(head, rows, align=None) -> str     # align: "l"/"r" per column; default: "l" then "r"
    cell(x, fmt="{:.3f}") -> str                # a value as a cell: MISSING for None, FMT for floats
    MISSING
"""

from __future__ import annotations

from typing import Iterable, Sequence

MISSING = "–"


def cell(x, fmt: str = "{:.3f}") -> str:
    """X formatted for a table: MISSING for None, FMT for floats, str() for the rest
    (counts stay whole numbers)."""
    if x is None:
        return MISSING
    if isinstance(x, float):
        return fmt.format(x)
    return str(x)


def _escape(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(head: Sequence[str], rows: Iterable[Sequence], align: str | None = None) -> str:
    """A Markdown table of HEAD and ROWS (each a sequence of len(HEAD) cells, already
    formatted or formatted by cell()). ALIGN gives each column "l" or "r"; by default the
    first column is left and the others right (the lab's tables: a name, then numbers).
    Ends with a newline."""
    n = len(head)
    if n == 0:
        raise ValueError("a table needs at least one column")
    align = align or ("l" + "r" * (n - 1))
    if len(align) != n or set(align) - {"l", "r"}:
        raise ValueError(f"align {align!r} does not give 'l' or 'r' for each of {n} columns")
    rule = "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"
    out = ["| " + " | ".join(_escape(h) for h in head) + " |", rule]
    for i, r in enumerate(rows):
        r = list(r)
        if len(r) != n:
            raise ValueError(f"row {i} has {len(r)} cells for {n} columns")
        out.append("| " + " | ".join(_escape(cell(c)) for c in r) + " |")
    return "\n".join(out) + "\n"
