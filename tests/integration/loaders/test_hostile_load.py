"""`covr load` of a file written to crash the store (issue 21): a 5,000-character image id and a
6,000-character object id made the embedded FalkorDB segfault (its unique-constraint check),
the owned server restarted, the loader retried and crashed it again. Now those records are
skipped by name, the others are stored, and the server stays up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.loaders.test_cli import as_json, covr
from tests.unit.loaders.test_gqa import good_record

pytestmark = pytest.mark.integration


def test_ids_the_store_cannot_hold_are_skipped_and_the_rest_loads(tmp_path: Path) -> None:
    long_object = good_record()
    long_object["objects"]["x" * 6000] = long_object["objects"].pop("2")
    long_object["objects"]["1"]["relations"] = []
    records = {"1": good_record(), "9" * 5000: good_record(), "3": long_object, "4": good_record()}
    path = tmp_path / "val_sceneGraphs.json"
    path.write_text(json.dumps(records))
    data_dir = tmp_path / "d"
    summary = as_json(covr("load", "gqa", str(path), "--split", "val", "--json", data_dir=data_dir))
    assert summary["images"] == 2
    assert sorted(p["field"].split("[")[0] for p in summary["problems"]) == [
        "objects",
        "original_id",
    ]
    shown = covr("show", "gqa:4", data_dir=data_dir)  # the server still answers
    assert shown.returncode == 0, shown.stderr
    strict = covr("load", "gqa", str(path), "--split", "val", "--strict", data_dir=data_dir)
    assert strict.returncode == 2, strict.stderr
    assert "the limit is 256" in strict.stderr
