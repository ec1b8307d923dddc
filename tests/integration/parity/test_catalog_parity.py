"""Every catalog statement that runs on both backends answers the same on both, for the same data.

The data: random scene graphs (``strategies.py``) and the bundled real samples, each written to
the embedded FalkorDB and the managed Neo4j through the loaders' batch writer. Then, on both:

1. the stores hold the same graph (every node and relationship with its properties);
2. every read statement returns the same rows, for parameters drawn from the data (names and
   ids that exist and some that do not), in the same order when the statement has an
   ``ORDER BY`` and as the same multiset otherwise;
3. every write statement has the same effect: the same nodes and relationships created and
   deleted, the same graph afterwards, or the same refusal.

Statements are enumerated from the catalog, so a new file is checked too (with its example
parameters until it gets data-derived ones in :func:`parameters`). What differed between the
engines and how each statement was made portable: docs/graph-store.md, "Cypher-portable notes".
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings

from covr.graph import GraphStore, QueryError, WriteSummary, catalog, name_stats
from covr.scene.model import SceneGraph
from covr.scene.records import image_properties
from covr_loaders.jsonio import ByteCounter
from covr_loaders.samples import load_bundled_samples, sample_jobs
from covr_loaders.writer import Batch
from tests.integration.parity.conftest import Pair
from tests.integration.parity.helpers import (
    describe_difference,
    dump_difference,
    graph_dump,
    same_rows,
)
from tests.integration.parity.strategies import scene_graphs
from tests.integration.related.helpers import put

pytestmark = pytest.mark.timeout(600)

WRITES = re.compile(r"\b(CREATE|MERGE|SET|DELETE|REMOVE|FOREACH)\b")
MISSING = "no such thing \u00e9'\""
GENERATION = {"key": name_stats.META_KEY, "generation": "parity-1", "images": 0}

# Writes run in this order on a loaded store, the destructive ones last; a write statement that
# is not listed runs before admin/delete_batch, with its example parameters.
WRITE_ORDER = (
    "schema/set_version",
    "stats/mark_pending",
    "stats/set_generation",
    "stats/clear",
    "stats/objects",
    "stats/attributes",
    "stats/relations",
    "stats/relmods",
    "stats/create_rows",
    "bench/create_one",
    "bench/unwind_create",
    "bench/naive_image",
    "bench/naive_object",
    "bench/naive_relation",
    "bench/delete_all",
    "load/drop_staged",
    "load/create_images",
    "load/delete_images",
    "admin/delete_batch",
)


def shared_statements() -> list[catalog.Statement]:
    """The statements written for both backends (the per-backend DDL is checked elsewhere)."""
    return [s for s in catalog.all_statements() if s.runs_on("falkordb") and s.runs_on("neo4j")]


def is_write(statement: catalog.Statement) -> bool:
    return bool(WRITES.search(statement.text))


def is_ordered(statement: catalog.Statement) -> bool:
    return "ORDER BY" in statement.text


@dataclass
class Data:
    """What parameters are drawn from: the stored scene graphs and some not stored yet."""

    stored: list[SceneGraph]
    fresh: list[SceneGraph]

    @property
    def ids(self) -> list[str]:
        return sorted(g.image_id for g in self.stored)

    def names(self, kind: str) -> list[str]:
        found: set[str] = set()
        for g in self.stored:
            if kind == "object":
                found.update(o.name for o in g.objects)
            elif kind == "attribute":
                found.update(a for o in g.objects for a in o.attributes)
            elif kind == "relation":
                found.update(r.name for r in g.relations)
            else:
                found.update(m.name for r in g.relations for m in r.mods)
        return [*sorted(found)[:6], MISSING]

    def splits(self) -> list[str | None]:
        return [None, *sorted({g.split for g in self.stored})[:3], MISSING]

    def object_keys(self) -> list[str]:
        return [f"{g.image_id}:{o.id}" for g in self.stored for o in g.objects]


Params = dict[str, Any]
ParamSource = Callable[[Data], list[Params]]


def _ids_some_missing(data: Data) -> list[Params]:
    ids = data.ids
    return [{"ids": [*ids, "example:missing"]}, {"ids": ids[::2]}, {"ids": []}]


def _pages(data: Data) -> list[Params]:
    ids = data.ids
    cursors = ["", *ids[: len(ids) // 2 : 3], MISSING]
    return [{"after": c, "limit": limit} for c in cursors for limit in (2, 1000)]


def _service_pages(data: Data) -> list[Params]:
    sources = sorted({g.source for g in data.stored})
    splits = [s for s in data.splits() if s is not None]
    filters = [(None, None), (None, MISSING), ("none", None)]
    filters += [(source, None) for source in sources[:2]]
    filters += [(None, split) for split in splits[:2]]
    filters += [(sources[0], splits[0])] if sources else []
    return [
        {"source": source, "split": split, "after": "", "limit": limit}
        for source, split in filters
        for limit in (3, 1000)
    ]


def _by_name(kind: str) -> ParamSource:
    return lambda data: [{"name": n} for n in data.names(kind)]


def _vocabulary(data: Data) -> list[Params]:
    return [
        {"type": kind, "split": split} for kind in name_stats.NODE_TYPES for split in data.splits()
    ]


def _create_rows(data: Data) -> list[Params]:
    rows = [
        [kind, split, name, 1 + i, 2 + i]
        for i, (kind, split, name) in enumerate(
            (kind, split, name)
            for kind in name_stats.NODE_TYPES
            for split in data.splits()[1:3]
            for name in data.names(kind)[:2]
        )
    ]
    return [{"rows": rows}] if rows else []


def _naive_image(data: Data) -> list[Params]:
    out = []
    for g in data.fresh[:2]:
        props = image_properties(g)
        props["id"] = f"bench:{g.image_id}"
        out.append({"props": props})
    return out or [catalog.get("bench/naive_image").example_params]


def _naive_object(data: Data) -> list[Params]:
    return [
        {"image": image_id, "props": {"key": f"bench-object:{k}", "name": name}}
        for k, (image_id, name) in enumerate(zip(data.ids[:3], data.names("object"), strict=False))
    ]


def _naive_relation(data: Data) -> list[Params]:
    keys = data.object_keys()
    return [
        {"subject": a, "target": b, "props": {"key": f"bench-relation:{k}", "name": "near"}}
        for k, (a, b) in enumerate(list(itertools.pairwise(keys))[:3])
    ]


def _create_images(data: Data) -> list[Params]:
    # new images, and one already stored (left alone by the statement)
    graphs = data.fresh + data.stored[:1]
    return [Batch.of(0, graphs).create_params()] if graphs else []


PARAMETERS: dict[str, ParamSource] = {
    "load/drop_staged": lambda _: [{"stage": "parity", "before": 2.0}],
    "admin/schema_version": lambda _: [{"key": "schema"}, {"key": MISSING}],
    "load/delete_images": lambda data: [{"ids": [*data.ids[::3], "example:missing"]}],
    "load/existing_images": _ids_some_missing,
    "load/image_ids_after": _pages,
    "load/scene_graphs": _ids_some_missing,
    "load/create_images": _create_images,
    "match/scene_graphs": _ids_some_missing,
    "match/scene_views": _ids_some_missing,
    "match/scene_graph": lambda data: [{"image_id": i} for i in [*data.ids[:8], MISSING]],
    "match/related/postings_object": _by_name("object"),
    "match/related/postings_relation": _by_name("relation"),
    "match/related/postings_relmod": _by_name("relmod"),
    "service/image_ids_page": _service_pages,
    "stats/vocabulary": _vocabulary,
    "stats/generation": lambda _: [{"key": name_stats.META_KEY}, {"key": MISSING}],
    "stats/state": lambda _: [{"key": name_stats.META_KEY}, {"key": MISSING}],
    "stats/mark_pending": lambda _: [{"key": name_stats.META_KEY, "token": "parity-load"}],
    "stats/set_generation": lambda _: [GENERATION],
    "stats/create_rows": _create_rows,
    "bench/naive_image": _naive_image,
    "bench/naive_object": _naive_object,
    "bench/naive_relation": _naive_relation,
}


def parameters(statement: catalog.Statement, data: Data) -> list[Params]:
    source = PARAMETERS.get(statement.name)
    return source(data) if source is not None else [statement.example_params]


def load_both(pair: Pair, graphs: list[SceneGraph]) -> None:
    pair.reset()
    for _, store, _ in pair.stores():
        put(store, graphs)
        # the generation is a timestamp and a random token: the same on both from here on
        store.write(catalog.get("stats/set_generation"), GENERATION)


def assert_same_graph(pair: Pair, context: str) -> None:
    left, right = graph_dump(pair.falkordb), graph_dump(pair.neo4j)
    assert left == right, f"{context}: the stores differ\n{dump_difference(left, right)}"


def run_setup(pair: Pair, statement: catalog.Statement) -> None:
    if statement.setup:
        setup = catalog.get(statement.setup)
        for _, store, _ in pair.stores():
            store.write(setup, setup.example_params)


def check_reads(pair: Pair, data: Data, context: str) -> int:
    """Every read statement on both stores; returns how many (statement, params) ran."""
    checked = 0
    for statement in shared_statements():
        if is_write(statement):
            continue
        run_setup(pair, statement)
        for params in parameters(statement, data):
            left = pair.falkordb.read(statement, params)
            right = pair.neo4j.read(statement, params)
            ordered = is_ordered(statement)
            assert same_rows(left, right, ordered=ordered), (
                f"{context}: {statement.name} {params!r}\n"
                + describe_difference(left, right, ordered=ordered)
            )
            checked += 1
    return checked


def _outcome(store: GraphStore, statement: catalog.Statement, params: Params) -> Any:
    try:
        summary: WriteSummary = store.write(statement, params)
    except QueryError:
        return "refused"
    return (
        summary.nodes_created,
        summary.nodes_deleted,
        summary.relationships_created,
        summary.relationships_deleted,
    )


def write_sequence() -> list[catalog.Statement]:
    writes = {s.name: s for s in shared_statements() if is_write(s)}
    known = [writes.pop(name) for name in WRITE_ORDER if name in writes]
    return known[:-1] + sorted(writes.values(), key=lambda s: s.name) + known[-1:]


def check_writes(pair: Pair, data: Data, context: str) -> None:
    """Every write statement, in :data:`WRITE_ORDER`; the reads run again before the deletes."""
    for statement in write_sequence():
        if statement.name == "load/delete_images":
            check_reads(pair, data, f"{context}, after the writes")
        run_setup(pair, statement)
        for params in parameters(statement, data):
            left = _outcome(pair.falkordb, statement, params)
            right = _outcome(pair.neo4j, statement, params)
            assert left == right, f"{context}: {statement.name} {params!r}: {left} vs {right}"
            assert_same_graph(pair, f"{context}: after {statement.name}")


def check_catalog(pair: Pair, data: Data, context: str) -> None:
    assert_same_graph(pair, f"{context}: after the load")
    assert check_reads(pair, data, context) > 0
    check_writes(pair, data, context)
    assert graph_dump(pair.falkordb) == graph_dump(pair.neo4j)


def test_every_statement_is_classified() -> None:
    names = {s.name for s in shared_statements()}
    assert set(WRITE_ORDER) <= names, set(WRITE_ORDER) - names
    assert set(PARAMETERS) <= names, set(PARAMETERS) - names
    writes = {s.name for s in shared_statements() if is_write(s)}
    assert writes <= set(WRITE_ORDER), f"give these a place in WRITE_ORDER: {writes}"


@hypothesis_settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(stored=scene_graphs(), fresh=scene_graphs(max_images=3))
def test_random_scene_graphs_answer_the_same(
    pair: Pair, stored: list[SceneGraph], fresh: list[SceneGraph]
) -> None:
    ids = {g.image_id for g in stored}
    data = Data(stored, [g for g in fresh if g.image_id not in ids])
    load_both(pair, stored)
    check_catalog(pair, data, f"{len(stored)} random images")


def sample_graphs(pair: Pair) -> list[SceneGraph]:
    return [
        record
        for job in sample_jobs(pair.falkordb_settings.load)
        for item in job.inputs
        for record in item.records(ByteCounter())
        if isinstance(record, SceneGraph)
    ]


def test_bundled_samples_answer_the_same(pair: Pair) -> None:
    pair.reset()
    for _, store, settings in pair.stores():
        load_bundled_samples(store, settings.load)
        store.write(catalog.get("stats/set_generation"), GENERATION)
    graphs = sample_graphs(pair)
    assert len(graphs) >= 10
    fresh = [replace(g, original_id=f"{g.original_id}-copy") for g in graphs[:3]]
    check_catalog(pair, Data(graphs, fresh), "bundled samples")
