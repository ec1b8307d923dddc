"""ImportSceneGraphs applies the loaders' limits (covr.scene.limits, ``COVR_LIMIT_*``): a scene
graph over one is a problem naming its field, the others in the stream are written."""

from __future__ import annotations

import pytest

from covr_client import Client, NotFoundError, Object, SceneGraph
from tests.integration.service.test_rpcs import graph

pytestmark = pytest.mark.integration


def test_scene_graphs_over_a_limit_are_skipped_naming_the_field(client: Client) -> None:
    long_name = SceneGraph("svc", "lim2", "val", objects=(Object("1", "n" * 300),))
    many = SceneGraph(
        "svc", "lim3", "val", objects=(Object("1", "man", tuple(f"a{i}" for i in range(300))),)
    )
    # (a lone surrogate cannot reach the server: protobuf refuses to serialize one)
    result = client.import_scene_graphs([graph("lim1"), long_name, many])
    assert (result.written, result.skipped) == (1, 2)
    problems = {p.field: p.message for p in result.problems}
    assert problems["scene_graphs[1].objects['1'].name"] == (
        "is 300 characters long; the limit is 256"
    )
    assert problems["scene_graphs[2].objects['1'].attributes"] == (
        "has 300 entries; the limit is 256"
    )
    for skipped in ("svc:lim2", "svc:lim3"):
        with pytest.raises(NotFoundError):
            client.get_scene_graph(skipped)
    assert client.get_scene_graph("svc:lim1").objects


def test_a_poison_scene_graph_never_deletes_stored_ones(client: Client) -> None:
    """Issue 40 over the RPC: re-importing stored scene graphs beside one the store's keys or
    integers would reject (INTERNAL after the delete, before the fix) skips the poison one,
    naming its field, and every stored scene graph is still there; strict refuses the stream."""
    stored = [graph(f"keep{n}") for n in range(3)]
    assert client.import_scene_graphs(stored).written == 3
    colon = SceneGraph("svc", "keep9", "val", objects=(Object("x:c", "man"),))
    huge = SceneGraph("svc", "keep8", "val", width=1e19, objects=(Object("1", "man"),))
    result = client.import_scene_graphs([*stored, colon, huge])
    assert (result.written, result.skipped) == (3, 2)
    problems = {p.field: p.message for p in result.problems}
    assert "may not contain ':'" in problems["scene_graphs[3].objects['x:c'].id"]
    assert "64-bit" in problems["scene_graphs[4].width"]
    with pytest.raises(Exception, match="strict import: 1 bad scene graph"):
        client.import_scene_graphs([*stored, colon], strict=True)
    for kept in stored:
        assert client.get_scene_graph(kept.image_id).objects


@pytest.mark.parametrize(
    ("split", "words"),
    [("s" * 100, "the limit is 64"), ("val\x1b[31m", "printable"), ("va\nl", "printable")],
)
def test_a_split_name_is_limited_and_printable(client: Client, split: str, words: str) -> None:
    """Issue 40 item 3: a 9 MiB split name made GetStatistics fail for every client, and ANSI
    escapes reached every terminal that printed the statistics."""
    bad = SceneGraph("svc", "split-bad", split, objects=(Object("1", "man"),))
    result = client.import_scene_graphs([bad])
    assert (result.written, result.skipped) == (0, 1)
    assert words in result.problems[0].message
    assert result.problems[0].field == "scene_graphs[0].split"
    assert all(d.split != split for d in client.statistics().datasets)


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_a_non_finite_extra_is_refused_per_record(client: Client, value: float) -> None:
    """Issue 40 row 10: ``inf`` in extras was stored as ±1.797e308 and ``NaN`` failed the whole
    stream; now the one record is a problem naming the RPC field, the others are written."""
    bad = SceneGraph("svc", "extra-bad", "val", objects=(Object("1", "man"),), extras={"x": value})
    good = SceneGraph("svc", "extra-good", "val", objects=(Object("1", "man"),), extras={"x": 1.5})
    result = client.import_scene_graphs([bad, good])
    assert (result.written, result.skipped) == (1, 1)
    assert result.problems[0].field == "scene_graphs[0].extras['x']"
    assert "finite" in result.problems[0].message
    with pytest.raises(NotFoundError):
        client.get_scene_graph("svc:extra-bad")
    assert client.get_scene_graph("svc:extra-good").extras == {"x": 1.5}
    with pytest.raises(Exception, match="strict import: 1 bad scene graph"):
        client.import_scene_graphs([bad, good], strict=True)
