"""A read and the check of the images its rows name, as one Neo4j statement (no server here;
tests/integration/related/test_round_statements.py runs it on Neo4j and compares the answers)."""

from __future__ import annotations

import re

import pytest

from covr.graph.catalog import Statement
from covr.graph.neo4j_batch import AMONG, BATCH, CHECK, Pending, returned, then_check

TEXT = (
    "UNWIND $b0_ids AS image_id\nMATCH (i:Image {id: image_id})\nWITH i\n"
    "MATCH (i)-[:HAS]->(o0:Object)\nWHERE o0.name IN $b0_o0_in\n"
    "RETURN i.id AS image_id, $b0_tag AS tag, [o0.name] AS names"
)
BRANCH = Statement("branch", TEXT)


def test_the_columns_are_read_from_the_last_return() -> None:
    assert returned(TEXT) == ["image_id", "tag", "names"]
    with pytest.raises(ValueError, match="RETURN"):
        returned("MATCH (n) RETURN *")


def test_rows_then_the_check_of_their_images_in_one_statement() -> None:
    first: list[Pending] = [
        (BRANCH, {"b0_ids": ["1", "2"], "b0_o0_in": ["cat"], "b0_tag": 0}),
        (BRANCH, {"b0_ids": ["3"], "b0_o0_in": ["dog"], "b0_tag": 1}),
    ]
    check: Pending = (BRANCH, {"b0_ids": [""], "b0_o0_in": ["pet"], "b0_tag": -1})
    statement, params = then_check(first, check, ids="b0_ids", among=["2", "3"])
    text = statement.text
    # the first part: both branches as one batched statement inside a subquery
    assert text.startswith("CALL () {\nUNWIND range(0, size($covr_batch) - 1) AS covr_n\n")
    assert params[BATCH] == [p for _, p in first]
    # the check: the same text reading its map, with the ids of the rows that are among those
    assert "WITH covr_r WHERE covr_r.image_id IN $covr_among" in text
    assert "WITH covr_c {.*, b0_ids: covr_ids} AS covr_p" in text
    assert "UNWIND covr_p.b0_ids AS image_id" in text
    assert params[CHECK] == check[1]
    assert params[AMONG] == ["2", "3"]
    assert set(params) == {BATCH, CHECK, AMONG}
    # every value is a parameter: the only ones left are the three above
    assert set(re.findall(r"\$(\w+)", text)) == {BATCH, CHECK, AMONG}
    assert text.endswith(
        "RETURN covr_r.image_id AS image_id, covr_r.tag AS tag, covr_r.names AS names"
    )
    assert statement.name == "branch (then checked)"


def test_one_first_statement_keeps_its_parameters_at_the_top() -> None:
    params = {"b0_ids": ["1"], "b0_o0_in": ["cat"], "b0_tag": 0}
    check: Pending = (BRANCH, {"b0_ids": [""], "b0_o0_in": ["pet"], "b0_tag": -1})
    statement, merged = then_check([(BRANCH, params)], check, ids="b0_ids", among=("1",))
    assert statement.text.startswith(f"CALL () {{\n{TEXT}\n}}\n")
    assert merged == {**params, CHECK: check[1], AMONG: ["1"]}


def test_what_it_cannot_join_is_refused() -> None:
    check: Pending = (BRANCH, {"b0_ids": [""], "b0_tag": -1})
    other = Statement("other", "RETURN $x AS image_id, 0 AS tag")
    with pytest.raises(ValueError, match="one statement text"):
        then_check([(BRANCH, {}), (other, {})], check, ids="b0_ids", among=["1"])
    with pytest.raises(ValueError, match="same columns"):
        then_check([(other, {"x": 1})], check, ids="b0_ids", among=["1"])
    with pytest.raises(ValueError, match="cannot take"):
        then_check([(BRANCH, {})], check, ids="missing", among=["1"])
    literal = Statement("lit", TEXT.replace("$b0_tag", "'$x'"))
    with pytest.raises(ValueError, match="cannot take"):
        then_check([(literal, {})], (literal, {"b0_ids": []}), ids="b0_ids", among=["1"])
