"""Plots: the one place matplotlib is loaded, and the lab's one bar chart (grouped bars of
medians with min-max whiskers).

Both reports draw their bars with grouped_bars (compare's: allocators x
littering levels; the study's: programs x allocators), so a whisker means the
same thing everywhere, and a value that was not measured is marked "n/a" on
the axis instead of a zero-height bar. drag, frag and pages draw their own
figures on pyplot() and save them with save().

API::

    pyplot() -> module | None                      # matplotlib.pyplot with the Agg backend, or None
    grouped_bars(ax, groups, series, values, ref=None) -> set   # the n of the values drawn
    png_base64(fig) -> str
    save(fig, path, dpi=110)                       # tight layout, written, closed
"""

from __future__ import annotations

import base64
import io


def pyplot():
    """matplotlib.pyplot on the Agg backend, or None when matplotlib is missing."""
    try:
        import matplotlib  # heavy: loaded only when a figure is drawn
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def grouped_bars(ax, groups, series, values, ref=None, series_label=str) -> set:
    """One cluster per group, one bar per series. values[(group, series)] is a
    dict with median, low, high and n (or None: drawn as "n/a"). Returns the set
    of n over the bars drawn, for the caption."""
    width = 0.8 / max(1, len(series))
    ns = set()
    for j, s in enumerate(series):
        labelled = False
        for i, g in enumerate(groups):
            x = i + (j - (len(series) - 1) / 2) * width
            v = values.get((g, s))
            if not v or v.get("median") is None:
                ax.text(x, ref if ref is not None else 0, "n/a", rotation=90, ha="center", va="bottom",
                        fontsize=6, color="#888")
                continue
            ns.add(v.get("n", 1))
            err = [[max(0.0, v["median"] - v["low"])], [max(0.0, v["high"] - v["median"])]]
            ax.bar(x, v["median"], width, color=f"C{j % 10}", label=None if labelled else series_label(s))
            ax.errorbar(x, v["median"], yerr=err, fmt="none", ecolor="black", elinewidth=0.8, capsize=2)
            labelled = True
    if ref is not None:
        ax.axhline(ref, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(groups)))
    return ns


def png_base64(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode()


def save(fig, path: str, dpi: int = 110) -> str:
    """Lay FIG out tightly, write it to PATH and close it; returns PATH."""
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path
