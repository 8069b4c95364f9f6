"""The ablation in text: ablation.md (Markdown tables, present.tables) and the lines the
command prints.

API::

    markdown(ablation) -> str
    markdown_summary(ablation) -> str
"""

from __future__ import annotations

from alloclab.present import tables


def _f(x, digits=3):
    return tables.MISSING if x is None else f"{x:.{digits}f}"


def markdown(a: dict) -> str:
    lines = ["# Ablation of Vam's design switches", "",
             "Each setting changes one switch; ratios are to that program's default setting "
             "(lower is better). Time: median of per-round ratios (min–max); D1/LL: cachegrind "
             f"({a['geometry'] or 'not measured'}); RSS: peak resident set. **bold**: the program's "
             "winner for that switch (lowest time).", "",
             "## Per switch (geometric means over the programs)", ""]
    per_switch = [[s["switch"], v["value"] + (" (default)" if v["is_default"] else ""), _f(v["time_geomean"]),
                   "" if v["is_default"] else _paired_text(v.get("time_paired")),
                   _f(v["d1_geomean"]), _f(v["ll_geomean"]), _f(v["rss_geomean"]), v["wins"]]
                  for s in a.get("summary", []) for v in s["values"]]
    c = a.get("control")
    if c:
        per_switch.append(["A/A control", "the default again", "", _paired_text(c), "", "", _f(c.get("rss_geomean")),
                           ""])
    lines += [tables.markdown(["switch", "value", "time", "time, paired by round (95%)", "D1 misses", "LL misses",
                               "peak RSS", "programs won"], per_switch, "llrlrrrr").rstrip(), "",
              "time: geometric mean over the programs of each program's median per-round ratio. Paired by "
              "round: each round's geometric mean over the programs, then a t-interval over the rounds; "
              "faster / slower when the interval excludes 1. The A/A control runs the default setting again "
              "as one more setting: its line is the method's error when nothing changed.",
              "", "## Per program", ""]
    per_program = []
    for r in a["rows"]:
        t = f"{_f(r['time_ratio'])} ({_f(r['time_lo'])}–{_f(r['time_hi'])})"
        per_program.append([r["program"], r["switch"], r["value"] + (" (default)" if r["is_default"] else ""),
                            f"**{t}**" if r["winner"] else t, _f(r["d1_ratio"]), _f(r["ll_ratio"]),
                            _f(r["rss_ratio"]), r["n"]])
    lines.append(tables.markdown(["program", "switch", "value", "time (min–max)", "D1 misses", "LL misses",
                                  "peak RSS", "n"], per_program, "lllrrrrr").rstrip())
    if a.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {n}" for n in a["notes"]]
    lines += ["", "Command: `" + " ".join(a["command"]) + "`", ""]
    return "\n".join(lines)


def markdown_summary(a: dict) -> str:
    out = ["", "Ablation (geometric means over the programs; ratios to the default, lower is better):"]
    for s in a.get("summary", []):
        for v in s["values"]:
            if v["is_default"]:
                continue
            out.append(f"  {s['switch']}={v['value']:8s} time {_f(v['time_geomean'])}  D1 {_f(v['d1_geomean'])}"
                       f"  LL {_f(v['ll_geomean'])}  RSS {_f(v['rss_geomean'])}  wins {v['wins']}")
        faster = ", ".join(s.get("clearly_faster") or []) or "none"
        out.append(f"  {s['switch']}: lowest time {s['best_by_time']} (default {s['default']}); "
                   f"clearly faster than the default: {faster}")
    c = a.get("control")
    if c:
        out.append(f"  A/A control (the default again): time {_f(c['ratio'])} (95% {_f(c['low'])}-{_f(c['high'])}), "
                   f"{c['verdict']}: what the method reports when nothing changed")
    return "\n".join(out)


def _paired_text(t) -> str:
    if not t:
        return tables.MISSING
    return f"{_f(t['ratio'])} ({_f(t['low'])}–{_f(t['high'])}) {t['verdict']}"
