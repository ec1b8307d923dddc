"""The Cypher catalog: every file loads, holds no literal values, and malformed files are refused."""

from __future__ import annotations

import re

import pytest

from covr.graph import catalog
from covr.graph.catalog import CatalogError, _parse

STATEMENTS = catalog.all_statements()


def test_catalog_is_not_empty_and_sorted() -> None:
    names = catalog.names()
    assert len(names) >= 10
    assert list(names) == sorted(names)


def test_unknown_name_is_a_clear_error() -> None:
    with pytest.raises(CatalogError, match="no Cypher statement named 'nope/x'"):
        catalog.get("nope/x")


def test_get_is_cached() -> None:
    assert catalog.get("admin/ping") is catalog.get("admin/ping")


@pytest.mark.parametrize("statement", STATEMENTS, ids=lambda s: s.name)
def test_no_string_literals_in_statements(statement: catalog.Statement) -> None:
    """Every value is a $parameter: string literals would be values baked into query text."""
    assert not re.search(r"'[^']*'|\"[^\"]*\"", statement.text), statement.text


@pytest.mark.parametrize("statement", STATEMENTS, ids=lambda s: s.name)
def test_every_parameter_has_an_example(statement: catalog.Statement) -> None:
    used = set(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", statement.text))
    assert used <= set(statement.example_params), f"add them to '// params:' of {statement.name}"


@pytest.mark.parametrize("statement", STATEMENTS, ids=lambda s: s.name)
def test_every_file_has_a_summary(statement: catalog.Statement) -> None:
    assert statement.summary


def test_parse_header_and_body() -> None:
    s = _parse("x/y", '// summary: s\n// backend: neo4j\n// params: {"a": 1}\n\nRETURN $a\n')
    assert (s.summary, s.backend, s.example_params, s.text) == ("s", "neo4j", {"a": 1}, "RETURN $a")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("// summary: s\n", "no statement"),
        ("// backend: mysql\nRETURN 1", "backend must be"),
        ("// params: {bad\nRETURN 1", "not JSON"),
        ("// params: [1]\nRETURN 1", "JSON object"),
        ("RETURN 1;\nRETURN 2", "only schema files"),
    ],
)
def test_malformed_files_are_refused(raw: str, message: str) -> None:
    with pytest.raises(CatalogError, match=message):
        _parse("admin/x", raw)


def test_schema_files_split_into_parts() -> None:
    s = _parse("schema/x", "CREATE INDEX FOR (n:A) ON (n.a);\nCREATE INDEX FOR (n:B) ON (n.b);\n")
    assert s.parts() == ["CREATE INDEX FOR (n:A) ON (n.a)", "CREATE INDEX FOR (n:B) ON (n.b)"]
