"""The rewrite that sends several Neo4j reads of one text as one statement (no server here)."""

from __future__ import annotations

from covr.graph.catalog import Statement
from covr.graph.neo4j_batch import BATCH, Pending, batchable, batched, coalesce, unbatched

TEXT = "UNWIND $b0_ids AS image_id\nMATCH (i:Image {id: image_id})\nWITH i\nRETURN i.id AS id"


def test_parameters_become_fields_of_the_row_map_carried_through_every_with() -> None:
    text = batched(Statement("s", TEXT)).text
    assert text.startswith(f"UNWIND range(0, size(${BATCH}) - 1) AS covr_n\nCALL (covr_n) {{\n")
    assert "UNWIND covr_p.b0_ids AS image_id" in text
    assert "\nWITH covr_p, i\n" in text
    assert text.count("$") == 2  # only $covr_batch is left a parameter
    assert text.endswith("}\nRETURN *")


def test_only_consecutive_statements_of_one_batchable_text_are_joined() -> None:
    a, b = Statement("a", TEXT), Statement("b", "RETURN $x AS x")
    pending: list[Pending] = [
        (a, {"b0_ids": ["1"]}),
        (a, {"b0_ids": ["2"]}),
        (b, {"x": 1}),
        (a, {"b0_ids": []}),
    ]
    out = coalesce(pending)
    assert [s.name for s, _ in out] == ["a (batched)", "b", "a"]
    assert out[0][1] == {BATCH: [{"b0_ids": ["1"]}, {"b0_ids": ["2"]}]}
    assert out[1:] == pending[2:]


def test_texts_the_rewrite_could_break_are_left_alone() -> None:
    assert batchable(TEXT)
    assert not batchable("RETURN '$not_a_parameter' AS x")  # a literal may hold a '$'
    assert not batchable(TEXT + "\nUNION ALL\n" + TEXT)  # each branch would need an import
    assert not batchable("MATCH (n) WHERE n.name STARTS WITH $p RETURN n")  # a WITH mid-line
    assert not batchable("MATCH (n)\nWITH *\nRETURN n")
    assert not batchable("MATCH (n)\nWITH DISTINCT *\nRETURN n")
    assert (
        "\nWITH DISTINCT covr_p, i\n"
        in batched(Statement("d", "MATCH (i)\nWITH DISTINCT i\nRETURN i")).text
    )
    twice: list[Pending] = [(Statement("s", "RETURN '$x' AS x"), {})] * 2
    assert coalesce(twice) == twice


def test_the_index_column_is_dropped_from_rows() -> None:
    assert unbatched({"covr_n": 0, "id": "1"}) == {"id": "1"}
