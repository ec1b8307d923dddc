"""Neo4j plans every statement from an index: no AllNodesScan, no CartesianProduct (issue 15.5).

Every statement of ``cypher/`` that runs on Neo4j, and the variable-shape queries that the
related-image builders produce (captured from real lookups of every subgraph shape, in every
lookup mode), is planned with ``EXPLAIN`` on the managed Neo4j over a loaded store: synthetic
GQA-like images plus imSitu-like frames with rel-mods, so that the planner's statistics look like
a real store's. Each plan tree must

- hold no ``AllNodesScan`` (the sign of a label-less node pattern) and no ``CartesianProduct``
  (the sign of disconnected patterns);
- unless the statement is listed in :data:`NO_SEEK`: start from an index, i.e. hold an index
  seek (``NodeIndexSeek``, ``NodeUniqueIndexSeek``, ``...SeekByRange``) and no scan at all (no
  label, relationship type or whole-index scan), since it starts from a name, key or id.

The lists below name, with a reason, the statements that read a whole label by design
(:data:`NO_SEEK`) and the few that must read every node (:data:`WHOLE_GRAPH`); a new statement
is held to the strict rule until it is listed. FalkorDB's plans are pinned elsewhere
(tests/integration/related/test_lookup.py, GRAPH.EXPLAIN).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from covr.graph import GraphStore, catalog
from covr.graph.neo4j_backend import Neo4jStore
from covr.graph.neo4j_batch import BATCH, ROW, batchable, batched
from covr.graph.store import Params, QueryLike, Row
from covr.related.lookup import RelatedLookup
from covr.scene.enumerate import enumerate_subgraphs
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph
from covr.settings import Settings
from covr_loaders import synthetic
from tests.integration.related.helpers import put, scene

# Operators (``operatorType`` without its ``@neo4j`` suffix) that a plan must never hold.
FORBIDDEN = ("AllNodesScan", "CartesianProduct")

WHOLE_GRAPH: dict[str, str] = {
    "admin/count_nodes_by_label": "counts the nodes of every label (`covr db stats`): every node "
    "is read whatever its label, so there is no label to start from",
    "admin/delete_batch": "GraphStore.clear(): deletes every node of the graph in batches, "
    "whatever its label",
    "bench/naive_relation": "the naive one-relation-per-statement load baseline the load "
    "benchmark measures: a CartesianProduct of two unique-key seeks (1 x 1 row), kept as measured",
}

NO_SEEK: dict[str, str] = {
    # DDL and server calls: no node is read
    "schema/neo4j/constraints": "DDL",
    "schema/neo4j/indexes": "DDL",
    "admin/neo4j/await_indexes": "a procedure call (db.awaitIndexes)",
    "admin/neo4j/clear_query_caches": "a procedure call (db.prepareForReplanning)",
    "admin/neo4j/index_states": "SHOW INDEXES",
    "admin/ping": "RETURN 1",
    # writes that only create
    "bench/create_one": "creates one node, reads nothing",
    "bench/naive_image": "creates one image, reads nothing",
    "bench/unwind_create": "creates nodes from rows, reads nothing",
    "stats/create_rows": "creates the name statistics rows, reads nothing",
    # whole labels, by design
    "admin/count_relationships_by_type": "counts every relationship per type (`covr db stats`)",
    "admin/stats_images": "images per source and split: every image",
    "admin/stats_objects": "objects per source and split: every image and object",
    "admin/stats_relations": "relations per source and split: every relation",
    "admin/stats_relmods": "rel-mods per source and split: every rel-mod",
    "bench/delete_all": "deletes every benchmark node (by label, in batches)",
    "load/any_image": "any one image (a label scan stopped by LIMIT 1 after one row)",
    "match/related/images": "the whole image table (id, split) that lookups draw candidates "
    "from, read once per statistics generation",
    "stats/all": "every name statistics row (the loader merges a load's counts into them)",
    "stats/clear": "deletes every name statistics row before a recount",
    "stats/vocabulary": "the name statistics table (one small row per type, split and name), "
    "read once per statistics generation and cached by the lookups",
    "stats/count_images": "the image count, read from Neo4j's count store (no scan at all)",
    "stats/attributes": "recounts attribute statistics over every image",
    "stats/objects": "recounts object statistics over every image",
    "stats/relations": "recounts relation statistics over every image",
    "stats/relmods": "recounts rel-mod statistics over every rel-mod",
    # the staging labels of an atomic replacement hold only what replacements in flight (or
    # killed) staged: a few batches at most, so a scan of the label is a scan of those
    "load/drop_staged": "staged images of one attempt or older than an hour (label scan of "
    "StagedImage, which only replacements in flight fill)",
    # paging by a computed id: correct on both engines, at the price of a label scan per page
    "load/image_ids_after": "pages by a computed id (docs/graph-store.md, cypher-portable notes: "
    "an index-backed string range skips non-ASCII ids on FalkorDB and orders differently on "
    "Neo4j); a label scan + Top per page, used by store digests and `covr generate`",
    "service/image_ids_page": "ListImages pages by a computed id, for the same reason as "
    "load/image_ids_after",
}

STATEMENTS = [s for s in catalog.all_statements() if s.runs_on("neo4j")]

# The shared fixtures run a test once per backend: these run on the session's Neo4j only.
pytestmark = pytest.mark.backends("neo4j")


# -- plans -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Operator:
    name: str  # operatorType without the runtime suffix, e.g. "NodeUniqueIndexSeek(Locking)"
    details: str
    depth: int


def operators(plan: Mapping[str, Any], depth: int = 0) -> Iterator[Operator]:
    """The operators of a plan tree (the driver's dict of ``EXPLAIN``), depth first."""
    name = str(plan["operatorType"]).split("@", 1)[0]
    args = plan.get("args") or plan.get("arguments") or {}
    yield Operator(name, str(args.get("Details", "")), depth)
    for child in plan.get("children") or []:
        yield from operators(child, depth + 1)


def render(plan: Mapping[str, Any]) -> str:
    return "\n".join(f"{'  ' * op.depth}{op.name}  {op.details}" for op in operators(plan))


def is_seek(op: Operator) -> bool:
    """An index seek: NodeIndexSeek, NodeUniqueIndexSeek(Locking), NodeIndexSeekByRange, ..."""
    return "IndexSeek" in op.name


def is_scan(op: Operator) -> bool:
    """Any scan: of all nodes, a label, a relationship type or a whole index."""
    return "Scan" in op.name


def plan_problems(plan: Mapping[str, Any], *, needs_seek: bool) -> list[str]:
    """What is wrong with ``plan`` (empty when it plans well)."""
    ops = list(operators(plan))
    problems = [f"{op.name} ({op.details})" for op in ops if op.name.startswith(FORBIDDEN)]
    if needs_seek:
        if not any(is_seek(op) for op in ops):
            problems.append("no index seek: the statement does not start from an index")
        problems += [
            f"{op.name} ({op.details}): a scan in a statement that starts from a name or id"
            for op in ops
            if is_scan(op) and not op.name.startswith(FORBIDDEN)
        ]
    return problems


def assert_plans_well(label: str, query: str, plan: Mapping[str, Any], needs_seek: bool) -> None:
    problems = plan_problems(plan, needs_seek=needs_seek)
    assert not problems, (
        f"{label} plans badly on Neo4j:\n  "
        + "\n  ".join(problems)
        + f"\n--- query\n{query}\n--- plan\n{render(plan)}"
    )


# -- data --------------------------------------------------------------------------------------

AGENTS = ["man", "woman", "boy", "girl", "chef", "worker"]
VERBS = ["stapling", "cutting", "carrying", "pushing", "painting"]
ITEMS = ["paper", "bread", "box", "cart", "fence", "poster"]
PLACES = ["wall", "table", "kitchen", "street", "office", "garden"]
TOOLS = ["stapler", "knife", "brush", "rope"]


def frames(count: int, seed: int = 15) -> list[SceneGraph]:
    """imSitu-like scenes: an agent doing something to an item, with 1 to 3 rel-mods."""
    rng = random.Random(seed)
    out = []
    for number in range(count):
        objects: list[tuple[str, list[str]]] = [
            (rng.choice(AGENTS), rng.sample(["young", "old", "tall"], rng.randint(0, 1))),
            (rng.choice(ITEMS), rng.sample(["white", "red", "wooden"], rng.randint(0, 1))),
            (rng.choice(PLACES), []),
            (rng.choice(TOOLS), []),
            (rng.choice(PLACES), []),
        ]
        mods = [("onto", 2), ("using", 3), ("at", 4)][: rng.randint(1, 3)]
        out.append(scene(10_000 + number, objects, [(0, rng.choice(VERBS), 1, mods)], "train"))
    return out


@dataclass
class Loaded:
    """The session's Neo4j and the scene graphs loaded into it."""

    store: Neo4jStore
    scenes: list[SceneGraph]

    def ensure(self) -> Neo4jStore:
        """The store with the data (reloaded if a test elsewhere emptied it in between), and no
        cached plan.

        Neo4j keeps a plan by statement text and replans only when the statistics have drifted
        *and* ``dbms.cypher.min_replan_interval`` (10 s) has passed since it was planned; a text
        another test planned seconds ago over a near-empty store (CI saw
        ``match/related/postings_relmod`` come back as a whole-index scan that way) would be
        judged instead of the plan for this data. Clearing the cache makes each plan this one's.
        """
        sentinel = [self.scenes[-1].image_id]
        if not self.store.read(catalog.get("load/existing_images"), {"ids": sentinel}):
            self.store.clear()
            self.store.apply_schema()
            put(self.store, self.scenes)
        self.store.forget_plans()
        return self.store


@pytest.fixture(scope="module")
def loaded(session_store: GraphStore) -> Loaded:
    if not isinstance(session_store, Neo4jStore):
        pytest.skip("Neo4j plans need the Neo4j backend")
    session_store.clear()
    session_store.apply_schema()
    scenes = list(synthetic.generate(300, seed=15, split="val")) + frames(60)
    put(session_store, scenes)
    return Loaded(session_store, scenes)


# -- catalog statements ------------------------------------------------------------------------


@pytest.mark.parametrize("statement", STATEMENTS, ids=lambda s: s.name)
def test_statement_plans_well(loaded: Loaded, statement: catalog.Statement) -> None:
    store = loaded.ensure()
    name, parts = statement.name, statement.parts()
    plans = [store.explain(part, statement.example_params) for part in parts]
    strict = name not in WHOLE_GRAPH and name not in NO_SEEK
    if name not in WHOLE_GRAPH:
        for n, (part, plan) in enumerate(zip(parts, plans, strict=True)):
            label = name + (f" (part {n + 1})" if len(parts) > 1 else "")
            assert_plans_well(label, part, plan, needs_seek=strict)
    if not strict:
        # let off a rule, but only while it has to be: a stale entry would hide a regression
        stricter = [p for plan in plans for p in plan_problems(plan, needs_seek=name in NO_SEEK)]
        listing = "WHOLE_GRAPH" if name in WHOLE_GRAPH else "NO_SEEK"
        assert stricter, f"{name} now plans well under the stricter rule: remove it from {listing}"


def test_the_lists_name_neo4j_statements_once() -> None:
    names = {s.name for s in STATEMENTS}
    listed = [*WHOLE_GRAPH, *NO_SEEK]
    assert sorted(set(listed) - names) == [], "listed, but not a Neo4j statement of cypher/"
    assert len(listed) == len(set(listed)), "a statement is in both lists"
    # the statements the service runs per request are never let off the strict rule
    strict = ("match/scene_graph", "match/scene_graphs", "match/related/postings_", "service/")
    # ...except ListImages' paging, which scans on purpose (computed-id paging: see NO_SEEK) until
    # an index-backed order that is right on both engines is found
    accepted = ("service/image_ids_page",)
    assert not [n for n in listed if n.startswith(strict) and n not in accepted]


# -- queries of the related-image builders -------------------------------------------------------

KINDS = ("branch", "combined", "anchored", "anchored_counting")
CHECKED = "(then checked)"
"""The name's end of a round sent with its exclusion check (``neo4j_batch.then_check``)."""
CHECK_PART = "CALL (covr_ids) {"
"""Where the exclusion check (a per-signature branch text) starts in such a round's text."""
LOOKUP_TIMEOUT_S = 300.0


def one_per_form(queries: Mapping[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The first text (in sorted order) of each kind and form: with rel-mods or not, with two
    relations or not, sent with its exclusion check or not."""
    picked: dict[tuple[str, bool, bool, bool], tuple[str, dict[str, Any]]] = {}
    for query, params in sorted(queries.items()):
        form = (kind_of(query), ":MOD]" in query, "r1:Relation" in query, CHECK_PART in query)
        picked.setdefault(form, (query, params))
    return list(picked.values())


def kind_of(query: str) -> str:
    """Which builder made ``query`` (from the parameter prefixes of covr.related.cypher_path;
    ``$x`` or, in a batched text, ``covr_p.x``)."""

    def has(name: str) -> bool:
        return f"${name}" in query or f"{ROW}.{name}" in query

    if has("c_ids"):
        return "combined"  # combined_query
    if has("d0_max"):
        return "anchored_counting"  # anchored_query with counting branches
    if has("d0_tag"):
        return "anchored"  # anchored_query returning image ids
    if has("b0_ids"):
        return "branch"  # per-signature branches: match_query, or union_query of several
    return "unknown"


def subjects(scenes: list[SceneGraph]) -> list[Subgraph]:
    """Two subgraphs per shape (single, hop, chain, V, frames with 1 and more rel-mods)."""
    by_shape: dict[str, list[Subgraph]] = {}
    for s in scenes:
        for g in enumerate_subgraphs(s):
            shape = g.shape if g.shape != "frame" else f"frame{min(len(g.relmods), 2)}"
            by_shape.setdefault(shape, []).append(g)
    assert set(by_shape) == {"single", "hop", "chain", "v", "frame1", "frame2"}, sorted(by_shape)
    return [g for gs in by_shape.values() for g in (gs[0], gs[len(gs) // 2])]


@pytest.fixture(scope="module")
def builder_queries(loaded: Loaded, settings: Settings) -> dict[str, dict[str, Any]]:
    """Every distinct builder query (text -> its first params) of real lookups in every mode."""
    store = loaded.ensure()
    captured: dict[str, dict[str, Any]] = {}
    read, read_many = store.read, store.read_many

    def recording(
        query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> list[Row]:
        if isinstance(query, str):  # builder text; catalog statements are checked above
            captured.setdefault(query, dict(params or {}))
        elif query.name.endswith(CHECKED):  # a round with its exclusion check (neo4j_batch)
            captured.setdefault(query.text, dict(params or {}))
        # plans are checked here, not speed: a cold Neo4j on a busy 2-core machine can take
        # seconds to plan a many-branch query, more than the default read timeout allows
        return read(query, params, timeout=LOOKUP_TIMEOUT_S)

    def recording_many(
        statements: Iterable[tuple[QueryLike, Params]], *, timeout: float | None = None
    ) -> list[Row]:
        """A round's branches and direct branches: one statement each, in one transaction."""
        batch = list(statements)
        for query, params in batch:
            if isinstance(query, str):
                captured.setdefault(query, dict(params or {}))
        return read_many(batch, timeout=LOOKUP_TIMEOUT_S)

    full: dict[str, Any] = {"per_signature": None, "positives_limit": None}
    direct = settings.model_copy(update={"related_direct_min_pool": 0, "related_batch_min": 1})
    modes: list[tuple[Settings, list[dict[str, Any]]]] = [
        # sampled rounds of per-signature branches, as a service request runs them; and all
        (settings, [{"split": "val"}, full]),
        # after one sampled round every signature switches to index-started (anchored) matches
        (direct, [{}, {"split": "val"}]),
        # one combined query per round instead of a branch per signature
        (settings.model_copy(update={"related_combined_min_signatures": 0}), [full]),
    ]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "read", recording)
        patch.setattr(store, "read_many", recording_many)
        for mode, calls in modes:
            lookup = RelatedLookup(store, settings=mode.related)
            for g in subjects(loaded.scenes[:30] + loaded.scenes[-30:]):
                for arguments in calls:
                    lookup.related(g, **arguments)
    return captured


@pytest.mark.parametrize("kind", KINDS)
def test_builder_queries_plan_well(
    loaded: Loaded, builder_queries: dict[str, dict[str, Any]], kind: str
) -> None:
    store = loaded.ensure()
    queries = {q: p for q, p in builder_queries.items() if kind_of(q) == kind}
    assert queries, f"the lookups sent no {kind} query: the check would prove nothing"
    for n, (query, params) in enumerate(sorted(queries.items())):
        plan = store.explain(query, params)
        assert_plans_well(f"{kind} query {n + 1} of {len(queries)}", query, plan, needs_seek=True)


def test_builder_queries_cover_every_kind_and_shape(
    builder_queries: dict[str, dict[str, Any]],
) -> None:
    unknown = [q for q in builder_queries if kind_of(q) == "unknown"]
    assert not unknown, f"a builder query of a new kind: add it to KINDS\n{unknown[0]}"
    # every kind was also built for frames (rel-mod hops) and for two relations (chain, V)
    parts = [part for q in builder_queries for part in q.split(CHECK_PART)]
    with_mods = {kind_of(q) for q in parts if ":MOD]" in q}
    two_relations = {kind_of(q) for q in parts if "r1:Relation" in q}
    assert with_mods == set(KINDS), sorted(with_mods)
    assert two_relations == set(KINDS), sorted(two_relations)


@pytest.mark.parametrize("kind", KINDS)
def test_batched_builder_queries_plan_well(
    loaded: Loaded, builder_queries: dict[str, dict[str, Any]], kind: str
) -> None:
    """The form ``read_many`` sends for several branches of one text (covr.graph.neo4j_batch):
    the same seeks, run once per branch's parameter map."""
    store = loaded.ensure()
    queries = {q: p for q, p in builder_queries.items() if kind_of(q) == kind and batchable(q)}
    if not queries and kind in ("branch", "combined"):
        # rounds with distractor candidates send their branches inside the statement that also
        # checks exclusion (neo4j_batch.then_check): test_builder_queries_plan_well plans those
        checked = [q for q in builder_queries if kind_of(q) == kind and q.startswith("CALL ()")]
        assert checked, f"no batchable or checked {kind} query: the check would prove nothing"
        return
    assert queries, f"no batchable {kind} query: the check would prove nothing"
    # one text per form: the batched form is the same text under one UNWIND, so a wrapper that
    # plans badly shows in every form; planning all of them took 34 s for anchored_counting alone
    picked = one_per_form(queries)
    for n, (query, params) in enumerate(picked):
        statement = batched(catalog.Statement("builder", query))
        plan = store.explain(statement, {BATCH: [params, params]})
        label = f"batched {kind} query {n + 1} of {len(picked)}"
        assert_plans_well(label, statement.text, plan, needs_seek=True)


def test_builder_queries_plan_well_over_a_tiny_store(
    loaded: Loaded, builder_queries: dict[str, dict[str, Any]]
) -> None:
    """Plans made from the statistics of a store of three images (what Neo4j knows right after
    a clear and a small load, before a larger load's statistics) still walk from the image or
    the anchor's seek. With a bare ``n.name IN $list`` a non-anchor position was planned as an
    index scan of every Relation under an Apply, and a 300-image lookup ran past the 30 s query
    timeout (the ``name_open`` fragment's comment)."""
    store = loaded.store
    store.clear()
    store.apply_schema()
    put(store, loaded.scenes[:3])
    store.forget_plans()  # the indexes resampled: the tiny store's statistics, no old plan
    # one text per kind and form: planning all of them took 34 s in the suite for the same
    # finding
    picked = one_per_form(builder_queries)
    assert {kind_of(query) for query, _ in picked} == set(KINDS), sorted(q for q, _ in picked)
    for n, (query, params) in enumerate(picked):
        plan = store.explain(query, params)
        label = f"{kind_of(query)} query {n + 1} of {len(picked)} (tiny store)"
        assert_plans_well(label, query, plan, needs_seek=True)
