"""The embedded server's life: restart after SIGKILL, locking, timeouts, errors, no TCP port."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from covr.graph import (
    DataDirLocked,
    GraphStore,
    QueryError,
    QueryTimeout,
    StoreUnavailable,
    open_store,
)
from covr.graph.embedded import EmbeddedServer
from covr.graph.falkor import FalkorStore
from covr.settings import Settings

SLOW_READ = (
    "UNWIND range(1, 4000) AS a UNWIND range(1, 4000) AS b "
    "WITH a, b WHERE a * b = -1 RETURN count(*) AS c"
)


def server_pid(store: GraphStore) -> int:
    assert isinstance(store, FalkorStore)
    assert store.server is not None
    state = store.server.read_state()
    assert state is not None
    return state.pid


def count(store: GraphStore, label: str = "Probe") -> int:
    return int(store.read(f"MATCH (n:{label}) RETURN count(n) AS c")[0]["c"])


def run_python(
    code: str, settings: Settings, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COVR_DATA_DIR": str(settings.data_dir), "COVR_GRAPH_URI": ""}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def test_sigkill_restarts_with_last_snapshot(fresh_settings: Settings) -> None:
    with open_store(fresh_settings.graph) as store:
        store.apply_schema()
        store.write("UNWIND range(1, 50) AS i CREATE (:Probe {i: i})")
        store.snapshot()
        old_pid = server_pid(store)
        os.kill(old_pid, signal.SIGKILL)
        time.sleep(0.2)
        assert count(store) == 50  # this call finds the server dead, restarts it, retries
        assert server_pid(store) != old_pid
        assert isinstance(store, FalkorStore)
        assert store.server is not None
        assert store.server.restarts == 1
        assert store.health().ok


def test_unsnapshotted_writes_after_sigkill_do_not_corrupt(fresh_settings: Settings) -> None:
    with open_store(fresh_settings.graph) as store:
        store.write("CREATE (:Probe {i: 1})")
        store.snapshot()
        store.write("CREATE (:Probe {i: 2})")
        os.kill(server_pid(store), signal.SIGKILL)
        time.sleep(0.2)
        assert count(store) in (1, 2)
        store.write("CREATE (:Probe {i: 3})")
        assert count(store) in (2, 3)


def test_clean_close_snapshots(fresh_settings: Settings) -> None:
    with open_store(fresh_settings.graph) as store:
        store.write("UNWIND range(1, 7) AS i CREATE (:Probe {i: i})")
        pid = server_pid(store)
    assert (
        not Path(f"/proc/{pid}").exists()
        or b"redis" not in Path(f"/proc/{pid}/cmdline").read_bytes()
    )
    assert (fresh_settings.data_dir / "covr.rdb").exists()
    with open_store(fresh_settings.graph) as store:
        assert count(store) == 7


def test_close_after_a_snapshot_does_not_save_again(fresh_settings: Settings) -> None:
    with open_store(fresh_settings.graph) as store:
        store.write("UNWIND range(1, 5) AS i CREATE (:Probe {i: i})")
        store.snapshot()
        snapshot = fresh_settings.data_dir / "covr.rdb"
        saved = snapshot.stat().st_mtime_ns
    assert snapshot.stat().st_mtime_ns == saved  # nothing changed since: no second save
    with open_store(fresh_settings.graph) as store:
        assert count(store) == 5
        store.write("CREATE (:Probe {i: 6})")  # changed after the last save: saved at close
    with open_store(fresh_settings.graph) as store:
        assert count(store) == 6


def test_a_second_process_uses_the_owners_server(fresh_settings: Settings) -> None:
    """While one process owns the directory (as `covr serve` does), another reads and writes
    through the same server (issue 21: it used to exit with "in use by process N")."""
    with open_store(fresh_settings.graph) as store:
        store.write("CREATE (:Probe)")
        done = run_python(
            """
            from covr.graph import open_store
            from covr.settings import Settings
            with open_store(Settings(_env_file=None).graph) as store:
                print(store.read("MATCH (p:Probe) RETURN count(p) AS n")[0]["n"])
                store.write("CREATE (:Probe)")
            """,
            fresh_settings,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "1"
        assert count(store) == 2  # the owner's server kept running after the visitor left


def test_a_held_directory_without_an_answering_server_is_refused(fresh_settings: Settings) -> None:
    """The lock is held but no server answers (its owner hangs while starting): after waiting
    the start-up time, DataDirLocked names the way out instead of starting a second server."""
    import fcntl

    from covr.graph.managed import LOCK_NAME

    fresh_settings.data_dir.mkdir(parents=True, exist_ok=True)
    quick = fresh_settings.model_copy(update={"startup_timeout_s": 1.0})
    with (fresh_settings.data_dir / LOCK_NAME).open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(DataDirLocked, match="COVR_DATA_DIR"):
            EmbeddedServer(quick.graph).open()


def test_server_of_a_crashed_owner_is_adopted(fresh_settings: Settings) -> None:
    done = run_python(
        """
        import os
        from covr.graph import open_store
        from covr.settings import Settings
        store = open_store(Settings(_env_file=None).graph)
        store.write("UNWIND range(1, 5) AS i CREATE (:Probe {i: i})")
        print(store.server.read_state().pid, flush=True)
        os._exit(0)  # dies without stopping its server, as after SIGKILL
        """,
        fresh_settings,
    )
    assert done.returncode == 0, done.stderr
    orphan = int(done.stdout.strip())
    with open_store(fresh_settings.graph) as store:
        assert server_pid(store) == orphan
        assert count(store) == 5
    assert (
        not Path(f"/proc/{orphan}/cmdline").exists()
        or not Path(f"/proc/{orphan}/cmdline").read_bytes()
    )


def test_detached_server_is_shared_and_stopped(fresh_settings: Settings) -> None:
    server = EmbeddedServer(fresh_settings.graph)
    state = server.start_detached()
    try:
        assert server.status()["mode"] == "detached"
        with open_store(fresh_settings.graph) as first, open_store(fresh_settings.graph) as second:
            first.write("CREATE (:Probe)")
            assert count(second) == 1
        assert server.answers()  # closing attached stores leaves the shared server running
        done = run_python(
            """
            from covr.graph import open_store
            from covr.settings import Settings
            with open_store(Settings(_env_file=None).graph) as s:
                print(s.read("MATCH (n:Probe) RETURN count(n) AS c")[0]["c"])
            """,
            fresh_settings,
        )
        assert done.stdout.strip() == "1", done.stderr
    finally:
        assert EmbeddedServer(fresh_settings.graph).stop() is True
    assert not server.answers()
    assert (
        not Path(f"/proc/{state.pid}/cmdline").exists()
        or not Path(f"/proc/{state.pid}/cmdline").read_bytes()
    )
    with open_store(fresh_settings.graph) as store:
        assert count(store) == 1


def test_stop_refuses_while_another_process_owns_it(fresh_settings: Settings) -> None:
    with open_store(fresh_settings.graph):
        done = run_python(
            """
            from covr.graph.embedded import EmbeddedServer
            from covr.settings import Settings
            EmbeddedServer(Settings(_env_file=None).graph).stop()
            """,
            fresh_settings,
        )
        assert "DataDirLocked" in done.stderr


@pytest.mark.backends(
    "falkordb"
)  # the embedded server's TIMEOUT_DEFAULT; Neo4j: tests/integration/parity
def test_read_past_timeout_is_stopped_and_reported(store: GraphStore) -> None:
    started = time.monotonic()
    with pytest.raises(QueryTimeout, match="timed out"):
        store.read(SLOW_READ, timeout=0.2)
    assert time.monotonic() - started < 10
    assert store.read("RETURN 1 AS ok") == [{"ok": 1}]  # the store is fine afterwards


def test_default_timeout_comes_from_settings(fresh_settings: Settings) -> None:
    settings = fresh_settings.model_copy(update={"query_timeout_s": 0.2})
    with open_store(settings.graph) as store, pytest.raises(QueryTimeout):
        store.read(SLOW_READ)


@pytest.mark.backends("falkordb")  # a FalkorDB client socket
def test_a_socket_closed_by_a_restart_is_retried(store: GraphStore) -> None:
    """redis-py raises ValueError("I/O operation on closed file") when a concurrent restart
    closed the socket under a call: that is a lost connection (reconnect, retry once), while
    any other ValueError is a bug and propagates."""
    assert isinstance(store, FalkorStore)
    attempts: list[int] = []

    def flaky() -> int:
        attempts.append(1)
        if len(attempts) == 1:
            raise ValueError("I/O operation on closed file.")
        return int(store.read("RETURN 1 AS ok")[0]["ok"])

    assert store._call("probe", flaky) == 1
    assert len(attempts) == 2

    def broken() -> None:
        raise ValueError("not a connection problem")

    with pytest.raises(ValueError, match="not a connection problem"):
        store._call("probe", broken)


def test_plan_cache_size_comes_from_settings(fresh_settings: Settings) -> None:
    settings = fresh_settings.model_copy(update={"embedded_query_cache": 321})
    with open_store(settings.graph) as store:
        assert store.command("GRAPH.CONFIG", "GET", "CACHE_SIZE") == ["CACHE_SIZE", 321]  # type: ignore[attr-defined]


def test_bad_cypher_carries_the_server_message(store: GraphStore) -> None:
    with pytest.raises(QueryError) as info:
        store.read("MATCH (n RETURN n")
    assert "Invalid input" in str(info.value)
    assert info.value.statement == "<inline>"
    with pytest.raises(QueryError, match="Unknown function 'nosuch'"):
        store.read("RETURN nosuch(1) AS x")


def test_reads_cannot_write(store: GraphStore) -> None:
    with pytest.raises(QueryError):
        store.read("CREATE (:Probe) RETURN 1 AS x")
    assert count(store) == 0


def _listening_tcp_inodes() -> set[str]:
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A":  # TCP_LISTEN
                inodes.add(fields[9])
    return inodes


@pytest.mark.backends("falkordb")  # the Unix socket; Neo4j's loopback Bolt: tests/integration/cli
def test_no_tcp_port_and_private_socket(store: GraphStore, settings: Settings) -> None:
    pid = server_pid(store)
    socket_inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            socket_inodes.add(target[8:-1])
    assert socket_inodes, "the server should hold its Unix socket"
    assert not socket_inodes & _listening_tcp_inodes(), "embedded server listens on TCP"
    sock = settings.data_dir / "covr.sock"
    assert stat.S_ISSOCK(sock.stat().st_mode)
    assert stat.S_IMODE(sock.stat().st_mode) == 0o700
    assert stat.S_IMODE(settings.data_dir.stat().st_mode) == 0o700


def test_corrupt_snapshot_is_reported_and_kept(fresh_settings: Settings) -> None:
    fresh_settings.data_dir.mkdir(parents=True, exist_ok=True)
    rdb = fresh_settings.data_dir / "covr.rdb"
    rdb.write_bytes(b"REDIS0011 this is not a snapshot")
    with pytest.raises(StoreUnavailable, match="exited with code"):
        open_store(fresh_settings.model_copy(update={"startup_timeout_s": 20}).graph)
    assert rdb.read_bytes() == b"REDIS0011 this is not a snapshot"  # never overwritten


def test_too_long_data_dir_is_refused(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path / ("x" * 120))  # type: ignore[call-arg]
    with pytest.raises(StoreUnavailable, match="too long"):
        open_store(settings.graph)
