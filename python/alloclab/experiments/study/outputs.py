"""The study's files: findings.json and verdicts.json (core.results.findings), verdicts.md
and report.html; and the report drawn again from them without running anything.

API::

    write_outputs(findings, outdir) -> str   # the report's path
    rerender(outdir, dest=None) -> str       # report.html again from DIR's files (into DEST)
    keep(outdir, dest) -> list[str]          # the files rerender needs, compressed, into DEST
    KEPT                                     # those files

A kept run (docs/runs/NAME/) holds KEPT gzip-compressed: results.csv (every timed row),
findings.json (the instruments' tables and the setup, with the run record: the tree's
commit, the command, the machine and its load) and verdicts.json (the verdicts as the run
wrote them, which rerender does not read: a test compares its recomputed verdicts with them).
"""

from __future__ import annotations

import os
import shutil

from alloclab import LabError
from alloclab.core import paths
from alloclab.core.results.files import GZ, compress, exists
from alloclab.core.results.findings import read_findings, write_findings
from alloclab.experiments.study import analysis
from alloclab.experiments.study.report import write_report
from alloclab.experiments.study.run import RESULTS, read_results
from alloclab.experiments.study.text import verdicts_markdown
from alloclab.experiments.study.verdicts.rules import LEVEL

SPREAD = (f"the interval of order statistics that holds the median of the repeats (each with its own "
          f"littering seed) with probability at least {LEVEL}; exact for deterministic instruments")


def write_outputs(findings, outdir: str) -> str:
    """findings.json, verdicts.json, verdicts.md and report.html of FINDINGS; the report's path."""
    write_findings(findings, outdir, SPREAD, LEVEL)
    with open(os.path.join(outdir, "verdicts.md"), "w") as f:
        f.write(verdicts_markdown(findings.verdicts))
    return write_report(findings, outdir)


KEPT = (RESULTS, "findings.json", "verdicts.json")


def rerender(outdir: str, dest: str | None = None) -> str:
    """Write DIR's report again without running anything (into DEST, default DIR). The tables
    and verdicts are computed again from DIR/results.csv and the measurements saved in
    DIR/findings.json (either may be kept compressed), so a report re-rendered by a later
    alloclab applies its rules to the same data; without results.csv the saved findings are
    rendered as they are."""
    dest = dest or outdir
    os.makedirs(dest, exist_ok=True)
    saved = read_findings(os.path.join(outdir, "findings.json"))
    if not exists(os.path.join(outdir, RESULTS)):
        return write_report(saved, dest)
    t = saved.tables
    extra = analysis.Extra(memory=t.get("memory"), weights=t.get("weights"), cache=t.get("cache"),
                           footprints=t.get("server_footprint"), profiles=t.get("alloc_stats"),
                           calibration=t.get("calibration"))
    fresh = analysis.analyse(read_results(outdir), extra, saved.meta.get("allocators") or [],
                             saved.meta.get("advs") or [0], looks=(saved.meta.get("staged") or {}).get("looks", 1))
    fresh.meta = saved.meta
    return write_outputs(fresh, dest)


def keep(outdir: str, dest: str) -> list[str]:
    """Keep DIR's study run in DEST (docs/runs/NAME): KEPT, compressed; DEST holds nothing else
    afterwards. LabError when DIR is not a finished study's directory."""
    missing = [n for n in KEPT if not os.path.exists(os.path.join(outdir, n))]
    if missing:
        raise LabError(f"{outdir!r} is not a study's directory (no {', '.join(missing)})")
    if os.path.exists(dest):
        shutil.rmtree(dest)
    return [compress(os.path.join(outdir, n), os.path.join(dest, n + GZ), within=paths.SOURCE_ROOT)
            for n in KEPT]
