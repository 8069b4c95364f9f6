"""Littering levels (the littering paper's Table 3) and the cells of a comparison.

A :class:`Level` is one of the paper's presets; it is an ``int`` (0, 1, 3,
10), so it is written to files and compared as one, and it carries the
preset's multiplier M and occupancy O::

    Adv_0   no littering
    Adv_1   M = 1,  O = 0.33
    Adv_3   M = 3,  O = 0.66
    Adv_10  M = 10, O = 0.8

:meth:`Level.parse` is the one place a level is read from text (``3``,
``Adv_3``, ``adv3``, any case). A :class:`Cell` is one allocator at one level:
its key ``"glibc/Adv_3"`` names it in the files a comparison writes.

API::

    Level(n) / Level.parse(text) -> Level     # LabError for an unknown level
    level.multiplier, level.occupancy, level.label ("Adv_3"), level.littered
    Cell(allocator_name, level).key           # "glibc/Adv_3"
    cell_key(allocator_name, level) -> str
"""

from __future__ import annotations

import dataclasses
import enum
import re

from alloclab import LabError

_PRESETS = {0: (0.0, 0.0), 1: (1.0, 0.33), 3: (3.0, 0.66), 10: (10.0, 0.8)}
_TEXT = re.compile(r"^(?:adv_?)?(\d+)$", re.IGNORECASE)


class Level(enum.IntEnum):
    """One littering preset of Table 3; its value is the paper's N of Adv_N."""

    ADV_0 = 0
    ADV_1 = 1
    ADV_3 = 3
    ADV_10 = 10

    def __str__(self) -> str:  # as the int it is, in CSV cells and messages
        return str(int(self))

    @classmethod
    def of(cls, n: int) -> Level:
        """The level numbered n; LabError for a number that is not a preset."""
        try:
            return cls(n)
        except ValueError:
            raise LabError(f"unknown littering level Adv_{n}; choose from {', '.join(map(str, _PRESETS))}") \
                from None

    @classmethod
    def parse(cls, text: str) -> Level:
        """A level written 3, Adv_3, adv3 or ADV_3."""
        m = _TEXT.match(str(text).strip())
        if not m:
            raise LabError(f"littering level {str(text)!r} is not one of "
                           f"{', '.join(map(str, _PRESETS))} (also written Adv_N)")
        return cls.of(int(m.group(1)))

    @property
    def multiplier(self) -> float:
        return _PRESETS[self][0]

    @property
    def occupancy(self) -> float:
        return _PRESETS[self][1]

    @property
    def label(self) -> str:
        return f"Adv_{int(self)}"

    @property
    def littered(self) -> bool:
        return self != 0


def cell_key(allocator: str, level: int) -> str:
    """The name of one allocator at one level in a comparison's files: "glibc/Adv_3"."""
    return f"{allocator}/Adv_{int(level)}"


@dataclasses.dataclass(frozen=True)
class Cell:
    """One allocator (by name) at one littering level."""

    allocator: str
    level: Level

    @property
    def key(self) -> str:
        return cell_key(self.allocator, self.level)
