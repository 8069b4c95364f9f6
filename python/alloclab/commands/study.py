"""`alloclab study`: answer the papers' questions on this machine (report in out/study)."""

from __future__ import annotations

import sys

from alloclab.commands import arguments as A
from alloclab.core.results.findings import Findings
from alloclab.experiments.study import plan as planning
from alloclab.experiments.study.outputs import write_outputs
from alloclab.experiments.study.run import run_study
from alloclab.experiments.study.report import busy_words, smoke_words
from alloclab.experiments.study.text import summary_lines, verdict_lines

NAME = "study"
HELP = "answer the papers' questions on this machine (report in out/study)"


def add_arguments(ss) -> None:
    A.add_mode(ss, "a smoke test: small inputs, Adv_0 and Adv_3, two runs each, too few for the timed "
               "claims' verdicts (about 2 minutes)",
               "bigger inputs, every littering level, more runs")
    ss.add_argument("-r", "--runs", type=A.count_type(1), default=None, metavar="N",
                    help="timed runs per program, allocator and level (default: 2 with --quick, 3, "
                         "5 with --full); more runs steady the medians and narrow the verdicts' "
                         "intervals; fewer than 3 leave the timed claims without a verdict")
    ss.add_argument("--stage-budget", type=A.typed(_budget), default=None, metavar="DURATION",
                    help="time the staged repeats may take: the cells of timed claims the first rounds "
                         "leave unsettled (their effect over the null holds no effect) run again in "
                         "fresh rounds until they separate or this is spent (default: 180s; 0 with "
                         "--quick, 300s with --full; 0: no stages)")
    ss.add_argument("--ablation", action="store_true",
                    help="also run Vam's design-switch ablation into DIR/ablation (always with --full)")
    A.add_allocators(ss, default=None, help_extra="; default: every one found")
    A.add_output_dir(ss, "out/study")


def _budget(text) -> float:
    """Seconds, as parse_duration reads them, with 0 meaning no stages (not no limit)."""
    return A.parse_duration(text) or 0.0


def plan(ns) -> planning.Plan:
    p = planning.plan(ns.mode or "default", ns.allocators, ns.output, ns.runs, ns.ablation, ns.stage_budget)
    p.command = list(getattr(ns, "command_line", None) or ["alloclab", "study"])
    return p


def run(p: planning.Plan) -> Findings:
    return run_study(p)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def write(p: planning.Plan, findings: Findings) -> int:
    """The verdicts and the summary on standard output (progress and the programs' own output went
    to standard error), headed by what kind of run it was and how busy the machine was."""
    report = write_outputs(findings, p.outdir)
    out = [w.strip() for w in (smoke_words(findings.meta), busy_words(findings.meta)) if w]
    out.append("Verdicts (the papers' claims on this machine):")
    out += verdict_lines(findings.verdicts)
    if findings.tables.get("general_summary"):
        out += ["", "General-purpose allocators, naive variants and real programs:"]
        out += summary_lines(findings.tables["general_summary"])
    out += ["", f"report: {report}  ({findings.meta['elapsed_s']:.0f} s)"]
    print("\n".join(out), flush=True)
    return 130 if findings.meta.get("interrupted") else 0
