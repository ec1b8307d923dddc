"""No orphaned servers when the test runner is killed (issue 40, row 6 and item 5).

Each test starts a real pytest run of its own (the project's ``tests/conftest.py`` loaded as a
plugin, so the run keeps the registry of tests/support/server_registry.py) whose one test starts
two embedded FalkorDB servers the way the suite does: one owned by the test process in a
``covr-ts-*`` folder of the system temp folder (``tests/support/service_server.py``'s
``_data_dir``, outside pytest's base temporary directory: the folder the audit found servers left
in), and one detached by a ``covr db start`` child. The run is then killed mid-test:

- SIGTERM (as ``timeout`` sends it, to the process group; with and without xdist workers): the
  run stops both servers before it dies;
- SIGKILL: nothing can run, so both servers outlive it; the next session's start stops them.

Every check is by pid *and* start time, so a recycled pid is never taken for a leftover.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from covr.graph.embedded import process_start_ticks
from tests.support.server_registry import BASE_VAR, REGISTRY_VAR

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]

INNER_TEST = """
import json, os, subprocess, sys, time
from pathlib import Path

from covr.graph import open_store
from covr.graph.embedded import EmbeddedServer
from tests.integration.conftest import make_settings
from tests.support.service_server import _data_dir


def test_starts_two_servers_then_hangs():
    with _data_dir() as folder:  # a covr-ts-* folder in the system temp folder
        store = open_store(make_settings(folder / "owned").graph)
        pids = [store.server.read_state().pid]
        detached = folder / "detached"
        done = subprocess.run(
            [sys.executable, "-m", "covr.cli.main", "db", "start"],
            env={**os.environ, "COVR_DATA_DIR": str(detached)},
            capture_output=True, text=True, timeout=120,
        )
        assert done.returncode == 0, done.stderr
        pids.append(EmbeddedServer(make_settings(detached).graph).read_state().pid)
        Path(os.environ["ORPHANS_OUT"]).write_text(json.dumps(pids))
        time.sleep(110)  # killed long before this
"""


@dataclass(frozen=True)
class Server:
    pid: int
    start: int | None

    def runs(self) -> bool:
        """Still the same process (same start time), alive and not a zombie."""
        if self.start is None or process_start_ticks(self.pid) != self.start:
            return False
        try:
            stat = Path(f"/proc/{self.pid}/stat").read_text(encoding="utf-8")
            cmdline = Path(f"/proc/{self.pid}/cmdline").read_bytes()
        except OSError:
            return False
        return stat.rpartition(")")[2].split()[0] != "Z" and b"redis-server" in cmdline


def inner_env(tmp_path: Path) -> dict[str, str]:
    """The outer session's environment minus its registry and xdist role: the inner pytest is
    a session of its own, with its registry folders under ``tmp_path``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k != REGISTRY_VAR and not k.startswith("PYTEST_XDIST") and k != "PYTEST_ADDOPTS"
    }
    env[BASE_VAR] = str(tmp_path / "registry")
    env["ORPHANS_OUT"] = str(tmp_path / "pids.json")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["COVR_TEST_BACKENDS"] = "falkordb"
    return env


def pytest_command(tmp_path: Path, test_file: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
        "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT), "-p", "tests.conftest",
        "--basetemp", str(tmp_path / f"base-{test_file.stem}"), *extra, str(test_file),
    ]  # fmt: skip


@contextlib.contextmanager
def hanging_run(
    tmp_path: Path, *extra: str
) -> Iterator[tuple[subprocess.Popen[bytes], list[Server]]]:
    """A pytest run whose test has started its two servers and now hangs; the servers."""
    test_file = tmp_path / "test_inner_servers.py"
    test_file.write_text(INNER_TEST, encoding="utf-8")
    log = (tmp_path / "inner.log").open("wb")
    run = subprocess.Popen(
        pytest_command(tmp_path, test_file, *extra),
        cwd=ROOT,
        env=inner_env(tmp_path),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, as under `timeout`
    )
    servers: list[Server] = []
    try:
        out = tmp_path / "pids.json"
        deadline = time.monotonic() + 200
        while not out.exists():
            assert run.poll() is None, (tmp_path / "inner.log").read_text(errors="replace")
            assert time.monotonic() < deadline, "the inner run did not start its servers"
            time.sleep(0.2)
        time.sleep(0.2)  # the file is written in one call; let the test reach its sleep
        servers = [Server(pid, process_start_ticks(pid)) for pid in json.loads(out.read_text())]
        assert all(server.runs() for server in servers), servers
        yield run, servers
    finally:
        log.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(run.pid, signal.SIGKILL)
        run.wait(timeout=30)
        for server in servers:  # only the servers this test's run started, by pid and start
            if server.runs():
                os.kill(server.pid, signal.SIGKILL)


def wait_gone(servers: list[Server], timeout: float = 30) -> list[Server]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(server.runs() for server in servers):
        time.sleep(0.1)
    return [server for server in servers if server.runs()]


@pytest.mark.parametrize("workers", [(), ("-n", "1")], ids=["plain", "xdist"])
def test_sigterm_of_the_test_run_stops_its_servers(
    tmp_path: Path, workers: tuple[str, ...]
) -> None:
    with hanging_run(tmp_path, *workers) as (run, servers):
        os.killpg(run.pid, signal.SIGTERM)  # what `timeout` does: the whole process group
        run.wait(timeout=120)
        if not workers:
            assert run.returncode == -signal.SIGTERM  # the signal still ends the run
        log = (tmp_path / "inner.log").read_text(errors="replace")
        assert wait_gone(servers) == [], log
        assert "SIGTERM: stopped test servers" in log, log


def test_the_next_session_stops_what_a_sigkilled_run_left(tmp_path: Path) -> None:
    with hanging_run(tmp_path) as (run, servers):
        run.kill()  # SIGKILL: no handler runs
        run.wait(timeout=30)
        time.sleep(1)
        assert all(server.runs() for server in servers)  # the orphans the audit found
        next_test = tmp_path / "test_next_session.py"
        next_test.write_text("def test_nothing():\n    pass\n", encoding="utf-8")
        done = subprocess.run(
            pytest_command(tmp_path, next_test),
            cwd=ROOT,
            env=inner_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert wait_gone(servers) == [], done.stdout + done.stderr
        assert "stopped servers that a killed test run left" in done.stderr, done.stderr
        for server in servers:
            assert f"pid {server.pid}" in done.stderr
        assert list((tmp_path / "registry").glob("s-*")) == []  # both sessions' folders gone
