"""Issue 40 row 1 on both stores: a poison record beside stored images deletes none of them.

``test_atomic_replace.test_a_poison_record_is_a_problem_and_stored_images_survive`` runs the
issue's reproduction through ``covr load`` on the embedded store a new user gets; the record kinds
concern both stores (the store's keys and integers refuse them on Neo4j as on FalkorDB), so the
same reproductions run here through the loader's own entry (:func:`run_load`, what ``covr load``
calls) over the ``store`` fixture: once per backend of ``COVR_TEST_BACKENDS``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from covr.graph import GraphStore
from covr.settings import Settings
from covr_loaders import gqa
from covr_loaders.jobs import gqa_job
from covr_loaders.readback import get_scene_graphs
from covr_loaders.writer import run_load
from tests.integration.loaders.test_atomic_replace import POISON, _good_images

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("kind", sorted(POISON))
def test_a_poison_record_keeps_every_stored_image(
    store: GraphStore, settings: Settings, tmp_path: Path, kind: str
) -> None:
    """3 images stored, then the same 3 again beside a poison record (keys ``"1"`` and ``" 1"``,
    ``"1\\u3000"``, colliding ``:`` ids, ``"width": 1e19``, U+0001 in a name): before the fix the
    replacing batch failed in the store after its delete (3 -> 0 images); now the poison record
    is a problem naming its field and the 3 are stored, unchanged."""
    make, message = POISON[kind]
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_good_images()))
    run_load(
        store, gqa_job([good], "val", settings.load), data_dir=tmp_path / "one", batch_images=5000
    )
    stored_ids = [gqa.convert(k, r, "val").image_id for k, r in _good_images().items()]
    before = get_scene_graphs(store, stored_ids)
    assert len(before) == 3

    poison = tmp_path / "poison.json"
    poison.write_text(json.dumps({**_good_images(), **make()}))
    summary = run_load(
        store, gqa_job([poison], "val", settings.load), data_dir=tmp_path / "two", batch_images=5000
    )

    assert any(message in p.message for p in summary.problems), summary.problems
    assert get_scene_graphs(store, stored_ids) == before
    images = store.read("MATCH (i:Image) RETURN count(i) AS n")[0]["n"]
    assert images == 3 + len(make()) - 1  # of a colliding pair, the valid half is stored
