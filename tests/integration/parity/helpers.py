"""Comparing what two stores hold and answer, without normalising what a user would see.

Values are compared in a canonical JSON form that keeps every type apart (``1`` is not ``1.0``,
``true`` is not ``1``) and keeps the order of every list, with one exception: a list of maps is
the output of ``collect()`` of maps in the catalog (objects, relations, rel-mods of a scene
graph), whose order Cypher leaves unspecified and every reader canonicalises
(``covr.scene.records.from_store_record``). Stored list properties (attributes, synsets, names)
can only hold scalars, so their order is always compared.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from covr.graph import GraphStore, Row, catalog
from covr.scene.model import SceneGraph
from covr_loaders.readback import get_scene_graphs

NODES = "MATCH (n) RETURN labels(n) AS labels, properties(n) AS props"
EDGES = (
    "MATCH (a)-[r]->(b) RETURN type(r) AS type, properties(r) AS props, "
    "labels(a) AS a_labels, properties(a) AS a, labels(b) AS b_labels, properties(b) AS b"
)


def canon(value: Any) -> Any:
    """``value`` as plain JSON data in which only a collected list of maps loses its order."""
    if isinstance(value, dict):
        return {str(k): canon(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [canon(v) for v in value]
        if items and all(isinstance(v, dict) for v in items):
            return sorted(items, key=text)
        return items
    return value


def text(value: Any) -> str:
    """Canonical JSON text: sorted keys; ints, floats, booleans and strings stay distinct."""
    return json.dumps(canon(value), sort_keys=True, ensure_ascii=False, allow_nan=True)


def row_texts(rows: Iterable[Row]) -> list[str]:
    return [text(row) for row in rows]


def same_rows(left: Sequence[Row], right: Sequence[Row], *, ordered: bool) -> bool:
    """Equal rows: in the same order when the statement orders them, else as multisets."""
    a, b = row_texts(left), row_texts(right)
    return a == b if ordered else Counter(a) == Counter(b)


def describe_difference(left: Sequence[Row], right: Sequence[Row], *, ordered: bool) -> str:
    """A short account of how two row lists differ (for assertion messages)."""
    a, b = row_texts(left), row_texts(right)
    if ordered and Counter(a) == Counter(b):
        return f"same rows, different order:\n  falkordb {a}\n  neo4j    {b}"
    only_a = list((Counter(a) - Counter(b)).elements())
    only_b = list((Counter(b) - Counter(a)).elements())
    return (
        f"{len(a)} rows vs {len(b)} rows\n  only on falkordb: {only_a[:5]}\n"
        f"  only on neo4j:    {only_b[:5]}"
    )


def graph_dump(store: GraphStore) -> Counter[str]:
    """Every node (labels, properties) and relationship (type, properties, both ends) as text."""
    out: Counter[str] = Counter()
    for row in store.read(NODES):
        out[text({"node": row["labels"], "props": row["props"]})] += 1
    for row in store.read(EDGES):
        out[text({"edge": row["type"], **{k: v for k, v in row.items() if k != "type"}})] += 1
    return out


def dump_difference(left: Counter[str], right: Counter[str]) -> str:
    only_left = list((left - right).elements())
    only_right = list((right - left).elements())
    return f"only on falkordb: {only_left[:5]}\nonly on neo4j: {only_right[:5]}"


def stored_ids(store: GraphStore, page: int = 500) -> Iterator[str]:
    """Every stored Image.id, walked with the store's own cursor order."""
    after = ""
    statement = catalog.get("load/image_ids_after")
    while True:
        ids = [str(r["id"]) for r in store.read(statement, {"after": after, "limit": page})]
        if not ids:
            return
        yield from ids
        after = ids[-1]


def checksum(graph: SceneGraph) -> str:
    """One image's content checksum (the canonical ``repr`` of its scene graph)."""
    return hashlib.sha256(repr(graph).encode()).hexdigest()


def image_checksums(store: GraphStore, page: int = 500) -> dict[str, str]:
    """``{Image.id: checksum}`` of every stored image, read back as scene graphs."""
    ids = list(stored_ids(store))
    out: dict[str, str] = {}
    for start in range(0, len(ids), page):
        found = get_scene_graphs(store, ids[start : start + page])
        out.update({image_id: checksum(graph) for image_id, graph in found.items()})
    return out


def expected_checksums(graphs: Iterable[SceneGraph]) -> dict[str, str]:
    return {g.image_id: checksum(g) for g in graphs}


def counts(store: GraphStore) -> dict[str, dict[str, int]]:
    """Nodes per label and relationships per type."""
    nodes = store.read(catalog.get("admin/count_nodes_by_label"))
    edges = store.read(catalog.get("admin/count_relationships_by_type"))
    return {
        "nodes": {str(r["label"]): int(r["count"]) for r in nodes},
        "relationships": {str(r["type"]): int(r["count"]) for r in edges},
    }
