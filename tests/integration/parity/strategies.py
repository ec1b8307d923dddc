"""Random scene graphs for parity tests: everything a loader may write, awkward values included.

Names come from a small vocabulary per example (so names repeat across objects and images, as
real data does, and statistics and postings have something to group), mixing plain words with
quotes, backslashes, Cypher fragments and any Unicode text. Numbers are ints and floats of every
magnitude; boxes, sizes, synsets and alternative names are sometimes absent; extras carry each
scalar type.

Names and ids are what :func:`covr.scene.model.validate` accepts (no surrounding whitespace,
no U+0001: FalkorDB's indexes cannot find such strings). Ids hold no character of
U+E000-U+FFFF: Neo4j orders strings in UTF-16 order and FalkorDB in code point order, which
differ for ids mixing that range with characters above U+FFFF; that one documented difference
is pinned down by ``test_string_order.py`` instead. Ids contain no ``:``: the derived keys
(``Image.id:object id``) are not injective over ids that do (image ``s:a`` object ``b:c`` and
image ``s:a:b`` object ``c`` share ``Object.key``), which no source dataset produces and which
is not a difference between the backends.
"""

from __future__ import annotations

from hypothesis import strategies as st

from covr.scene.model import CORE_IMAGE_FIELDS, Box, Object, Relation, RelMod, SceneGraph, validate

TRICKY = [
    "man",
    "woman",
    "hat",
    "red",
    "on top of",
    "it's",
    'say "hi"',
    "a\\b",
    "x) RETURN 1 //",
    "t-shirt",
    "café",
    "\U0001f600",
    "in\tside",
]
AWKWARD = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00\x01"),
    min_size=1,
    max_size=6,
).filter(lambda s: bool(s.strip()) and s == s.strip())
NAME = st.one_of(st.sampled_from(TRICKY), AWKWARD)
ID = st.one_of(
    st.integers(0, 10**12).map(str),
    AWKWARD.filter(lambda s: ":" not in s and not any("\ue000" <= c <= "\uffff" for c in s)),
)
NUMBER = st.one_of(
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(0, 4000),
)
SCALAR = st.one_of(st.booleans(), st.integers(-(2**63), 2**63 - 1), NUMBER, NAME)
EXTRA_KEY = st.from_regex(r"\A[a-z][a-z0-9_]{0,8}\Z").filter(lambda k: k not in CORE_IMAGE_FIELDS)
SOURCES = ["gqa", "vg", "imsitu", "x_1"]


@st.composite
def scene_graph(
    draw: st.DrawFn, original_id: str, vocabulary: list[str], splits: list[str]
) -> SceneGraph:
    names = st.sampled_from(vocabulary)
    n = draw(st.integers(0, 5))
    object_ids = draw(st.lists(ID, min_size=n, max_size=n, unique=True))
    objects = [
        Object(
            id=oid,
            name=draw(names),
            attributes=tuple(draw(st.lists(names, max_size=3, unique=True))),
            box=draw(st.none() | st.builds(Box, NUMBER, NUMBER, NUMBER, NUMBER)),
            synsets=tuple(draw(st.lists(NAME, max_size=2))),
            names=tuple(draw(st.lists(names, max_size=2))),
        )
        for oid in object_ids
    ]
    relations: list[Relation] = []
    if n >= 2:
        relation_ids = draw(st.lists(ID, max_size=2 * n, unique=True))
        for rid in relation_ids:
            subject, target = draw(st.lists(st.sampled_from(object_ids), min_size=2, max_size=2))
            mod_ids = draw(st.lists(ID, max_size=3, unique=True))
            mods = tuple(
                RelMod(mid, draw(names), draw(st.sampled_from(object_ids))) for mid in mod_ids
            )
            synsets = tuple(draw(st.lists(NAME, max_size=1)))
            relations.append(Relation(rid, draw(names), subject, target, mods, synsets))
    graph = SceneGraph.build(
        source=draw(st.sampled_from(SOURCES)),
        original_id=original_id,
        split=draw(st.sampled_from(splits)),
        objects=objects,
        relations=relations,
        width=draw(st.none() | NUMBER),
        height=draw(st.none() | NUMBER),
        extras=draw(st.dictionaries(EXTRA_KEY, SCALAR, max_size=2)),
    )
    validate(graph)
    return graph


@st.composite
def scene_graphs(draw: st.DrawFn, max_images: int = 12) -> list[SceneGraph]:
    """Between one and ``max_images`` images with distinct ids over a shared vocabulary."""
    vocabulary = draw(st.lists(NAME, min_size=2, max_size=8, unique=True))
    splits = ["train", "val", *draw(st.lists(NAME, max_size=1))]
    ids = draw(st.lists(ID, min_size=1, max_size=max_images, unique=True))
    graphs = [draw(scene_graph(i, vocabulary, splits)) for i in ids]
    unique: dict[str, SceneGraph] = {}
    for graph in graphs:  # the same original id under two sources is two images
        unique.setdefault(graph.image_id, graph)
    return list(unique.values())
