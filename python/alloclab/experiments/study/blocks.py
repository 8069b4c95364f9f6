"""The building blocks of the study's page: value formatting, the bar chart, and the blocks a
section is made of (macros.html.j2's blocks() draws them: p, h3, table, figure, verdicts, list,
code). A section is {"id", "title", "blocks"}.

API::

    bar_chart(groups, series, values, title, ylabel, ref=1.0) -> (str | None, str | None)   # base64 PNG, n
    bar_figure(groups, series, values, title, ylabel, ref=1.0) -> str | None   # base64 PNG
    p(text, cls=""), tab(head, rows, cls=""), fig(chart, caption)             # blocks
    number(x, fmt), spread(row, fmt), mib(kb), ratio(x, fmt)                       # values as text
"""

from __future__ import annotations

from alloclab.present import plots


def number(x, fmt="{:.2f}") -> str:
    return fmt.format(x) if isinstance(x, (int, float)) else "–"


def spread(x: dict, fmt="{:.2f}") -> str:
    """'median [low–high] n=N' of a row with median/low/high/n."""
    if not x or x.get("median") is None:
        return "–"
    if x.get("n", 0) > 1:
        return f"{fmt.format(x['median'])} [{fmt.format(x['low'])}–{fmt.format(x['high'])}] n={x['n']}"
    return f"{fmt.format(x['median'])} (n=1)"


def mib(kb) -> str:
    return f"{kb / 1024:.1f} MiB" if isinstance(kb, (int, float)) else "–"


def bar_chart(groups, series, values, title, ylabel, ref=1.0):
    """groups on the x axis, one bar per series; values[(group, series)] = row
    with median/low/high/n. Returns (base64 PNG or None without matplotlib,
    the n of the bars drawn as text, e.g. "3" or "2, 3")."""
    plt = plots.pyplot()
    if plt is None:
        return None, None
    figure, ax = plt.subplots(figsize=(max(6.5, 0.32 * len(groups) * max(1, len(series)) + 2.5), 3.8))
    ns = plots.grouped_bars(ax, groups, series, values, ref=ref)
    ax.set_xticklabels(groups, rotation=25, ha="right", fontsize=7)
    ax.set_ylabel(ylabel)
    nn = ", ".join(str(n) for n in sorted(ns)) or "0"
    ax.set_title(f"{title}\n(bars: median; whiskers: min–max over n = {nn} runs)", fontsize=9)
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(fontsize=7, ncol=min(6, len(series)))
    data = plots.png_base64(figure)
    plt.close(figure)
    return data, nn


def bar_figure(groups, series, values, title, ylabel, ref=1.0):
    """bar_chart's PNG alone (base64), or None without matplotlib."""
    return bar_chart(groups, series, values, title, ylabel, ref)[0]


def p(text, cls="") -> dict:
    return {"kind": "p", "text": text, "cls": cls}


def tab(head, rows, cls="") -> dict:
    return {"kind": "table", "table": {"head": head, "rows": rows, "cls": cls, "scroll": True}}


def fig(chart, caption) -> dict:
    data, n = chart
    return {"kind": "figure", "figure": {"data": data, "caption": caption, "n": n}}



def ratio(x, fmt="{:.2f}") -> str:
    return fmt.format(x) if isinstance(x, (int, float)) else "n/a"
