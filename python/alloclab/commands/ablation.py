"""`alloclab ablation`: Vam's design switches one at a time: time, D1/LL misses, peak RSS
(out/ablation)."""

from __future__ import annotations

import sys

from alloclab.commands import arguments as A
from alloclab.core import allocators
from alloclab.experiments.ablation import plan as planning
from alloclab.experiments.ablation.report import markdown_summary
from alloclab.experiments.ablation.run import run_ablation, write as write_files

NAME = "ablation"
HELP = "Vam's design switches one at a time: time, D1/LL misses, peak RSS (out/ablation)"


def add_arguments(sp) -> None:
    """`alloclab ablation [--quick | --full] [--rounds N] [--programs LIST] [--no-cache] [-o DIR]`."""
    A.add_mode(sp, "a smoke test: two small workloads and perl, two rounds",
               "bigger inputs, more programs, seven rounds")
    sp.add_argument("--rounds", type=A.count_type(1), default=None, metavar="N",
                    help="timed rounds (default: the mode's)")
    A.add_scale(sp)
    sp.add_argument("--programs", type=A.typed(A.parse_list), default=None, metavar="LIST",
                    help="only these programs (names as in the report, comma-separated)")
    sp.add_argument("--no-cache", dest="cache", action="store_false",
                    help="skip the cachegrind runs (no D1/LL columns)")
    A.add_timeout(sp, 600)
    A.add_output_dir(sp, "out/ablation")


def plan(ns) -> planning.AblationPlan:
    return planning.plan(ns.mode or "default", ns.output, allocators.find("vam"), only=ns.programs, scale=ns.scale,
                         rounds=ns.rounds, cache=ns.cache, timeout=ns.timeout or 600,
                         command=["alloclab"] + sys.argv[1:])


def run(p: planning.AblationPlan) -> dict:
    return run_ablation(p)


def write(p: planning.AblationPlan, a: dict) -> int:
    js, md = write_files(a, p.outdir)
    print(markdown_summary(a), file=sys.stderr, flush=True)
    print(f"ablation: {js}  {md}  ({a['meta']['elapsed_s']:.0f} s)", file=sys.stderr, flush=True)
    return 0
