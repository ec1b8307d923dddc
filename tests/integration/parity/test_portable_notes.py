"""One test per case of docs/graph-store.md, "Cypher-portable notes": each difference found between
FalkorDB and Neo4j, and the fix that makes the service answer the same on both.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest

from covr.graph import GraphStore, QueryError, Row, catalog
from covr.scene.model import Box, Object, SceneGraph, SceneGraphError, validate
from covr.scene.records import MAX_STORED_FLOAT, stored_number
from covr_loaders import synthetic
from covr_loaders.errors import RecordError
from covr_loaders.fields import as_id, as_name
from covr_loaders.readback import expected_digest, get_scene_graph, store_digest
from covr_loaders.writer import Batch, write_batch
from tests.integration.parity.conftest import Pair
from tests.integration.parity.helpers import graph_dump, image_checksums
from tests.integration.related.helpers import put

pytestmark = pytest.mark.timeout(300)

# Ids whose order differs between code points (FalkorDB, Python) and UTF-16 (Neo4j): characters of
# U+E000-U+FFFF sort before those above U+FFFF in UTF-16 and after them by code point. Plus
# non-ASCII ids, which FalkorDB's index-backed range comparisons got wrong.
MIXED_IDS = ["a", "b", "é", "\x80", "鶂", "\ue000", "\uffff", "\uffffa", "\U0001f600", "😀x", "z"]


def utf16(text: str) -> bytes:
    return text.encode("utf-16-be")


def image(original_id: str, **changes: Any) -> SceneGraph:
    graph = SceneGraph.build(
        source="gqa",
        original_id=original_id,
        split="val",
        objects=[Object("1", "man", ("tall",)), Object("2", "hat")],
    )
    return replace(graph, **changes) if changes else graph


def walk(pair: Pair, name: str, limit: int, **params: object) -> dict[str, list[str]]:
    """Every id each store returns, page after page, from ``name`` with ``limit`` per page."""
    out: dict[str, list[str]] = {}
    statement = catalog.get(name)
    for backend, store, _ in pair.stores():
        seen: list[str] = []
        after = ""
        while True:
            rows = store.read(statement, {**params, "after": after, "limit": limit})
            if not rows:
                break
            seen += [str(r["id"]) for r in rows]
            after = seen[-1]
        out[backend] = seen
    return out


def test_id_pages_are_complete_on_both_and_ordered_as_documented(pair: Pair) -> None:
    graphs = [image(i) for i in MIXED_IDS]
    ids = [g.image_id for g in graphs]
    pair.reset()
    for _, store, _ in pair.stores():
        put(store, graphs)
    for limit in (1, 3, 100):
        pages = walk(pair, "load/image_ids_after", limit)
        service = walk(pair, "service/image_ids_page", limit, **{"source": "gqa", "split": None})
        for backend in ("falkordb", "neo4j"):
            for seen in (pages[backend], service[backend]):
                assert sorted(seen) == sorted(ids), (backend, limit, seen)  # none skipped
        # the one documented difference: code point order against UTF-16 order
        assert pages["falkordb"] == sorted(ids)
        assert pages["neo4j"] == sorted(ids, key=utf16)
        assert service == pages
    # what the service builds on them does not depend on the store's order
    digests = {backend: store_digest(store) for backend, store, _ in pair.stores()}
    assert digests["falkordb"] == digests["neo4j"] == expected_digest(graphs)


def test_floats_come_back_the_same_from_both(pair: Pair) -> None:
    values = [1 / 3, 0.1 + 0.2, 2.0**53 + 2, 1.7777981397134235e-39, 5e-324, 1.7976931348623157e308]
    graph = image(
        "floats",
        objects=(
            Object("1", "man", (), Box(*values[:4])),
            Object("2", "hat", (), Box(*values[2:])),
        ),
        width=123456789.12345678,
        height=-0.0,
        extras={"score": 0.30000000000000004},
    )
    validate(graph)
    pair.reset()
    back = {}
    for backend, store, _ in pair.stores():
        put(store, [graph])
        back[backend] = get_scene_graph(store, graph.image_id)
    assert back["falkordb"] == back["neo4j"]
    stored = back["neo4j"]
    assert stored is not None
    assert stored.width == stored_number(123456789.12345678) == 123456789.123457
    assert stored.extras == {"score": 0.3}
    assert [o.box for o in stored.objects] == [
        Box(*(stored_number(v) for v in values[:4])),
        Box(*(stored_number(v) for v in values[2:])),
    ]
    assert stored.objects[1].box is not None
    assert stored.objects[1].box.h == MAX_STORED_FLOAT  # not infinity
    assert stored_number(0.5) == 0.5  # at most 15 digits: unchanged
    assert stored_number(12) == 12


@pytest.mark.parametrize("bad", ["man ", " man", "man\n", "\tman", "a\x01b"])
def test_names_and_ids_falkordb_cannot_find_are_refused(bad: str) -> None:
    with pytest.raises(SceneGraphError):
        validate(image(bad))
    with pytest.raises(SceneGraphError):
        validate(image("1", objects=(Object("1", bad),)))
    with pytest.raises(SceneGraphError):
        validate(image("1", objects=(Object("1", "man", (bad,)),)))
    if "\x01" in bad:  # the readers trim names; U+0001 they refuse
        with pytest.raises(RecordError):
            as_name(bad, "name")
        with pytest.raises(RecordError):
            as_id(bad, "id")


def test_neo4j_finds_a_name_with_surrounding_whitespace_by_index(pair: Pair) -> None:
    """Written with an inline statement, since the loaders refuse such names now."""
    assert lookup_name_with_a_trailing_space(pair.neo4j) == [{"id": "gqa:1"}]


@pytest.mark.xfail(
    strict=True,
    reason="FalkorDB 4.16: an index-backed equality lookup misses a string that starts or ends "
    "with whitespace or holds U+0001 (a scan finds it); the reason names may not (validate)",
)
def test_falkordb_finds_a_name_with_surrounding_whitespace_by_index(pair: Pair) -> None:
    assert lookup_name_with_a_trailing_space(pair.falkordb) == [{"id": "gqa:1"}]


def lookup_name_with_a_trailing_space(store: GraphStore) -> list[Row]:
    store.clear()
    store.apply_schema()
    store.write(
        "CREATE (:Image {id: $id})-[:HAS]->(:Object {key: $key, name: $name})",
        {"id": "gqa:1", "key": "gqa:1:1", "name": "man "},
    )
    return store.read(catalog.get("match/related/postings_object"), {"name": "man "})


# Deletes two images, creates two others with relationships, then fails.
DELETE_CREATE_FAIL = """UNWIND $ids AS id
MATCH (i:Image {id: id})-[:HAS]->(o:Object)
DETACH DELETE o, i
WITH count(*) AS deleted
UNWIND $ids AS id
CREATE (:Image {id: id + $suffix})-[:HAS]->(:Object {key: id + $suffix})
WITH count(*) AS created
CREATE (:Probe {bad: $bad})"""


def rolls_back_exactly(store: GraphStore) -> bool:
    store.clear()
    store.apply_schema()
    put(store, [image(str(n)) for n in range(3)])
    before = graph_dump(store)
    params = {"ids": ["gqa:0", "gqa:1"], "suffix": "-new", "bad": {"not": "storable"}}
    with pytest.raises(QueryError):
        store.write(DELETE_CREATE_FAIL, params)
    return graph_dump(store) == before


def test_neo4j_rolls_back_a_failed_statement_that_deleted_and_created(pair: Pair) -> None:
    assert rolls_back_exactly(pair.neo4j)


@pytest.mark.xfail(
    strict=True,
    reason="FalkorDB 4.16: rolling back a failed statement that deleted nodes and then created "
    "nodes with relationships restores the deleted nodes with their relationships wired to the "
    "wrong nodes; so no statement of the catalog deletes and creates (a re-load batch stages "
    "its new images, then load/falkordb/switch_images deletes and relabels: GraphStore.replace_images)",
)
def test_falkordb_rolls_back_a_failed_statement_that_deleted_and_created(pair: Pair) -> None:
    assert rolls_back_exactly(pair.falkordb)


def test_a_failing_reload_batch_leaves_the_stored_images_as_they_were(pair: Pair) -> None:
    """A re-load batch replaces its stored images atomically (GraphStore.replace_images: one
    transaction on Neo4j, stage-then-switch on FalkorDB), so when it fails every stored image
    is as it was, on both stores alike (until issue 40 the replaced images were gone)."""
    graphs = list(synthetic.generate(12, seed=8, split="val"))
    pair.reset()
    for _, store, _ in pair.stores():
        put(store, graphs)
        before = image_checksums(store)
        bad = Batch.of(0, graphs[6:])
        assert isinstance(bad.objects, list)
        bad.objects[-1][-1] = [bad.objects[-1][-1][0], {"not": "storable"}]
        with pytest.raises(QueryError):
            write_batch(store, bad)
        assert image_checksums(store) == before
        write_batch(store, Batch.of(0, graphs[6:]))
        assert image_checksums(store) == before


def test_any_image_names_no_image(pair: Pair) -> None:
    statement = catalog.get("load/any_image")
    pair.reset()
    for _, store, _ in pair.stores():
        assert store.read(statement) == []
        put(store, [image(str(n)) for n in range(5)])
        assert store.read(statement) == [{"found": True}]


def test_no_limit_without_order_returns_rows_that_depend_on_it() -> None:
    """A LIMIT without ORDER BY picks arbitrary rows, and the engines pick different ones: only
    statements whose answer does not depend on which rows were picked may use it."""
    any_rows = {
        "admin/delete_batch": "deletes some nodes; repeated until it returns 0",
        "bench/delete_all": "the same, for benchmark nodes",
        "load/any_image": "returns a constant: whether there is an image",
    }
    for statement in catalog.all_statements():
        if "LIMIT" in statement.text and "ORDER BY" not in statement.text:
            assert statement.name in any_rows, statement.name


def test_every_sum_is_an_integer() -> None:
    """FalkorDB's sum() of integers is a float, Neo4j's an integer: every sum of the catalog is
    wrapped in toInteger() (the catalog sums counts only)."""
    texts = [s.text for s in catalog.all_statements()]
    for text in texts:
        for found in re.finditer(r"sum\(", text):
            assert text[: found.start()].endswith("toInteger("), text
