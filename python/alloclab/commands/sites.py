"""`alloclab sites`: the allocation sites of a profile made with --stacks, ranked."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from alloclab import LabError
from alloclab.core.results.files import load_json
from alloclab.core.results.sites import write_dhat
from alloclab.measure import sites as site_data

NAME = "sites"
HELP = "rank the allocation sites (call stacks) of `alloclab profile --stacks`: peak, bytes, calls, temporaries, leaks"


def add_arguments(sp) -> None:
    sp.add_argument("profile", help="a profile JSON made with --stacks, or its sites directory")
    sp.add_argument("--top", type=int, default=10, help="rows per ranking (default %(default)s)")
    sp.add_argument("--by", default=",".join(site_data.METRICS),
                    help=f"rankings to print, of {', '.join(site_data.METRICS)} (default: all)")
    sp.add_argument("--dhat", metavar="FILE",
                    help="also write the sites as DHAT's JSON, which valgrind's dh_view.html opens")


@dataclasses.dataclass
class Plan:
    source: Path
    top: int
    metrics: tuple
    dhat: Path | None


def sites_source(path: str) -> Path:
    """The sites directory of a profile (recorded in it by --stacks), or path itself."""
    p = Path(path)
    if p.is_file() and p.suffix == ".json":
        doc = load_json(str(p), "profile")
        if not isinstance(doc, dict):
            raise LabError(f"{p}: not a profile")
        if doc.get("kind") == site_data.FORMAT_KIND:
            return p
        if "sites" in doc and isinstance(doc["sites"], str):
            return (p.parent / doc["sites"]).resolve()
        raise LabError(f"{p}: a profile without allocation sites: make it with `alloclab profile --stacks`")
    return p


def plan(ns) -> Plan:
    metrics = tuple(m.strip() for m in ns.by.split(",") if m.strip())
    bad = [m for m in metrics if m not in site_data.METRICS]
    if bad or not metrics:
        raise LabError(f"--by: unknown ranking {', '.join(bad) or '(none)'}; one or more of "
                       f"{', '.join(site_data.METRICS)}")
    if ns.top < 1:
        raise LabError("--top must be at least 1")
    return Plan(sites_source(ns.profile), ns.top, metrics, Path(ns.dhat) if ns.dhat else None)


def run(p: Plan) -> site_data.SiteProfile:
    try:
        return site_data.load(p.source)
    except site_data.SitesError as e:
        raise LabError(str(e)) from None


def write(p: Plan, prof: site_data.SiteProfile) -> int:
    print(site_data.render(prof, p.metrics, p.top))
    if p.dhat:
        write_dhat(str(p.dhat), site_data.to_dhat(prof, [str(p.source)]))
        print(f"alloclab: DHAT file written to {p.dhat} (open it in valgrind's dh_view.html)", file=sys.stderr)
    return 0
