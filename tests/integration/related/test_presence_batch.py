"""The presence filter's batched, cached scene-graph reads (issue 7's load test: one store round
trip per candidate was ~80 % of a cold lookup).

Everything on the embedded store with the committed ONNX models: the batched path must give
exactly what reading each candidate on its own gave, never serve a scene graph of an older store
generation, and read each chunk of ids in one statement.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from covr import models
from covr.graph import GraphStore
from covr.related.api import Distractor
from covr.related.config import parse_thresholds
from covr.related.filters import build_lookup, model_presence_filter
from covr.related.lookup import RelatedError, RelatedLookup
from covr.scene.enumerate import enumerate_subgraphs
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph
from covr.settings import Settings
from covr_loaders import synthetic
from tests.integration.related.helpers import full, put, scene

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _per_image(lookup: RelatedLookup) -> Any:
    """The path before batching: one store read per candidate, no cache."""

    def scenes_of(ids: Sequence[str]) -> Mapping[str, SceneGraph]:
        return {i: lookup.scene_graph(i) for i in ids}

    return scenes_of


def _queries(scenes: list[SceneGraph], lookup: RelatedLookup, count: int) -> list[Subgraph]:
    rng = random.Random(3)
    by_shape: dict[str, list[Subgraph]] = {}
    for s in rng.sample(scenes, 60):
        for g in enumerate_subgraphs(s, lookup.options):
            by_shape.setdefault(g.shape, []).append(g)
    picked: list[Subgraph] = []
    for shape in sorted(by_shape):
        picked.extend(rng.sample(by_shape[shape], min(len(by_shape[shape]), count)))
    return picked


def _distractors(result: Any) -> list[tuple[str, str, str, tuple[str, ...]]]:
    return [
        (d.image_id, d.signature, d.subgraph.key, tuple(a.key for a in d.alternatives))
        for d in result.distractors
    ]


def test_batched_filter_gives_what_per_image_reads_gave(
    store: GraphStore, settings: Settings
) -> None:
    scenes = list(synthetic.generate(300, seed=11, split="val"))
    put(store, scenes)
    assert settings.related_presence
    batched = build_lookup(store, settings.related, settings.models, model=True)
    per_image = build_lookup(store, settings.related, settings.models, model=True)
    presence = models.load_presence_model(settings=settings.models)
    thresholds = parse_thresholds(settings.related_presence_thresholds)
    old = model_presence_filter(presence, _per_image(per_image), thresholds)
    per_image.presence_filter = old
    new = batched.presence_filter

    queries = _queries(scenes, batched, 6)
    assert len({g.shape for g in queries}) >= 3
    dropped = kept = 0
    for g in queries:
        # whole lookups: sampled (the filter runs per round, before the cap) and complete
        for per_signature in (3, None):
            a = batched.related(g, per_signature=per_signature, positives_limit=None, seed=4)
            b = per_image.related(g, per_signature=per_signature, positives_limit=None, seed=4)
            assert _distractors(a) == _distractors(b), g.key
            assert a.positives == b.positives
            assert a.next_offset == b.next_offset
        # the filters themselves, on every candidate the Cypher match found
        candidates = list(full_unfiltered(batched, g).distractors)
        out_new = new(g, list(candidates))
        out_old = old(g, list(candidates))
        assert [id(d) for d in out_new] == [id(d) for d in out_old], g.key
        dropped += len(candidates) - len(out_new)
        kept += len(out_new)
    # the comparison means something only if the model both drops and keeps candidates here
    assert dropped > 0
    assert kept > 0


def full_unfiltered(lookup: RelatedLookup, g: Subgraph) -> Any:
    return lookup.related(
        g, max_distance=2, per_signature=None, positives_limit=None, seed=0, presence=False
    )


def _count_statements(store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the statements ``store.read`` runs from now on (in this test)."""
    statements: list[str] = []
    real_read = store.read

    def counting_read(query: Any, params: Any = None, **kw: Any) -> list[dict[str, Any]]:
        statements.append(getattr(query, "name", "<inline>"))
        return real_read(query, params, **kw)

    monkeypatch.setattr(store, "read", counting_read)
    return statements


def _odd_scenes() -> list[SceneGraph]:
    """Images the batched reads must get right: empty, without relations, rel-mods, repeated
    nouns, quotes and Cypher in names, another split."""
    return [
        scene(1, []),  # no objects
        scene(2, [("dog", ["brown", "small"])]),  # no relations
        scene(  # an imSitu-like frame: rel-mods, two on one relation
            3,
            [("man", []), ("paper", []), ("wall", []), ("stapler", [])],
            [(0, "stapling", 1, [("onto", 2), ("using", 3)]), (3, "near", 2)],
        ),
        scene(4, [("cup", []), ("cup", ["red"])], [(0, "next to", 1), (1, "next to", 0)]),
        scene(5, [("'}) DETACH DELETE n //", ['"quoted"'])], split="train"),
    ]


def test_one_read_per_chunk_and_cache_hits_read_nothing(
    store: GraphStore, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenes = list(synthetic.generate(40, seed=5, split="val"))
    put(store, scenes)
    small = settings.model_copy(update={"related_scene_batch": 3, "related_cache_scenes": 100})
    lookup = RelatedLookup(store, settings=small.related)
    lookup.refresh()
    statements = _count_statements(store, monkeypatch)
    ids = [s.image_id for s in scenes[:7]]
    got = lookup.scene_graphs([*ids, "test:absent", ids[0]])
    assert statements == ["match/scene_graphs"] * 3  # 8 distinct ids, 3 per statement
    assert list(got) == ids  # request order, duplicates once, absent ids left out
    assert all(got[s.image_id] == s for s in scenes[:7])
    statements.clear()
    assert lookup.scene_graphs(ids[2:5]) == {s.image_id: s for s in scenes[2:5]}
    assert statements == []  # cached
    assert lookup.scene_graphs([]) == {}
    assert statements == []


def test_batched_statement_reads_what_the_single_image_one_reads(
    store: GraphStore, settings: Settings
) -> None:
    scenes = _odd_scenes() + list(synthetic.generate(120, seed=2, split="val"))
    put(store, scenes)
    lookup = RelatedLookup(store, settings=settings.related)
    lookup.refresh()
    ids = [s.image_id for s in scenes]
    batched = lookup.scene_graphs(ids)
    assert batched == {i: lookup.scene_graph(i) for i in ids}
    assert batched == {s.image_id: s for s in scenes}
    assert batched["test:3"].relations[0].mods


def _view_fields(graph: SceneGraph) -> tuple[Any, ...]:
    """What the presence model's features read of a scene graph (order-free)."""
    objects = sorted((o.id, o.name, tuple(sorted(o.attributes))) for o in graph.objects)
    relations = sorted((r.subject, r.name, r.object) for r in graph.relations)
    return graph.image_id, objects, relations


def test_presence_views_hold_what_the_features_read_and_never_pass_for_scene_graphs(
    store: GraphStore, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenes = _odd_scenes() + list(synthetic.generate(30, seed=6, split="val"))
    put(store, scenes)
    small = settings.model_copy(update={"related_scene_batch": 4})
    lookup = RelatedLookup(store, settings=small.related)
    lookup.refresh()
    statements = _count_statements(store, monkeypatch)
    ids = [s.image_id for s in scenes]
    views = lookup.presence_views([*ids[:10], "test:absent", ids[0]])
    assert statements == ["match/scene_views"] * 3  # 11 distinct ids, 4 per statement
    assert list(views) == ids[:10]
    assert [_view_fields(v) for v in views.values()] == [_view_fields(s) for s in scenes[:10]]
    assert views["test:5"].split == "train"
    statements.clear()
    assert lookup.presence_views(ids[:10]) == views
    assert statements == []  # cached
    # a view is never served as the scene graph: the whole graph is read, boxes and rel-mods in
    full_graphs = lookup.scene_graphs(ids[:10])
    assert statements == ["match/scene_graphs"] * 3
    assert full_graphs == {s.image_id: s for s in scenes[:10]}
    assert full_graphs["test:3"].relations[0].mods
    # ...and a cached whole graph serves as the view without a read
    statements.clear()
    whole = lookup.presence_views(ids[:4])
    assert statements == []
    assert whole == {s.image_id: s for s in scenes[:4]}


def _woman_and_man_holding_phones(
    store: GraphStore, settings: Settings
) -> tuple[Subgraph, RelatedLookup]:
    """``woman-(holding)->phone`` in test:1 and a distractor of it in test:3, stored, and a
    lookup with the models (the two re-import tests start from these)."""
    put(
        store,
        [
            scene(1, [("woman", []), ("phone", [])], [(0, "holding", 1)]),
            scene(3, [("man", []), ("phone", [])], [(0, "holding", 1)]),
        ],
    )
    return Subgraph.from_key("woman-(holding)->phone"), build_lookup(
        store, settings.related, settings.models, model=True
    )


def test_presence_views_follow_a_reimport(store: GraphStore, settings: Settings) -> None:
    g, lookup = _woman_and_man_holding_phones(store, settings)
    full(lookup, g, 2)  # the filter has read test:3's view, if the match found it
    before = lookup.presence_views(["test:3"])["test:3"]
    assert sorted(o.name for o in before.objects) == [
        "man",
        "phone",
    ]  # a view's order is the engine's
    changed = scene(3, [("woman", ["tall"]), ("phone", []), ("table", [])], [(0, "holding", 1)])
    put(store, [changed])  # the loader's replace + a new statistics generation
    full(lookup, g, 2)  # sees the new generation and drops every cache
    view = lookup.presence_views(["test:3"])["test:3"]
    assert _view_fields(view) == _view_fields(changed)


def test_bad_image_ids_are_refused(store: GraphStore, settings: Settings) -> None:
    lookup = RelatedLookup(store, settings=settings.related)
    with pytest.raises(RelatedError) as err:
        lookup.scene_graphs("test:1")
    assert err.value.field == "image_ids"
    with pytest.raises(RelatedError) as err:
        lookup.scene_graphs(None)  # type: ignore[arg-type]
    assert err.value.field == "image_ids"
    for bad in ("", "  ", 7, None):
        with pytest.raises(RelatedError) as err:
            lookup.scene_graphs(["test:1", bad])  # type: ignore[list-item]
        assert err.value.field == "image_ids[1]"
    # names that look like Cypher are plain ids: nothing found, nothing run
    assert lookup.scene_graphs(["'}) MATCH (n) DETACH DELETE n //"]) == {}


def test_filter_sees_a_reimported_scene_graph(store: GraphStore, settings: Settings) -> None:
    g, lookup = _woman_and_man_holding_phones(store, settings)
    real = lookup.presence_filter
    seen: list[dict[str, SceneGraph]] = []

    def spying(g: Subgraph, results: list[Distractor]) -> list[Distractor]:
        seen.append(lookup.scene_graphs([r.image_id for r in results]))
        return real(g, results)

    lookup.presence_filter = spying
    first = full(lookup, g, 2)
    assert [d.image_id for d in first.distractors] in ([], ["test:3"])
    assert [o.name for o in seen[-1]["test:3"].objects] == ["man", "phone"]

    changed = scene(3, [("man", ["tall"]), ("phone", []), ("table", [])], [(0, "holding", 1)])
    put(store, [changed])  # the loader's replace + a new statistics generation
    assert lookup.scene_graph("test:3") == changed
    full(lookup, g, 2)
    assert seen[-1]["test:3"] == changed
    assert lookup.scene_graphs(["test:3"])["test:3"] == changed


def test_cache_is_safe_under_concurrent_readers(store: GraphStore, settings: Settings) -> None:
    scenes = list(synthetic.generate(60, seed=9, split="val"))
    put(store, scenes)
    tiny = settings.model_copy(update={"related_cache_scenes": 8, "related_scene_batch": 5})
    lookup = RelatedLookup(store, settings=tiny.related)
    lookup.refresh()
    expected = {s.image_id: s for s in scenes}
    errors: list[BaseException] = []

    def reader(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(30):
                ids = rng.sample(sorted(expected), 12)
                got = lookup.scene_graphs(ids)
                assert got == {i: expected[i] for i in ids}
        except BaseException as exc:  # collected and re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_batched_exclusivity_decisions_equal_per_pair_ones(
    store: GraphStore, settings: Settings
) -> None:
    from covr.graph import name_stats

    put(store, list(synthetic.generate(200, seed=4, split="val")))
    model = models.load_exclusivity_model(settings=settings.models)
    plain = settings.model_copy(update={"related_presence": False})
    lookup = build_lookup(store, plain.related, plain.models, model=True)
    checked = 0
    for kind in ("object", "attribute", "relation"):
        vocab = sorted(name_stats.vocabulary(store, kind))
        for x in vocab[:: max(1, len(vocab) // 4)]:
            model.clear_cache()
            exclusive, others = lookup.names.alternatives(kind, x)
            model.clear_cache()  # the per-pair path scores every pair on its own again
            one_by_one = tuple(n for n in vocab if n != x and model.m(kind, x, n) > 0.5)
            assert exclusive == one_by_one, (kind, x)
            assert set(others) == set(vocab) - {x} - set(exclusive)
            checked += len(vocab)
    assert checked > 500
