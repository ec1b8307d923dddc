"""The reference matcher (oracle): matches, positives, distractors with signatures."""

from __future__ import annotations

import itertools
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from covr.related.api import Distractor
from covr.related.exclusivity import ResourceExclusivity, default_exclusivity
from covr.related.matcher import (
    SceneIndex,
    by_signature,
    contains,
    contains_relaxed,
    distractors,
    matches,
    positives,
)
from covr.scene.edits import name_at, parse_position, positions, signature, substitute
from covr.scene.enumerate import EnumerationOptions, enumerate_subgraphs
from covr.scene.model import Box, Object, Relation, RelMod, SceneGraph
from covr.scene.subgraph import Subgraph, SubgraphError
from covr_loaders.synthetic import generate

pytestmark = pytest.mark.unit

EX = default_exclusivity()
BOX = Box(0, 0, 50, 50)


def image(
    image_id: str,
    objects: list[tuple[str, str, tuple[str, ...]]],
    relations: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
    mods: dict[int, list[tuple[str, str]]] | None = None,
) -> SceneGraph:
    """objects: (id, name, attributes); relations: (subject, name, object); mods by relation."""
    rels = [
        Relation(
            f"r{i}",
            name,
            s,
            o,
            mods=tuple(
                RelMod(f"m{k}", mn, mo) for k, (mn, mo) in enumerate((mods or {}).get(i, []))
            ),
        )
        for i, (s, name, o) in enumerate(relations)
    ]
    return SceneGraph.build(
        source="t",
        original_id=image_id,
        split="train",
        objects=[Object(oid, name, attrs, BOX) for oid, name, attrs in objects],
        relations=rels,
    )


def hop(
    image_id: str,
    subject: str,
    rel: str,
    obj: str,
    *attrs: str,
    subject_attrs: tuple[str, ...] = (),
) -> SceneGraph:
    return image(image_id, [("1", subject, subject_attrs), ("2", obj, attrs)], [("1", rel, "2")])


G = Subgraph.from_key("man-(wearing)->hat[red]")


def short(image_id: str) -> str:
    return image_id.split(":", 1)[1]


def result(found: list[Distractor]) -> dict[str, list[str]]:
    """original id -> signatures, in the order the oracle reports them."""
    out: dict[str, list[str]] = {}
    for r in found:
        out.setdefault(short(r.image_id), []).append(r.signature)
    return out


def test_matches_are_injective_embeddings() -> None:
    scene = image(
        "1",
        [("a", "man", ()), ("b", "hat", ("red", "big")), ("c", "hat", ("red",))],
        [("a", "wearing", "b"), ("a", "wearing", "c"), ("b", "wearing", "b")],
    )
    found = matches(scene, G)
    assert [m.objects for m in found] == [("a", "b"), ("a", "c")]
    assert [m.relations for m in found] == [("r0",), ("r1",)]
    assert contains(scene, G)
    assert not contains(scene, Subgraph.from_key("hat-(wearing)->hat[red]".replace("hat[", "cap[")))
    # the self-loop r2 never maps a relation to two distinct objects
    assert not contains(scene, Subgraph.from_key("hat-(wearing)->man"))


def test_relmods_must_hang_off_the_matched_relation() -> None:
    scene = image(
        "1",
        [
            ("a", "man", ()),
            ("b", "paper", ()),
            ("c", "wall", ()),
            ("d", "stapler", ()),
            ("e", "board", ()),
        ],
        [("a", "stapling", "b"), ("a", "stapling", "e")],
        mods={0: [("onto", "c")], 1: [("using", "d")]},
    )
    assert contains(scene, Subgraph.from_key("man-(stapling|onto:wall)->paper"))
    assert not contains(scene, Subgraph.from_key("man-(stapling|using:stapler)->paper"))
    assert not contains(scene, Subgraph.from_key("man-(stapling|onto:wall|using:stapler)->paper"))
    [m] = matches(scene, Subgraph.from_key("man-(stapling|using:stapler)->board"))
    assert m.relmods == (("r1", "m0"),)


def test_positives_and_distractors_on_hand_made_scenes() -> None:
    scenes = [
        hop("pos", "man", "wearing", "hat", "red", "big"),
        hop("attr", "man", "wearing", "hat", "blue"),
        hop("noun", "woman", "wearing", "hat", "red"),
        hop("rel", "man", "holding", "hat", "red"),
        hop("general", "man", "near", "hat", "red"),
        hop("two", "woman", "wearing", "hat", "blue"),
        hop("three", "woman", "holding", "hat", "blue"),
        hop(
            "synonym", "guy", "wearing", "hat", "red"
        ),  # guy ~ man: a relaxed copy, not a distractor
        hop("unrelated", "dog", "near", "car"),
    ]
    assert positives(scenes, G) == ["t:pos"]
    found = distractors(scenes, G, EX)
    assert result(found) == {
        "attr": ["attribute@1"],
        "noun": ["object@0"],
        "rel": ["relation@0"],
        "general": ["relation@0"],
        "two": ["object@0+attribute@1"],
    }
    assert result(distractors(scenes, G, EX, max_distance=1)) == {
        k: v for k, v in result(found).items() if k != "two"
    }
    assert distractors(scenes, G, EX, max_distance=0) == []
    two = next(r for r in found if r.image_id == "t:two")
    assert two.subgraph.key == "woman-(wearing)->hat[blue]"
    assert two.distance == 2


def test_planted_overlap_relaxed_copy_excludes_an_image() -> None:
    # "man wearing a blue hat" alone is a distractor; add "person wearing a red hat" (person is
    # not exclusive with man) and the image becomes ambiguous, so it must go.
    base = [("1", "man", ()), ("2", "hat", ("blue",))]
    plain = image("plain", base, [("1", "wearing", "2")])
    planted = image(
        "planted",
        [*base, ("3", "person", ()), ("4", "cap", ("red",))],
        [("1", "wearing", "2"), ("3", "wearing", "4")],
    )
    assert result(distractors([plain, planted], G, EX)) == {"plain": ["attribute@1"]}
    assert contains_relaxed(planted, G, EX)
    assert not contains(planted, G)
    # the other direction of a relation: a "man that has a red hat" is a relaxed copy of
    # "man near a red hat" (near does not exclude has), so it is not a distractor for it
    near = Subgraph.from_key("man-(near)->hat[red]")
    assert distractors([hop("has", "man", "wearing", "hat", "red")], near, EX) == []
    assert [r.signature for r in distractors([hop("x", "man", "near", "hat", "red")], G, EX)] == [
        "relation@0"
    ]


def test_an_attribute_of_another_category_makes_a_relaxed_copy() -> None:
    # Documented, conservative: "wooden" is not exclusive with "red", so a blue wooden hat may
    # still be the red hat of the question as far as the annotation goes.
    assert distractors([hop("x", "man", "wearing", "hat", "blue", "wooden")], G, EX) == []


def test_substitutes_that_repeat_a_noun_are_not_distractors() -> None:
    scene = image("x", [("1", "hat", ()), ("2", "hat", ("red",))], [("1", "wearing", "2")])
    assert distractors([scene], G, EX) == []


def test_several_signatures_and_alternatives_per_image() -> None:
    scene = image(
        "x",
        [
            ("1", "man", ()),
            ("2", "hat", ("blue", "green")),
            ("3", "woman", ()),
            ("4", "hat", ("red",)),
        ],
        [("1", "wearing", "2"), ("3", "wearing", "4")],
    )
    found = distractors([scene], G, EX)
    assert [r.signature for r in found] == ["object@0", "attribute@1"]
    attr = found[1]
    assert [g.key for g in attr.alternatives] == [
        "man-(wearing)->hat[blue]",
        "man-(wearing)->hat[green]",
    ]
    assert attr.subgraph == attr.alternatives[0]
    assert by_signature(found) == {"attribute@1": ["t:x"], "object@0": ["t:x"]}


def test_frames_and_relmod_substitutions() -> None:
    g = Subgraph.from_key("man-(stapling|onto:wall)->paper")
    scenes = [
        image(
            "same",
            [("a", "man", ()), ("b", "paper", ()), ("c", "wall", ())],
            [("a", "stapling", "b")],
            {0: [("onto", "c")]},
        ),
        image(
            "mod",
            [("a", "man", ()), ("b", "paper", ()), ("c", "wall", ())],
            [("a", "stapling", "b")],
            {0: [("using", "c")]},
        ),
        image(
            "target",
            [("a", "man", ()), ("b", "paper", ()), ("c", "board", ())],
            [("a", "stapling", "b")],
            {0: [("onto", "c")]},
        ),
    ]
    assert positives(scenes, g) == ["t:same"]
    assert result(distractors(scenes, g, EX)) == {"mod": ["relmod@0"], "target": ["object@2"]}


def test_presence_filter_hook_receives_g_and_results() -> None:
    scenes = [
        hop("attr", "man", "wearing", "hat", "blue"),
        hop("noun", "woman", "wearing", "hat", "red"),
    ]
    seen: list[Subgraph] = []

    def drop_objects(g: Subgraph, found: list[Distractor]) -> list[Distractor]:
        seen.append(g)
        return [r for r in found if "object" not in r.signature]

    found = distractors(scenes, G, EX, presence_filter=drop_objects)
    assert seen == [G]
    assert [r.image_id for r in found] == ["t:attr"]


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="max_distance"):
        distractors([], G, EX, max_distance=-1)
    with pytest.raises(ValueError, match="twice"):
        SceneIndex([hop("a", "man", "on", "hat"), hop("a", "man", "on", "hat")])
    evil = Subgraph.single("x'}) MATCH (n) DETACH DELETE n //")
    assert positives([hop("a", "man", "on", "hat")], evil) == []
    assert positives([], G) == []
    assert distractors([], G, EX) == []


# -- property-based: the oracle against brute force over a tiny vocabulary -----------------------

NOUNS = ["man", "person", "woman", "hat", "cap", "dog"]
ATTRS = ["red", "blue", "wooden"]
RELS = ["wearing", "holding", "near", "on"]


@st.composite
def small_scenes(draw: st.DrawFn, image_id: str) -> SceneGraph:
    n = draw(st.integers(1, 5))
    objects = [
        (
            str(i),
            draw(st.sampled_from(NOUNS)),
            tuple(draw(st.lists(st.sampled_from(ATTRS), max_size=2, unique=True))),
        )
        for i in range(n)
    ]
    pairs = [(a, b) for a in range(n) for b in range(n) if a != b]
    chosen = draw(st.lists(st.sampled_from(pairs), max_size=6)) if pairs else []
    relations = [(str(a), draw(st.sampled_from(RELS)), str(b)) for a, b in chosen]
    return image(image_id, objects, relations)


def vocabulary(scene: SceneGraph) -> dict[str, set[str]]:
    return {
        "object": {o.name for o in scene.objects},
        "attribute": {a for o in scene.objects for a in o.attributes},
        "relation": {r.name for r in scene.relations},
        "relmod": {m.name for r in scene.relations for m in r.mods},
    }


def brute_relaxed(scene: SceneGraph, g: Subgraph, ex: ResourceExclusivity) -> bool:
    vocab = vocabulary(scene)
    options = []
    for p in positions(g):
        kind, _ = parse_position(p)
        x = name_at(g, p)
        options.append([y for y in vocab[kind] | {x} if y == x or ex.m(kind, x, y) <= 0.5])
    for names in itertools.product(*options):
        try:
            candidate = substitute(g, dict(zip(positions(g), names, strict=True)))
        except SubgraphError:
            continue
        if contains(scene, candidate):
            return True
    return False


def brute_distractors(
    scene: SceneGraph, g: Subgraph, ex: ResourceExclusivity, max_distance: int
) -> set[tuple[str, str]]:
    vocab = vocabulary(scene)
    out: set[tuple[str, str]] = set()
    for size in range(1, max_distance + 1):
        for chosen in itertools.combinations(positions(g), size):
            options = []
            for p in chosen:
                kind, _ = parse_position(p)
                x = name_at(g, p)
                options.append([y for y in sorted(vocab[kind]) if ex.m(kind, x, y) > 0.5])
            for names in itertools.product(*options):
                try:
                    candidate = substitute(g, dict(zip(chosen, names, strict=True)))
                except SubgraphError:
                    continue
                if contains(scene, candidate):
                    out.add((signature(chosen), candidate.key))
    return out


@given(st.data())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_oracle_agrees_with_brute_force(data: st.DataObject) -> None:
    scenes = [data.draw(small_scenes(f"i{k}")) for k in range(4)]
    source = data.draw(st.sampled_from(scenes))
    options = EnumerationOptions(
        ignored_nouns=frozenset(), ignored_relations=frozenset(), ignored_pairs=frozenset()
    )
    subgraphs = enumerate_subgraphs(source, options)
    g = data.draw(st.sampled_from(subgraphs))
    found = distractors(scenes, g, EX)
    pos = positives(scenes, g)
    assert source.image_id in pos
    for scene in scenes:
        assert (scene.image_id in pos) == contains(scene, g)
        relaxed = contains_relaxed(scene, g, EX)
        if len({o.name for o in scene.objects}) == len(scene.objects):
            # brute force builds valid subgraphs only, so it cannot see a relaxed copy that maps
            # two objects of g to two image objects of the same name; the oracle does see them
            assert relaxed == brute_relaxed(scene, g, EX)
        got = {
            (r.signature, alt.key)
            for r in found
            if r.image_id == scene.image_id
            for alt in r.alternatives
        }
        expected = set() if relaxed else brute_distractors(scene, g, EX, 2)
        assert got == expected
        if scene.image_id in pos:
            assert not got


def test_oracle_invariants_and_speed_on_synthetic_images() -> None:
    scenes = list(generate(1000, seed=7))
    index = SceneIndex(scenes)
    by_id = {s.image_id: s for s in scenes}
    picked = [g for s in scenes[:20] for g in enumerate_subgraphs(s)[::41]][:30]
    start = time.perf_counter()
    for g in picked:
        pos = positives(index, g)
        found = distractors(index, g, EX)
        assert not set(pos) & {r.image_id for r in found}
        for r in found[:20]:
            scene = by_id[r.image_id]
            assert contains(scene, r.subgraph)
            assert not contains(scene, g)
            assert r.subgraph.shape_key == g.shape_key
            assert 1 <= r.distance <= 2
    elapsed = time.perf_counter() - start
    assert elapsed < 60, f"{len(picked)} lookups over 1,000 images took {elapsed:.1f}s"
