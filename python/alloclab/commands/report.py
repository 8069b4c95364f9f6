"""`alloclab report DIR`: re-render a comparison's or a study's report.html from its saved
files (and export a comparison); keep a study's run (compressed, for docs/results.md to cite),
or re-render a kept one elsewhere."""

from __future__ import annotations

import dataclasses
import os
import sys

from alloclab import LabError
from alloclab.commands import arguments as A
from alloclab.core.results.summary import read_summary
from alloclab.experiments.compare import report as compare_report
from alloclab.experiments.compare.files import export
from alloclab.experiments.compare.summary import warnings
from alloclab.core.results.files import exists
from alloclab.experiments.study.outputs import KEPT, keep, rerender

NAME = "report"
HELP = "re-render a comparison's or a study's report.html from its saved files (and export it)"


def add_arguments(sr) -> None:
    sr.add_argument("dir", type=A.typed(A.parse_input_dir), metavar="DIR",
                    help="a comparison's output directory (holding summary.json)")
    A.add_export(sr, "json", "also write the summary and every run as JSON here")
    A.add_export(sr, "markdown", "also write the results table as Markdown here")
    sr.add_argument("-o", "--output", type=A.typed(A.parse_output_dir), default=None, metavar="OUT",
                    help="a study: write the re-rendered report and the recomputed findings and verdicts "
                         "here instead of DIR (e.g. from a kept run, docs/runs/NAME)")
    sr.add_argument("--keep", default=None, metavar="DEST",
                    help="a study: also keep its run in DEST, compressed (results.csv, findings.json with "
                         "the run record, verdicts.json), as docs/results.md cites runs; DEST must be new "
                         "or an earlier kept run")


@dataclasses.dataclass
class Plan:
    dir: str
    study: bool          # a study's directory (findings.json), else a comparison's (summary.json)
    exports: dict
    output: str | None = None   # a study re-rendered here (default: DIR)
    keep: str | None = None     # a study kept here


def _keepable(dest: str) -> str:
    """DEST for --keep: a new directory, or one holding nothing but a kept run's files."""
    if os.path.isdir(dest):
        foreign = [n for n in os.listdir(dest) if n not in {k + ".gz" for k in KEPT}]
        if foreign:
            raise LabError(f"--keep {dest!r} holds other files ({', '.join(sorted(foreign)[:3])}): "
                           "give a new directory or an earlier kept run")
    elif os.path.exists(dest):
        raise LabError(f"--keep {dest!r} is not a directory")
    return dest


@dataclasses.dataclass
class Result:
    report: str
    written: list
    warnings: list


def plan(ns) -> Plan:
    study = exists(os.path.join(ns.dir, "findings.json"))
    if (ns.output or ns.keep) and not study:
        raise LabError(f"{ns.dir!r} is not a study's directory: -o and --keep take a study's run")
    if study and not ns.output and not os.path.exists(os.path.join(ns.dir, "findings.json")):
        raise LabError(f"{ns.dir!r} is a kept run (its files compressed): re-render it elsewhere with -o OUT")
    return Plan(ns.dir, study, {"json": ns.export_json, "markdown": ns.export_markdown},
                output=ns.output, keep=_keepable(ns.keep) if ns.keep else None)


def run(p: Plan) -> Result:
    if p.study:
        kept = keep(p.dir, p.keep) if p.keep else []
        return Result(rerender(p.dir, p.output), kept, [])
    summary = read_summary(os.path.join(p.dir, "summary.json"))
    path = compare_report.write_report(summary, p.dir)
    return Result(path, export(summary, p.dir, p.exports), warnings(summary))


def write(p: Plan, r: Result) -> int:
    for w in r.warnings:
        print(f"alloclab: warning: {w}", file=sys.stderr)
    print(f"report: {r.report}" + "".join(f"  {x}" for x in r.written))
    return 0
