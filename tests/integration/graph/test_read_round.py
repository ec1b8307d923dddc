"""``GraphStore.read_round``: one round of reads, each backend its own way (issue 38).

FalkorDB joins the statements into one ``UNION ALL`` (each statement's parameters renamed, so
that statements of one text with their own values do not collide) and leaves the check to the
caller; Neo4j batches them and runs the check with them, in one statement when the round is one
text and else in one transaction. Whatever the way, the rows are those of the statements read
one by one, and a check that ran covers exactly the images the rows name among those offered.
"""

from __future__ import annotations

from typing import Any

import pytest

from covr.graph import GraphStore
from covr.graph.store import RoundCheck

pytestmark = pytest.mark.integration

ROUND = "UNWIND $ids AS image_id\nRETURN image_id AS image_id, $tag AS tag"
OTHER = "UNWIND $ids AS i\nWITH i AS image_id\nRETURN image_id AS image_id, $tag AS tag"
CHECK = "UNWIND $ids AS image_id\nRETURN image_id AS image_id, $tag AS tag"


def _check(among: list[str]) -> RoundCheck:
    return RoundCheck(lambda: (CHECK, {"ids": ["never"], "tag": -1}), ids="ids", among=among)


def _one_by_one(store: GraphStore, statements: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    return [row for query, params in statements for row in store.read(query, params)]


@pytest.mark.parametrize("texts", [(ROUND, ROUND, ROUND), (ROUND, OTHER, ROUND)])
def test_a_round_returns_the_rows_of_its_statements(
    store: GraphStore, texts: tuple[str, ...]
) -> None:
    statements: list[tuple[str, dict[str, Any]]] = [
        (texts[0], {"ids": ["a", "b"], "tag": 0}),
        (texts[1], {"ids": [], "tag": 1}),  # no row
        (texts[2], {"ids": ["c"], "tag": 2}),
    ]
    read = store.read_round(statements)
    assert read.checked is None
    assert read.rows == _one_by_one(store, statements)
    assert [r["tag"] for r in read.rows] == [0, 0, 2]
    assert store.read_round(statements[:1]).rows == _one_by_one(store, statements[:1])


@pytest.mark.parametrize("texts", [(ROUND, ROUND), (ROUND, OTHER)], ids=["one_text", "two"])
def test_a_check_that_ran_covers_the_images_named_among_those_offered(
    store: GraphStore, texts: tuple[str, ...]
) -> None:
    statements: list[tuple[str, dict[str, Any]]] = [
        (texts[0], {"ids": ["a", "b"], "tag": 0}),
        (texts[1], {"ids": ["c", "d", "a"], "tag": 1}),
    ]
    read = store.read_round(statements, check=_check(["a", "d", "x"]))
    first = _one_by_one(store, statements)
    if read.checked is None:  # the store left the check to the caller (FalkorDB)
        assert store.backend.dialect != "neo4j"
        assert read.rows == first
        return
    assert read.checked == ["a", "d"]
    checked = store.read(CHECK, {"ids": read.checked, "tag": -1})
    assert sorted(read.rows[: len(first)], key=repr) == sorted(first, key=repr)
    assert sorted(read.rows[len(first) :], key=repr) == sorted(checked, key=repr)


def test_a_check_of_no_named_image_adds_no_row(store: GraphStore) -> None:
    statements: list[tuple[str, dict[str, Any]]] = [(ROUND, {"ids": ["a"], "tag": 0})]
    read = store.read_round(statements, check=_check(["z"]))
    assert read.rows == [{"image_id": "a", "tag": 0}]
    assert read.checked in (None, [])


def test_statements_that_cannot_be_joined_are_read_one_by_one(store: GraphStore) -> None:
    """A literal could hold a ``$`` that is no parameter: FalkorDB does not rename inside it."""
    statements: list[tuple[str, dict[str, Any]]] = [
        ("RETURN '$tag' AS image_id, $tag AS tag", {"tag": 0}),
        ("RETURN '$tag' AS image_id, $tag AS tag", {"tag": 1}),
    ]
    rows = store.read_round(statements).rows
    assert rows == [{"image_id": "$tag", "tag": 0}, {"image_id": "$tag", "tag": 1}]
