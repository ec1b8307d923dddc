"""The related-image lookup on the real store: exclusion, sampling, pagination, bad input, plans."""

from __future__ import annotations

import pytest

from covr.graph import GraphStore
from covr.related import matcher as reference
from covr.related.cypher_path import Branch, Rule, exact_rules, match_query, union_query
from covr.related.exclusivity import default_exclusivity
from covr.related.lookup import (
    RelatedError,
    RelatedLookup,
    RelatedResult,
    StatsMissing,
    UnknownImage,
    UnknownSubgraph,
)
from covr.scene.subgraph import Subgraph, SubgraphError, SubgraphObject, SubgraphRelation
from covr.settings import Settings
from covr_loaders import synthetic
from tests.integration.related.helpers import distractor_set, full, put, scene
from tests.support.cypher_lint import lint
from tests.unit.related.golden_related import SHAPES


def test_planted_relaxed_copies_are_never_distractors(
    store: GraphStore, settings: Settings
) -> None:
    graphs = [
        scene(1, [("man", []), ("hat", ["red"])], [(0, "wearing", 1)]),  # g itself
        scene(2, [("woman", []), ("hat", ["red"])], [(0, "wearing", 1)]),  # a distractor
        # a distractor embedding (woman), but also "person" for "man": relaxed copy
        scene(
            3,
            [("woman", []), ("hat", ["red"]), ("person", []), ("hat", ["red", "wooden"])],
            [(0, "wearing", 1), (2, "wearing", 3)],
        ),
        # a distractor embedding (blue hat), but also the exact g
        scene(
            4,
            [("man", []), ("hat", ["blue"]), ("man", []), ("hat", ["red"])],
            [(0, "wearing", 1), (2, "wearing", 3)],
        ),
        # "cap" is not exclusive with "hat": a relaxed copy, next to a woman with a red hat
        scene(
            5,
            [("man", []), ("cap", ["red"]), ("woman", []), ("hat", ["red"])],
            [(0, "wearing", 1), (2, "wearing", 3)],
        ),
        # red + wooden is a relaxed copy of red (wooden is not exclusive with red)
        scene(
            6,
            [("man", []), ("hat", ["blue", "wooden"]), ("boy", []), ("hat", ["red"])],
            [(0, "wearing", 1), (2, "wearing", 3)],
        ),
        scene(7, [("man", []), ("hat", ["blue"])], [(0, "wearing", 1)]),  # a distractor
    ]
    put(store, graphs)
    lookup = RelatedLookup(store, settings=settings.related)
    g = Subgraph.from_key("man-(wearing)->hat[red]")
    result = full(lookup, g, 2)
    assert sorted(result.positives) == ["test:1", "test:4"]
    ids = {d.image_id for d in result.distractors}
    assert ids == {"test:2", "test:7"}
    assert result.by_signature() == {"object@0": ["test:2"], "attribute@1": ["test:7"]}
    expected = reference.distractors(reference.SceneIndex(graphs), g, default_exclusivity())
    assert distractor_set(result.distractors) == distractor_set(expected)
    woman = next(d for d in result.distractors if d.image_id == "test:2")
    assert woman.subgraph.key == "woman-(wearing)->hat[red]"

    # "on top of" is an overlap-relaxed copy of "on"
    store.clear()
    store.apply_schema()
    put(
        store,
        [
            scene(1, [("cup", []), ("table", [])], [(0, "on top of", 1)]),
            scene(2, [("cup", []), ("table", [])], [(0, "behind", 1)]),
        ],
    )
    on = full(lookup, Subgraph.from_key("cup-(on)->table"), 1)
    assert [(d.image_id, d.signature) for d in on.distractors] == [("test:2", "relation@0")]


@pytest.fixture(scope="module")
def synthetic_store(session_store: GraphStore) -> GraphStore:
    session_store.clear()
    session_store.apply_schema()
    put(session_store, list(synthetic.generate(400, seed=11, split="val")))
    return session_store


def test_same_seed_same_result_different_seed_different_sample(
    synthetic_store: GraphStore, settings: Settings
) -> None:
    g = Subgraph.from_key("man")
    one = RelatedLookup(synthetic_store, settings=settings.related).related(
        g, seed=1, per_signature=5
    )
    again = RelatedLookup(synthetic_store, settings=settings.related).related(
        g, seed=1, per_signature=5
    )
    other = RelatedLookup(synthetic_store, settings=settings.related).related(
        g, seed=2, per_signature=5
    )
    assert one == again
    assert one.by_signature() != other.by_signature()
    assert one.positives != other.positives
    everything = full(RelatedLookup(synthetic_store, settings=settings.related), g, 2)
    per_sig = everything.by_signature()
    assert len(per_sig["object@0"]) > 50
    for sig, ids in one.by_signature().items():
        assert len(ids) == min(5, len(per_sig[sig]))
        assert set(ids) <= set(per_sig[sig])
    assert set(one.positives) <= set(everything.positives)
    assert len(one.positives) == 5


@pytest.mark.timeout(300)  # 13-18 s alone; 120 s on Neo4j late in one fresh-clone suite run
def test_concurrent_lookups_return_what_sequential_ones_do(
    synthetic_store: GraphStore, settings: Settings
) -> None:
    """Lookups share one object across service threads without a global lock; a cache reset
    in the middle (what a finished load causes) must not mix two generations' image indices."""
    import threading

    from covr.related.lookup import enumeration_options
    from covr.scene.enumerate import enumerate_subgraphs

    scenes = list(synthetic.generate(400, seed=11, split="val"))
    targets = [
        g
        for sc in scenes[:12]
        for g in enumerate_subgraphs(sc, enumeration_options(settings.related))
    ]
    targets = targets[::7][:24]
    expected = {
        g.key: RelatedLookup(synthetic_store, settings=settings.related).related(g, seed=5)
        for g in targets
    }
    shared = RelatedLookup(synthetic_store, settings=settings.related)
    got: dict[str, object] = {}
    failures: list[BaseException] = []

    def work(part: list[Subgraph]) -> None:
        try:
            for g in part:
                got[g.key] = shared.related(g, seed=5)
                if g is part[len(part) // 2]:
                    shared.clear_cache()
        except BaseException as exc:  # reported below, with the thread's traceback
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(targets[n::4],)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures, failures
    assert got == expected


def test_pages_are_disjoint_and_cover_the_sequence(
    synthetic_store: GraphStore, settings: Settings
) -> None:
    lookup = RelatedLookup(synthetic_store, settings=settings.related)
    g = Subgraph.from_key("man")
    pages: list[RelatedResult] = []
    offset: int | None = 0
    while offset is not None and len(pages) < 4:
        page = lookup.related(g, seed=3, per_signature=7, positives_limit=7, offset=offset)
        pages.append(page)
        offset = page.next_offset
    assert len(pages) == 4
    seen = [d.image_id for p in pages for d in p.distractors if d.signature == "object@0"]
    assert len(seen) == len(set(seen)) == 28
    positives = [i for p in pages for i in p.positives]
    assert len(positives) == len(set(positives))
    long = lookup.related(g, seed=3, per_signature=28, positives_limit=28)
    assert [d.image_id for d in long.distractors if d.signature == "object@0"] == seen
    capped = lookup.related(g, seed=3, per_signature=5, limit=3)
    assert len(capped.distractors) == 3
    assert len({d.signature for d in capped.distractors}) == min(3, len(long.signatures()))


def test_split_filter(store: GraphStore, settings: Settings) -> None:
    put(
        store,
        [
            scene(1, [("man", [])], split="train"),
            scene(2, [("man", [])], split="val"),
            scene(3, [("woman", [])], split="train"),
        ],
    )
    lookup = RelatedLookup(store, settings=settings.related)
    assert lookup.positives("man", split="train") == ["test:1"]
    assert sorted(lookup.positives("man")) == ["test:1", "test:2"]
    assert lookup.positives("man", split="nope") == []
    result = lookup.related("man", split="val", per_signature=None)
    assert result.distractors == ()


def test_for_image_and_subgraphs_of_image(store: GraphStore, settings: Settings) -> None:
    put(
        store,
        [
            scene(1, [("man", ["tall"]), ("hat", ["red"])], [(0, "wearing", 1)]),
            scene(2, [("woman", ["tall"]), ("hat", ["red"])], [(0, "wearing", 1)]),
            scene(3, [("man", ["tall"]), ("hat", ["red"])], [(0, "wearing", 1)]),
        ],
    )
    lookup = RelatedLookup(store, settings=settings.related)
    keys = [g.key for g in lookup.subgraphs_of_image("test:1")]
    assert "man[tall]-(wearing)->hat[red]" in keys
    assert "hat" in keys
    [one] = lookup.for_image("test:1", "man-(wearing)->hat")
    assert one.positives[0] == "test:1"
    assert set(one.positives) == {"test:1", "test:3"}
    assert [d.image_id for d in one.distractors] == ["test:2"]
    every = lookup.for_image("test:3", max_subgraphs=3)
    assert len(every) == 3
    assert all(r.positives[0] == "test:3" for r in every)
    with pytest.raises(UnknownSubgraph, match="not a subgraph of image"):
        lookup.for_image("test:1", "woman")
    with pytest.raises(UnknownImage, match="no image 'test:9'"):
        lookup.for_image("test:9")
    with pytest.raises(UnknownImage):
        lookup.subgraphs_of_image("")


@pytest.mark.parametrize(
    "g",
    [
        Subgraph.build(
            [SubgraphObject("it's"), SubgraphObject("hat")],
            [SubgraphRelation("x) RETURN 1 //", 0, 1)],
        ),
        Subgraph.single('say "hi"', "a\\b"),
        Subgraph.single("'; MATCH (n) DETACH DELETE n //"),
        Subgraph.single("man}) DETACH DELETE i //"),
        Subgraph.single("\\'\""),
    ],
    ids=lambda g: g.key,
)
def test_names_with_quotes_and_cypher_are_data(
    store: GraphStore, settings: Settings, g: Subgraph
) -> None:
    put(store, [scene(1, [("man", [])]), scene(2, [(g.objects[0].name, [])])])
    lookup = RelatedLookup(store, settings=settings.related)
    result = lookup.related(g, per_signature=None, positives_limit=None)
    if len(g.objects) == 1 and g.objects[0].attribute is None:
        assert result.positives == ("test:2",)
        assert [d.image_id for d in result.distractors] == ["test:1"]
    else:
        assert result.positives == ()
    assert lookup.positives("man") == ["test:1"]  # nothing was deleted


def test_bad_input_gets_clear_errors(store: GraphStore, settings: Settings) -> None:
    put(store, [scene(1, [("man", [])])])
    lookup = RelatedLookup(store, settings=settings.related)
    with pytest.raises(SubgraphError, match="empty"):
        lookup.related("")
    with pytest.raises(SubgraphError, match="empty"):
        Subgraph(())
    with pytest.raises(SubgraphError, match="repeated-noun"):
        lookup.related("man-(on)->man")
    with pytest.raises(SubgraphError, match="key-syntax"):
        lookup.related("man-(on->hat")
    with pytest.raises(SubgraphError, match="depth"):
        lookup.related("a-(r)->b-(s)->c-(t)->d")
    for kwargs, field in [
        ({"max_distance": 3}, "max_distance"),
        ({"max_distance": -1}, "max_distance"),
        ({"per_signature": 0}, "per_signature"),
        ({"limit": 0}, "limit"),
        ({"offset": -1}, "offset"),
        ({"split": ""}, "split"),
    ]:
        with pytest.raises(RelatedError) as info:
            lookup.related("man", **kwargs)  # type: ignore[arg-type]
        assert info.value.field == field
    with pytest.raises(RelatedError, match="g: expected a Subgraph"):
        lookup.related(42)  # type: ignore[arg-type]
    assert lookup.positives("nobody") == []


def test_missing_statistics_are_reported(store: GraphStore, settings: Settings) -> None:
    put(store, [scene(1, [("man", [])])], stats=False)
    with pytest.raises(StatsMissing, match="no name statistics"):
        RelatedLookup(store, settings=settings.related).related("man")


def test_empty_store_gives_empty_results(store: GraphStore, settings: Settings) -> None:
    result = RelatedLookup(store, settings=settings.related).related("man")
    assert (result.positives, result.distractors, result.next_offset) == ((), (), None)


def test_a_new_load_invalidates_cached_results(store: GraphStore, settings: Settings) -> None:
    put(store, [scene(1, [("man", [])])])
    lookup = RelatedLookup(store, settings=settings.related)
    assert lookup.positives("man") == ["test:1"]
    put(store, [scene(2, [("man", [])])])
    assert sorted(lookup.positives("man")) == ["test:1", "test:2"]


def assert_image_anchor(lines: list[str]) -> None:
    """The plan starts from the batch's ids (Unwind) and seeks each in the Image.id index."""
    leaves = [line.strip() for line in lines[-2:]]
    assert leaves[1] == "Unwind", "\n".join(lines)
    assert "Node By Index Scan | (i:Image)" in leaves[0], "\n".join(lines)


@pytest.mark.backends(
    "falkordb"
)  # FalkorDB's own plans (GRAPH.EXPLAIN); Neo4j: tests/integration/graph/test_neo4j_plans.py
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_plans_start_from_the_image_index(store: GraphStore, shape: str) -> None:
    """FalkorDB's planner otherwise scans all objects of a name (measured): pin the anchor."""
    g = Subgraph.from_key(SHAPES[shape])
    query, params = match_query(g, exact_rules(g), ["test:1"])
    assert store.read(query, params) == []
    from covr.graph.params import render_prefix

    plan = store.command("GRAPH.EXPLAIN", store.graph_name, render_prefix(params) + query)  # type: ignore[attr-defined]
    lines = [str(line) for line in plan]
    assert_image_anchor(lines)


@pytest.mark.backends(
    "falkordb"
)  # FalkorDB's own plans (GRAPH.EXPLAIN); Neo4j: tests/integration/graph/test_neo4j_plans.py
def test_anchored_plan_starts_from_the_anchor_index(store: GraphStore) -> None:
    from covr.graph.params import render_prefix
    from covr.related.cypher_path import AnchoredBranch, Rule, anchored_query

    g = Subgraph.from_key("man-(holding)->bat-(on)->table[wooden]")
    rules = exact_rules(g)
    rules["object@0"] = Rule("ne_not_in", "man", ("person",))
    query, params = anchored_query([AnchoredBranch(g, rules, "relation@1", "val", 0)])
    assert store.read(query, params) == []
    plan = store.command("GRAPH.EXPLAIN", store.graph_name, render_prefix(params) + query)  # type: ignore[attr-defined]
    lines = [str(line) for line in plan]
    assert "Node By Index Scan | (r1:Relation)" in lines[-1], "\n".join(lines)


@pytest.mark.backends(
    "falkordb"
)  # FalkorDB's own plans (GRAPH.EXPLAIN); Neo4j: tests/integration/graph/test_neo4j_plans.py
def test_counting_anchored_plan_starts_from_the_anchor_index(store: GraphStore) -> None:
    from covr.graph.params import render_prefix
    from covr.related.cypher_path import AnchoredBranch, Rule, anchored_query

    g = Subgraph.from_key("man-(holding)->bat-(on)->table[wooden]")
    rules = exact_rules(g)
    rules["object@0"] = Rule("not_in", values=("person",))
    rules["attribute@2"] = Rule("eq_or_in", "wooden", ("metal",))
    branch = AnchoredBranch(g, rules, "relation@1", None, 0, max_changes=1)
    query, params = anchored_query([branch])
    assert store.read(query, params) == []
    plan = store.command("GRAPH.EXPLAIN", store.graph_name, render_prefix(params) + query)  # type: ignore[attr-defined]
    lines = [str(line) for line in plan]
    assert "Node By Index Scan | (r1:Relation)" in lines[-1], "\n".join(lines)


@pytest.mark.backends(
    "falkordb"
)  # FalkorDB's own plans (GRAPH.EXPLAIN); Neo4j: tests/integration/graph/test_neo4j_plans.py
def test_combined_plan_starts_from_the_image_index(store: GraphStore) -> None:
    from covr.graph.params import render_prefix
    from covr.related.cypher_path import CombinedBranch, Rule, combined_query

    g = Subgraph.from_key("man{-(holding)->bat,-(wearing)->hat[red]}")
    rules = {p: Rule("any") for p in exact_rules(g)}
    rules["object@0"] = Rule("eq", "man")
    query, params = combined_query(CombinedBranch(g, rules, 2, ["test:1"]))
    assert store.read(query, params) == []
    plan = store.command("GRAPH.EXPLAIN", store.graph_name, render_prefix(params) + query)  # type: ignore[attr-defined]
    lines = [str(line) for line in plan]
    assert_image_anchor(lines)


def test_builder_queries_are_valid_cypher_5() -> None:
    statements = []
    for shape, key in sorted(SHAPES.items()):
        g = Subgraph.from_key(key)
        statements.append((shape, match_query(g, exact_rules(g), ["x"])[0]))
    from tests.unit.related.golden_related import ANCHORED, ANCHORED_COUNTING, COMBINED, UNION

    statements.append(("union", UNION))
    statements.append(("anchored", ANCHORED))
    statements.append(("anchored_counting", ANCHORED_COUNTING))
    statements.append(("combined", COMBINED))
    for verdict in lint(statements):
        assert verdict["errors"] == [], verdict


def test_a_branch_returns_each_reading_of_the_read_positions_once(store: GraphStore) -> None:
    """A per-signature branch reads only its signature's names: one row per image, whose
    readings hold the read positions only, and the embeddings that then agree collapse into
    one (three embeddings, two readings); with every position read, the names in order."""
    put(
        store,
        [
            scene(
                1,
                [("man", ["tall"]), ("hat", ["red"]), ("hat", ["blue"]), ("cap", [])],
                [(0, "wearing", 1), (0, "wearing", 2), (0, "wearing", 3)],
            )
        ],
    )
    g = Subgraph.from_key("man-(wearing)->hat")
    rules = {**exact_rules(g), "object@1": Rule("any")}
    query, params = union_query([Branch(g, rules, ["test:1"], 4, reads=("object@1",))])
    rows = store.read(query, params)
    assert len(rows) == 1
    assert (rows[0]["image_id"], rows[0]["tag"]) == ("test:1", 4)
    assert sorted(rows[0]["readings"]) == [["cap"], ["hat"]]
    every, params = union_query([Branch(g, rules, ["test:1"], 4)])
    assert every == query  # the same text: only the $..._read values differ
    (row,) = store.read(every, params)
    assert sorted(row["readings"]) == [["man", "cap", "wearing"], ["man", "hat", "wearing"]]
    with_attribute = Subgraph.from_key("man[tall]-(wearing)->hat")
    rules = {**exact_rules(with_attribute), "object@1": Rule("any")}
    (row,) = store.read(*union_query([Branch(with_attribute, rules, ["test:1"], 0)]))
    # objects, then attributes (the man's list), then relations: read_order(g, None)
    assert sorted(row["readings"]) == [
        ["man", "cap", ["tall"], "wearing"],
        ["man", "hat", ["tall"], "wearing"],
    ]


def test_positives_after_a_direct_match_are_the_sampled_ones_and_cost_what_is_missing(
    store: GraphStore, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Positives are the first images in the seeded order whichever way they are found, so a
    lookup whose positives switch to a (late) direct match returns the page of one that only
    samples; and once their pool is exact, a round verifies what is still missing (twice
    that), not the batch the sampled rounds grew to."""
    from covr.related import search

    # every image holds man, hat and "wearing" (the pool is all of them), 5 of 240 hold g
    graphs = [
        scene(
            n, [("man", []), ("hat", [])], [(0, "wearing", 1) if n % 48 == 0 else (1, "wearing", 0)]
        )
        for n in range(1, 241)
    ]
    put(store, graphs)
    g = Subgraph.from_key("man-(wearing)->hat")
    sampling = settings.model_copy(update={"related_direct_min_pool": 10**9})
    late = settings.model_copy(  # no direct match in round 1 (node cap), a late one in round 3
        update={"related_direct_min_pool": 0, "related_direct_max_nodes": 1, "related_batch_min": 1}
    )
    taken: list[tuple[bool, int, int]] = []
    real_take = search.Search._take_batches

    def take(self: search.Search, positives: bool = True) -> dict[int, list[str]]:
        state = self.states[0]
        missing = (state.target or 0) - len(state.positives)
        batches = real_take(self, positives)
        taken.append((state.exact, missing, len(batches.get(0, ()))))
        return batches

    monkeypatch.setattr(search.Search, "_take_batches", take)
    directs = 0
    for seed in range(6):
        expected = RelatedLookup(store, settings=sampling.related).related(
            g, max_distance=0, positives_limit=1, seed=seed
        )
        taken.clear()
        got = RelatedLookup(store, settings=late.related).related(
            g, max_distance=0, positives_limit=1, seed=seed
        )
        assert (got.positives, got.next_offset) == (expected.positives, expected.next_offset)
        exact = [(missing, n) for is_exact, missing, n in taken if is_exact]
        assert all(n <= 2 * missing for missing, n in exact), taken
        directs += bool(exact)
    assert directs  # some seeds' positives were still short after three sampled rounds


def test_candidate_pools_and_rules_follow_a_new_store_generation(
    store: GraphStore, settings: Settings
) -> None:
    """Pools and rules are kept per name set and name for a store generation. A re-import that
    moves a subgraph to another image with every name's count unchanged must move the positive
    (a kept pool would still point at the old image), and a new attribute exclusive with ``g``'s
    must become an edit (a kept rule of an attribute lists the exclusive names it knew)."""
    put(
        store,
        [
            scene(1, [("dog", ["brown"]), ("sofa", [])], [(0, "on", 1)]),
            scene(3, [("cat", []), ("bed", [])], [(0, "on", 1)]),
        ],
    )
    lookup = RelatedLookup(store, settings=settings.related)
    g = Subgraph.from_key("dog[brown]-(on)->sofa")
    first = full(lookup, g, 1)
    assert first.positives == ("test:1",)
    assert first.distractors == ()
    put(
        store,
        [
            scene(1, [("cat", []), ("bed", [])], [(0, "on", 1)]),
            scene(3, [("dog", ["brown"]), ("sofa", [])], [(0, "on", 1)]),
        ],
    )
    assert full(lookup, g, 1).positives == ("test:3",)
    put(store, [scene(4, [("dog", ["black"]), ("sofa", [])], [(0, "on", 1)])])
    third = full(lookup, g, 1)
    assert third.positives == ("test:3",)
    assert {(d.image_id, d.subgraph.key) for d in third.distractors} == {
        ("test:4", "dog[black]-(on)->sofa")
    }
