"""The test session's last line of defence against servers left running.

Every graph server the project starts (the embedded FalkorDB, the managed Neo4j) runs in its own
session (``start_new_session=True``, so a Ctrl-C does not kill it first) and is stopped by its
owner: a fixture finalizer, a ``finally``, an ``atexit`` hook. When a test dies in a way that
skips those (a timeout in the wrong place, a killed ``covr`` child whose ``covr db start`` server
outlives it, a finalizer that raised first), the server kept running after the session: issue 20
found a ``redis-server`` orphaned for an hour. Each server records its pid in ``server.json`` in
its directory, and every test's directory is under the session's base temporary directory; so
at the end of a session every ``server.json`` there whose pid still runs *that* server (its
command line names the directory, which a recycled pid's does not) is a leftover, and is killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

from covr.graph.managed import STATE_NAME


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def leftover_servers(root: Path) -> list[tuple[int, Path]]:
    """``(pid, server directory)`` of every server still running from a directory under ``root``."""
    found: list[tuple[int, Path]] = []
    if not root.is_dir():
        return found
    for state in root.rglob(STATE_NAME):
        try:
            pid = int(json.loads(state.read_text(encoding="utf-8"))["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if pid <= 1 or pid == os.getpid():
            continue
        # the redis-server names its socket, the Neo4j launcher its server directory
        if str(state.parent).encode() in _cmdline(pid):
            found.append((pid, state.parent))
    return found


def stop_leftover_servers(root: Path, grace_s: float = 5.0) -> list[str]:
    """Kill the leftovers under ``root`` (SIGTERM, then SIGKILL after ``grace_s``); describe them.

    Their data is a test's temporary data, so nothing is lost by not asking for a clean stop
    first; SIGTERM still gives them the chance (a Neo4j removes its store lock).
    """
    servers = leftover_servers(root)
    for pid, _ in servers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for pid, directory in servers:
        while str(directory).encode() in _cmdline(pid) and time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)  # our own child: reap it, or it stays a zombie
            time.sleep(0.05)
        if str(directory).encode() in _cmdline(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    return [f"pid {pid} ({directory})" for pid, directory in servers]
