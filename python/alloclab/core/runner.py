"""Running one program and measuring it: the lab's one way to start a program.

Every run of the lab (timed, profiled, littered, under cachegrind, callgrind
or the memory tool) goes through :func:`run`, and every LD_PRELOAD it sets
is written by :func:`child_env` (or, identically, by the alloclab-exec
launcher from the same list).

Each run is a fresh child (its own process group), reaped with os.wait4 so
user/sys CPU time and peak RSS are the child's own (ru_maxrss is the maximum
over the child and the descendants it waited for). Wall time is measured
around start and reaping with time.perf_counter.

API::

    run(cmd, *, preload=(), env=None, timeout=None, stdout=None, stderr=None,
        cwd=None, unset=(), direct=False) -> RunResult
    check_command(cmd)                       # raises LabError when cmd[0] cannot run
    child_env(preload=(), env=None, base=None, unset=(), behind=()) -> dict
    replace_process(cmd, *, env=None, behind=())   # exec in that environment (the `vam` command)
    run_prepare(command, timeout, what)      # a hook's shell command (--setup, --prepare, --cleanup)
    output(cmd, cwd=None) -> str | None      # a short helper's standard output (git); None if it fails
    file_sha256(path) -> str
    STATUSES = ("ok", "failed", "timeout", "crashed")

stdout/stderr: None captures to a temporary file (stdout is hashed, the tail
of stderr kept), "inherit" passes the terminal through, or an open file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from alloclab import LabError
from alloclab.core import paths

STATUSES = ("ok", "failed", "timeout", "crashed")


@dataclasses.dataclass
class RunResult:
    """What one run did.

    status: "ok" (exit 0), "failed" (non-zero exit), "timeout" (killed after
    the time limit) or "crashed" (ended by a signal it did not survive).
    pid: the process started (the program itself when run directly).
    """

    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    exit_code: int | None
    signal: int | None
    status: str
    stdout_sha256: str | None
    stderr_tail: str = ""
    pid: int | None = None
    # What the program held when it exited, from /proc/PID/smaps_rollup (the launcher reads it at
    # the exit of the program's main thread; None when the launcher was not used or could not):
    # private dirty memory, memory given back with MADV_FREE but still resident, and transparent
    # huge pages.
    private_dirty_kb: int | None = None
    lazyfree_kb: int | None = None
    anon_huge_kb: int | None = None
    # With rss_every: [seconds since the start, resident KiB of the program and its descendants]
    # sampled every rss_every seconds while it ran.
    rss_series: list | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def exit_status(self) -> int:
        """The status a shell would report: the exit code, or 128 + the signal."""
        return self.exit_code if self.exit_code is not None else 128 + (self.signal or 0)


def check_command(cmd: list[str]) -> None:
    """Raise LabError unless cmd names a program that exists and can run."""
    if not cmd:
        raise LabError("no command given (put it after --)")
    prog = cmd[0]
    if "/" in prog:
        if not os.path.exists(prog):
            raise LabError(f"program {prog!r} does not exist")
        if not os.access(prog, os.X_OK) or os.path.isdir(prog):
            raise LabError(f"program {prog!r} is not executable")
    elif shutil.which(prog) is None:
        raise LabError(f"program {prog!r} not found in PATH")


def child_env(preload=(), env=None, base=None, unset=(), behind=()) -> dict[str, str]:
    """base (default os.environ) minus `unset` + env, with `preload` in front of LD_PRELOAD
    and `behind` after it (the `vam` command: a shim already preloaded stays in front of the
    allocator and sees it as the one beneath)."""
    e = dict(os.environ if base is None else base)
    for k in unset:
        e.pop(k, None)
    if env:
        e.update({k: str(v) for k, v in env.items()})
    libs, after = [p for p in preload if p], [p for p in behind if p]
    if libs or after:
        old = e.get("LD_PRELOAD", "")
        e["LD_PRELOAD"] = " ".join(libs + ([old] if old else []) + after)
    return e


def replace_process(cmd: list[str], *, env=None, behind=()) -> None:
    """Become cmd (os.execvpe, PATH searched) in child_env(env=env, behind=behind): the `vam`
    command. Returns only by raising OSError (not found, not executable)."""
    os.execvpe(cmd[0], cmd, child_env(env=env, behind=behind))


def exec_helper() -> str | None:
    """Path of the alloclab-exec launcher (see src/lab/exec.c), or None."""
    return paths.find("alloclab-exec", executable=True)


def _tail(path: str, limit: int = 4000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _kill_group(pgid: int) -> None:
    """SIGKILL a run's process group (its own session): on timeout, on ^C, and after it ends, so
    nothing it started lives on. Best effort: the group may be gone already."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


def file_sha256(path: str) -> str:
    """SHA-256 of a file's bytes, hex."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclasses.dataclass
class _Launch:
    """How one run is started: through the launcher (which measures the program alone) or directly."""

    argv: list
    env: dict
    result_file: str | None   # the launcher's measurements, when it is used


def _launch(cmd, preload, env, unset, direct: bool, tmp: str) -> _Launch:
    libs = [p for p in preload if p]
    helper = None if direct else exec_helper()
    if helper is None:
        return _Launch(list(cmd), child_env(libs, env, unset=unset), None)
    result = os.path.join(tmp, "result")
    argv = [helper] + (["--preload", " ".join(libs)] if libs else []) + ["--memory", result, "--", *cmd]
    return _Launch(argv, child_env((), env, unset=unset), result)


def _wait(proc, timeout) -> tuple[int, object, float, bool]:
    """Reap proc (killing its group after `timeout` s): (wait status, rusage, wall s, timed out).
    A KeyboardInterrupt kills and reaps the child, and is re-raised."""
    killed = threading.Event()
    start = time.perf_counter()
    timer = None
    if timeout:
        def kill():
            killed.set()
            _kill_group(proc.pid)
        timer = threading.Timer(timeout, kill)
        timer.daemon = True
        timer.start()
    try:
        while True:
            try:
                _, status, ru = os.wait4(proc.pid, 0)
                break
            except InterruptedError:
                continue
    except KeyboardInterrupt:
        _kill_group(proc.pid)
        try:
            os.wait4(proc.pid, 0)
        except ChildProcessError:
            pass
        proc.returncode = -9
        raise
    finally:
        if timer:
            timer.cancel()
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    _kill_group(proc.pid)  # reap anything the program left behind in its group (best effort)
    return status, ru, wall, killed.is_set()


@dataclasses.dataclass
class _Measured:
    code: int | None
    sig: int | None
    wall: float
    user: float
    system: float
    rss: int
    memory: tuple = (None, None, None)   # private dirty, lazy free, anon huge (KiB) at exit


def _measured(result_file: str | None, code, sig, wall, user, system, rss) -> _Measured:
    """The program's own numbers: the launcher's (when it ran and wrote them), else the child's.
    The launcher's line: exit_code signal wall_ns user_us sys_us maxrss_kb, then with --memory
    private_dirty_kb lazyfree_kb anon_huge_kb (-1 where smaps_rollup could not be read)."""
    if result_file is None:
        return _Measured(code, sig, wall, user, system, rss)
    measured = None
    if code == 0:
        try:
            with open(result_file, encoding="ascii") as f:
                measured = [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            measured = None
    if measured and len(measured) in (6, 9):
        c, sg, wall_ns, user_us, sys_us, rss = measured[:6]
        memory = tuple(None if v < 0 else v for v in measured[6:9]) or (None, None, None)
        code, sig = (c, None) if c >= 0 else (None, sg)
        return _Measured(code, sig, wall_ns / 1e9, user_us / 1e6, sys_us / 1e6, rss, memory)
    if sig is None:
        code = 125 if code == 0 else code  # the launcher itself failed
    return _Measured(code, sig, wall, user, system, rss)


def _children(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as f:
                out += [int(x) for x in f.read().split()]
    except (OSError, ValueError):
        pass
    return out


def tree_rss_kb(pid: int, itself: bool = True) -> int | None:
    """Resident KiB (statm's resident pages, as RSS counts them) of pid's descendants, and of pid
    itself unless `itself` is false (the launcher); None when nothing could be read."""
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    total, seen, pending = 0, False, [(pid, itself)]
    while pending:
        p, count = pending.pop()
        if count:
            try:
                with open(f"/proc/{p}/statm", encoding="ascii") as f:
                    total += int(f.read().split()[1]) * page_kb
                seen = True
            except (OSError, ValueError, IndexError):
                pass
        pending += [(c, True) for c in _children(p)]
    return total if seen else None


class _RssSampler:
    """A thread that samples tree_rss_kb(pid) every `every` seconds until stopped."""

    def __init__(self, pid: int, itself: bool, every: float):
        self.series: list = []
        self._stop = threading.Event()
        t0 = time.perf_counter()

        def loop():
            while not self._stop.is_set():
                kb = tree_rss_kb(pid, itself)
                if kb:
                    self.series.append([round(time.perf_counter() - t0, 4), kb])
                self._stop.wait(every)

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()

    def stop(self) -> list:
        self._stop.set()
        self._thread.join()
        return self.series


def _state(code, sig, timed_out: bool) -> str:
    if timed_out:
        return "timeout"
    if sig is not None:
        return "crashed"
    return "ok" if code == 0 else "failed"


def run(cmd, *, preload=(), env=None, timeout=None, stdout=None, stderr=None, cwd=None,
        unset=(), direct: bool = False, rss_every: float | None = None) -> RunResult:
    """Run cmd once in a fresh child; see the module docstring.

    The child is started through the alloclab-exec launcher when it is built
    (so its peak RSS does not include the Python interpreter's, which Linux
    would otherwise carry across exec), unless `direct` (then the process
    started is the program, and RunResult.pid is its pid); else directly,
    with that caveat. A KeyboardInterrupt while waiting kills the child's
    process group, reaps it, and is re-raised. With `rss_every` (seconds), the resident memory
    of the program and its descendants is sampled that often while it runs (RunResult.rss_series).
    """
    check_command(cmd)
    with tempfile.TemporaryDirectory(prefix="alloclab-run-") as tmp:
        how = _launch(cmd, preload, env, unset, direct, tmp)
        out_path, err_path = os.path.join(tmp, "stdout"), os.path.join(tmp, "stderr")
        out_f = open(out_path, "wb") if stdout is None else None
        err_f = open(err_path, "wb") if stderr is None else None
        try:
            so = out_f if stdout is None else (None if stdout == "inherit" else stdout)
            se = err_f if stderr is None else (None if stderr == "inherit" else stderr)
            try:
                proc = subprocess.Popen(how.argv, env=how.env, stdout=so, stderr=se, cwd=cwd,
                                        start_new_session=True, close_fds=True)
            except OSError as e:
                raise LabError(f"cannot run {cmd[0]!r}: {e.strerror or e}") from None
            sampler = _RssSampler(proc.pid, how.result_file is None, rss_every) if rss_every else None
            try:
                status, ru, wall, timed_out = _wait(proc, timeout)
            finally:
                series = sampler.stop() if sampler else None
        finally:
            if out_f:
                out_f.close()
            if err_f:
                err_f.close()
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        m = _measured(how.result_file, code, sig, wall, ru.ru_utime, ru.ru_stime, int(ru.ru_maxrss))
        dirty, lazy, huge = m.memory
        return RunResult(wall_s=m.wall, user_s=m.user, sys_s=m.system, max_rss_kb=m.rss, exit_code=m.code,
                         signal=m.sig, status=_state(m.code, m.sig, timed_out),
                         stdout_sha256=file_sha256(out_path) if stdout is None else None,
                         stderr_tail=_tail(err_path) if stderr is None else "", pid=proc.pid,
                         private_dirty_kb=dirty, lazyfree_kb=lazy, anon_huge_kb=huge, rss_series=series)


def output(cmd: list, cwd: str | None = None, timeout: float = 20.0) -> str | None:
    """The standard output of a short helper command that is not measured (git, to record the
    tree a run was made from); None when it is missing, fails or takes longer than TIMEOUT."""
    try:
        r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=timeout,
                           text=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


def run_prepare(command: str, timeout: float | None = None, what: str = "--prepare") -> None:
    """Run a hook's shell command (--setup, --prepare, --cleanup; not timed); LabError when it
    fails or exceeds the timeout."""
    try:
        r = subprocess.run(["sh", "-c", command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise LabError(f"the {what} command {command!r} did not finish within {timeout:g} s") from None
    if r.returncode != 0:
        tail = r.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise LabError(f"the {what} command {command!r} failed with status {r.returncode}"
                       + (f": {tail[0][:200]}" if tail[0] else ""))
