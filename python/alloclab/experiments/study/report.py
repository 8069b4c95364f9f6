"""The study's HTML page (present/templates/study.html.j2): the papers' scorecard first,
then the evidence (sections.py), then the ablation (ablation_section.py) when there is one.

It reads only the findings (findings.json), so `alloclab report DIR` can draw
it again without running anything. Plots show medians with min-max whiskers
over the repeats and say n; a value that was not measured is marked "n/a" on
the axis, never drawn as a zero bar.

API::

    context(findings, outdir) -> dict       # what study.html.j2 shows
    write_report(findings, outdir) -> str   # DIR/report.html
"""

from __future__ import annotations

import shlex

from alloclab.core.results.findings import Findings
from alloclab.experiments.study.ablation_section import ablation_section
from alloclab.experiments.study.blocks import number, p
from alloclab.experiments.study.plan import MODES
from alloclab.experiments.study.sections import evidence
from alloclab.experiments.study.verdicts.claims import show
from alloclab.experiments.study.verdicts.rules import LEVEL
from alloclab.present.html import machine_facts, write_page


def _verdict_rows(vs) -> list[dict]:
    rows = []
    for v in vs:
        if v.n:
            meas = show(v.measured, v.unit)
            spread = f"{show(v.low, v.unit)} – {show(v.high, v.unit)}"
        else:
            meas, spread = "–", "–"
        rows.append({"paper": v.paper, "claim": v.claim, "paper_value": v.paper_value, "measured": meas,
                     "spread": spread, "n": v.n, "verdict": v.verdict, "what": v.what,
                     "rule": (v.rule.rstrip(".") + f". Interval: {v.spread}." if v.n and v.spread else v.rule)
                     + _null_words(v),
                     "notes": " ".join(x for x in (v.note, v.weight_note) if x)})
    return rows


def _null_words(v) -> str:
    """What a timed verdict was judged on: its time measure and its null."""
    if not v.measure:
        return ""
    out = f" Judged on {v.measure}"
    if v.noise_floor is not None:
        out += (f", set against its A/A null ({len(v.null or [])} repeats, the furthest from no effect "
                f"±{v.noise_floor:.1%})")
    else:
        out += "; no null measured"
    return out + "."


def _command(meta: dict) -> str:
    """The study's command: as typed, from the run record; for findings without one, as far as
    they tell it (its mode, and -r N when the runs per cell were not the mode's)."""
    typed = (meta.get("record") or {}).get("command")
    if typed:
        return " ".join(shlex.quote(str(a)) for a in typed)
    mode = meta.get("mode")
    cmd = "alloclab study" + {"quick": " --quick", "full": " --full"}.get(mode, "")
    repeat = meta.get("repeat")
    if mode in MODES and repeat is not None and repeat != MODES[mode]["repeat"]:
        cmd += f" -r {repeat}"
    return cmd


def _headline(vs, meta: dict) -> str:
    counts = {}
    for v in vs:
        counts[v.verdict] = counts.get(v.verdict, 0) + 1
    order = ("confirmed", "stronger", "weaker", "refuted", "inconclusive", "unsettled")
    parts = [f"{counts[k]} {k}" for k in order if counts.get(k)]
    text = (f"Of {len(vs)} claims of the three papers tested on this machine: " + ", ".join(parts) + "."
            if vs else "No claim could be tested: no run succeeded.")
    return smoke_words(meta) + text + busy_words(meta)


def smoke_words(meta: dict) -> str:
    """A sentence that says a --quick run is a smoke run, else ''."""
    if meta.get("mode") != "quick":
        return ""
    return "A smoke run (--quick: too few runs to judge the timed claims), not a study. "


def busy_words(meta: dict) -> str:
    """A sentence when the machine was busy while the study measured (machine.load), else ''."""
    load = (meta.get("machine") or {}).get("load") or {}
    if not load.get("busy"):
        return ""
    share = (load.get("others_share") or 0) + (load.get("steal_share") or 0)
    return (f" The machine was busy: other processes (or the hypervisor) took {share:.0%} of its CPUs while "
            "the study ran, so its timed verdicts are less sure than a quiet run's.")


def _measures(vs) -> str:
    used = sorted({v.measure for v in vs if v.measure})
    return "this run: " + ", ".join(used) if used else "no timed claim measured"


def _verdicts(vs) -> dict:
    return {"id": "verdicts", "title": "The papers' claims", "blocks": [
        p("Each row is computed from this run. A measurement is one value per repeat (each repeat "
          "littered with its own seed, so it samples heap layouts). Every timed claim is judged against its "
          "null: the same ratio between a program's run on glibc and the same run again, in the same "
          "rounds, on the clean heap and on the littered one (a slowdown's null combines the two). Its "
          "spread is the interval of the effect over that null: the ratios of every repeat's value to every "
          "null value, from the k-th smallest to the k-th largest, chosen to hold the effect "
          f"with probability at least {LEVEL:.2f} whatever the noise's shape (the 2nd of nine for three "
          "repeats, probability 0.80), so a noisy run spreads its own intervals. An interval that holds no "
          "effect is unsettled (the run could not tell the effect from its noise); one that straddles the "
          "paper's threshold is inconclusive, as is a timed claim with too few repeats. Deterministic "
          "instruments give one exact value. Unsettled claims' cells run again in stages, judged at a level "
          f"corrected for the number of looks. Timed claims are judged on the program's CPU time after "
          f"littering ({_measures(vs)}), which other processes lengthen far less than wall time."),
        {"kind": "verdicts", "rows": _verdict_rows(vs)}]}


def context(findings: Findings, outdir: str) -> dict:
    """What study.html.j2 shows, computed from the findings and, when present,
    OUTDIR/ablation/ablation.json."""
    meta = findings.meta
    vs = findings.verdicts
    sections = [_verdicts(vs)] + evidence(findings.tables, meta.get("allocators", []))
    abl = ablation_section(outdir)
    if abl:
        sections.append(abl)
    return {
        "title": "alloclab study", "heading": "alloclab study: the papers' claims on this machine",
        "headline": _headline(vs, meta),
        "command": _command(meta),
        "sections": sections,
        "allocators": {"head": ["allocator", "version", "path"], "scroll": True,
                       "rows": [[a["name"], a.get("version"), a.get("path") or "(the C library)"]
                                for a in meta.get("allocator_info", [])]},
        "mode": meta.get("mode"), "advs": ", ".join("Adv_%d" % a for a in meta.get("advs", [])),
        "repeat": meta.get("repeat"), "seed": meta.get("seed"), "scale": meta.get("scale"),
        "programs": len(meta.get("programs", [])), "elapsed": number(meta.get("elapsed_s"), "{:.0f}"),
        "time_measure": meta.get("time_measure", ""), "machine": machine_facts(meta.get("machine", {})),
        "notes": meta.get("notes", []), "ablation": abl is not None,
    }


def write_report(findings: Findings, outdir: str) -> str:
    return write_page("study.html.j2", context(findings, outdir), outdir)
