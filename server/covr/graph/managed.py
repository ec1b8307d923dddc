"""The life cycle shared by every graph server the project starts itself.

Two servers are managed this way: the embedded FalkorDB (``embedded.py``) and the managed Neo4j
Community (``neo4j_server.py``). What they share is who owns a data directory and how a server is
started, watched, restarted and stopped; what differs (the command line, how readiness and a clean
stop are asked for) is left to the subclasses.

Ownership of a server directory is an exclusive ``flock`` on ``covr.lock``:

- a process that starts the server for its own lifetime ("owned") keeps the lock itself, restarts
  the server when it dies, and stops it when the process exits;
- ``covr db start`` starts a "detached" server and hands the locked descriptor to the server
  process, so the lock lives exactly as long as that server; other processes attach to it;
- a second process attaches to the server of a directory whose lock is held (owned or detached),
  waiting for one that is still starting; only when no server answers in time does it get
  :class:`DataDirLocked` naming the holder, never a second server writing one store.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import logging
import os
import secrets
import signal
import subprocess
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from covr.graph.config import GraphSettings
from covr.graph.errors import DataDirLocked, StoreUnavailable
from covr.graph.startup_watch import StartupWatch

LOCK_NAME = "covr.lock"
ATTACH_WAIT_S = 30.0
"""How long a process waits for the server of a directory another process holds to answer."""
STATE_NAME = "server.json"
_log = logging.getLogger(__name__)
START_ATTEMPTS = 3
"""How many times a start that hangs (``_startup_watch``) is tried before it counts as failed."""


class _StartHung(Exception):
    """A starting server stopped making progress; it has been killed and may be started again."""


@dataclass(frozen=True)
class ServerState:
    """What ``server.json`` records about the running server."""

    pid: int
    mode: str  # "owned" or "detached"
    owner_pid: int
    socket: str  # where clients connect: a Unix socket path or a bolt:// URI
    started_at: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "mode": self.mode,
            "owner_pid": self.owner_pid,
            "socket": self.socket,
            "started_at": self.started_at,
        }


def pid_runs(pid: int, marker: bytes) -> bool:
    """Whether ``pid`` is alive and its command line contains ``marker`` (not a reused pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True
    # A zombie has an empty command line: it is dead for our purposes.
    return marker in cmdline


class ManagedServer(ABC):
    """A graph server process that belongs to one directory."""

    #: what the server's command line contains (tells our server from a reused pid)
    process_marker: bytes = b""
    #: the name people know the server by, for messages
    label: str = "graph server"
    #: the variable that bounds a start
    startup_setting: str = "COVR_STARTUP_TIMEOUT_S"

    def __init__(self, settings: GraphSettings, server_dir: Path) -> None:
        self.settings = settings
        self.data_dir = settings.data_dir.expanduser().resolve()
        self.server_dir = server_dir
        self.lock_path = server_dir / LOCK_NAME
        self.state_path = server_dir / STATE_NAME
        self._lock_fd: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._owned = False
        self._restart_lock = threading.Lock()
        self.restarts = 0
        self.hung_starts = 0
        """Starts killed and tried again because the server hung (``_startup_watch``)."""

    # ----------------------------------------------------------------- what subclasses say
    @abstractmethod
    def _command(self) -> list[str]:
        """The server's command line (prepared for this start: ports, files)."""

    @abstractmethod
    def _ready(self) -> bool:
        """Whether the server answers queries now (data loaded)."""

    @abstractmethod
    def answers(self, timeout: float = 1.0) -> bool:
        """Whether a server answers on the recorded address right now."""

    @abstractmethod
    def _request_shutdown(self, pid: int) -> None:
        """Ask the server to persist and stop (it may not comply; signals follow)."""

    @abstractmethod
    def address(self) -> str:
        """Where clients connect once the server runs (recorded in ``server.json``)."""

    def _before_spawn(self) -> None:  # noqa: B027 — optional hook, nothing to do by default
        """Prepare files the command needs (configuration, stale sockets)."""

    def _stdout(self) -> IO[bytes] | int:
        return subprocess.DEVNULL

    def log_tail(self, lines: int = 15) -> str:
        """The end of the server log, for error messages."""
        return "(no log)"

    def _prepare_dir(self) -> None:
        self.server_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.server_dir, 0o700)

    password_name = "password"  # noqa: S105 - a file name, not a password
    """The file (in the server directory) holding the server's password."""

    @property
    def password_path(self) -> Path:
        return self.server_dir / self.password_name

    def password(self) -> str:
        """The server's password, generated at its first start into a 0600 file: the file is
        the truth, every start applies it, every client of the directory reads it."""
        self._prepare_dir()
        if not self.password_path.exists():
            with contextlib.suppress(FileExistsError):  # two processes starting at once
                fd = os.open(self.password_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(secrets.token_urlsafe(24) + "\n")
        os.chmod(self.password_path, 0o600)
        return self.password_path.read_text(encoding="utf-8").strip()

    # ----------------------------------------------------------------- state
    @property
    def owned(self) -> bool:
        """Whether this process started the server and is responsible for stopping it."""
        return self._owned

    def read_state(self) -> ServerState | None:
        """The recorded server state, or None when none is recorded or the file is unreadable."""
        try:
            raw = json.loads(self.state_path.read_text(encoding="utf-8"))
            return ServerState(
                pid=int(raw["pid"]),
                mode=str(raw["mode"]),
                owner_pid=int(raw["owner_pid"]),
                socket=str(raw["socket"]),
                started_at=float(raw["started_at"]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _write_state(self, state: ServerState) -> None:
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state.as_dict(), indent=2), encoding="utf-8")
        tmp.replace(self.state_path)

    def _pid_is_server(self, pid: int) -> bool:
        return pid_runs(pid, self.process_marker)

    # ----------------------------------------------------------------- locking
    def _try_lock(self) -> bool:
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd
        return True

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def _forget_lock(self) -> None:
        """Close our descriptor without unlocking: a flock belongs to the open file description,
        so LOCK_UN here would also release the copy the detached server inherited."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _locked_error(self) -> DataDirLocked:
        state = self.read_state()
        holder = f"process {state.owner_pid}" if state else "another process"
        return DataDirLocked(
            f"data directory {self.data_dir} is in use by {holder}, which runs its own "
            f"{self.label}; stop that process (or run `covr db start` once so that processes "
            "share one server), or set COVR_DATA_DIR to another directory"
        )

    # ----------------------------------------------------------------- start
    def open(self) -> None:
        """Make a server answer: attach to a shared one or start an owned one."""
        self._prepare_dir()
        if self._try_lock():
            self._adopt_or_start()
            return
        if self._attach():
            return
        raise self._locked_error()

    def _attach(self) -> bool:
        """Use the server another process runs (detached, or owned by e.g. `covr serve`).

        Why attach to an owned server too: while `covr serve` owned the directory, `covr show`
        and `covr related` failed with "in use" (issue 21); they now go through the same server.
        If its owner stops it, a later failed call makes this process the owner
        (:meth:`ensure_running`). A server that is still starting is waited for."""
        deadline = time.monotonic() + min(self.startup_timeout, ATTACH_WAIT_S)
        while True:
            state = self.read_state()
            if state and self._pid_is_server(state.pid) and self.answers():
                return True
            if time.monotonic() >= deadline or self._try_lock():
                if self._lock_fd is not None:  # the holder let go meanwhile: start our own
                    self._adopt_or_start()
                    return True
                return False
            time.sleep(0.2)

    def _adopt_or_start(self) -> None:
        """With the lock held: take over a server left by a dead owner, or start a new one."""
        state = self.read_state()
        if state and self._pid_is_server(state.pid) and self.answers():
            self._owned = True
            self._process = None
            self._write_state(
                ServerState(state.pid, "owned", os.getpid(), state.socket, time.time())
            )
            atexit.register(self.close)
            return
        self._spawn(detached=False)
        self._owned = True
        atexit.register(self.close)

    def start_detached(self) -> ServerState:
        """Start a server that outlives this process (``covr db start``)."""
        self._prepare_dir()
        if not self._try_lock():
            state = self.read_state()
            if state and state.mode == "detached" and self.answers():
                return state
            raise self._locked_error()
        try:
            state = self.read_state()
            if state and self._pid_is_server(state.pid) and self.answers():
                # A server left behind by a crashed owner: stop it cleanly and start detached.
                self._shutdown_pid(state.pid)
            return self._spawn(detached=True)
        finally:
            self._forget_lock()  # the server process keeps its own copy of the lock

    def _spawn(self, *, detached: bool) -> ServerState:
        """Start the server and wait until it answers; a start that hangs is retried.

        A hung start (see ``_startup_watch``) is killed and started again, at most
        ``START_ATTEMPTS`` times in all: the data on disk is only read while starting."""
        for attempt in range(1, START_ATTEMPTS + 1):
            process, state = self._launch(detached=detached)
            try:
                self._wait_until_ready(process)
            except _StartHung:
                if attempt == START_ATTEMPTS:
                    raise StoreUnavailable(
                        f"{self.label} hung while starting, {START_ATTEMPTS} times in a row "
                        f"(no CPU used, waiting on a lock); last lines of its log:\n"
                        f"{self.log_tail()}"
                    ) from None
                self.hung_starts += 1
                _log.warning(
                    "%s of %s hung while starting (attempt %d of %d); killed, starting again",
                    self.label, self.data_dir, attempt, START_ATTEMPTS,
                )  # fmt: skip
                continue
            self._process = None if detached else process
            return state
        raise AssertionError("unreachable")  # pragma: no cover

    def _launch(self, *, detached: bool) -> tuple[subprocess.Popen[bytes], ServerState]:
        self._before_spawn()
        assert self._lock_fd is not None
        pass_fds = (self._lock_fd,) if detached else ()
        command = self._command()
        output = self._stdout()
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                pass_fds=pass_fds,
                start_new_session=True,  # a Ctrl-C in the terminal must not kill it first
                close_fds=True,
            )
        finally:
            if not isinstance(output, int):
                output.close()  # the child has its own copy
        state = ServerState(
            pid=process.pid,
            mode="detached" if detached else "owned",
            owner_pid=process.pid if detached else os.getpid(),
            socket=self.address(),
            started_at=time.time(),
        )
        try:
            self._write_state(state)
        except OSError as exc:
            # A full disk (issue 21): the server started but cannot be recorded, so no later
            # call would find or stop it; it is stopped here and the store reports itself down.
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                process.kill()
                process.wait(timeout=5)
            raise StoreUnavailable(
                f"the {self.label} of {self.data_dir} cannot be started: its state file "
                f"{self.state_path} cannot be written ({exc.strerror or exc}); "
                "free disk space in the data directory"
            ) from exc
        return process, state

    @property
    def startup_timeout(self) -> float:
        """How long a start may take before it counts as failed."""
        return self.settings.startup_timeout_s

    def _startup_watch(self, process: subprocess.Popen[bytes]) -> StartupWatch | None:
        """What notices a start that hangs (None: only the startup timeout bounds a start)."""
        return None

    def _wait_until_ready(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + self.startup_timeout
        watch = self._startup_watch(process)
        while time.monotonic() < deadline:
            code = process.poll()
            if code is not None:
                raise StoreUnavailable(
                    f"{self.label} exited with code {code} while starting; "
                    f"last lines of its log:\n{self.log_tail()}"
                )
            if self._ready():
                return
            if watch is not None and watch.hung():
                self._kill(process)
                raise _StartHung
            time.sleep(0.05)
        self._kill(process)
        raise StoreUnavailable(
            f"{self.label} did not answer at {self.address()} within "
            f"{self.startup_timeout:.0f}s ({self.startup_setting}); log:\n"
            f"{self.log_tail()}"
        )

    @staticmethod
    def _kill(process: subprocess.Popen[bytes]) -> None:
        process.kill()
        process.wait(timeout=10)

    # ----------------------------------------------------------------- recovery
    def ensure_running(self) -> bool:
        """Restart the server if it died; True when a restart happened.

        Called by the backend after a connection failure. An owning process restarts its server; an
        attached process becomes the owner when the detached server died (its lock went with it).
        """
        with self._restart_lock:
            if self.answers():
                return False
            if not self._owned:
                if not self._try_lock():
                    raise StoreUnavailable(
                        f"the {self.label} of {self.data_dir} is not answering and another "
                        "process holds its data directory"
                    )
                self._owned = True
                atexit.register(self.close)
            if self._process is not None:
                with contextlib.suppress(Exception):
                    self._process.kill()
                    self._process.wait(timeout=5)
            state = self.read_state()
            if state and self._pid_is_server(state.pid):
                # Alive but not answering (hung): it would keep the port and the store busy.
                with contextlib.suppress(ProcessLookupError):
                    os.kill(state.pid, signal.SIGKILL)
                self._wait_gone(state.pid, 10)
            self._spawn(detached=False)
            self.restarts += 1
            return True

    # ----------------------------------------------------------------- stop
    def _wait_gone(self, pid: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process is not None and self._process.pid == pid:
                if self._process.poll() is not None:
                    return True
            elif not self._pid_is_server(pid):
                # Reap our own child if it is one (detached children are not ours to reap).
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
                return True
            time.sleep(0.05)
        return False

    def _shutdown_pid(self, pid: int) -> None:
        """Ask for a clean stop; escalate to signals only when the server does not comply."""
        self._request_shutdown(pid)
        if self._wait_gone(pid, self.settings.shutdown_timeout_s):
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        if not self._wait_gone(pid, self.settings.shutdown_timeout_s):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            self._wait_gone(pid, 5)

    def stop(self) -> bool:
        """Stop the server of this directory, whoever started it; False when none was running.

        Refuses (DataDirLocked) when another live process owns the server, because that process
        would restart it at once.
        """
        self._prepare_dir()
        state = self.read_state()
        we_own = self._owned
        if not we_own and not self._try_lock() and (state is None or state.mode != "detached"):
            raise self._locked_error()
        running = state is not None and self._pid_is_server(state.pid)
        if running and state is not None:
            self._shutdown_pid(state.pid)
        if self._process is not None:
            with contextlib.suppress(Exception):
                self._process.wait(timeout=5)
            self._process = None
        with contextlib.suppress(FileNotFoundError):
            self.state_path.unlink()
        self._owned = False
        self._release_lock()
        return running

    def close(self) -> None:
        """Stop an owned server; leave a shared one running."""
        if self._owned:
            self.stop()
        else:
            self._release_lock()

    # ----------------------------------------------------------------- status
    def status(self) -> dict[str, Any]:
        """What a person asking ``covr db status`` wants to know."""
        state = self.read_state()
        running = bool(state and self._pid_is_server(state.pid))
        return {
            "data_dir": str(self.data_dir),
            "socket": state.socket if state and running else self.address(),
            "running": running,
            "answering": self.answers() if running else False,
            "pid": state.pid if state and running else None,
            "mode": state.mode if state and running else None,
            "owner_pid": state.owner_pid if state and running else None,
        }
