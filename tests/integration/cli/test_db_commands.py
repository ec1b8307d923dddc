"""`covr db ...`, `covr doctor` and `covr quickstart` as a user runs them: real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

COVR = [sys.executable, "-m", "covr.cli.main"]


def covr(
    *args: str, data_dir: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    full_env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("COVR_")},
        "COVR_DATA_DIR": str(data_dir),
        **(env or {}),
    }
    return subprocess.run(
        [*COVR, *args], env=full_env, capture_output=True, text=True, timeout=timeout, check=False
    )


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli")


def test_every_command_has_help(data_dir: Path) -> None:
    for args in (
        ["--help"], ["db", "--help"], ["db", "start", "--help"], ["db", "stop", "--help"],
        ["db", "status", "--help"], ["db", "reset", "--help"], ["db", "stats", "--help"],
        ["doctor", "--help"], ["quickstart", "--help"],
    ):  # fmt: skip
        done = covr(*args, data_dir=data_dir)
        assert done.returncode == 0, (args, done.stderr)
        assert "Usage" in done.stdout


def test_doctor_on_a_new_store_reports_missing_schema(data_dir: Path) -> None:
    done = covr("doctor", "--json", data_dir=data_dir)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["schema_version"] is None
    assert any("schema not applied" in p for p in report["problems"])


def test_lifecycle_start_doctor_stats_reset_stop(data_dir: Path) -> None:
    started = covr("db", "start", data_dir=data_dir)
    assert started.returncode == 0, started.stderr
    try:
        status = as_json(covr("db", "status", "--json", data_dir=data_dir))
        assert status["running"] is True
        assert status["mode"] == "detached"
        assert status["socket"] == str(data_dir / "covr.sock")

        again = covr("db", "start", data_dir=data_dir)  # idempotent: reports the running server
        assert again.returncode == 0
        assert str(status["pid"]) in again.stdout

        reset = covr("db", "reset", "--yes", data_dir=data_dir)
        assert reset.returncode == 0, reset.stderr

        report = as_json(covr("doctor", "--json", data_dir=data_dir))
        assert report["ok"] is True
        assert report["backend"] == "embedded"
        assert report["location"] == str(data_dir / "covr.sock")
        assert report["embedded"]["socket"] == str(data_dir / "covr.sock")
        assert report["versions"]["falkordb_version"].startswith("4.")
        assert report["server_version"].startswith("FalkorDB 4.")
        assert report["schema_version"] == report["expected_schema_version"] == 1
        assert {"label": "Image", "property": "id", "state": "ONLINE"} in report["indexes"]
        assert all(i["state"] == "ONLINE" for i in report["indexes"])
        assert report["problems"] == []

        text = covr("doctor", data_dir=data_dir)
        assert text.returncode == 0
        assert "FalkorDB" in text.stdout
        assert "Image.id: ONLINE" in text.stdout

        stats = as_json(covr("db", "stats", "--json", data_dir=data_dir))
        assert set(stats) == {"backend", "nodes", "relationships", "datasets", "totals"}
        assert set(stats["totals"]) == {"images", "objects", "attributes", "relations", "relmods"}
        assert stats["nodes"].get("Meta") == 1

        table = covr("db", "stats", data_dir=data_dir)
        assert table.returncode == 0
        assert "source" in table.stdout
    finally:
        stopped = covr("db", "stop", data_dir=data_dir)
    assert stopped.returncode == 0, stopped.stderr
    assert "stopped" in stopped.stdout
    assert (data_dir / "covr.rdb").exists()
    assert as_json(covr("db", "status", "--json", data_dir=data_dir))["running"] is False
    assert "not running" in covr("db", "stop", data_dir=data_dir).stdout


NEO4J_ENV = {"COVR_NEO4J_BOLT_PORT": "0", "COVR_NEO4J_HEAP": "768m", "COVR_NEO4J_PAGECACHE": "256m"}


@pytest.mark.slow
@pytest.mark.timeout(900)  # six JVM-free CLI runs around one Neo4j start, on a loaded machine
def test_managed_neo4j_lifecycle(data_dir: Path) -> None:
    """`covr db start --backend neo4j` ... `stop`: the managed Neo4j as a user drives it."""
    started = covr(
        "db", "start", "--backend", "neo4j", data_dir=data_dir, env=NEO4J_ENV, timeout=400
    )
    assert started.returncode == 0, started.stderr
    assert "managed Neo4j running" in started.stdout
    assert "schema applied" in started.stdout
    env = {**NEO4J_ENV, "COVR_GRAPH_BACKEND": "neo4j"}
    try:
        status = as_json(covr("db", "status", "--json", data_dir=data_dir, env=env))
        assert status["backend"] == "managed-neo4j"
        assert status["running"] is True
        assert status["mode"] == "detached"
        assert status["bolt"].startswith("bolt://127.0.0.1:")
        password = Path(status["password_file"])
        assert password.stat().st_mode & 0o777 == 0o600
        assert len(password.read_text(encoding="utf-8").strip()) >= 24

        # green right after the start: the schema came with it
        report = as_json(covr("doctor", "--json", data_dir=data_dir, env=env))
        assert report["ok"] is True, report["problems"]
        assert report["backend"] == "managed-neo4j"
        assert report["server_version"].startswith("Neo4j/5.26.")
        assert report["managed_neo4j"]["bolt"] == status["bolt"]
        assert all(i["state"] == "ONLINE" for i in report["indexes"])

        # Bolt on loopback only, HTTP off: the server's only listening TCP socket
        port = int(status["bolt"].rsplit(":", 1)[1])
        assert _listening_ports(status["pid"]) == {("127.0.0.1", port)}

        loaded = covr("load", "samples", data_dir=data_dir, env=env)
        assert loaded.returncode == 0, loaded.stderr
        stats = as_json(covr("db", "stats", "--json", data_dir=data_dir, env=env))
        assert stats["backend"] == "managed-neo4j"
        assert stats["totals"]["images"] == 24

        again = covr("db", "start", data_dir=data_dir, env=env)  # idempotent
        assert again.returncode == 0, again.stderr
        assert str(status["pid"]) in again.stdout

        reset = covr("db", "reset", "--yes", data_dir=data_dir, env=env)
        assert reset.returncode == 0, reset.stderr
        stats = as_json(covr("db", "stats", "--json", data_dir=data_dir, env=env))
        assert stats["totals"]["images"] == 0
    finally:
        stopped = covr("db", "stop", data_dir=data_dir, env=env)
    assert stopped.returncode == 0, stopped.stderr
    assert "stopped" in stopped.stdout
    assert as_json(covr("db", "status", "--json", data_dir=data_dir, env=env))["running"] is False


@pytest.mark.timeout(600)
def test_a_second_process_uses_the_owners_managed_neo4j(data_dir: Path) -> None:
    """While one process owns the data directory's Neo4j (as `covr serve` does), CLI commands
    go through that server (issue 21: they exited with "in use by process N")."""
    from covr.graph import open_store
    from tests.integration.conftest import make_settings

    with open_store(make_settings(data_dir, "neo4j").graph) as store:
        store.apply_schema()
        done = covr(
            "db",
            "stats",
            "--json",
            data_dir=data_dir,
            env={**NEO4J_ENV, "COVR_GRAPH_BACKEND": "neo4j"},
        )
        assert done.returncode == 0, done.stderr
        assert "datasets" in json.loads(done.stdout)
        assert store.health().ok  # the owner's server is still up


def test_managed_neo4j_without_java_names_what_to_install(data_dir: Path) -> None:
    env = {**NEO4J_ENV, "COVR_GRAPH_BACKEND": "neo4j", "COVR_NEO4J_JAVA": "no-such-java"}
    done = covr("db", "stats", data_dir=data_dir, env=env)
    assert done.returncode == 1
    assert "Java 17+" in done.stderr
    assert "apt-get install openjdk-17-jdk-headless maven" in done.stderr
    assert "Traceback" not in done.stderr


def _listening_ports(pid: int) -> set[tuple[str, int]]:
    """The TCP sockets process ``pid`` listens on, from the kernel's tables (as `ss -ltnp`)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd)
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found: set[tuple[str, int]] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                continue
            address, port = fields[1].split(":")
            found.add((_ip(address), int(port, 16)))
    return found


def _ip(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return ".".join(str(b) for b in reversed(raw))
    # IPv6 (or IPv4-mapped): four little-endian 32-bit words
    words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
    full = b"".join(words)
    if full[:12] == b"\x00" * 10 + b"\xff\xff":
        return ".".join(str(b) for b in full[12:])
    return full.hex()


def test_reset_without_yes_asks_and_aborts(data_dir: Path) -> None:
    done = subprocess.run(
        [*COVR, "db", "reset"], input="n\n", capture_output=True, text=True, timeout=60,
        env={**os.environ, "COVR_DATA_DIR": str(data_dir)}, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "Aborted" in done.stdout + done.stderr


def test_bad_configuration_names_the_variable(data_dir: Path) -> None:
    done = covr("db", "stats", data_dir=data_dir, env={"COVR_GRAPH_URI": "http://x"})
    assert done.returncode == 2
    assert "COVR_GRAPH_URI" in done.stderr
    assert "Traceback" not in done.stderr
    done = covr("doctor", data_dir=data_dir, env={"COVR_QUERY_TIMEOUT_S": "-1"})
    assert done.returncode == 2
    assert "COVR_QUERY_TIMEOUT_S" in done.stderr


def test_db_start_refuses_external_stores(data_dir: Path) -> None:
    done = covr("db", "start", data_dir=data_dir, env={"COVR_GRAPH_URI": "bolt://127.0.0.1:1"})
    assert done.returncode == 2
    assert "managed outside this project" in done.stderr


def test_bad_backend_option_is_a_usage_error(data_dir: Path) -> None:
    done = covr("db", "status", "--backend", "mysql", data_dir=data_dir)
    assert done.returncode == 2
    assert "--backend" in done.stderr
    assert "Traceback" not in done.stderr


def test_unreachable_store_is_a_one_line_error(data_dir: Path) -> None:
    done = covr(
        "db", "stats", data_dir=data_dir,
        env={"COVR_GRAPH_URI": "falkor://127.0.0.1:1", "COVR_CONNECT_TIMEOUT_S": "2"},
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.startswith("error: ")
    assert "Traceback" not in done.stderr


def test_locked_data_dir_is_a_clear_cli_error(data_dir: Path) -> None:
    """The directory's lock is held but no server answers (an owner hung while starting): the
    CLI waits the start-up time, then says who holds it, in one line."""
    import fcntl

    from covr.graph.managed import LOCK_NAME

    data_dir.mkdir(parents=True, exist_ok=True)
    with (data_dir / LOCK_NAME).open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        done = covr("db", "stats", data_dir=data_dir, env={"COVR_STARTUP_TIMEOUT_S": "1"})
    assert done.returncode == 1
    assert "is in use by" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
@pytest.mark.timeout(420)  # five CLI processes, three of them quickstarts (15 s each, quiet)
def test_quickstart_loads_samples_and_generates_questions(data_dir: Path) -> None:
    out = data_dir / "questions.jsonl"
    done = covr("quickstart", "--out", str(out), data_dir=data_dir)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # stdout is the JSON only: `> q.json` works
    assert report["store"]["totals"]["images"] == 24
    questions = report["questions"]
    assert questions["exclusivity"] == "model"
    assert questions["source_images"] == 8
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == questions["examples"] > 100
    assert len(questions["per_template"]) >= 15
    first = json.loads(lines[0])
    assert {"qid", "utterance", "scenes", "answer", "program"} <= set(first)
    # a second run finds the samples loaded and writes the same questions
    again = covr("quickstart", "--out", str(out), data_dir=data_dir)
    assert again.returncode == 0, again.stderr
    assert "not loaded again" in again.stderr
    assert out.read_text(encoding="utf-8").splitlines() == lines
    # with other val data in the store, the questions are still about the samples' images
    # only (related images may come from anywhere in the store)
    extra = data_dir / "extra.json"
    made = covr("synth", "--images", "3", "--seed", "7", "--format", "gqa", "--split", "val",
                "--out", str(extra), data_dir=data_dir)  # fmt: skip
    assert made.returncode == 0, made.stderr
    loaded = covr("load", "gqa", str(extra), "--split", "val", data_dir=data_dir)
    assert loaded.returncode == 0, loaded.stderr
    third = covr("quickstart", "--out", str(out), data_dir=data_dir)
    assert third.returncode == 0, third.stderr
    rerun = json.loads(third.stdout)
    assert rerun["store"]["totals"]["images"] == 27
    assert rerun["questions"]["source_images"] == 8
    sources = {json.loads(line)["source_image"] for line in out.read_text("utf-8").splitlines()}
    assert sources <= {json.loads(line)["source_image"] for line in lines}


def test_quickstart_refuses_an_unwritable_output(data_dir: Path) -> None:
    done = covr("quickstart", "--out", str(data_dir / "missing" / "q.jsonl"), data_dir=data_dir)
    assert done.returncode == 2
    assert "--out" in done.stderr
    assert "missing" in done.stderr
    assert "Traceback" not in done.stderr
