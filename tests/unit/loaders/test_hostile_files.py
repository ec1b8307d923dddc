"""Dataset files written to hurt (issue 21): each case once broke the loader or changed data
silently; now each is a named problem for its record, and the records around it still load."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from covr.scene.limits import SceneLimits
from covr.scene.model import SceneGraph, natural_key
from covr_loaders import gqa, json_entries, vg
from covr_loaders.errors import REST_OF_FILE, Problem
from covr_loaders.imsitu import parse_template
from covr_loaders.jsonio import ByteCounter, iter_entries
from covr_loaders.samples import SAMPLES
from tests.unit.loaders.test_gqa import good_record

pytestmark = pytest.mark.unit


def raw_object(entries: list[tuple[str, str]]) -> str:
    """A JSON object from keys and already-serialized values (which may be hostile text)."""
    return "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in entries) + "}"


def read_gqa(path: Path, counter: ByteCounter | None = None) -> tuple[list[str], list[Problem]]:
    ids: list[str] = []
    problems: list[Problem] = []
    for item in gqa.read(path, split="val", counter=counter or ByteCounter()):
        if isinstance(item, Problem):
            problems.append(item)
        else:
            ids.append(item.original_id)
    return ids, problems


def test_deep_nesting_is_one_problem_and_memory_stays_small(tmp_path: Path) -> None:
    """A 200 KB record nested 100,000 deep drove the old reader past 20 GB; here the read runs
    in a child process limited to 1.5 GB of address space, so the old behaviour fails."""
    depth = 100_000
    nested = '{"objects": {"o": {"name": "x", "attributes": ' + "[" * depth + "]" * depth + "}}}"
    record = json.dumps(good_record())
    deep = raw_object([("1", record), ("2", nested), ("3", record)])
    path = tmp_path / "val_sceneGraphs.json"
    path.write_text(deep)
    script = (
        "import resource, sys, json\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))\n"
        "from tests.unit.loaders.test_hostile_files import read_gqa\n"
        "from pathlib import Path\n"
        "ids, problems = read_gqa(Path(sys.argv[1]))\n"
        "print(json.dumps([ids, [[p.record, p.message] for p in problems]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    ids, problems = json.loads(done.stdout)
    assert ids == ["1", "3"]
    assert problems == [["2", "nested too deeply (JSON nesting is limited)"]]


def test_a_repeated_key_skips_the_record_and_names_the_key(tmp_path: Path) -> None:
    record = json.dumps(good_record())
    twice = record.replace('"1": {', '"1": {"name": "dog", ', 1).replace(
        '"objects": {', '"objects": {"2": {"name": "cat"}, ', 1
    )
    path = tmp_path / "val_sceneGraphs.json"
    path.write_text(raw_object([("a", record), ("b", twice), ("c", record)]))
    ids, problems = read_gqa(path)
    assert ids == ["a", "c"]
    assert [(p.record, p.field) for p in problems] == [("b", "name")]
    assert "appears twice" in problems[0].message


def test_an_oversized_record_is_skipped_and_reading_goes_on(tmp_path: Path) -> None:
    big = good_record()
    big["objects"]["1"]["attributes"] = ["tall " * 10] * 400  # ~25 KB
    path = tmp_path / "val_sceneGraphs.json"
    path.write_text(json.dumps({"a": good_record(), "b": big, "c": good_record()}))
    ids, problems = read_gqa(path, ByteCounter(max_record_bytes=4096))
    assert ids == ["a", "c"]
    assert [p.record for p in problems] == ["b"]
    assert "larger than 4,096 bytes" in problems[0].message


@pytest.mark.parametrize("read_chars", [1, 2, 3, 7, 64, 1000])
def test_tiny_reads_give_the_same_entries(read_chars: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every record, key, number and escape cut at every possible place by the end of a read."""
    files = [(SAMPLES / "gqa" / "val_sceneGraphs.json", "object")]
    files += [(p, "array") for p in sorted((SAMPLES / "vg").glob("*.json"))]
    expected = {str(p): list(iter_entries(p, shape, ByteCounter())) for p, shape in files}  # type: ignore[arg-type]
    monkeypatch.setattr(json_entries, "READ_CHARS", read_chars)
    for path, shape in files:
        got = list(iter_entries(path, shape, ByteCounter()))  # type: ignore[arg-type]
        assert [e[:2] for e in got] == [e[:2] for e in expected[str(path)]]  # type: ignore[index]


def test_every_truncation_keeps_the_whole_records_before_it(tmp_path: Path) -> None:
    text = json.dumps({"a": good_record(), "b": {"width": 1.5e3, "objects": {}}})
    path = tmp_path / "val_sceneGraphs.json"
    for cut in range(2, len(text)):
        path.write_text(text[:cut])
        entries = list(iter_entries(path, "object", ByteCounter()))
        problems = [e for e in entries if isinstance(e, Problem)]
        assert len(problems) == 1, cut
        assert problems[0].record == REST_OF_FILE, cut
        assert "truncated JSON" in problems[0].message or "invalid JSON" in problems[0].message


def test_broken_syntax_between_and_after_records(tmp_path: Path) -> None:
    path = tmp_path / "val_sceneGraphs.json"
    record = json.dumps(good_record())
    for text, message, kept in [
        ('{"a": ' + record + ' "b": ' + record + "}", "expected ',' or '}' between", ["a"]),
        ('{"a": ' + record + "} trailing", "more data after the end", ["a"]),
        ('{"a": ' + record + ", 12: {}}", "expected a record key", ["a"]),
        ('{"a": ' + record + ', "b": {"width": 1,, "objects": {}}}', "invalid JSON", ["a"]),
        ('{"b": {"width": 1,, "objects": {}}, "a": ' + record + "}", "invalid JSON", []),
    ]:
        path.write_text(text)
        ids, problems = read_gqa(path)
        assert [p.record for p in problems] == [REST_OF_FILE], text
        assert message in problems[0].message, (text, problems)
        assert ids == kept, text


def test_limits_name_the_field_and_skip_only_that_record() -> None:
    limits = SceneLimits()
    ok = SceneGraph.build(source="gqa", original_id="1", split="val", objects=[], relations=[])
    assert limits.violation(ok) is None
    long_image = SceneGraph.build(source="gqa", original_id="9" * 5000, split="val")
    assert limits.violation(long_image) == (
        "original_id",
        "is 5,000 characters long; the limit is 256",
    )


@pytest.mark.parametrize(
    ("objects", "relations", "field", "words"),
    [
        ([("1", "man"), ("1", "hat")], [], "objects['1'].id", "duplicate object id '1'"),
        ([("x:c", "man")], [], "objects['x:c'].id", "may not contain ':'"),
        ([("1", "man\x01")], [], "objects['1'].name", "U+0001"),
        ([("1", "man")], [("r:1", "1")], "relations['r:1'].id", "may not contain ':'"),
        ([("1", "man")], [("r", "1"), ("r", "1")], "relations['r'].id", "duplicate relation"),
    ],
)
def test_limits_reject_what_the_store_keys_would(
    objects: list[tuple[str, str]],
    relations: list[tuple[str, str]],
    field: str,
    words: str,
) -> None:
    """Issue 40: records whose keys would collide in the store (or that its indexes cannot find)
    are refused by the one check every door runs, so nothing reaches the write."""
    from covr.scene.model import Object, Relation

    graph = SceneGraph(
        source="gqa",
        original_id="k",
        split="val",
        objects=tuple(Object(id=i, name=n) for i, n in objects),
        relations=tuple(Relation(id=i, name="on", subject=s, object=s) for i, s in relations),
    )
    found = SceneLimits().violation(graph)
    assert found is not None
    assert found[0] == field
    assert words in found[1], found


@pytest.mark.parametrize("width", [2**63, -(2**63) - 1, 10**19])
def test_limits_reject_integers_neither_store_holds(width: int) -> None:
    graph = SceneGraph.build(source="gqa", original_id="1", split="val", width=width)
    assert SceneLimits().violation(graph) == (
        "width",
        f"is {width:.3g}, outside the 64-bit integers both stores hold",
    )
    assert (
        SceneLimits().violation(
            SceneGraph.build(source="gqa", original_id="1", split="val", width=2**63 - 1)
        )
        is None
    )


def test_gqa_ids_equal_after_trimming_are_one_id_and_refused() -> None:
    """The GQA fast path trims ids without a second validation: "1" and " 1" (or "1\u3000")
    become two objects with id "1", which the limits refuse (the store's unique key did)."""
    for twin in (" 1", "1\u3000"):
        record = good_record()
        record["objects"][twin] = dict(record["objects"]["2"])
        graph = gqa.convert("5", record, "val")
        assert SceneLimits().violation(graph) == (
            "objects['1'].id",
            "duplicate object id '1' (ids are trimmed, so ' 1' and '1' are one)",
        )


def test_hostile_gqa_records_become_problems(tmp_path: Path) -> None:
    """Through the whole loader path (the job applies the limits): a 5,000-character image id
    (crashed FalkorDB), a 6,000-character object id, a 4,400-digit object id (a traceback
    from int()), and a lone surrogate in a name (stored as '?')."""
    from covr.settings import Settings
    from covr_loaders.jobs import gqa_job
    from covr_loaders.writer import validate_only

    records: dict[str, Any] = {"ok": good_record()}
    records["9" * 5000] = good_record()
    long_object = good_record()
    long_object["objects"]["x" * 6000] = long_object["objects"].pop("2")
    long_object["objects"]["1"]["relations"] = []
    records["long-object"] = long_object
    digits = good_record()
    digits["objects"]["1" * 4400] = digits["objects"].pop("2")
    digits["objects"]["1"]["relations"] = []
    records["digits"] = digits
    path = tmp_path / "val_sceneGraphs.json"
    path.write_text(json.dumps(records)[:-1] + ', "surrogate": ' + _surrogate_record() + "}")
    summary = validate_only(gqa_job([path], "val", Settings(_env_file=None).load))  # type: ignore[call-arg]
    assert summary.images == 1
    found = {(p.record[:12], p.field.split("[")[0]) for p in summary.problems}
    assert found == {
        ("999999999999", "original_id"),
        ("long-object", "objects"),
        ("digits", "objects"),
        ("surrogate", "objects"),
    }, summary.problems
    assert all(p.offset is None or p.offset >= 0 for p in summary.problems)


def _surrogate_record() -> str:
    text = json.dumps(good_record())
    return text.replace('"name": "man"', '"name": "m\\ud800n"')


def test_natural_key_orders_ids_of_any_length() -> None:
    ids = ["10", "2", "1" + "0" * 4400, "9" * 4300, "a", "1.10", "1.9"]
    assert sorted(ids, key=natural_key) == ["a", "1.9", "1.10", "2", "10", "9" * 4300, ids[2]]


def test_a_template_that_names_a_role_twice_keeps_its_first_place() -> None:
    slots = parse_template("AGENT calms VICTIM while AGENT sits", ["agent", "victim"])
    assert [s.role for s in slots] == ["agent", "victim"]


def test_vg_array_files_skip_a_bad_record_too(tmp_path: Path) -> None:
    sample = json.loads((SAMPLES / "vg" / "scene_graphs.json").read_text())[:2]
    text = json.dumps(sample)
    path = tmp_path / "scene_graphs.json"
    path.write_text("[" + text[1:-1] + ', {"image_id": 5, "image_id": 6}, ' + text[1:])
    graphs = list(vg.read(path, split="train", counter=ByteCounter()))
    problems = [g for g in graphs if isinstance(g, Problem)]
    assert [(p.record, p.field) for p in problems] == [("2", "image_id")]
    assert sum(isinstance(g, SceneGraph) for g in graphs) == 4


def test_a_number_past_the_integer_digit_limit_is_a_problem_for_its_record(
    tmp_path: Path,
) -> None:
    """Python refuses to read an integer of more than 4,300 digits (a ValueError that is not a
    JSON syntax error): the fuzzer found that it stopped the whole read."""
    record = json.dumps(good_record())
    huge = record.replace('"width": ', '"width": ' + "7" * 5000 + ', "w2": ', 1)
    path = tmp_path / "val_sceneGraphs.json"
    path.write_text(raw_object([("a", record), ("b", huge), ("c", record)]))
    ids, problems = read_gqa(path)
    assert ids == ["a", "c"]
    assert [p.record for p in problems] == ["b"]
    assert "more than 4,300 digits" in problems[0].message


def test_two_loads_save_one_checkpoint_without_crashing(tmp_path: Path) -> None:
    """Issue 40 item 7: two ``covr load`` of one file into one data directory saved the same
    checkpoint through one ``.tmp`` name, and the second crashed in ``os.replace``."""
    import threading

    from covr_loaders.checkpoint import Checkpoint

    path = tmp_path / "loads" / "gqa-val-x.json"
    errors: list[BaseException] = []

    def save(n: int) -> None:
        try:
            for k in range(200):
                Checkpoint(path, "x", batches_done=n * 1000 + k).save()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert Checkpoint.open(path, "x") is not None
    assert not list(path.parent.glob("*.tmp"))
