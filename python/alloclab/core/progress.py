"""Progress of a series of runs, on a stream (stderr): what runs now, and the time left.

API::

    Progress(stream, tty=None)      # begin(label, k, total), done(line, k, total) -> str, cancel()
"""

from __future__ import annotations

import threading
import time


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
