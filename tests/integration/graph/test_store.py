"""The graph-room interface on the embedded store: rows, writes, batches, schema, stats."""

from __future__ import annotations

from typing import Any

import pytest

from covr.graph import SCHEMA_VERSION, GraphStore, QueryError, catalog
from covr.graph.falkor import DROPPED_UNIQUE_KEYS, FalkorStore
from covr.graph.report import store_stats


def test_rows_are_plain_values(store: GraphStore) -> None:
    store.write("CREATE (:Probe {name: $n, attrs: $a})", {"n": "man", "a": ["tall", "young"]})
    rows = store.read("MATCH (p:Probe) RETURN p, p.attrs AS attrs, {k: p.name} AS m")
    assert rows == [
        {"p": {"name": "man", "attrs": ["tall", "young"]}, "attrs": ["tall", "young"],
         "m": {"k": "man"}}
    ]  # fmt: skip
    assert type(rows[0]["m"]) is dict


def test_every_scalar_type_reads_as_before(store: GraphStore) -> None:
    """The fast reader (covr.graph.compact) and the driver's parser agree on every type."""
    rows = store.read(
        "RETURN null AS n, 'a' AS s, -3 AS i, 9007199254740993 AS big, true AS t, false AS f, "
        "2.5 AS d, ['x', null, [1]] AS l, [] AS e, {a: 1, b: {c: 'd'}} AS m"
    )
    assert rows == [
        {"n": None, "s": "a", "i": -3, "big": 9007199254740993, "t": True, "f": False,
         "d": 2.5, "l": ["x", None, [1]], "e": [], "m": {"a": 1, "b": {"c": "d"}}}
    ]  # fmt: skip
    assert [type(rows[0][k]) for k in ("t", "d", "big")] == [bool, float, int]
    store.write("CREATE (:Probe {name: 'p'})-[:R {w: 1}]->(:Probe {name: 'q'})")
    paths = store.read("MATCH p = (:Probe {name: 'p'})-[r:R]->(b) RETURN p, r, b.name AS b")
    assert paths == [{"p": [{"name": "p"}, {"name": "q"}], "r": {"w": 1}, "b": "q"}]


def test_write_summary_counts(store: GraphStore) -> None:
    summary = store.write("CREATE (a:Probe)-[:R]->(b:Probe) SET a.x = 1")
    assert (summary.nodes_created, summary.relationships_created, summary.properties_set) == (
        2, 1, 1,
    )  # fmt: skip


def test_write_rows_batches_and_progress(store: GraphStore) -> None:
    seen: list[int] = []
    rows = ({"i": i} for i in range(2_500))  # a generator: never materialised whole
    summary = store.write_rows(
        catalog.get("bench/unwind_create"), rows, batch_size=1_000,
        on_batch=lambda s: seen.append(s.rows),
    )  # fmt: skip
    assert seen == [1_000, 1_000, 500]
    assert (summary.rows, summary.batches, summary.nodes_created) == (2_500, 3, 2_500)


def test_write_rows_needs_unwind(store: GraphStore) -> None:
    with pytest.raises(ValueError, match=r"UNWIND \$rows"):
        store.write_rows("CREATE (:X)", [{}], batch_size=10)


@pytest.mark.parametrize(
    "statement",
    [
        "UNWIND $rows AS r CREATE (:Probe {v: 10 / r.d})",  # division by zero on the 3rd row
        "UNWIND $rows AS r CREATE (:Image {id: r.k})",  # unique-constraint violation
    ],
)
def test_a_failing_batch_leaves_nothing_behind(store: GraphStore, statement: str) -> None:
    rows = [{"d": 1, "k": "a"}, {"d": 2, "k": "b"}, {"d": 0, "k": "a"}, {"d": 4, "k": "c"}]
    with pytest.raises(QueryError):
        store.write_rows(statement, rows, batch_size=10)
    assert store.read("MATCH (n) WHERE NOT n:Meta RETURN count(n) AS c") == [{"c": 0}]


def test_batches_before_a_failure_stay(store: GraphStore) -> None:
    rows = [{"d": 1}, {"d": 2}, {"d": 0}, {"d": 4}]
    with pytest.raises(QueryError):
        store.write_rows("UNWIND $rows AS r CREATE (:Probe {v: 10 / r.d})", rows, batch_size=2)
    assert store.read("MATCH (n:Probe) RETURN count(n) AS c") == [{"c": 2}]


def test_schema_is_idempotent_and_versioned(store: GraphStore) -> None:
    first = store.apply_schema()
    second = store.apply_schema()
    assert first == second
    assert all(s.usable for s in second)
    indexed = {(s.label, s.property_name) for s in second}
    for needed in [("Image", "id"), ("Object", "key"), ("Object", "name"), ("Relation", "name"),
                   ("RelMod", "name")]:  # fmt: skip
        assert needed in indexed
    rows = store.read(catalog.get("admin/schema_version"), {"key": "schema"})
    assert rows == [{"version": SCHEMA_VERSION}]
    assert store.read("MATCH (m:Meta) RETURN count(m) AS c") == [{"c": 1}]


def test_unique_keys_are_enforced(store: GraphStore) -> None:
    store.write("CREATE (:Image {id: $id})", {"id": "gqa:1"})
    with pytest.raises(QueryError, match="unique constraint"):
        store.write("CREATE (:Image {id: $id})", {"id": "gqa:1"})


def test_a_store_made_with_constraints_on_derived_keys_loses_them(store: GraphStore) -> None:
    """Stores made before the atomic replacement's speed-up hold unique constraints on
    ``Object.key``, ``Relation.key`` and ``RelMod.key``; ``apply_schema`` drops them (the
    staged version of an image carries the stored version's keys until the switch), and
    keeps ``Image.id`` unique, which makes the derived keys unique by construction."""
    if not isinstance(store, FalkorStore):
        pytest.skip("Neo4j replaces in one transaction and keeps every key constraint")
    for label, prop in DROPPED_UNIQUE_KEYS:
        store.command(
            "GRAPH.CONSTRAINT", "CREATE", store.graph_name, "UNIQUE", "NODE", label,
            "PROPERTIES", "1", prop,
        )  # fmt: skip
    store.apply_schema()
    held = {
        (row["label"], tuple(row["properties"]))
        for row in store.read(catalog.get("admin/falkordb/constraint_states"))
    }
    assert held == {("Image", ("id",)), ("Meta", ("key",))}
    store.apply_schema()  # idempotent once dropped
    store.write("CREATE (:Object {key: $k}), (:Object {key: $k})", {"k": "gqa:1:1"})
    with pytest.raises(QueryError, match="unique constraint"):
        store.write("CREATE (:Image {id: $id}), (:Image {id: $id})", {"id": "gqa:1"})


def test_stats_per_source_and_split(store: GraphStore) -> None:
    store.write(
        """
        CREATE (i:Image {id: 'gqa:1', source: 'gqa', split: 'val'})
        CREATE (j:Image {id: 'imsitu:a', source: 'imsitu', split: 'train'})
        CREATE (i)-[:HAS]->(m:Object {key: 'k1', name: 'man', attributes: ['tall', 'young']})
        CREATE (i)-[:HAS]->(h:Object {key: 'k2', name: 'hat', attributes: []})
        CREATE (m)-[:SUBJ]->(:Relation {key: 'r1', name: 'wearing'})-[:OBJ]->(h)
        CREATE (j)-[:HAS]->(p:Object {key: 'k3', name: 'person'})
        CREATE (j)-[:HAS]->(w:Object {key: 'k4', name: 'wall'})
        CREATE (j)-[:HAS]->(s:Object {key: 'k5', name: 'stapler'})
        CREATE (p)-[:SUBJ]->(r:Relation {key: 'r2', name: 'stapling'})-[:OBJ]->(w)
        CREATE (r)-[:MOD]->(:RelMod {key: 'm1', name: 'using'})-[:OBJ]->(s)
        """
    )
    stats = store_stats(store)
    assert stats["datasets"] == [
        {"source": "gqa", "split": "val", "images": 1, "objects": 2, "attributes": 2,
         "relations": 1, "relmods": 0},
        {"source": "imsitu", "split": "train", "images": 1, "objects": 3, "attributes": 0,
         "relations": 1, "relmods": 1},
    ]  # fmt: skip
    assert stats["totals"]["objects"] == 5
    assert stats["nodes"]["Object"] == 5
    assert stats["relationships"] == {"HAS": 5, "MOD": 1, "OBJ": 3, "SUBJ": 2}


def test_health_reports_versions(store: GraphStore) -> None:
    health = store.health()
    assert health.ok
    if store.backend.dialect == "neo4j":
        assert health.server_version.startswith("Neo4j/5.26.")
        assert health.details["bolt"].startswith("bolt://127.0.0.1:")
        assert health.details["neo4j_version"].startswith("5.26.")
        return
    assert health.server_version.startswith("FalkorDB 4.")
    assert health.details["socket"].endswith("covr.sock")


def test_read_many_returns_each_statements_rows_in_order(store: GraphStore) -> None:
    """What the reads one by one return (Neo4j runs them in one transaction)."""
    statements: list[tuple[str, dict[str, Any]]] = [
        ("UNWIND $xs AS x RETURN x", {"xs": [1, 2]}),
        ("RETURN $s AS x", {"s": "three"}),
        ("UNWIND [] AS x RETURN x", {}),
        ("UNWIND $xs AS x RETURN x", {"xs": [4]}),
    ]
    assert store.read_many(statements) == [{"x": 1}, {"x": 2}, {"x": "three"}, {"x": 4}]
    assert store.read_many([]) == []


def test_read_many_of_one_text_returns_what_each_read_returns(store: GraphStore) -> None:
    """Several statements of one text: Neo4j sends them as one (covr.graph.neo4j_batch), with
    every ``WITH`` carrying the parameters; the rows must be those of the reads one by one, in
    statement order (an empty one included), and a different text between them is kept apart."""
    text = (
        "UNWIND $xs AS x\nWITH x, x * $k AS y\nWHERE y > $floor\n"
        "WITH DISTINCT x, y\nRETURN x, y, $tag AS tag"
    )
    params: list[dict[str, Any]] = [
        {"xs": [1, 2, 2], "k": 10, "floor": 0, "tag": "a"},
        {"xs": [3], "k": 1, "floor": 5, "tag": "b"},  # no row
        {"xs": [4, 5], "k": -1, "floor": -4.5, "tag": "c"},
    ]
    statements: list[tuple[str, dict[str, Any]]] = [(text, p) for p in params]
    statements.append(("RETURN $s AS x", {"s": "apart"}))
    statements.append((text, params[0]))
    one_by_one = [row for query, p in statements for row in store.read(query, p)]
    assert one_by_one[0] == {"x": 1, "y": 10, "tag": "a"}
    assert store.read_many(statements) == one_by_one


def test_read_many_names_a_failing_statement(store: GraphStore) -> None:
    statements: list[tuple[str, dict[str, Any]]] = [
        ("RETURN 1 AS x", {}),
        ("RETURN 1 / $zero AS x", {"zero": 0}),
    ]
    with pytest.raises(QueryError):
        store.read_many(statements)
    assert store.read_many(statements[:1]) == [{"x": 1}]  # the store still answers
