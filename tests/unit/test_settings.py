"""Settings: which store a URI selects, and clear errors for bad values."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from covr.graph.backends import Backend, backend_of
from covr.settings import Settings


def make(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg, arg-type]


@pytest.mark.parametrize(
    ("uri", "backend"),
    [
        ("", Backend.EMBEDDED),
        ("bolt://localhost:7687", Backend.NEO4J),
        ("neo4j+s://db.example:7687", Backend.NEO4J),
        ("falkor://localhost:6379", Backend.FALKORDB),
    ],
)
def test_uri_selects_backend(uri: str, backend: Backend) -> None:
    assert backend_of(make(graph_uri=uri).graph) is backend


@pytest.mark.parametrize(
    ("uri", "choice", "backend", "dialect", "managed"),
    [
        ("", "falkordb", Backend.EMBEDDED, "falkordb", True),
        ("", "neo4j", Backend.MANAGED_NEO4J, "neo4j", True),
        ("bolt://db:7687", "neo4j", Backend.NEO4J, "neo4j", False),  # a URI wins
        ("falkor://db:6379", "neo4j", Backend.FALKORDB, "falkordb", False),
    ],
)
def test_graph_backend_chooses_the_managed_server(
    uri: str, choice: str, backend: Backend, dialect: str, managed: bool
) -> None:
    chosen = backend_of(make(graph_uri=uri, graph_backend=choice).graph)
    assert chosen is backend
    assert chosen.dialect == dialect
    assert chosen.managed is managed


@pytest.mark.parametrize(
    ("field", "value"),
    [("graph_backend", "mysql"), ("neo4j_heap", "lots"), ("neo4j_pagecache", "0g"),
     ("neo4j_bolt_port", 70000)],
)  # fmt: skip
def test_bad_neo4j_settings_are_refused(field: str, value: object) -> None:
    with pytest.raises(ValidationError, match=field):
        make(**{field: value})


def test_unknown_scheme_is_refused_with_the_variable_name() -> None:
    with pytest.raises(ValidationError, match="COVR_GRAPH_URI"):
        make(graph_uri="http://localhost")


@pytest.mark.parametrize("schedule", ["", "60", "a b", "60 1 30"])
def test_bad_snapshot_schedule(schedule: str) -> None:
    with pytest.raises(ValidationError, match="COVR_SNAPSHOT_SCHEDULE"):
        make(snapshot_schedule=schedule)


@pytest.mark.parametrize("name", ["", "1x", "a-b", "a b", "x" * 64])
def test_graph_name_is_an_identifier(name: str) -> None:
    with pytest.raises(ValidationError):
        make(graph_name=name)


def test_environment_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COVR_QUERY_TIMEOUT_S", "2.5")
    monkeypatch.setenv("COVR_GRAPH_PASSWORD", "secret")
    settings = make()
    assert settings.query_timeout_s == 2.5
    assert "secret" not in repr(settings)
    assert settings.graph_password is not None
    assert settings.graph_password.get_secret_value() == "secret"


def test_env_example_lists_every_setting() -> None:
    from pathlib import Path

    example = (Path(__file__).resolve().parents[2] / ".env.example").read_text()
    for name in Settings.model_fields:
        assert f"COVR_{name.upper()}" in example, f"COVR_{name.upper()} missing in .env.example"


def test_neo4j_loads_in_smaller_batches_unless_told() -> None:
    """Neo4j's cost grows with the transaction, FalkorDB's with the number of statements."""
    from covr.graph.config import NEO4J_LOAD_BATCH_IMAGES

    assert Settings(_env_file=None).load_batch_images == 5000  # type: ignore[call-arg]
    managed = Settings(_env_file=None, graph_backend="neo4j")  # type: ignore[call-arg]
    assert managed.load_batch_images == NEO4J_LOAD_BATCH_IMAGES
    external = Settings(_env_file=None, graph_uri="bolt://localhost:7687")  # type: ignore[call-arg]
    assert external.load_batch_images == NEO4J_LOAD_BATCH_IMAGES
    chosen = Settings(_env_file=None, graph_backend="neo4j", load_batch_images=40)  # type: ignore[call-arg]
    assert chosen.load_batch_images == 40


CAPS = ("related_cache_names", "model_cache_terms", "service_max_evaluate_examples")
"""Memo and request caps that used to be constants in their modules (issue 19)."""


@pytest.mark.parametrize("field", CAPS)
def test_caps_are_read_from_the_environment(field: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(f"COVR_{field.upper()}", "1234")
    assert getattr(make(), field) == 1234


@pytest.mark.parametrize("field", CAPS)
@pytest.mark.parametrize("value", [0, -1, 10_000_001])
def test_caps_outside_their_range_are_refused(field: str, value: int) -> None:
    with pytest.raises(ValidationError, match=field):
        make(**{field: value})


def test_caps_keep_their_former_values_by_default() -> None:
    settings = make()
    assert settings.related_cache_names == 200_000
    assert settings.model_cache_terms == 200_000
    assert settings.service_max_evaluate_examples == 500_000
