"""The study's result files (docs/formats.md): DIR/findings.json (its tables, verdicts and
setup) and DIR/verdicts.json (one row per claim); their dataclasses, their one writer and
their one reader.

Both carry format_version FORMAT (findings.json inside "meta"). A verdict row
is a :class:`Verdict`; each key of a row is a field here, in the order written
(coverage, note and weight_note only when they have a value).

API::

    Verdict, Findings, FORMAT
    write_findings(findings, outdir, spread, level) -> (findings path, verdicts path)
    read_findings(path) -> Findings               # LabError: missing, not JSON, another version
"""

from __future__ import annotations

import dataclasses
import os

from alloclab import LabError
from alloclab.core.results.files import Format, fields_from_json, fields_to_json, json_field, load_json, write_json

FORMAT = Format("findings", 1, redo="run the study again")


@dataclasses.dataclass
class Verdict:
    """One claim of the papers, judged on one run (a row of verdicts.json)."""

    id: str
    paper: str
    claim: str
    paper_value: str
    measured: float | None = None
    low: float | None = None
    high: float | None = None
    n: int = 0
    verdict: str = "inconclusive"   # confirmed | stronger | weaker | refuted | inconclusive | unsettled
    rule: str = ""
    what: str = ""                  # what was measured, in words
    unit: str = "%"                 # "%": an effect, shown as a percentage; "x": a plain ratio
    spread: str = ""                # how the interval low-high was taken, in words
    coverage: float | None = json_field(None, omit_none=True)   # its probability of holding the median
    note: str | None = json_field(None, omit_none=True)
    weight_note: str | None = json_field(None, omit_none=True)
    # A timed claim's null and how it judged (experiments/study/verdicts/rules.py): the time
    # measure, the null's per-repeat values (A/A ratio - 1) and its noise floor, the interval the
    # rule saw (widened by the floor), the level asked for, and the stage whose repeats judged
    # (absent: the study's own rounds).
    measure: str | None = json_field(None, omit_none=True)
    null: list | None = json_field(None, omit_none=True)
    noise_floor: float | None = json_field(None, omit_none=True)
    judged_low: float | None = json_field(None, omit_none=True)
    judged_high: float | None = json_field(None, omit_none=True)
    level: float | None = json_field(None, omit_none=True)
    stage: int | None = json_field(None, omit_none=True)
    why: str | None = json_field(None, omit_none=True)

    @property
    def notes(self) -> str:
        return "; ".join(x for x in (self.note, self.weight_note) if x)


def _verdicts_from(rows: list) -> list:
    return [fields_from_json(Verdict, r) for r in rows]


def _verdicts_to(vs: list) -> list:
    return [fields_to_json(v) for v in vs]


@dataclasses.dataclass
class Findings:
    """What the study found: its tables (by name, rows as JSON objects), the verdicts, and its
    setup (meta: mode, allocators, levels, repeats, programs, notes, machine, ...)."""

    tables: dict = json_field(factory=dict)
    verdicts: list = json_field(factory=list, to=_verdicts_to, from_=_verdicts_from)
    meta: dict = json_field(factory=dict)
    extra: dict = dataclasses.field(default_factory=dict)


def write_findings(findings: Findings, outdir: str, spread: str, level: float) -> tuple[str, str]:
    """DIR/findings.json and DIR/verdicts.json (SPREAD: how the verdicts' intervals are taken, in
    words; LEVEL: the probability they hold the median)."""
    findings.meta["format_version"] = FORMAT.version
    f = write_json(os.path.join(outdir, "findings.json"), fields_to_json(findings), indent=1)
    v = write_json(os.path.join(outdir, "verdicts.json"),
                   {"format_version": FORMAT.version, "run": findings.meta.get("mode"), "spread": spread,
                    "level": level, "machine": {"load": (findings.meta.get("machine") or {}).get("load")},
                    "verdicts": _verdicts_to(findings.verdicts)}, indent=1)
    return f, v


def read_findings(path: str) -> Findings:
    data = load_json(path, "findings file")
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict):
        raise LabError(f"{path!r} is not a study's findings")
    FORMAT.check(path, data["meta"].get("format_version", 0))
    return fields_from_json(Findings, data)
