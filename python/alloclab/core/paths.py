"""Where the lab's native parts are found: one search order for all of them.

The native parts are the shims (``liballoclab_profile.so``,
``liballoclab_litter.so``, ``liballoclab_memshim.so``), the ``alloclab-exec``
launcher, the memory tool (``alloclab-mem-amd64-linux``, ``alloclab-pagesim``),
this project's allocator (``libvam.so``) and the bundled workload programs.
Every one of them is looked up through :func:`find`, which tries these roots
in order and returns the first match:

1. each directory of ``$ALLOCLAB_PREFIX`` (colon-separated);
2. the package's own ``native`` directory (``alloclab/native``), where
   ``pip install .`` puts the parts it builds (an install prefix);
3. the build tree of the checkout this package lives in
   (``<checkout>/build/release``), when it runs from a checkout;
4. the prefix the package was installed under by ``make install``
   (``<prefix>/share/alloclab/python/alloclab`` -> ``<prefix>``);
5. the Python environment's prefix (``sys.prefix``: a ``pip install`` into a
   virtual environment that ``make install`` also installed into);
6. ``/usr/local`` and ``/usr``.

A root is either a build tree or an install prefix; both layouts are tried in
each root, so ``ALLOCLAB_PREFIX`` may name either::

    <root>/                      the root itself (a flat directory of parts)
    <root>/src/lab, src/memtools, src/vam, workloads        a build tree
    <root>/lib, lib64, lib/<multiarch>, libexec/alloclab,
    libexec/alloclab/workloads                              an install prefix

API::

    roots() -> list[str]                   # the roots above, in order, existing or not
    search_dirs() -> list[str]             # every directory find() looks in, in order
    find(name, executable=False) -> str | None
    describe() -> str                      # the search order, for error messages
    workload_dirs() -> list[str]           # existing directories holding workload programs
"""

from __future__ import annotations

import os
import sys

ENV = "ALLOCLAB_PREFIX"

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# python/alloclab -> the checkout root (meaningful only when running from a checkout).
SOURCE_ROOT = os.path.dirname(os.path.dirname(PACKAGE_DIR))
# The install prefix inside the package that a wheel's CMake build fills
# (pyproject.toml: wheel.install-dir); absent in a checkout and after make install.
NATIVE_DIR = os.path.join(PACKAGE_DIR, "native")

BUILD_SUBDIRS = ("src/lab", "src/memtools", "src/vam", "workloads")
PREFIX_SUBDIRS = ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu", "libexec/alloclab",
                  "libexec/alloclab/workloads")
SYSTEM_PREFIXES = ("/usr/local", "/usr")


def in_checkout() -> bool:
    """Whether this package is the one in a source checkout (python/alloclab)."""
    return os.path.isfile(os.path.join(SOURCE_ROOT, "CMakeLists.txt")) and \
        os.path.basename(os.path.dirname(PACKAGE_DIR)) == "python"


def _installed_prefix() -> str | None:
    # make install puts the package in <prefix>/share/alloclab/python/alloclab.
    parts = PACKAGE_DIR.split(os.sep)
    if parts[-4:-1] == ["share", "alloclab", "python"]:
        return os.sep.join(parts[:-4]) or os.sep
    return None


def roots() -> list[str]:
    """The roots searched, in order (see the module docstring)."""
    out = [d for d in os.environ.get(ENV, "").split(":") if d]
    if os.path.isdir(NATIVE_DIR):
        out.append(NATIVE_DIR)
    if in_checkout():
        out.append(os.path.join(SOURCE_ROOT, "build", "release"))
    inst = _installed_prefix()
    if inst:
        out.append(inst)
    out.append(sys.prefix)
    out.extend(SYSTEM_PREFIXES)
    seen, uniq = set(), []
    for r in out:
        r = os.path.abspath(r)
        if r not in seen:
            seen.add(r)
            uniq.append(r)
    return uniq


def search_dirs() -> list[str]:
    """Every directory find() looks in, in order."""
    dirs = []
    for r in roots():
        dirs.append(r)
        dirs.extend(os.path.join(r, s) for s in BUILD_SUBDIRS + PREFIX_SUBDIRS)
    return dirs


def find(name: str, executable: bool = False) -> str | None:
    """Absolute path of the first file called `name` in search_dirs(), or None."""
    for d in search_dirs():
        p = os.path.join(d, name)
        if os.path.isfile(p) and (not executable or os.access(p, os.X_OK)):
            return os.path.abspath(p)
    return None


def describe() -> str:
    """The search order in words, for messages that say where something was not found."""
    return (f"searched ${ENV}, then " + ", ".join(roots()[len([d for d in os.environ.get(ENV, '').split(':')
                                                                if d]):])
            + " (each as a build tree and as an install prefix); run `make`, or set "
            f"{ENV} to the build tree or install prefix holding it")


def workload_dirs() -> list[str]:
    """Existing directories that hold the bundled workload programs, in search order."""
    out = []
    for r in roots():
        for d in (os.path.join(r, "workloads"), os.path.join(r, "libexec", "alloclab", "workloads")):
            if os.path.isdir(d) and d not in out:
                out.append(d)
    return out
