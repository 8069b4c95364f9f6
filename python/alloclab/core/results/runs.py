"""results.csv: one row per measured run, its one reader and its one writer.

A comparison writes :class:`RunRow` rows (DIR/results.csv); the study writes
:class:`StudyRow` rows, the same with the program's columns in front. Every
column is a field of the row's dataclass with its codec (how it is written
and read back), so a new column is one field here (with the value it takes in
the files of the same version written before it: `missing=`; a column that
changes meaning or goes away bumps FORMAT's version, and the old version stays
in FORMAT.reads with what it takes to read it). Times are kept to the
microsecond, as they are written, so a row read back equals the row written.

The first column is format_version (FORMAT). Readers accept every version in
FORMAT.reads; a file without the column is version 0 (written before versions
existed) and is refused.

API::

    RunRow, StudyRow                     # row.cells() -> {column: text}; Row.from_cells(cells)
    FORMAT
    columns(row_type=RunRow) -> list[str]
    RowWriter(f, row_type=RunRow)        # writes the header at once; .write(row)
    read_rows(path, row_type=RunRow) -> list[row_type]   # LabError: missing, other version, not CSV
"""

from __future__ import annotations

import csv
import dataclasses

from alloclab import LabError
from alloclab.core.levels import Level, cell_key
from alloclab.core.results.files import Format, open_text

FORMAT = Format("results", 1, redo="re-run the comparison", named=False)


def _opt(parse):
    return lambda text: None if text == "" else parse(text)


def _text_or_blank(v) -> str:
    return "" if v is None else str(v)


_REQUIRED = object()


def _column(parse=str, fmt=_text_or_blank, missing=_REQUIRED):
    """A column: how its text is read (PARSE) and written (FMT). A column added after a format
    version was first written gives MISSING for the files of that version that lack it."""
    return dataclasses.field(metadata={"parse": parse, "fmt": fmt, "missing": missing})


def _seconds(v) -> str:
    return f"{v:.6f}"


def TEXT():
    return _column()


def INT():
    return _column(int)


def FLOAT():
    return _column(float)


def OPT_INT(missing=_REQUIRED):
    return _column(_opt(int), missing=missing)


def SECONDS():
    return _column(float, _seconds)


def OPT_SECONDS(missing=_REQUIRED):
    return _column(_opt(float), lambda v: "" if v is None else _seconds(v), missing)


def OPT_KB(missing=_REQUIRED):
    return OPT_INT(missing)


def LEVEL():
    return _column(lambda text: Level.of(int(text)))


@dataclasses.dataclass
class RunRow:
    """One measured run of a comparison (a row of results.csv; docs/formats.md)."""

    run: int = INT()                      # its place in the comparison, from 1
    allocator: str = TEXT()
    adv: Level = LEVEL()
    multiplier: float = FLOAT()
    occupancy: float = FLOAT()
    repeat: int = INT()                   # the round, from 1
    seed: int | None = OPT_INT()          # the littering seed (none on a clean heap)
    profile_sha256: str = TEXT()          # of the profile that littered it ("" on a clean heap)
    wall_s: float = SECONDS()
    user_s: float = SECONDS()
    sys_s: float = SECONDS()
    max_rss_kb: int = INT()
    exit_code: int | None = OPT_INT()
    signal: int | None = OPT_INT()
    status: str = TEXT()                  # ok | failed | timeout | crashed | no_litter_log
    stdout_sha256: str = TEXT()
    litter_s: float = SECONDS()           # what littering took before main (the shim's log)
    program_s: float = SECONDS()          # wall_s - litter_s
    program_inproc_s: float | None = OPT_SECONDS()   # from the end of littering to exit, in the process
    started_utc: str = TEXT()
    # The program's CPU time over program_inproc_s's span (user + system, every process of the
    # run, littering excluded: the litter shim's cpu_ms), and its memory at exit (alloclab-exec
    # --memory: /proc/PID/smaps_rollup as its main thread exits). Files written before these
    # columns read them as None.
    program_cpu_s: float | None = OPT_SECONDS(missing=None)
    private_dirty_kb: int | None = OPT_KB(missing=None)
    lazyfree_kb: int | None = OPT_KB(missing=None)
    anon_huge_kb: int | None = OPT_KB(missing=None)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def key(self) -> str:
        """The name of the row's cell: "glibc/Adv_3"."""
        return cell_key(self.allocator, self.adv)

    def cells(self) -> dict:
        """The row as the text of its columns (format_version first)."""
        out = {"format_version": str(FORMAT.version)}
        for f in dataclasses.fields(self):
            out[f.name] = f.metadata["fmt"](getattr(self, f.name))
        return out

    @classmethod
    def from_cells(cls, cells: dict):
        kw = {}
        for f in dataclasses.fields(cls):
            text = cells.get(f.name)
            if text is None:
                if f.metadata["missing"] is _REQUIRED:
                    raise LabError(f"no column {f.name!r}")
                kw[f.name] = f.metadata["missing"]
                continue
            try:
                kw[f.name] = f.metadata["parse"](text)
            except (ValueError, LabError) as e:
                raise LabError(f"column {f.name!r}: {text!r} ({e})") from None
        return cls(**kw)


# The study's program columns, written in front of the run's.
_PROGRAM = ("program", "workload", "variant", "kind", "origin")


@dataclasses.dataclass
class StudyRow(RunRow):
    """One measured run of the study: the program it ran, then the run (a RunRow)."""

    program: str = TEXT()                 # e.g. "compiler/reap", "python3/custom", "gcc"
    workload: str = TEXT()                # what it is a variant of: one profile per workload
    variant: str = TEXT()                 # malloc | custom | reap | emulator | talloc | apr | pmr | real
    kind: str = TEXT()                    # per-class | region | hybrid | general | real
    origin: str = TEXT()                  # bundled | real
    # 0: the study's own rounds; k: the k-th stage of repeats added for the claims those rounds
    # left unsettled (files written before the column read 0)
    stage: int = _column(int, missing=0)
    # How many requests the program's own allocator served, read from that allocator's own
    # counter (experiments/study/counters.py): > 0 with it on, 0 with it off; None (empty) for
    # programs without one, and in files written before the column.
    custom_ops: int | None = OPT_INT(missing=None)

    @classmethod
    def of(cls, run: RunRow, **program) -> StudyRow:
        return cls(**dataclasses.asdict(run), **program)

    def cells(self) -> dict:
        c = super().cells()
        return {"format_version": c.pop("format_version"), **{k: c.pop(k) for k in _PROGRAM}, **c}


def columns(row_type=RunRow) -> list[str]:
    """The CSV header of ROW_TYPE's file."""
    names = [f.name for f in dataclasses.fields(row_type)]
    front = [n for n in _PROGRAM if n in names]
    return ["format_version"] + front + [n for n in names if n not in front]


class RowWriter:
    """Writes rows of ROW_TYPE to an open file; the header goes out at once."""

    def __init__(self, f, row_type=RunRow):
        self._w = csv.DictWriter(f, fieldnames=columns(row_type))
        self._w.writeheader()

    def write(self, row: RunRow) -> None:
        self._w.writerow(row.cells())


def read_rows(path: str, row_type=RunRow) -> list:
    """The rows of a results.csv (ROW_TYPE: RunRow for a comparison's, StudyRow for the study's),
    each checked against FORMAT."""
    try:
        with open_text(path, newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            if "format_version" not in header:
                if "allocator" in header and "wall_s" in header:
                    raise FORMAT.error(path, 0)
                raise LabError(f"{path!r} is not a results CSV (no format_version column)")
            cells = list(reader)
    except FileNotFoundError:
        raise LabError(f"results file {path!r} does not exist") from None
    except (OSError, UnicodeDecodeError, EOFError, csv.Error) as e:
        raise LabError(f"cannot read results file {path!r}: {e}") from None
    rows = []
    for i, c in enumerate(cells, 2):
        FORMAT.check(path, c.get("format_version"))
        try:
            rows.append(row_type.from_cells(c))
        except LabError as e:
            raise LabError(f"{path!r} line {i}: {e}") from None
    return rows
