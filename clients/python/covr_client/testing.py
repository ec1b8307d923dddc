"""A real server for tests of code that uses the SDK, started as a subprocess (``covr serve``).

Needs the server distribution (``covr-graph-service``, which provides the ``covr`` command)
installed beside the SDK. The SDK never imports the server: the server runs in a child process
through its public entry point, so the SDK stays installable on its own and a test of SDK code
exercises exactly what a deployed client sees. The server listens on ``127.0.0.1:0`` (a free
port), uses an embedded FalkorDB in a temporary data directory, and loads the bundled sample
scene graphs::

    from covr_client.testing import running_server

    with running_server() as server, server.client() as client:
        assert client.statistics().totals.images > 0
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from covr_client.client import Client
from covr_client.config import TlsConfig

READY_PREFIX = "listening on "
"""The line ``covr serve`` prints once it accepts calls; the rest of the line is the target."""

START_TIMEOUT_S = 180.0
"""How long a server may take to start (schema, samples, model files on a busy machine)."""


TEST_CLIENT_TIMEOUT_S = 60.0


@dataclass
class TestServer:
    """A running server: its ``target``, the credentials to reach it and a :meth:`client`."""

    __test__ = False  # not a pytest test class

    target: str
    token: str | None
    tls: TlsConfig | None
    process: subprocess.Popen[str]

    def client(self, **kwargs: Any) -> Client:
        """A :class:`Client` for this server (token, TLS and a 60 s deadline filled in unless
        given). The deadline is longer than a client's 10 s default: a test server starts on a
        fresh data directory, so its first lookup opens WordNet and the models (seconds on a
        quiet machine; the SDK README's examples passed 10 s at load average 8)."""
        kwargs.setdefault("timeout", TEST_CLIENT_TIMEOUT_S)
        kwargs.setdefault("token", self.token)
        kwargs.setdefault("tls", self.tls)
        return Client(self.target, **kwargs)


def serve_command() -> list[str]:
    """``covr serve`` of the environment this interpreter runs in (else the one on PATH)."""
    beside = Path(sys.executable).parent / "covr"
    found = str(beside) if beside.exists() else shutil.which("covr")
    if found is None:
        raise RuntimeError("the `covr` command is missing: install covr-graph-service")
    return [found, "serve"]


def _env_value(value: Any) -> str:
    """A setting as the server reads it from its ``COVR_*`` environment variable."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _wait_until_ready(process: subprocess.Popen[str], log: Path) -> str:
    """The server's target, read from its ready line; a dead or silent server raises."""
    found: list[str] = []
    stdout: IO[str] | None = process.stdout
    assert stdout is not None

    def read() -> None:
        for line in stdout:
            if line.startswith(READY_PREFIX):
                found.append(line[len(READY_PREFIX) :].strip())
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(START_TIMEOUT_S)
    if not found:
        process.kill()
        process.wait()
        tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        raise RuntimeError(f"`covr serve` did not start (exit {process.returncode}):\n{tail}")
    return found[0]


def _stop(process: subprocess.Popen[str]) -> None:
    """SIGTERM (the server's graceful stop), then a kill if it has not ended in time."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()


@contextmanager
def running_server(
    *,
    data_dir: Path | None = None,
    samples: bool = True,
    command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    **settings: Any,
) -> Iterator[TestServer]:
    """Start a server subprocess for the duration of the ``with`` block.

    Args:
        data_dir: embedded store directory; ``None`` = a new temporary directory (removed after).
        samples: load the bundled sample scene graphs into an empty store.
        command: the serve command (default :func:`serve_command`).
        env: extra environment of the server process.
        **settings: server settings by name, passed as ``COVR_<NAME>`` environment variables
            (``service_token="s3cret"``, ``service_tls_cert=Path(...)``,
            ``service_max_concurrent_rpcs=4``...).
    """
    scratch = None if data_dir is not None else Path(tempfile.mkdtemp(prefix="covr-sdk-ts-"))
    directory = data_dir or scratch
    assert directory is not None
    values: dict[str, Any] = {
        "data_dir": directory,
        "graph_uri": "",
        "service_host": "127.0.0.1",
        "service_port": 0,
        **settings,
    }
    child_env = {**os.environ, **(env or {})}
    child_env.update({f"COVR_{k.upper()}": _env_value(v) for k, v in values.items()})
    argv = [*(command or serve_command()), *([] if samples else ["--no-samples"])]
    log = directory / "serve.log"
    try:
        with log.open("w") as errors:
            process = subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=errors, env=child_env, text=True
            )
        try:
            target = _wait_until_ready(process, log)
            token = settings.get("service_token")
            cert = settings.get("service_tls_cert")
            tls = None
            if cert is not None:
                tls = TlsConfig(root_certificates=Path(cert).read_bytes(), server_name="localhost")
            yield TestServer(target, str(token) if token else None, tls, process)
        finally:
            _stop(process)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
