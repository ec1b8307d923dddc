"""Notices a starting server process that has stopped making progress, so it can be restarted.

Why: FalkorDB 4.16 can deadlock while it replays its append-only file. Measured here with gdb
on such a process: the main thread waits forever in ``Globals_AddGraph`` for the module's graph
registry write lock, whose reader count had dropped below zero (``__readers`` 0xFFFFFFFA), while
every other thread idles. It happened in about 1 start in 600 under CPU load, and once in CI
(tests/integration/graph/test_durability.py). Such a process never answers, so a start would
wait out ``COVR_STARTUP_TIMEOUT_S`` and fail; the same files load fine on the next start.

The sign used: a process that is loading spends CPU time, and a deadlocked one spends none
while its main thread sleeps on a futex (a lock). Reading a big file from a slow disk does not
look like that (the thread waits on the disk, not on a futex), nor does waiting for a rewrite
child (the main thread polls its event loop). Only Linux's ``/proc`` is read; elsewhere
:meth:`StartupWatch.hung` never answers True.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

HUNG_AFTER_S = 5.0
"""How long a starting server may sit on a lock without using CPU before it counts as hung."""
IDLE_CPU_S = 0.05
"""CPU time (all threads) below which a process counts as idle over that window."""


def _cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of every thread of ``pid``, or None when unreadable."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()  # the command name may hold spaces or ")"
    try:
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    except (IndexError, ValueError):
        return None
    return ticks / os.sysconf("SC_CLK_TCK")


def _waits_on_lock(pid: int) -> bool:
    """Whether the main thread of ``pid`` sleeps in the kernel's futex wait (a lock)."""
    try:
        return "futex" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


class StartupWatch:
    """Samples one process at each readiness poll; :meth:`hung` after a long idle lock wait."""

    def __init__(self, pid: int, *, hung_after_s: float = HUNG_AFTER_S) -> None:
        self.pid = pid
        self.hung_after_s = hung_after_s
        self._since: float | None = None
        self._cpu_then = 0.0

    def hung(self) -> bool:
        now = time.monotonic()
        cpu = _cpu_seconds(self.pid)
        if cpu is None or not _waits_on_lock(self.pid):
            self._since = None
            return False
        if self._since is None or cpu - self._cpu_then >= IDLE_CPU_S:
            self._since, self._cpu_then = now, cpu  # progress (or the first sample): start over
            return False
        return now - self._since >= self.hung_after_s
