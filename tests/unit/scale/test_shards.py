"""Shards and part files of a batch run on Ray (covr.scale.shards): stable assignment, input
order within a shard, and parts that are reused only when complete, of this run and unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from covr.scale.errors import ScaleError
from covr.scale.shards import Parts, encode_records, plan, run_key, shard_of

IDS = [f"gqa:{n}" for n in range(200)]


def test_the_shard_of_an_image_is_its_hash_and_nothing_else() -> None:
    """BLAKE2b of the id, not Python's salted hash, and not the other images of the run."""
    import hashlib

    digest = hashlib.blake2b(b"gqa:1", digest_size=8).digest()
    assert shard_of("gqa:1", 1000) == int.from_bytes(digest, "big") % 1000
    assert shard_of("gqa:1", 1) == 0
    alone = plan(["gqa:7"], 8)
    mixed = plan([*IDS, "gqa:7"], 8)
    assert next(k for k, ids in enumerate(alone) if ids) == next(
        k for k, ids in enumerate(mixed) if "gqa:7" in ids
    )


def test_plan_keeps_input_order_and_every_image_once() -> None:
    layout = plan(IDS, 5)
    assert sorted(i for ids in layout for i in ids) == sorted(IDS)
    position = {image: n for n, image in enumerate(IDS)}
    for ids in layout:
        assert [position[i] for i in ids] == sorted(position[i] for i in ids)
    assert all(layout), "200 ids over 5 shards leave none empty"


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "4"])
def test_a_bad_shard_count_is_refused(bad: object) -> None:
    with pytest.raises(ScaleError, match="shards"):
        plan(IDS, bad)  # type: ignore[arg-type]


def test_run_key_sees_every_input_and_ignores_set_order() -> None:
    base = {"shards": 4, "names": frozenset({"a", "b", "c"}), "seed": 1}
    assert run_key(base) == run_key({**base, "names": frozenset({"c", "b", "a"})})
    assert run_key(base) != run_key({**base, "shards": 5})
    assert run_key(base) != run_key({**base, "seed": 2})


def _parts(tmp_path: Path, run: str = "r1") -> Parts:
    return Parts(tmp_path / "out.jsonl", 3, run)


def test_a_written_part_verifies_and_reads_back(tmp_path: Path) -> None:
    parts = _parts(tmp_path)
    records: list[dict[str, object]] = [{"image": "gqa:1", "n": 1}, {"image": "gqa:2", "n": "ü"}]
    parts.write(1, encode_records(records), 2)
    assert parts.problem(1) is None
    assert list(parts.records(1)) == records
    assert parts.problem(0) == "missing"
    manifest = json.loads(parts.manifest(1).read_text())
    assert manifest["images"] == 2
    assert manifest["shards"] == 3


def test_a_changed_cut_or_foreign_part_is_not_reused(tmp_path: Path) -> None:
    parts = _parts(tmp_path)
    data = encode_records([{"image": "gqa:1"}, {"image": "gqa:2"}])
    parts.write(0, data, 2)
    parts.part(0).write_bytes(data[:-5])
    assert "checksum" in (parts.problem(0) or "")
    with pytest.raises(ScaleError, match=r"part-00000-of-00003\.jsonl: checksum"):
        list(parts.records(0))
    parts.write(0, data, 2)
    assert "another run" in (_parts(tmp_path, "r2").problem(0) or "")
    parts.manifest(0).unlink()
    assert "manifest" in (parts.problem(0) or "")


def test_a_bad_line_is_named_by_file_and_line(tmp_path: Path) -> None:
    parts = _parts(tmp_path)
    parts.write(2, b'{"image": "gqa:1"}\n{"no": 1}\n', 2)
    with pytest.raises(ScaleError, match=r"part-00002-of-00003.jsonl:2: a record needs"):
        list(parts.records(2))
    parts.write(2, b'{"image": "gqa:1"}\nnot json\n', 2)
    with pytest.raises(ScaleError, match=r"part-00002-of-00003.jsonl:2: not JSON"):
        list(parts.records(2))


def test_a_fresh_run_removes_old_parts(tmp_path: Path) -> None:
    parts = _parts(tmp_path)
    parts.write(0, b"", 0)
    parts.remove_stale()
    assert not list(parts.directory.iterdir())
