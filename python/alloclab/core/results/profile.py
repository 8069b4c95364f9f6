"""A heap profile (the profile JSON `alloclab profile` writes; docs/formats.md): its one
reader and its one writer.

A merged profile carries "format_version" (FORMAT). A file without the key is
read as the shim's own record format (the shim writes no version); a file
with a version this alloclab does not read is refused with a message naming
both versions. Littering needs "max_live" and "sizes"; the other keys are
what the profile records about the run.

API::

    Profile(data)                   # .max_live, .sizes, .allocations, ... over the JSON object
    FORMAT
    validate(data, where="profile") -> dict        # LabError
    read_profile(path) -> Profile                  # validated; LabError
    write_profile(profile, path)
"""

from __future__ import annotations

import dataclasses

from alloclab import LabError
from alloclab.core.results.files import Format, load_json, write_json

FORMAT = Format("profile", 1, redo="re-profile the program with this alloclab",
                upgrade="upgrade, or re-profile with this one")


def _count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def validate(data, where: str = "profile") -> dict:
    """Check the keys littering needs; return DATA. Raises LabError."""
    if not isinstance(data, dict):
        raise LabError(f"{where}: not a JSON object")
    if "format_version" in data:
        FORMAT.check(where, data["format_version"], where)
    for k in ("max_live", "sizes"):
        if k not in data:
            raise LabError(f"{where}: missing key {k!r}")
    if not _count(data["max_live"]):
        raise LabError(f"{where}: 'max_live' must be a non-negative integer")
    sizes = data["sizes"]
    if not isinstance(sizes, dict):
        raise LabError(f"{where}: 'sizes' must be an object mapping sizes to counts")
    for k, v in sizes.items():
        if not str(k).isdigit():  # JSON keys are text: a size is one written in digits
            raise LabError(f"{where}: size key {k!r} is not a decimal integer")
        if not _count(v):
            raise LabError(f"{where}: count for size {k} must be a non-negative integer")
    return data


def _key(name: str, doc: str):
    """A Profile property: the JSON object's NAME (None when a shim's record has none)."""
    return property(lambda self: self.data.get(name), doc=doc)


@dataclasses.dataclass(frozen=True)
class Profile:
    """A validated profile: the JSON object, with the values the lab reads typed."""

    data: dict

    @property
    def max_live(self) -> int:
        return self.data["max_live"]

    @property
    def sizes(self) -> dict:
        """size (text, as in the file) -> count, below the cutoff."""
        return self.data["sizes"]

    @property
    def processes(self) -> list:
        return self.data.get("processes") or []

    allocations = _key("allocations", "allocations counted (int)")
    bytes = _key("bytes", "bytes requested (int)")
    max_live_bytes = _key("max_live_bytes", "the most bytes live at once (int)")
    mean_size = _key("mean_size", "bytes per allocation (float)")
    cutoff = _key("cutoff", "sizes at or above are not in the histogram (int)")
    ignored = _key("ignored", "allocations at or above the cutoff (int)")
    run = _key("run", "the profiled run: status, exit_code, signal, wall_s (a profile the lab ran)")


def read_profile(path: str) -> Profile:
    """Read and validate a profile JSON file."""
    return Profile(validate(load_json(path, "profile"), f"profile {path!r}"))


def write_profile(profile: Profile, path: str) -> str:
    return write_json(path, profile.data)
