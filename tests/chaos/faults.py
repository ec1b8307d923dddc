"""The faults the chaos suite injects into a graph store under a running service.

- FalkorDB (the embedded server, owned by the test's own in-process service): ``SIGKILL`` of the
  server process; the store restarts it on the next call, from its append-only file.
- Neo4j (the session's shared server, which other tests use and which takes 12 s to 2 min to
  start): the service reaches it through :class:`CuttableProxy`, a TCP relay on loopback that
  the test cuts (every Bolt connection reset at once, new ones refused) and heals. To the
  driver that is what a crashed server looks like (connections drop mid-query, then nothing
  answers), and the shared server itself is never killed. The managed Neo4j's own SIGKILL is
  covered where a test owns one: tests/integration/graph/test_managed_neo4j.py (restart with
  its data) and tests/integration/parity/test_neo4j_kill.py (a load killed and rerun).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


class CuttableProxy:
    """A loopback TCP relay to ``upstream`` that can drop every connection and refuse new ones."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._cut = False
        self._closed = False
        threading.Thread(target=self._accept, name="chaos-proxy", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._cut:
                _reset(client)
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                _reset(client)
                continue
            server.settimeout(None)
            with self._lock:
                self._open.update((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with self._lock:
                    self._open.discard(s)
                _reset(s)

    def cut(self) -> None:
        """Reset every relayed connection now and refuse new ones until :meth:`heal`."""
        self._cut = True
        with self._lock:
            live = list(self._open)
            self._open.clear()
        for s in live:
            _reset(s)

    def heal(self) -> None:
        """Relay new connections again."""
        self._cut = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        self._listener.close()


def _reset(s: socket.socket) -> None:
    """Close with an RST (linger 0), as a dead peer's kernel would answer.

    ``shutdown`` first: a ``close`` alone does not end a ``recv`` that a pump thread is blocked
    in (Linux keeps the socket while a call holds it), so neither the RST nor an end of stream
    reached the peer. A Neo4j driver that had sent its request before a cut then waited for
    the answer for ever, and the chaos test's call ended as DEADLINE_EXCEEDED after 90 s
    (1 of 5 fresh-clone runs)."""
    with contextlib.suppress(OSError):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        s.close()


def sigkill_and_reap(pid: int, timeout: float = 10.0) -> None:
    """SIGKILL ``pid`` and wait until it is gone or a zombie (reaped if it is our child)."""
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                return
        except ChildProcessError:  # not our child: wait until it is no longer running
            try:
                with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                    if stat.read().split(") ", 1)[1].startswith("Z"):
                        return
            except (FileNotFoundError, IndexError):
                return
        time.sleep(0.02)
    raise TimeoutError(f"process {pid} still running {timeout} s after SIGKILL")


@dataclass
class Fault:
    """How to break the store under a test's service (``trip``) and let it recover (``heal``)."""

    kind: str
    trip: Callable[[], None]
    heal: Callable[[], None]
