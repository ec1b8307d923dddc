"""Issue 40 item 3: every text field of a scene graph is limited by the one check every door runs
(:class:`covr.scene.limits.SceneLimits`, used by the loaders' writer, the stream import and the
RPC conversion), and no check quotes an oversized value back into a field path or message."""

from __future__ import annotations

import pytest

from covr.scene.limits import SceneLimits
from covr.scene.model import Object, Relation, SceneGraph, SceneGraphError, validate
from covr.service import convert
from covr.service.errors import InvalidArgument
from covr.settings import Settings
from covr.v1 import scene_pb2

pytestmark = pytest.mark.unit

BIG = 1 << 20
"""A megabyte of text: over every limit, and large enough that quoting it would matter."""


def _graph(**fields: object) -> SceneGraph:
    values: dict[str, object] = {
        "source": "gqa",
        "original_id": "1",
        "split": "val",
        "objects": [Object(id="1", name="man")],
        **fields,
    }
    return SceneGraph.build(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("extras", "field", "words"),
    [
        ({"k" * BIG: "x"}, "extras['" + "k" * 40 + "']", "the limit is 256"),
        ({"a\x00b": "x"}, "extras['a\\x00b']", "NUL"),
        ({"note": "n" * 300}, "extras['note']", "is 300 characters long; the limit is 256"),
    ],
)
def test_extras_keys_and_values_are_limited(extras: dict[str, str], field: str, words: str) -> None:
    """An extras key is a stored property name and part of every problem's field path; before,
    the scene limits never looked at keys (a 1 MiB key reached the RPC's answer whole)."""
    found = SceneLimits().violation(_graph(extras=extras))
    assert found is not None
    assert found[0] == field
    assert words in found[1]


def test_the_source_is_limited_too() -> None:
    found = SceneLimits().violation(_graph(source="s" * BIG))
    assert found == ("source", f"is {BIG:,} characters long; the limit is 256")


def test_the_split_limit_comes_from_the_settings() -> None:
    """``COVR_LIMIT_SPLIT_CHARS``: the split limit was fixed at 64 whatever the settings said."""
    settings = Settings(_env_file=None, limit_split_chars=8)  # type: ignore[call-arg]
    limits = settings.limits
    assert limits.split_chars == 8
    assert limits.violation(_graph(split="validation")) == (
        "split",
        "is 10 characters long; the limit is 8",
    )
    assert Settings(_env_file=None).limits.split_chars == 64  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "graph",
    [
        _graph(objects=[Object(id="1", name="n" * BIG + " ")]),
        _graph(extras={"K" * BIG: 1}),
        _graph(source="S" * BIG),
        _graph(relations=[Relation(id="r", name="on", subject="1", object="9" * BIG)]),
    ],
    ids=["name-with-space", "extras-key", "source", "relation-end"],
)
def test_validate_never_quotes_a_whole_oversized_value(graph: SceneGraph) -> None:
    """``validate`` quoted names, keys, sources and relation ends whole in its field and message:
    one import of such values answered with megabytes of problems (issue 40)."""
    with pytest.raises(SceneGraphError) as err:
        validate(graph)
    assert len(err.value.field) < 120, err.value.field[:200]
    assert len(err.value.message) < 200, err.value.message[:200]


def _message(**fields: object) -> scene_pb2.SceneGraph:
    msg = scene_pb2.SceneGraph(source="svc", original_id="1", split="val")
    msg.objects.add(id="1", name="man")
    for key, value in fields.items():
        setattr(msg, key, value)
    return msg


def test_the_rpc_uses_the_configured_id_limit() -> None:
    """The RPC had its own id check (256, hardcoded) beside the shared one: a lower
    ``COVR_LIMIT_ID_CHARS`` was not applied before the import stream's second check."""
    settings = Settings(_env_file=None, limit_id_chars=32)  # type: ignore[call-arg]
    limits = settings.limits
    with pytest.raises(InvalidArgument) as err:
        convert.scene_graph_from_proto(_message(original_id="i" * 40), "scene_graphs[0]", limits)
    violation = err.value.violations[0]
    assert violation.field == "scene_graphs[0].original_id"
    assert violation.description == "is 40 characters long; the limit is 32"


def test_the_rpc_checks_limits_before_anything_quotes_a_field() -> None:
    """A megabyte extras key over the RPC: the field path names it clipped, and the limits (not
    the key format) answer first."""
    msg = _message()
    msg.extras["k" * BIG].string_value = "x"
    with pytest.raises(InvalidArgument) as err:
        convert.scene_graph_from_proto(msg, "scene_graphs[3]")
    violation = err.value.violations[0]
    assert violation.field == "scene_graphs[3].extras['" + "k" * 40 + "']"
    assert "the limit is 256" in violation.description


def test_control_characters_in_a_split_are_refused_over_the_rpc() -> None:
    with pytest.raises(InvalidArgument) as err:
        convert.scene_graph_from_proto(_message(split="val\x1b[31m"), "scene_graph")
    assert err.value.violations[0].field == "scene_graph.split"
    assert "printable" in err.value.violations[0].description
