"""A load written to either store gives the same exported examples, byte for byte.

The bundled samples are loaded into each store by the loaders; then, as ``covr quickstart`` does,
questions are generated for the stored val images through the Cypher lookup with the configured
classifiers (``covr.cli.questions.sample_questions``), and exported as ``covr export`` does, to
JSONL and to Parquet with its dataset card. Every output file must be the same bytes from both
stores, and the generation summary the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from covr.cli import questions as questions_cli
from covr.graph import GraphStore
from covr.settings import Settings
from covr_loaders.samples import load_bundled_samples
from tests.integration.parity.conftest import Pair

pytestmark = pytest.mark.timeout(900)


def generate_and_export(
    store: GraphStore, settings: Settings, out: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    out.mkdir(parents=True)
    load_bundled_samples(store, settings.load)
    # the CLI reads its settings from the environment; here each store has its own
    monkeypatch.setattr(questions_cli, "load_settings", lambda: settings)
    summary = questions_cli.sample_questions(store, "val", out / "generated.jsonl")
    questions_cli.export(
        out / "generated.jsonl", out / "export.jsonl", fmt="jsonl", split=None, splits=[]
    )
    questions_cli.export(
        out / "generated.jsonl", out / "hub", fmt="parquet", split="val", splits=[]
    )
    summary.pop("file")
    return summary


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_same_examples_from_both_stores(
    pair: Pair, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pair.reset()
    summaries = {
        name: generate_and_export(store, settings, tmp_path / name, monkeypatch)
        for name, store, settings in pair.stores()
    }
    assert summaries["falkordb"] == summaries["neo4j"]
    assert summaries["neo4j"]["examples"] > 100
    assert summaries["neo4j"]["exclusivity"] == "model"
    falkordb, neo4j = files(tmp_path / "falkordb"), files(tmp_path / "neo4j")
    assert sorted(falkordb) == sorted(neo4j)
    assert {"generated.jsonl", "export.jsonl", "hub/README.md"} <= set(neo4j)
    assert any(name.startswith("hub/data/val-") for name in neo4j)
    for name in sorted(neo4j):
        assert falkordb[name] == neo4j[name], f"{name} differs between the stores"
