"""Hypothesis strategies for subgraphs of every shape, with awkward names."""

from __future__ import annotations

from hypothesis import strategies as st

from covr.scene.subgraph import Subgraph, SubgraphObject, SubgraphRelation, SubgraphRelMod

# Any printable text, including the key's special characters, quotes and Cypher fragments.
AWKWARD = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
    min_size=1,
    max_size=8,
).filter(lambda s: bool(s.strip()))
TRICKY = st.sampled_from(
    [
        "t-shirt",
        "x-",
        "-(",
        ")->",
        "a\\b",
        "'; MATCH (n) DETACH DELETE n //",
        '"quoted"',
        "a[b]",
        "{,}",
        "a|b:c",
        " lead",
        "trail ",
        "in front of",
        "man",
    ]
)
NAMES = st.one_of(TRICKY, AWKWARD)

SHAPES = ("single", "hop", "chain", "v", "frame1", "frame3", "chain_frame")


@st.composite
def subgraphs(draw: st.DrawFn, names: st.SearchStrategy[str] = NAMES) -> Subgraph:
    """A valid subgraph of a random shape; parts are listed in a random (non-canonical) order."""
    shape = draw(st.sampled_from(SHAPES))
    n_objects = {
        "single": 1,
        "hop": 2,
        "chain": 3,
        "v": 3,
        "frame1": 3,
        "frame3": 5,
        "chain_frame": 4,
    }[shape]
    nouns = draw(st.lists(names, min_size=n_objects, max_size=n_objects, unique=True))
    objects = [SubgraphObject(noun, draw(st.one_of(st.none(), names))) for noun in nouns]
    relations: list[SubgraphRelation] = []
    relmods: list[SubgraphRelMod] = []

    def rel(subject: int, obj: int) -> SubgraphRelation:
        return SubgraphRelation(draw(names), subject, obj)

    if shape == "hop":
        relations = [rel(0, 1)]
    elif shape == "chain":
        relations = [rel(0, 1), rel(1, 2)]
    elif shape == "v":
        relations = [rel(0, 1), rel(0, 2)]
    elif shape == "frame1":
        relations = [rel(0, 1)]
        relmods = [SubgraphRelMod(draw(names), 0, 2)]
    elif shape == "frame3":
        relations = [rel(0, 1)]
        relmods = [SubgraphRelMod(draw(names), 0, k) for k in (2, 3, 4)]
    elif shape == "chain_frame":
        relations = [rel(0, 1), rel(1, 2)]
        relmods = [SubgraphRelMod(draw(names), 1, 3)]
    order = draw(st.permutations(range(1, n_objects)))
    remap = {0: 0, **{old: new + 1 for new, old in enumerate(order)}}
    shuffled = [objects[0]] + [objects[old] for old in sorted(order, key=lambda o: remap[o])]
    relations = [SubgraphRelation(r.name, remap[r.subject], remap[r.object]) for r in relations]
    relmods = [SubgraphRelMod(m.name, m.relation, remap[m.object]) for m in relmods]
    return Subgraph.build(shuffled, relations, relmods)
