"""`alloclab report DIR`: re-render a comparison's or a study's report.html from its saved
files (and export a comparison)."""

from __future__ import annotations

import dataclasses
import os
import sys

from alloclab.commands import arguments as A
from alloclab.core.results.summary import read_summary
from alloclab.experiments.compare import report as compare_report
from alloclab.experiments.compare.files import export
from alloclab.experiments.compare.summary import warnings
from alloclab.experiments.study.outputs import rerender

NAME = "report"
HELP = "re-render a comparison's or a study's report.html from its saved files (and export it)"


def add_arguments(sr) -> None:
    sr.add_argument("dir", type=A.typed(A.parse_input_dir), metavar="DIR",
                    help="a comparison's output directory (holding summary.json)")
    A.add_export(sr, "json", "also write the summary and every run as JSON here")
    A.add_export(sr, "markdown", "also write the results table as Markdown here")


@dataclasses.dataclass
class Plan:
    dir: str
    study: bool          # a study's directory (findings.json), else a comparison's (summary.json)
    exports: dict


@dataclasses.dataclass
class Result:
    report: str
    written: list
    warnings: list


def plan(ns) -> Plan:
    return Plan(ns.dir, os.path.exists(os.path.join(ns.dir, "findings.json")),
                {"json": ns.export_json, "markdown": ns.export_markdown})


def run(p: Plan) -> Result:
    if p.study:
        return Result(rerender(p.dir), [], [])
    summary = read_summary(os.path.join(p.dir, "summary.json"))
    path = compare_report.write_report(summary, p.dir)
    return Result(path, export(summary, p.dir, p.exports), warnings(summary))


def write(p: Plan, r: Result) -> int:
    for w in r.warnings:
        print(f"alloclab: warning: {w}", file=sys.stderr)
    print(f"report: {r.report}" + "".join(f"  {x}" for x in r.written))
    return 0
