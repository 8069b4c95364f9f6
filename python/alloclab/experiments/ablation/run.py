"""The ablation of Vam's design choices, run: each switch changed alone, measured.

The Vam paper (2005, section 4.3 and Figures 4-5) justifies its design by
measuring variants that undo one choice at a time. libvam makes each choice a
run-time option (docs/vam.md, "Design switches"), and `alloclab ablation`
runs every setting of every switch (experiments/ablation/switches.py), one
switch changed at a time with the others at their defaults, on bundled
workloads and real programs (experiments/ablation/plan.py).

Per program and setting it measures wall time (interleaved rounds: each round
runs every setting of a program in a shuffled order; the ratio to the default
setting is taken per round, and the median with the min-max over rounds is
reported, alloclab.stats), D1 and LL misses (cachegrind at the lab's fixed
geometry, alloclab.measure.cache: one run, deterministic) and peak RSS
(median of the per-round ratios). Lower ratios are better; the winner of a
program x switch is its setting with the lowest time ratio. Across the
programs, each setting's time is also paired by round (the round's geometric
mean over the programs, then a t-interval over the rounds,
stats.paired_ratio) and called faster or slower only when that interval
excludes 1; an A/A control, the default setting run again as one more
setting, shows what the method reports when nothing changed.

API::

    run_ablation(plan, progress=sys.stderr) -> dict   # the ablation (ablation.json's content)
    write(ablation, outdir) -> (json path, md path)
"""

from __future__ import annotations

import os
import random
import re
import sys
import time

from alloclab.core import runner
from alloclab.core.results.documents import ABLATION, write_document
from alloclab.experiments.ablation import summary as ab_summary
from alloclab.experiments.ablation.plan import AblationPlan
from alloclab.experiments.ablation.report import markdown
from alloclab.experiments.ablation.switches import CONTROL, SWITCHES, settings
from alloclab.measure import cache


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text)


def _sayer(progress):
    return (lambda s: print(s, file=progress, flush=True)) if progress else (lambda s: None)


def _timed(p: AblationPlan, sets, say) -> ab_summary.Measured:
    """Every setting of every program, once per round, in a shuffled order per program and round."""
    times = {q.name: {s.key: [] for s in sets} for q in p.programs}
    rss = {q.name: {s.key: [] for s in sets} for q in p.programs}
    outputs = {q.name: {} for q in p.programs}
    failed: dict = {}
    rng = random.Random(p.seed)
    for q in p.programs:  # one unrecorded warm-up run per program (file cache, lazy binding)
        runner.run(q.cmd, preload=p.vam.preload, env=sets[0].env(), timeout=p.timeout)
    for r in range(p.rounds):
        say(f"== ablation round {r + 1}/{p.rounds}")
        for q in p.programs:
            order = list(sets)
            rng.shuffle(order)
            for s in order:
                res = runner.run(q.cmd, preload=p.vam.preload, env=s.env(), timeout=p.timeout)
                ok = res.status == "ok"
                if not ok:
                    failed.setdefault((q.name, s.key), res.status)
                times[q.name][s.key].append(res.wall_s if ok else None)
                rss[q.name][s.key].append(res.max_rss_kb if ok else None)
                if ok:
                    outputs[q.name].setdefault(s.key, res.stdout_sha256)
    for (name, key), status in sorted(failed.items()):
        p.notes.append(f"{name} with {key}: a run ended {status}")
    for name, outs in outputs.items():
        base = outs.get("default")
        differ = sorted(k for k, h in outs.items() if base is not None and h != base)
        if differ:
            p.notes.append(f"{name}: its output differed from the default setting's under " + ", ".join(differ))
    return ab_summary.Measured(times, rss, {q.name: {} for q in p.programs})


def _cache_counts(p: AblationPlan, sets, m: ab_summary.Measured, say) -> None:
    cdir = os.path.join(p.outdir, "cache")
    for q in p.programs:
        for s in sets:
            if s.key == CONTROL:  # deterministic: the default's counts again
                continue
            say(f"== ablation cachegrind {q.name} {s.key}")
            c = cache.measure(q.cmd, p.method, preload=p.vam.preload, env=s.env(), workdir=cdir,
                              tag=_slug(f"{q.name}.{s.key}"), timeout=p.timeout * 50)
            if c.get("error"):
                p.notes.append(f"cachegrind, {q.name} with {s.key}: {c['error']}")
            m.counts[q.name][s.key] = c


def run_ablation(p: AblationPlan, progress=sys.stderr) -> dict:
    """Run the plan; the ablation as ablation.json holds it (docs/formats.md)."""
    say = _sayer(progress)
    start = time.monotonic()
    os.makedirs(p.outdir, exist_ok=True)
    sets = settings()
    say(f"ablation ({p.mode}): {len(p.programs)} programs x {len(sets)} settings x {p.rounds} timed round(s)"
        + (", plus one cachegrind run each" if p.method != "off" else ""))
    for n in p.notes:
        say(f"note: {n}")
    m = _timed(p, sets, say)
    if p.method != "off":
        _cache_counts(p, sets, m, say)
    names = [q.name for q in p.programs]
    rows = ab_summary.per_program(m, names)
    summary = ab_summary.summarise(rows, names)
    ab_summary.verdicts(summary, m, names)
    p.notes.append("time ratios are wall time, paired per round (valid only when nothing else ran on the "
                   "machine); D1/LL (cachegrind, address randomisation off, same-size environments, fixed hash "
                   "seeds) repeat exactly for the deterministic programs; peak RSS moves by a few pages from run "
                   "to run")
    return {
        "format_version": ABLATION.version, "kind": "ablation", "command": list(p.command),
        "geometry": " ".join(f"{k}={v}" for k, v in cache.GEOMETRY.items()) if p.method != "off" else "",
        "switches": [{"name": s.name, "default": s.default, "values": list(s.values)} for s in SWITCHES],
        "rows": rows,
        "notes": p.notes,
        "summary": summary,
        "control": ab_summary.control(m, names),
        "meta": {"mode": p.mode, "rounds": p.rounds, "scale": p.scale, "real_size": p.real_size,
                 "allocator": p.vam.path, "allocator_version": p.vam.version, "cache_method": p.method,
                 "programs": [{"name": q.name, "cmd": q.cmd} for q in p.programs],
                 "elapsed_s": time.monotonic() - start},
    }


def write(a: dict, outdir: str) -> tuple[str, str]:
    """DIR/ablation.json and DIR/ablation.md; their paths."""
    js = write_document(ABLATION, os.path.join(outdir, "ablation.json"), a, indent=1)
    md = os.path.join(outdir, "ablation.md")
    with open(md, "w") as f:
        f.write(markdown(a))
    return js, md
