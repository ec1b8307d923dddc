"""GQA reader: the bundled sample, conversion details and every kind of bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from covr.scene.model import SceneGraph
from covr_loaders import gqa
from covr_loaders.errors import REST_OF_FILE, InputFileError, Problem, RecordError
from covr_loaders.jsonio import ByteCounter
from covr_loaders.samples import SAMPLES

pytestmark = pytest.mark.unit
SAMPLE = SAMPLES / "gqa" / "val_sceneGraphs.json"


def read(path: Path, **options: Any) -> tuple[list[SceneGraph], list[Problem]]:
    graphs: list[SceneGraph] = []
    problems: list[Problem] = []
    opts = gqa.GqaOptions(**options)
    for item in gqa.read(path, split="val", counter=ByteCounter(), options=opts):
        (problems if isinstance(item, Problem) else graphs).append(item)  # type: ignore[arg-type]
    return graphs, problems


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "val_sceneGraphs.json"
    path.write_text(json.dumps(data))
    return path


def good_record() -> dict[str, Any]:
    return {
        "width": 500,
        "height": 375,
        "location": "outdoors",
        "objects": {
            "1": {
                "name": "man",
                "x": 1,
                "y": 2,
                "w": 3,
                "h": 4,
                "attributes": ["tall"],
                "relations": [
                    {"name": "wearing", "object": "2"},
                    {"name": "to the left of", "object": "2"},
                ],
            },
            "2": {"name": "hat", "x": 5, "y": 6, "w": 7, "h": 8, "attributes": [], "relations": []},
        },
    }


def test_sample_reads_completely() -> None:
    graphs, problems = read(SAMPLE)
    assert problems == []
    assert len(graphs) == 8
    street = next(g for g in graphs if g.original_id == "2370799")
    assert street.image_id == "gqa:2370799"
    assert street.extras == {"location": "outdoors", "weather": "cloudy"}
    man = street.object_by_id()["1058498"]
    assert man.attributes == ("young", "tall")
    out = [r for r in street.relations if r.subject == "1058498"]
    assert {r.name for r in out} >= {"wearing", "holding", "to the left of"}
    assert all(r.subject == "1058498" for r in out)  # direction: owner → object


def test_relation_ids_are_deterministic(tmp_path: Path) -> None:
    path = write(tmp_path, {"9": good_record()})
    first, _ = read(path)
    second, _ = read(path)
    assert first == second
    assert [r.id for r in first[0].relations] == ["1.0", "1.1"]


def test_left_right_can_be_left_out(tmp_path: Path) -> None:
    path = write(tmp_path, {"9": good_record()})
    graphs, _ = read(path, keep_left_right=False)
    assert [r.name for r in graphs[0].relations] == ["wearing"]


@pytest.mark.parametrize(
    ("mutate", "field", "message"),
    [
        (
            lambda r: r["objects"]["1"].update(attributes="red"),
            "objects['1'].attributes",
            "must be a list",
        ),
        (lambda r: r["objects"]["1"].pop("name"), "objects['1'].name", "missing"),
        (lambda r: r["objects"]["1"].update(x="12"), "objects['1'].x", "must be a number"),
        (
            lambda r: r["objects"]["1"]["relations"].append({"name": "on", "object": "77"}),
            "objects['1'].relations[2].object",
            "does not exist",
        ),
        (lambda r: r.update(objects=[]), "objects", "must be an object"),
        (lambda r: r.pop("objects"), "objects", "missing"),
        (lambda r: r["objects"]["2"].update(name="  "), "objects['2'].name", "empty"),
    ],
)
def test_bad_record_is_skipped_with_file_record_and_field(
    tmp_path: Path, mutate: Any, field: str, message: str
) -> None:
    bad = good_record()
    mutate(bad)
    path = write(tmp_path, {"1": good_record(), "2": bad, "3": good_record()})
    graphs, problems = read(path)
    assert [g.original_id for g in graphs] == ["1", "3"]
    assert len(problems) == 1
    problem = problems[0]
    assert (problem.file, problem.record, problem.field) == (str(path), "2", field)
    assert message in problem.message
    assert str(path) in str(problem)
    assert "record 2" in str(problem)


def test_truncated_file_keeps_the_records_before_the_cut(tmp_path: Path) -> None:
    text = json.dumps({str(i): good_record() for i in range(20)})
    path = tmp_path / "train_sceneGraphs.json"
    path.write_text(text[: len(text) // 2])
    graphs, problems = read(path)
    assert 0 < len(graphs) < 20
    assert problems[-1].record == REST_OF_FILE
    assert "truncated" in problems[-1].message
    assert problems[-1].offset is not None
    assert problems[-1].file == str(path)


def test_invalid_utf8_is_reported_not_raised(tmp_path: Path) -> None:
    text = json.dumps({"1": good_record(), "2": good_record()}).encode()
    cut = text.rindex(b'"hat"')  # in record 2: record 1 stays valid
    broken = text[:cut] + b'"h\xffat"' + text[cut + 5 :]
    path = tmp_path / "val_sceneGraphs.json"
    path.write_bytes(broken)
    graphs, problems = read(path)
    assert [g.original_id for g in graphs] == ["1"]
    assert len(problems) == 1
    assert "UTF-8" in problems[0].message
    assert problems[0].file == str(path)
    assert problems[0].record == REST_OF_FILE
    assert f"near byte {problems[0].offset}" in str(problems[0])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"  \n", "is empty"),
        (b"[1, 2]", "is not a JSON object"),
        (b"hello", "is not a JSON object"),
    ],
)
def test_unreadable_files_raise(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "val_sceneGraphs.json"
    path.write_bytes(content)
    with pytest.raises(InputFileError, match=message):
        read(path)


def test_directory_and_missing_file_raise(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="is a directory"):
        read(tmp_path)
    with pytest.raises(InputFileError, match="no such file"):
        read(tmp_path / "nope.json")


def test_to_record_round_trips_through_the_reader(tmp_path: Path) -> None:
    graphs, _ = read(SAMPLE)
    path = write(tmp_path, dict(gqa.to_record(g) for g in graphs))
    again, problems = read(path)
    assert problems == []
    assert again == graphs


_values = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.floats(allow_nan=True),
    st.text(max_size=3),
    st.lists(st.one_of(st.text(max_size=3), st.integers()), max_size=3),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(obj=st.dictionaries(st.sampled_from(["name", "x", "y", "w", "h", "attributes"]), _values))
def test_fast_and_checked_object_paths_agree(obj: dict[str, Any]) -> None:
    fast = gqa._fast_object("1", obj)
    try:
        checked: Any = gqa._checked_object("1", obj, "o")
    except RecordError:
        checked = None
    if fast is not None:
        assert fast == checked


@pytest.mark.parametrize(
    ("where", "field"),
    [
        (("1", "name"), "objects['1'].name"),
        (("1", "attributes"), "objects['1'].attributes[0]"),
        (("1", "relations"), "objects['1'].relations[0].name"),
    ],
)
def test_the_fast_path_refuses_u0001_like_the_checked_one(
    where: tuple[str, str], field: str
) -> None:
    """Issue 40 row 8: U+0001 in a name, an attribute or a relation name passed the fast path
    (``as_name`` and the RPC refuse it) and was loaded where no lookup ever finds it."""
    record = good_record()
    obj = record["objects"][where[0]]
    if where[1] == "name":
        obj["name"] = "man\x01"
    elif where[1] == "attributes":
        obj["attributes"] = ["tall\x01"]
    else:
        obj["relations"] = [{"name": "wearing\x01", "object": "2"}]
    with pytest.raises(RecordError) as caught:
        gqa.convert("k", record, "val")
    assert caught.value.field == field
    assert "U+0001" in caught.value.message
