"""Cypher-injection strings in every text field are stored and returned verbatim, and run nothing."""

from __future__ import annotations

from covr_client import (
    Box,
    Client,
    Object,
    Relation,
    RelMod,
    SceneGraph,
    Subgraph,
    SubgraphObject,
    SubgraphRelation,
)

INJECTIONS = (
    "x' CREATE (:Pwned) //",
    '"}) MATCH (n) DETACH DELETE n //',
    "`) CALL db.labels() YIELD label RETURN label //",
    "$image_id } RETURN 1 UNION MATCH (n) RETURN n //",
    "back\\slash \\' \\\" end\\",
    "line\nbreak\r\ttab",
    "unicode ☃ 𝔘 ünïcödé",
    "CYPHER image_id='gqa:1' MATCH (n) RETURN n",
)
LABELS = {"Image", "Object", "Relation", "RelMod", "Meta", "NameStat"}


def injected(i: int, text: str) -> SceneGraph:
    """A scene graph with ``text`` in every field. Object, relation and rel-mod ids become parts
    of ``image:object`` keys and may not hold ``:`` (issue 40: such keys collided across
    images), so there the payload's colons are semicolons, and a split name holds printable
    characters only; every other field has it verbatim."""
    ident = text.replace(":", ";")
    # a split name is listed in every statistics reply: printable characters only (issue 40)
    split = "".join(c if c.isprintable() else "?" for c in text)
    return SceneGraph(
        source="inj",
        original_id=f"{i}:{text}",
        split=f"split {split}",
        width=10,
        height=10,
        objects=(
            Object(
                f"o1{ident}",
                f"subject {text}",
                (f"attr {text}",),
                Box(0, 0, 100, 100),
                synsets=(f"syn {text}",),
                names=(f"alt {text}",),
            ),
            Object(f"o2{ident}", f"object {text}", box=Box(0, 0, 100, 100)),
            Object(f"o3{ident}", f"tool {text}", box=Box(0, 0, 100, 100)),
        ),
        relations=(
            Relation(
                f"r{ident}",
                f"rel {text}",
                f"o1{ident}",
                f"o2{ident}",
                mods=(RelMod(f"m{ident}", f"mod {text}", f"o3{ident}"),),
                synsets=(f"rsyn {text}",),
            ),
        ),
        extras={"note": f"extra {text}"},
    )


def test_injection_strings_round_trip_verbatim(client: Client) -> None:
    before = client.statistics()
    graphs = [injected(i, text) for i, text in enumerate(INJECTIONS)]
    result = client.import_scene_graphs(graphs)
    assert result.skipped == 0, result.problems
    assert result.written == len(graphs)
    for g in graphs:
        assert client.get_scene_graph(g.image_id) == g
        assert list(client.list_images(source="inj", split=g.split)) == [g.image_id]
        keys = {s.key for s in client.list_subgraphs(g.image_id)}
        assert keys
        names = {o.name for o in g.objects}
        subgraphs = client.list_subgraphs(g.image_id)
        assert {o.name for s in subgraphs for o in s.objects} <= names
    after = client.statistics()
    assert set(after.nodes) <= LABELS
    assert after.totals.images == before.totals.images + len(graphs)


def test_injection_strings_in_subgraph_queries(client: Client) -> None:
    text = INJECTIONS[0]
    g = injected(0, text)
    client.import_scene_graphs([g])
    query = Subgraph(
        (SubgraphObject(f"subject {text}", f"attr {text}"), SubgraphObject(f"object {text}")),
        (SubgraphRelation(f"rel {text}", 0, 1),),
    )
    page = next(client.find_related_images(query, seed=1))
    assert [i.image_id for i in page.images if i.kind == "positive"] == [g.image_id]
    assert page.query.objects[0].name == f"subject {text}"
    by_key = next(client.find_related_images(page.query.key, seed=1))
    assert [i.image_id for i in by_key.images if i.kind == "positive"] == [g.image_id]
    assert set(client.statistics().nodes) <= LABELS
