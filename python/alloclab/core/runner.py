"""Running one program and measuring it.

Each run is a fresh child (its own process group), reaped with os.wait4 so
user/sys CPU time and peak RSS are the child's own (ru_maxrss is the maximum
over the child and the descendants it waited for). Wall time is measured
around start and reaping with time.perf_counter.

API::

    run(cmd, *, preload=(), env=None, timeout=None, stdout=None, stderr=None,
        cwd=None, unset=()) -> RunResult
    check_command(cmd)                       # raises LabError when cmd[0] cannot run
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

STATUSES = ("ok", "failed", "timeout", "crashed")


@dataclasses.dataclass
class RunResult:
    """What one run did.

    status: "ok" (exit 0), "failed" (non-zero exit), "timeout" (killed after
    the time limit) or "crashed" (ended by a signal it did not survive).
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

    @property
    def ok(self) -> bool:
        return self.status == "ok"


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


def child_env(preload=(), env=None, base=None, unset=()) -> dict[str, str]:
    """base (default os.environ) minus `unset` + env, with `preload` in front of LD_PRELOAD."""
    e = dict(os.environ if base is None else base)
    for k in unset:
        e.pop(k, None)
    if env:
        e.update({k: str(v) for k, v in env.items()})
    libs = [p for p in preload if p]
    if libs:
        old = e.get("LD_PRELOAD", "")
        e["LD_PRELOAD"] = " ".join(libs + ([old] if old else []))
    return e


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


def run(cmd, *, preload=(), env=None, timeout=None, stdout=None, stderr=None, cwd=None,
        unset=()) -> RunResult:
    """Run cmd once in a fresh child; see the module docstring.

    The child is started through the alloclab-exec launcher when it is built
    (so its peak RSS does not include the Python interpreter's, which Linux
    would otherwise carry across exec); else directly, with that caveat.
    A KeyboardInterrupt while waiting kills the child's process group, reaps
    it, and is re-raised.
    """
    check_command(cmd)
    from alloclab.core import allocators
    helper = allocators.exec_helper()
    libs = [p for p in preload if p]
    with tempfile.TemporaryDirectory(prefix="alloclab-run-") as tmp:
        out_path = os.path.join(tmp, "stdout")
        err_path = os.path.join(tmp, "stderr")
        res_path = os.path.join(tmp, "result")
        if helper:
            full_env = child_env((), env, unset=unset)
            argv = [helper] + (["--preload", " ".join(libs)] if libs else []) + [res_path, "--", *cmd]
        else:
            full_env = child_env(libs, env, unset=unset)
            argv = list(cmd)
        out_f = open(out_path, "wb") if stdout is None else None
        err_f = open(err_path, "wb") if stderr is None else None
        try:
            so = out_f if stdout is None else (None if stdout == "inherit" else stdout)
            se = err_f if stderr is None else (None if stderr == "inherit" else stderr)
            killed = threading.Event()
            start = time.perf_counter()
            try:
                proc = subprocess.Popen(argv, env=full_env, stdout=so, stderr=se, cwd=cwd,
                                        start_new_session=True, close_fds=True)
            except OSError as e:
                raise LabError(f"cannot run {cmd[0]!r}: {e.strerror or e}") from None
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
            # Reap anything the program left behind in its group (best effort).
            _kill_group(proc.pid)
        finally:
            if out_f:
                out_f.close()
            if err_f:
                err_f.close()
        user, system, rss = ru.ru_utime, ru.ru_stime, int(ru.ru_maxrss)
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        if helper:
            measured = None
            if code == 0:
                try:
                    with open(res_path, encoding="ascii") as f:
                        measured = [int(x) for x in f.read().split()]
                except (OSError, ValueError):
                    measured = None
            if measured and len(measured) == 6:
                c, sg, wall_ns, user_us, sys_us, rss = measured
                code, sig = (c, None) if c >= 0 else (None, sg)
                wall, user, system = wall_ns / 1e9, user_us / 1e6, sys_us / 1e6
            elif sig is None:
                code = 125 if code == 0 else code  # the launcher itself failed
        if sig is not None:
            state = "timeout" if killed.is_set() else "crashed"
        else:
            state = "timeout" if killed.is_set() else ("ok" if code == 0 else "failed")
        return RunResult(
            wall_s=wall,
            user_s=user,
            sys_s=system,
            max_rss_kb=rss,
            exit_code=code,
            signal=sig,
            status=state,
            stdout_sha256=file_sha256(out_path) if stdout is None else None,
            stderr_tail=_tail(err_path) if stderr is None else "",
        )


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


def _duration(s: float) -> str:
    s = int(round(s))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Progress:
    """Progress of a series of runs on a stream (stderr).

    begin(label) shows the run that starts at once: on a terminal a status
    line rewritten every second with the time it has taken so far; elsewhere
    (a log file) a line only when the run is still going after 10 s, then
    every minute. done(line, k, total) clears the status line and returns
    `line` with an estimate of the time left (the mean of the finished runs
    times the runs to go), for the caller to print.
    """

    def __init__(self, stream, tty: bool | None = None):
        self.stream = stream
        self.tty = bool(stream) and (tty if tty is not None else getattr(stream, "isatty", lambda: False)())
        self._spent = 0.0
        self._n = 0
        self._t0 = None
        self._label = ""
        self._stop = threading.Event()
        self._thread = None

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def eta(self, k: int, total: int) -> str:
        if not self._n or k >= total:
            return ""
        return f"  (~{_duration(self._spent / self._n * (total - k))} left)"

    def begin(self, label: str, k: int = 0, total: int = 0) -> None:
        if not self.stream:
            return
        self._label = label + self.eta(k, total)
        self._t0 = time.monotonic()
        self._stop.clear()
        if self.tty:
            self._write(f"\r\033[K{self._label}: running")
        self._thread = threading.Thread(target=self._tick, daemon=True)
        self._thread.start()

    def _tick(self) -> None:
        waited = 0.0
        next_line = 10.0
        while not self._stop.wait(1.0):
            waited = time.monotonic() - self._t0
            if self.tty:
                self._write(f"\r\033[K{self._label}: running {_duration(waited)}")
            elif waited >= next_line:
                self._write(f"{self._label}: still running after {_duration(waited)}\n")
                next_line += 60.0

    def done(self, line: str, k: int = 0, total: int = 0) -> str:
        if self._t0 is not None:
            self._stop.set()
            if self._thread:
                self._thread.join()
            self._spent += time.monotonic() - self._t0
            self._n += 1
            self._t0 = None
            if self.tty:
                self._write("\r\033[K")
        return line + self.eta(k, total)

    def cancel(self) -> None:
        if self._t0 is not None:
            self._stop.set()
            if self._thread:
                self._thread.join()
            self._t0 = None
            if self.tty:
                self._write("\r\033[K")
