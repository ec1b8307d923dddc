"""One registry of every server the test session starts, read by the sweeps (issue 40, item 5).

Why: the sweep of ``server_sweep.py`` finds servers by the ``server.json`` files under pytest's
base temporary directory, but some servers live elsewhere (``tests/support/service_server.py``
makes ``covr-ts-*`` folders in the system temp folder, the shared Neo4j ``covr-session-neo4j-*``),
and a run killed by ``timeout`` (SIGTERM) or SIGKILL never reaches that sweep: the audit found
``redis-server`` processes left in ``covr-ts-*`` folders.

The registry is a fixed folder per user, ``$TMPDIR/covr-test-servers-<uid>`` (or
``COVR_TEST_REGISTRY_BASE``), holding one folder per test session named after the session's
main process, ``s-<pid>-<start ticks>`` (a pid plus its start time names one process for good:
a reused pid has another start time). In it:

- every server started by the session, in any process, records ``<pid>-<start>.json``: the
  embedded FalkorDB itself, because the session puts the folder in ``COVR_SERVER_REGISTRY``
  (``covr.graph.embedded.record_server``; a ``covr`` child of a test inherits the variable), and a
  managed Neo4j started in a test process through :func:`install_launch_recorder`;
- every other process a test starts (``covr serve``, ``covr view``, a Neo4j started by a ``covr``
  child) inherits ``COVR_SERVER_REGISTRY=<that folder>`` in its environment, which
  ``/proc/<pid>/environ`` keeps (``redis-server`` overwrites its own, hence the files above).

A sweep stops (SIGTERM, then SIGKILL) what the registry names in its own session, or in a session
whose main process is gone (a killed run), after checking that the pid still runs *that* process
(same start time, and for a recorded server its command line's marker); sessions of other live
runs are left alone. Who sweeps: the session's end (``tests/conftest.py``), a SIGTERM or SIGINT of
pytest or of an xdist worker (:func:`install_signal_handlers`: a worker stops the servers it
started, the main process everything of the session), and the start of every later session
(what a SIGKILLed run left).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from covr.graph.embedded import process_start_ticks, record_server
from tests.support.server_sweep import stop_leftover_servers

REGISTRY_VAR = "COVR_SERVER_REGISTRY"
"""The session's registry folder, in the environment of every process the session starts."""
BASE_VAR = "COVR_TEST_REGISTRY_BASE"
"""Where the sessions' folders live, when not the per-user default (tests of this module)."""
STOP_GRACE_S = 5.0
"""Between SIGTERM and SIGKILL: test data only, so no clean stop is owed; SIGTERM still lets a
Neo4j remove its store lock."""


def registry_base() -> Path:
    """The folder of every session's registry (one per user)."""
    chosen = os.environ.get(BASE_VAR)
    if chosen:
        return Path(chosen)
    return Path(tempfile.gettempdir()) / f"covr-test-servers-{os.getuid()}"


def _session_name(pid: int) -> str | None:
    start = process_start_ticks(pid)
    return None if start is None else f"s-{pid}-{start}"


def _session_owner(session: Path) -> tuple[int, int] | None:
    parts = session.name.split("-")
    if len(parts) != 3 or parts[0] != "s" or not (parts[1].isdigit() and parts[2].isdigit()):
        return None
    return int(parts[1]), int(parts[2])


def _running(pid: int, start: int | None) -> bool:
    """Whether ``pid`` is alive (not a zombie) and is the process that started at ``start``."""
    if start is None or process_start_ticks(pid) != start:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def session_alive(session: Path) -> bool:
    """Whether the main process of ``session`` still runs."""
    owner = _session_owner(session)
    return owner is not None and _running(*owner)


def current_session() -> Path | None:
    """This process's session folder (from ``COVR_SERVER_REGISTRY``), if any."""
    value = os.environ.get(REGISTRY_VAR)
    return Path(value) if value else None


def is_session_owner() -> bool:
    """Whether this process is the session's main process (not an xdist worker)."""
    session = current_session()
    owner = _session_owner(session) if session is not None else None
    return owner is not None and owner[0] == os.getpid()


def begin_session() -> Path:
    """Give this test process its registry folder, in ``COVR_SERVER_REGISTRY``.

    An xdist worker joins its controller's session (it inherited the variable); any other pytest
    (including one a test starts) begins a session of its own."""
    inherited = current_session()
    if os.environ.get("PYTEST_XDIST_WORKER") and inherited is not None:
        # known as a worker, so that the main process's sweep of a live session spares it
        name = _session_name(os.getpid())
        with contextlib.suppress(OSError):
            inherited.mkdir(mode=0o700, parents=True, exist_ok=True)
            (inherited / f"w{name}").touch()
        return inherited
    name = _session_name(os.getpid())
    assert name is not None, "/proc is needed to track the test servers"
    base = registry_base()
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    session = base / name
    session.mkdir(mode=0o700, exist_ok=True)
    os.environ[REGISTRY_VAR] = str(session)
    return session


@dataclass(frozen=True)
class Target:
    """A process to stop: its pid and start time (its identity) and what it is, for messages."""

    pid: int
    start: int | None
    what: str
    marker: bytes = b""
    entry: Path | None = None

    def runs(self) -> bool:
        if not _running(self.pid, self.start):
            return False
        return not self.marker or self.marker in _read(f"/proc/{self.pid}/cmdline")


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:
        return b""


def recorded_servers(session: Path, registrar: int | None = None) -> list[Target]:
    """The servers recorded in ``session`` that still run (``registrar``: only those that
    process started); entries of servers that are gone are removed."""
    found: list[Target] = []
    for entry in sorted(session.glob("*.json")):
        try:
            raw: dict[str, Any] = json.loads(entry.read_text(encoding="utf-8"))
            target = Target(
                pid=int(raw["pid"]),
                start=None if raw["start_ticks"] is None else int(raw["start_ticks"]),
                what=f"{raw['label']} pid {raw['pid']} ({raw['directory']})",
                marker=str(raw["marker"]).encode(),
                entry=entry,
            )
            by = (int(raw["registrar_pid"]), raw["registrar_start_ticks"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not target.runs():
            entry.unlink(missing_ok=True)
            continue
        if registrar is not None and by != (registrar, process_start_ticks(registrar)):
            continue
        found.append(target)
    return found


def processes_of(session: Path) -> list[Target]:
    """Every other process whose environment names ``session`` (started by one of its tests)."""
    needle = f"{REGISTRY_VAR}={session}\0".encode()
    spared = {os.getpid(), *_ancestors()}
    if session_alive(session):  # its xdist workers end with it (and stop their own servers)
        spared |= {pid for pid, start in _workers(session) if _running(pid, start)}
    found: list[Target] = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) in spared:
            continue
        if needle in _read(f"{proc}/environ"):
            pid = int(proc.name)
            command = _read(f"{proc}/cmdline").replace(b"\0", b" ").decode(errors="replace")
            found.append(Target(pid, process_start_ticks(pid), f"pid {pid} ({command[:120]})"))
    return [target for target in found if target.runs()]


def _workers(session: Path) -> list[tuple[int, int]]:
    """The xdist workers of ``session`` (files ``ws-<pid>-<start>``)."""
    found: list[tuple[int, int]] = []
    for marker in session.glob("ws-*"):
        owner = _session_owner(session / marker.name[1:])
        if owner is not None:
            found.append(owner)
    return found


def _ancestors() -> list[int]:
    out: list[int] = []
    pid = os.getppid()
    while pid > 1 and len(out) < 64:
        out.append(pid)
        stat = _read(f"/proc/{pid}/stat").decode(errors="replace")
        try:
            pid = int(stat.rpartition(")")[2].split()[1])
        except (IndexError, ValueError):
            break
    return out


def stop_targets(targets: list[Target], grace_s: float = STOP_GRACE_S) -> list[str]:
    """SIGTERM each target, SIGKILL what still runs after ``grace_s``; describe them.

    Every signal is sent only after checking the pid still runs that very process."""
    targets = [target for target in targets if target.runs()]
    for target in targets:
        if target.runs():
            with contextlib.suppress(ProcessLookupError):
                os.kill(target.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for target in targets:
        while time.monotonic() < deadline and target.runs():
            _reap(target.pid)
            time.sleep(0.05)
        if target.runs():
            with contextlib.suppress(ProcessLookupError):
                os.kill(target.pid, signal.SIGKILL)
        kill_deadline = time.monotonic() + 5
        while time.monotonic() < kill_deadline and target.runs():
            _reap(target.pid)
            time.sleep(0.02)
        _reap(target.pid)
        if target.entry is not None and not target.runs():
            target.entry.unlink(missing_ok=True)
    return [target.what for target in targets]


def _reap(pid: int) -> None:
    """Reap ``pid`` if it is a child of this process (or it stays a zombie)."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


BASETEMP_NAME = "basetemp"
"""The session's pytest base temporary directory, written by its main process."""


def note_basetemp(basetemp: Path) -> None:
    """Record the session's base temporary directory: a ``covr`` child that a test starts with
    the ``COVR_*`` variables stripped records nothing, but its server's ``server.json`` lies
    there (tests/support/server_sweep.py finds it), for this session and for a killed one."""
    session = current_session()
    if session is not None:
        with contextlib.suppress(OSError):
            (session / BASETEMP_NAME).write_text(str(basetemp), encoding="utf-8")


def stop_session(session: Path, *, registrar: int | None = None) -> list[str]:
    """Stop what ``session`` started (``registrar``: only the servers that process recorded)."""
    targets = recorded_servers(session, registrar)
    if registrar is not None:
        return stop_targets(targets)
    recorded = {target.pid for target in targets}
    targets += [target for target in processes_of(session) if target.pid not in recorded]
    stopped = stop_targets(targets)
    with contextlib.suppress(OSError):
        basetemp = Path((session / BASETEMP_NAME).read_text(encoding="utf-8").strip())
        if basetemp.is_absolute():
            stopped += stop_leftover_servers(basetemp)
    return stopped


def sweep_dead_sessions(base: Path | None = None) -> list[str]:
    """Stop what runs from sessions whose main process is gone (killed runs), then remove their
    folders; sessions of live runs (other terminals, other users of the machine) are left."""
    base = base or registry_base()
    stopped: list[str] = []
    if not base.is_dir():
        return stopped
    mine = current_session()
    for session in sorted(base.glob("s-*")):
        if session == mine or session_alive(session):
            continue
        stopped += stop_session(session)
        if not recorded_servers(session) and not processes_of(session):
            shutil.rmtree(session, ignore_errors=True)
    return stopped


def end_session() -> list[str]:
    """At the end of a session: stop what it left (the main process: everything of the session,
    then its folder goes; a worker: the servers it started itself)."""
    session = current_session()
    if session is None or not session.is_dir():
        return []
    if not is_session_owner():
        return stop_session(session, registrar=os.getpid())
    stopped = stop_session(session)
    shutil.rmtree(session, ignore_errors=True)
    return stopped


def install_launch_recorder() -> None:
    """Record each managed Neo4j this process starts (the embedded FalkorDB records itself)."""
    from covr.graph.managed import ServerState
    from covr.graph.neo4j_server import ManagedNeo4j

    if getattr(ManagedNeo4j._launch, "_covr_recorded", False):
        return
    original = ManagedNeo4j._launch

    def _launch(self: ManagedNeo4j, *, detached: bool) -> tuple[Any, ServerState]:
        process, state = original(self, detached=detached)
        session = current_session()
        if session is not None:
            with contextlib.suppress(OSError):
                record_server(
                    session,
                    process.pid,
                    marker=self.process_marker,
                    directory=self.server_dir,
                    label=self.label,
                )
        return process, state

    _launch._covr_recorded = True  # type: ignore[attr-defined]
    ManagedNeo4j._launch = _launch  # type: ignore[method-assign,assignment]


_stopping = threading.Lock()


def install_signal_handlers(report: Callable[[str], None]) -> None:
    """On SIGTERM or SIGINT: stop the session's servers (a worker: its own), then let the signal
    do what it did before (SIGTERM: end the process with it; SIGINT: KeyboardInterrupt).

    A signal that was ignored stays ignored. Must run in the main thread."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(signum)
        if previous == signal.SIG_IGN or getattr(previous, "_covr_registry", False):
            continue

        def handler(number: int, frame: FrameType | None, previous: Any = previous) -> None:
            if _stopping.acquire(blocking=False):  # a second signal meanwhile goes straight on
                try:
                    stopped = end_session()
                    if stopped:
                        report(
                            f"{signal.Signals(number).name}: stopped test servers: "
                            + ", ".join(stopped)
                        )
                except Exception as exc:  # the signal must still end the run
                    report(f"stopping the test servers failed: {exc!r}")
                finally:
                    _stopping.release()
            if callable(previous):
                previous(number, frame)
                return
            signal.signal(number, signal.SIG_DFL)
            os.kill(os.getpid(), number)

        handler._covr_registry = True  # type: ignore[attr-defined]
        signal.signal(signum, handler)
