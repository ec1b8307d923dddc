"""The startup watch tells a process that sleeps on a lock without using CPU (FalkorDB's
deadlock while replaying its append-only file) from ones that compute, sleep or are gone."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from covr.graph.startup_watch import StartupWatch

pytestmark = [
    pytest.mark.unit,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc"),
]

DEADLOCK = "import threading; lock = threading.Lock(); lock.acquire(); lock.acquire()"
BUSY = "while True: pass"
NAP = "import time; time.sleep(60)"
LOCK_WHILE_A_THREAD_WORKS = (
    "import threading\n"
    "def spin():\n    while True: pass\n"
    "threading.Thread(target=spin, daemon=True).start()\n"
    "lock = threading.Lock(); lock.acquire(); lock.acquire()"
)


@contextmanager
def running(code: str) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.3)  # past the interpreter's start
        yield process
    finally:
        process.kill()
        process.wait()


def watched_for(pid: int, seconds: float, hung_after_s: float = 0.4) -> bool:
    """Whether the watch reported the process hung within ``seconds`` of polling."""
    watch = StartupWatch(pid, hung_after_s=hung_after_s)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if watch.hung():
            return True
        time.sleep(0.05)
    return False


def test_a_process_stuck_on_a_lock_is_hung() -> None:
    with running(DEADLOCK) as process:
        started = time.monotonic()
        assert watched_for(process.pid, 5)
        assert time.monotonic() - started >= 0.4  # not before the idle window has passed


def test_a_process_using_cpu_is_not_hung() -> None:
    with running(BUSY) as process:
        assert not watched_for(process.pid, 1.0)


def test_a_lock_wait_while_other_threads_work_is_not_hung() -> None:
    """A loader whose main thread waits for its worker threads uses CPU: it is making progress."""
    with running(LOCK_WHILE_A_THREAD_WORKS) as process:
        assert not watched_for(process.pid, 1.0)


def test_a_process_sleeping_on_a_timer_is_not_hung() -> None:
    """Only a lock counts: a server waiting on a timer or its event loop is not stuck."""
    with running(NAP) as process:
        assert not watched_for(process.pid, 1.0)


def test_a_process_that_is_gone_is_not_hung() -> None:
    with running(NAP) as process:
        pid = process.pid
    assert not watched_for(pid, 0.3)
