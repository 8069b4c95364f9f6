"""Finding allocators and the lab's own shims.

An :class:`Allocator` is what a run preloads beneath the program: ``glibc`` is
the system allocator (nothing preloaded); ``jemalloc``, ``mimalloc`` and
``tcmalloc`` are the peers installed on the system (found with ``ldconfig -p``
and a few standard directories); ``vam`` is this project's drop-in malloc
(``build/release/src/vam/libvam.so`` in a checkout, or the installed library
directory); and any path to a shared object is accepted as an allocator too.

API::

    find(name_or_path) -> Allocator        # raises LabError when unknown/missing
    available() -> list[Allocator]         # every known allocator present here
    KNOWN                                  # the names find() understands
    shim(kind) -> str                      # path of liballoclab_<kind>.so (profile | litter)
    lab_libdir() -> str | None             # where the shims were found
    exec_helper() -> str | None            # the alloclab-exec measuring launcher

The shims are searched in ``$ALLOCLAB_LIBDIR``, then ``build/release/src/lab``
of the checkout this package lives in, then the library directories of an
installed tree (``<prefix>/lib*``).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import subprocess
import time

from alloclab import LabError

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
# python/alloclab -> the checkout root (when running from a checkout).
SOURCE_ROOT = os.path.dirname(os.path.dirname(PACKAGE_DIR))

# Name -> shared-object names to look for, best first.
PEERS = {
    "jemalloc": ["libjemalloc.so.2", "libjemalloc.so"],
    "mimalloc": ["libmimalloc.so.2", "libmimalloc.so"],
    "tcmalloc": ["libtcmalloc_minimal.so.4", "libtcmalloc.so.4", "libtcmalloc_minimal.so"],
}
KNOWN = ["glibc", *PEERS, "vam"]

SYSTEM_LIBDIRS = [
    "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
    "/usr/local/lib", "/usr/lib64", "/usr/lib", "/lib64", "/lib",
]


@dataclasses.dataclass(frozen=True)
class Allocator:
    """One allocator a program can run on.

    name     short name used in tables and files ("glibc", "jemalloc", ...)
    path     shared object to LD_PRELOAD, or None for the system allocator
    version  best-effort version string ("unknown" when it cannot be told)
    """

    name: str
    path: str | None
    version: str

    @property
    def preload(self) -> list[str]:
        return [self.path] if self.path else []


def _install_prefixes() -> list[str]:
    # <prefix>/share/alloclab/python/alloclab -> <prefix>
    prefix = os.path.abspath(os.path.join(PACKAGE_DIR, "..", "..", "..", ".."))
    return [prefix]


def _libdirs_of(prefix: str) -> list[str]:
    return [os.path.join(prefix, d) for d in ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu")]


def lab_libdirs() -> list[str]:
    """Directories searched for the lab's shims, in order."""
    dirs = []
    if os.environ.get("ALLOCLAB_LIBDIR"):
        dirs.append(os.environ["ALLOCLAB_LIBDIR"])
    dirs.append(os.path.join(SOURCE_ROOT, "build", "release", "src", "lab"))
    for prefix in _install_prefixes():
        dirs.extend(_libdirs_of(prefix))
    return dirs


def lab_libdir() -> str | None:
    """The first directory holding liballoclab_profile.so, or None."""
    for d in lab_libdirs():
        if os.path.isfile(os.path.join(d, "liballoclab_profile.so")):
            return d
    return None


def shim(kind: str) -> str:
    """Absolute path of liballoclab_<kind>.so (kind: "profile" or "litter")."""
    name = f"liballoclab_{kind}.so"
    for d in lab_libdirs():
        p = os.path.join(d, name)
        if os.path.isfile(p):
            return os.path.abspath(p)
    raise LabError(f"{name} not found (searched: {', '.join(lab_libdirs())}); "
                   "run `make` first, or set ALLOCLAB_LIBDIR to the directory holding it")


def exec_helper() -> str | None:
    """Path of the alloclab-exec launcher (see src/lab/exec.c), or None."""
    dirs = lab_libdirs() + [os.path.join(p, "libexec", "alloclab") for p in _install_prefixes()]
    for d in dirs:
        p = os.path.join(d, "alloclab-exec")
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return os.path.abspath(p)
    return None


@functools.lru_cache(maxsize=1)
def _ldconfig() -> dict[str, str]:
    """soname -> path from `ldconfig -p` (empty when ldconfig is unavailable)."""
    out = {}
    for exe in ("ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"):
        try:
            text = subprocess.run([exe, "-p"], capture_output=True, text=True, check=False).stdout
        except OSError:
            continue
        for line in text.splitlines():
            m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
            if m and ("x86-64" in m.group(2) or "64bit" in m.group(2) or "AArch64" in m.group(2)
                      or m.group(1) not in out):
                out.setdefault(m.group(1), m.group(3))
        break
    return out


def _locate(sonames: list[str]) -> str | None:
    table = _ldconfig()
    for so in sonames:
        if so in table and os.path.exists(table[so]):
            return table[so]
        for d in SYSTEM_LIBDIRS:
            p = os.path.join(d, so)
            if os.path.exists(p):
                return p
    return None


@functools.lru_cache(maxsize=None)
def _package_version(path: str) -> str | None:
    """Debian package version owning path, or None."""
    candidates = {path, os.path.realpath(path)}
    for c in list(candidates):  # /lib is a symlink to /usr/lib on merged-/usr systems
        if c.startswith("/lib/"):
            candidates.add("/usr" + c)
    for c in candidates:
        try:
            r = subprocess.run(["dpkg-query", "-S", c], capture_output=True, text=True, check=False)
        except OSError:
            return None
        if r.returncode == 0 and ":" in r.stdout:
            pkg = r.stdout.split(": ")[0].split(",")[0].strip()
            v = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                               capture_output=True, text=True, check=False)
            if v.returncode == 0 and v.stdout.strip():
                return f"{v.stdout.strip()} ({pkg.split(':')[0]})"
    return None


def _version_of(path: str) -> str:
    v = _package_version(path)
    if v:
        return v
    m = re.search(r"\.so\.([\d.]+)$", os.path.realpath(path))
    return m.group(1) if m else "unknown"


def glibc_version() -> str:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") or "unknown"
    except (ValueError, OSError):
        return "unknown"


def _vam_candidates() -> list[str]:
    c = [os.path.join(SOURCE_ROOT, "build", "release", "src", "vam", "libvam.so")]
    for prefix in _install_prefixes():
        c.extend(os.path.join(d, "libvam.so") for d in _libdirs_of(prefix))
    return c


def find(name: str) -> Allocator:
    """The allocator called `name` ("glibc", a peer, "vam") or at path `name`.

    Raises LabError when the name is unknown or the library is not installed.
    """
    key = name.strip()
    low = key.lower()
    if low in ("glibc", "system", "libc"):
        return Allocator("glibc", None, glibc_version())
    if low in PEERS:
        path = _locate(PEERS[low])
        if not path:
            raise LabError(f"allocator {low!r} is not installed (looked for {', '.join(PEERS[low])})")
        return Allocator(low, path, _version_of(path))
    if low == "vam":
        for p in _vam_candidates():
            if os.path.isfile(p):
                st = os.stat(p)
                built = time.strftime("%Y-%m-%d %H:%M", time.gmtime(st.st_mtime))
                return Allocator("vam", os.path.abspath(p), f"alloclab build of {built} UTC")
        raise LabError("allocator 'vam' is not built (run `make`; looked for "
                       + ", ".join(_vam_candidates()) + ")")
    if "/" in key or key.endswith(".so") or ".so." in key:
        if not os.path.isfile(key):
            raise LabError(f"allocator library {key!r} does not exist")
        with open(key, "rb") as f:
            if f.read(4) != b"\x7fELF":
                raise LabError(f"allocator library {key!r} is not a shared object (ELF)")
        base = os.path.basename(key)
        short = re.sub(r"^lib", "", re.sub(r"\.so(\..*)?$", "", base)) or base
        return Allocator(short, os.path.abspath(key), _version_of(key))
    raise LabError(f"unknown allocator {name!r}; known: {', '.join(KNOWN)}, or a path to a .so")


def available() -> list[Allocator]:
    """Every allocator in KNOWN that is present on this machine."""
    out = []
    for n in KNOWN:
        try:
            out.append(find(n))
        except LabError:
            pass
    return out


def find_many(names: str | list[str]) -> list[Allocator]:
    """find() for a comma-separated string or a list; "all" means available()."""
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    if names == ["all"]:
        return available()
    out = [find(n) for n in names]
    seen = set()
    for a in out:
        if a.name in seen:
            raise LabError(f"allocator {a.name!r} given twice")
        seen.add(a.name)
    return out
