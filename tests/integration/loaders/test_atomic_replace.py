"""A bad record, a failed statement or a killed writer never deletes a stored image (issue 40).

Before: a re-load batch was ``load/delete_images`` then ``load/create_images``; when the create
failed (a record the validation let through, a full disk, a kill between the two) up to a whole
batch of stored images was gone. Now the records the store would reject are problems before
anything is written, and a replacement is atomic per image on both backends
(:meth:`covr.graph.store.GraphStore.replace_images`). The reproductions of the issue run here
through ``covr load`` (the store a new user gets), the store API on both backends, and
ImportSceneGraphs (tests/integration/service/test_import_limits.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from covr.graph import GraphStore, QueryError, catalog
from covr.graph.forwarding import ForwardingStore
from covr.graph.store import Params, QueryLike, Row, WriteSummary
from covr.scene.model import SceneGraph
from covr.settings import Settings
from covr_loaders import gqa, synthetic
from covr_loaders.readback import get_scene_graph
from covr_loaders.writer import Batch, run_load, write_batch
from tests.integration.loaders.test_cli import as_json, covr
from tests.integration.loaders.test_load_store import counts, synthetic_train_job
from tests.unit.loaders.test_gqa import good_record

pytestmark = pytest.mark.integration


def _whitespace_keys() -> dict[str, Any]:
    record = good_record()
    record["objects"][" 1"] = dict(record["objects"]["2"])  # " 1" is trimmed to "1"
    return {"poison": record}


def _ideographic_space_key() -> dict[str, Any]:
    record = good_record()
    record["objects"]["1\u3000"] = dict(record["objects"]["2"])
    return {"poison": record}


def _colliding_keys() -> dict[str, Any]:
    # image "k:x" object "c" and image "k" object "x:c" would both be keyed gqa:k:x:c
    first = {"width": 10, "height": 10, "objects": {"c": good_record()["objects"]["2"]}}
    second = {"width": 10, "height": 10, "objects": {"x:c": good_record()["objects"]["2"]}}
    return {"k:x": first, "k": second}


def _huge_width() -> dict[str, Any]:
    record = good_record()
    record["width"] = 1e19
    return {"poison": record}


def _control_name() -> dict[str, Any]:
    record = good_record()
    record["objects"]["2"]["name"] = "hat\u0001"
    return {"poison": record}


POISON = {
    "whitespace-keys": (_whitespace_keys, "duplicate object id '1'"),
    "ideographic-space-key": (_ideographic_space_key, "duplicate object id '1'"),
    "colliding-keys": (_colliding_keys, "may not contain ':'"),
    "width-1e19": (_huge_width, "outside the 64-bit integers"),
    "u0001-name": (_control_name, "U+0001"),
}


def _good_images() -> dict[str, Any]:
    return {str(n): good_record() for n in (10, 11, 12)}


@pytest.mark.parametrize("kind", sorted(POISON))
def test_a_poison_record_is_a_problem_and_stored_images_survive(tmp_path: Path, kind: str) -> None:
    """The issue's reproduction: 3 images loaded, then the same 3 plus a poison record. Before
    the fix ``covr load`` failed with a constraint violation and ``covr db stats`` went 3 -> 0;
    now the dry run refuses it naming the field, and a load skips it and keeps the others."""
    make, message = POISON[kind]
    data_dir = tmp_path / "d"
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_good_images()))
    assert covr("load", "gqa", str(good), "--split", "val", data_dir=data_dir).returncode == 0
    poison = tmp_path / "poison.json"
    poison.write_text(json.dumps({**_good_images(), **make()}))

    checked = covr(
        "load", "gqa", str(poison), "--split", "val", "--dry-run", "--strict", data_dir=data_dir
    )
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert message in checked.stderr

    loaded = as_json(
        covr("load", "gqa", str(poison), "--split", "val", "--json", data_dir=data_dir)
    )
    assert loaded["images"] == 3 + len(make()) - 1
    assert any(message in p["message"] for p in loaded["problems"]), loaded["problems"]
    stats = as_json(covr("db", "stats", "--json", data_dir=data_dir))
    assert stats["totals"]["images"] == 3 + len(make()) - 1, stats


def test_a_poison_visual_genome_record_keeps_the_stored_ones(tmp_path: Path) -> None:
    """The same with a VG file (the issue measured 53 -> 50 images)."""
    data_dir = tmp_path / "d"
    records = [
        {
            "image_id": n,
            "objects": [{"object_id": 1, "names": ["man"], "x": 1, "y": 1, "w": 2, "h": 2}],
            "relationships": [],
        }
        for n in (1, 2, 3)
    ]
    good = tmp_path / "scene_graphs.json"
    good.write_text(json.dumps(records))
    assert covr("load", "vg", str(good), "--split", "train", data_dir=data_dir).returncode == 0
    poison = {**records[0], "image_id": 4, "width": 1e19}
    good.write_text(json.dumps([*records, poison]))
    loaded = as_json(covr("load", "vg", str(good), "--split", "train", "--json", data_dir=data_dir))
    assert loaded["images"] == 3
    assert [p["field"] for p in loaded["problems"]] == ["width"]
    assert as_json(covr("db", "stats", "--json", data_dir=data_dir))["totals"]["images"] == 3


class Killed(BaseException):
    """The writer process dying: nothing after it runs, not even an ``except Exception``."""


class DyingStore(ForwardingStore):
    """A real store whose caller dies before its ``die_at``-th statement (then answers nothing).

    On a backend that overrides :meth:`GraphStore.replace_images` (Neo4j: one transaction) the
    replacement is one call, as it is one unit on the server; elsewhere it runs the default here,
    so that every one of its statements passes through :meth:`write` and can be the last. Every
    other store method reaches the real store (:class:`ForwardingStore`).
    """

    def __init__(self, inner: GraphStore, die_at: int | None) -> None:
        super().__init__(inner)
        self.die_at = die_at
        self.calls: list[str] = []

    def _tick(self, name: str) -> None:
        if self.die_at is not None and len(self.calls) >= self.die_at:
            raise Killed(name)
        self.calls.append(name)

    def read(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> list[Row]:
        self._tick(getattr(query, "name", "<inline>"))
        return self.inner.read(query, params, timeout=timeout)

    def read_many(
        self, statements: Iterable[tuple[QueryLike, Params]], *, timeout: float | None = None
    ) -> list[Row]:
        batch = list(statements)
        for query, _ in batch:
            self._tick(getattr(query, "name", "<inline>"))
        return self.inner.read_many(batch, timeout=timeout)

    def write(
        self, query: QueryLike, params: Params | None = None, *, timeout: float | None = None
    ) -> WriteSummary:
        self._tick(getattr(query, "name", "<inline>"))
        return self.inner.write(query, params, timeout=timeout)

    def write_rows(
        self,
        query: QueryLike,
        rows: Iterable[Mapping[str, Any]],
        *,
        batch_size: int,
        params: Params | None = None,
        on_batch: Callable[[WriteSummary], None] | None = None,
    ) -> WriteSummary:
        # batch by batch through write: each batch is a statement that can be the last
        return GraphStore.write_rows(
            self, query, rows, batch_size=batch_size, params=params, on_batch=on_batch
        )

    def replace_images(
        self, present: Sequence[str], create: Params, *, timeout: float | None = None
    ) -> WriteSummary:
        if type(self.inner).replace_images is GraphStore.replace_images:
            return GraphStore.replace_images(self, present, create, timeout=timeout)
        self._tick("replace_images")
        return self.inner.replace_images(present, create, timeout=timeout)

    def snapshot(self) -> None:
        self._tick("snapshot")
        self.inner.snapshot()

    def close(self) -> None:
        return


def _versions(graphs: list[SceneGraph], suffix: str) -> list[SceneGraph]:
    """The same images with every object renamed: a second version to replace the first."""
    from dataclasses import replace

    return [
        replace(g, objects=tuple(replace(o, name=o.name + suffix) for o in g.objects))
        for g in graphs
    ]


def _write_file(path: Path, graphs: list[SceneGraph]) -> None:
    path.write_text(json.dumps(dict(gqa.to_record(g) for g in graphs)))


def test_a_writer_killed_at_any_statement_of_a_reload_leaves_old_or_new(
    store: GraphStore, settings: Settings, tmp_path: Path
) -> None:
    """A re-load (half of its images stored, half new) killed before each of its statements in
    turn: every stored image is then its old version or its new one, none is missing, nothing
    staged is visible, and the same load run again ends with the new versions."""
    from covr_loaders.jobs import gqa_job

    old = list(synthetic.generate(24, seed=40, split="train"))
    new = _versions(old, "x") + list(synthetic.generate(30, seed=41, split="train"))[24:]
    first, second = tmp_path / "old" / "train_sceneGraphs.json", tmp_path / "new.json"
    first.parent.mkdir()
    _write_file(first, old[:16])  # the file's first 16 images are stored, the rest are new
    _write_file(second, new)
    old_by_id = {g.image_id: g for g in old[:16]}
    new_by_id = {g.image_id: g for g in new}
    job = gqa_job([second], "train", settings.load)

    def fresh() -> None:
        store.clear()
        store.apply_schema()
        run_load(
            store, gqa_job([first], "train", settings.load), data_dir=tmp_path / "a", batch_images=8
        )

    fresh()
    probe = DyingStore(store, None)
    run_load(probe, job, data_dir=tmp_path / "probe", batch_images=8, parallel=False)
    statements = len(probe.calls)
    assert statements >= 6, probe.calls
    for die_at in range(statements):
        fresh()
        dying = DyingStore(store, die_at)
        with pytest.raises(Killed):
            run_load(dying, job, data_dir=tmp_path / f"k{die_at}", batch_images=8, parallel=False)
        for image_id, before in old_by_id.items():
            now = get_scene_graph(store, image_id)
            assert now in (before, new_by_id[image_id]), (die_at, probe.calls[die_at], image_id)
        for image_id in set(new_by_id) - set(old_by_id):
            assert get_scene_graph(store, image_id) in (None, new_by_id[image_id])
        labels = counts(store)["nodes"]
        assert labels.get("Image", 0) >= len(old_by_id), (die_at, labels)
        run_load(store, job, data_dir=tmp_path / f"k{die_at}", batch_images=8, resume=True)
        assert [get_scene_graph(store, g.image_id) for g in new] == new, die_at
    assert not any(label.startswith("Staged") for label in counts(store)["nodes"])


def test_a_failing_replacement_leaves_the_stored_images_as_they_were(store: GraphStore) -> None:
    """A batch whose create fails in the store (a value no validation expected) changes no
    stored image, on both backends; what it staged is dropped."""
    graphs = list(synthetic.generate(10, seed=42, split="val"))
    write_batch(store, Batch.of(0, graphs))
    before = counts(store)
    bad = Batch.of(0, _versions(graphs[4:], "y"))
    assert isinstance(bad.objects, list)
    bad.objects[-1][-1] = [bad.objects[-1][-1][0], {"not": "storable"}]
    with pytest.raises(QueryError):
        write_batch(store, bad)
    assert [get_scene_graph(store, g.image_id) for g in graphs] == graphs
    assert counts(store) == before


def test_staged_images_left_by_a_killed_replacement_are_invisible_and_dropped_later(
    store: GraphStore,
) -> None:
    """What a killed replacement staged is matched by no reader, and the next replacement
    drops it once it is older than an hour."""
    if type(store).replace_images is not GraphStore.replace_images:
        pytest.skip("this backend replaces in one transaction and stages nothing")
    graphs = list(synthetic.generate(4, seed=43, split="val"))
    write_batch(store, Batch.of(0, graphs))
    renamed = _versions(graphs, "z")
    staged = {
        **Batch.of(0, renamed).create_params(),
        "only": [g.image_id for g in renamed],
        "stage": "left-behind",
        "staged_at": 1.0,  # long ago
    }
    store.write(catalog.get("load/falkordb/stage_images"), staged)
    assert [get_scene_graph(store, g.image_id) for g in graphs] == graphs
    assert counts(store)["nodes"]["Image"] == 4
    write_batch(store, Batch.of(0, renamed))
    assert [get_scene_graph(store, g.image_id) for g in graphs] == renamed
    assert not any(label.startswith("Staged") for label in counts(store)["nodes"])


def test_a_load_replacing_images_writes_the_same_store_as_a_fresh_one(
    store: GraphStore, settings: Settings, tmp_path: Path
) -> None:
    """A replacement is exact: loading version 1 then version 2 gives the store a fresh load of
    version 2 gives (counts per label and type, every scene graph)."""
    job = synthetic_train_job(tmp_path, settings, images=60, seed=44)
    run_load(store, job, data_dir=tmp_path / "one", batch_images=25)
    fresh = counts(store)
    run_load(store, job, data_dir=tmp_path / "two", batch_images=25)
    assert counts(store) == fresh
