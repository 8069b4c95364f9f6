"""The study page's ablation section, drawn from DIR/ablation/ablation.json (written by
`alloclab ablation` or `alloclab study --ablation`): one table per switch, programs down,
the switch's values across.

API::

    ablation_section(studydir) -> dict | None
"""

from __future__ import annotations

import os

from alloclab import LabError
from alloclab.core.results.documents import ABLATION, read_document
from alloclab.experiments.study.blocks import p, ratio, tab
from alloclab.present.html import command_line


def _paired(t: dict) -> str:
    """An ablation setting's paired verdict: 0.982 (95% 0.913–1.055), level."""
    r = {k: ratio(t.get(k), "{:.3f}") for k in ("ratio", "low", "high")}
    return f"{r['ratio']} (95% {r['low']}–{r['high']}), {t.get('verdict')}"


def _switch_blocks(sw: dict, rows: list, paired: dict) -> list:
    """One switch's heading, its paired verdicts across the programs, and its table."""
    b = []
    name = sw.get("name")
    mine = [r for r in rows if r.get("switch") == name]
    values = list(dict.fromkeys(list(sw.get("values") or []) + [r.get("value") for r in mine]))
    default = sw.get("default")
    b.append({"kind": "h3", "id": f"ablation-{name}", "text": f"{name} (default {default})"})
    verdicts = [f"{v} {_paired(paired[(name, v)])}" for v in values if paired.get((name, v))]
    if verdicts:
        b.append(p("Across the programs, paired by round: " + "; ".join(verdicts) + "."))
    cells = {(r.get("program"), r.get("value")): r for r in mine}
    table_rows = []
    for prog in dict.fromkeys(r.get("program") for r in mine):
        row = [prog]
        for val in values:
            r = cells.get((prog, val))
            if r is None:
                row.append("n/a")
                continue
            time = ratio(r.get("time_ratio"))
            if r.get("time_lo") is not None and r.get("time_hi") is not None:
                time += f" [{ratio(r['time_lo'])}–{ratio(r['time_hi'])}]"
            row.append({"lines": [f"time {time} n={r.get('n')}",
                                  f"D1 {ratio(r.get('d1_ratio'))} · LL {ratio(r.get('ll_ratio'))} · "
                                  f"RSS {ratio(r.get('rss_ratio'))}"],
                        "b": bool(r.get("winner")), "cls": "winner" if r.get("winner") else ""})
        table_rows.append(row)
    head = ["program"] + [f"{v} (default)" if v == default else str(v) for v in values]
    b.append(tab(head, table_rows, "ablation") if table_rows else p("No runs.", "note"))
    return b


def ablation_section(studydir: str) -> dict | None:
    """The section of STUDYDIR/ablation/ablation.json (written by `alloclab ablation`), or
    None when there is none: one table per switch, programs down, the switch's values across."""
    path = os.path.join(studydir, "ablation", "ablation.json")
    if not os.path.exists(path):
        return None
    sec = {"id": "ablation", "title": "Ablation: vam's switches one at a time", "blocks": []}
    try:
        data = read_document(ABLATION, path)
    except LabError as e:
        sec["blocks"].append(p(f"ablation/ablation.json cannot be read: {e}", "warn"))
        return sec
    if data.get("kind") != "ablation":
        sec["blocks"].append(p("ablation/ablation.json is not an ablation's file.", "warn"))
        return sec
    rows = data.get("rows") or []
    ns = sorted({r.get("n") for r in rows if r.get("n")})
    b = sec["blocks"]
    b.append(p("Each switch of vam is set to each of its values in turn, the others left at their defaults. A "
               "cell is the program's time with that value over its time with the default: the median, with "
               "the min–max in brackets, over n = " + (", ".join(str(n) for n in ns) or "0") + " runs; then "
               "its D1 misses, LL misses and peak RSS over the default's (n/a: not measured). Below 1 is "
               "better than the default. Bold: the value that wins for that program."))
    if data.get("command"):
        b.append({"kind": "code", "label": "Command:", "text": command_line(data["command"])})
    if data.get("geometry"):
        b.append(p(f"Cache geometry: {data['geometry']}."))
    c = data.get("control")
    if c:
        b.append(p(f"A/A control: the default setting run again in every round, judged like an alternative: "
                   f"{_paired(c)}. That is what the method reports when nothing changed; a setting is called "
                   "faster or slower only when its interval, paired by round over the programs, excludes 1."))
    paired = {(sw.get("switch"), v.get("value")): v.get("time_paired") for sw in data.get("summary") or []
              for v in sw.get("values") or []}
    switches = list(data.get("switches") or [])
    known = {s.get("name") for s in switches}
    for name in dict.fromkeys(r.get("switch") for r in rows):
        if name not in known:
            switches.append({"name": name, "default": None, "values": []})
    for sw in switches:
        b += _switch_blocks(sw, rows, paired)
    if data.get("notes"):
        b.append({"kind": "list", "entries": [str(n) for n in data["notes"]], "cls": "note"})
    return sec
