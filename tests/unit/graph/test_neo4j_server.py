"""The managed Neo4j's files and command line, without starting it (no sockets, no JVM)."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from covr.graph import StoreUnavailable
from covr.graph.neo4j_server import ManagedNeo4j, find_java, launcher_classpath
from covr.settings import Settings


def settings(tmp_path: Path, **values: Any) -> Settings:
    config: dict[str, Any] = {"data_dir": tmp_path, "graph_backend": "neo4j", **values}
    return Settings(_env_file=None, **config)  # type: ignore[call-arg]


def read_config(server: ManagedNeo4j) -> dict[str, str]:
    lines = server.config_path.read_text(encoding="utf-8").splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def test_configuration_is_loopback_bolt_only_with_auth(tmp_path: Path) -> None:
    server = ManagedNeo4j(settings(tmp_path, neo4j_bolt_port=17687, neo4j_pagecache="300m").graph)
    server._before_spawn()
    config = read_config(server)
    assert config["server.bolt.listen_address"] == "127.0.0.1:17687"
    assert config["server.http.enabled"] == "false"
    assert config["server.https.enabled"] == "false"
    assert config["dbms.security.auth_enabled"] == "true"
    assert config["dbms.usage_report.enabled"] == "false"
    assert config["server.memory.pagecache.size"] == "300m"
    assert config["dbms.cypher.min_replan_interval"] == "1s"
    assert config["server.directories.data"] == str(tmp_path / "neo4j" / "data")
    assert server.address() == "bolt://127.0.0.1:17687"


def test_replan_interval_comes_from_the_settings(tmp_path: Path) -> None:
    server = ManagedNeo4j(settings(tmp_path, neo4j_replan_interval_s=3600).graph)
    server._before_spawn()
    assert read_config(server)["dbms.cypher.min_replan_interval"] == "3600s"


def test_port_zero_picks_a_free_port_per_start(tmp_path: Path) -> None:
    server = ManagedNeo4j(settings(tmp_path, neo4j_bolt_port=0).graph)
    server._before_spawn()
    port = int(read_config(server)["server.bolt.listen_address"].rsplit(":", 1)[1])
    assert 0 < port < 65536
    assert server.address() == f"bolt://127.0.0.1:{port}"


def test_password_is_generated_once_and_private(tmp_path: Path) -> None:
    server = ManagedNeo4j(settings(tmp_path).graph)
    first = server.password()
    assert len(first) >= 24
    assert stat.S_IMODE(server.password_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(server.server_dir.stat().st_mode) == 0o700
    assert ManagedNeo4j(settings(tmp_path).graph).password() == first
    assert ManagedNeo4j(settings(tmp_path / "other").graph).password() != first
    assert server.credentials() == ("neo4j", first)


def test_heap_goes_to_the_jvm(tmp_path: Path) -> None:
    server = ManagedNeo4j(settings(tmp_path, neo4j_heap="640m").graph)
    command = server._command()
    assert "-Xms640m" in command
    assert "-Xmx640m" in command
    assert command[-4] == "covr.neo4j.Launcher"


def test_an_unbuilt_launcher_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable, match="make setup") as caught:
        launcher_classpath(settings(tmp_path, neo4j_launcher_dir=tmp_path / "nowhere").graph)
    assert "openjdk-17-jdk-headless maven" in str(caught.value)


def test_a_missing_java_says_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable, match="Java 17"):
        find_java(settings(tmp_path, neo4j_java="no-such-java-here").graph)


def test_a_launcher_whose_jars_are_gone_says_to_build_again(tmp_path: Path) -> None:
    target = tmp_path / "launcher" / "target"
    target.mkdir(parents=True)
    (target / "covr-neo4j-launcher.jar").write_bytes(b"PK")
    (target / "classpath.txt").write_text(str(tmp_path / "gone.jar"), encoding="utf-8")
    with pytest.raises(StoreUnavailable, match="make setup"):
        launcher_classpath(settings(tmp_path, neo4j_launcher_dir=tmp_path / "launcher").graph)
