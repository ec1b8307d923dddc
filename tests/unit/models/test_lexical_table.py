"""The exclusivity model's lexical table: it says exactly what WordNet says for every term it
holds, the bundled model serves its vocabulary without opening WordNet, other terms open
WordNet once, and a table that belongs to another model version is not used."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from covr.models.exclusivity import OnnxExclusivity
from covr.models.gold import load_gold
from covr.models.lexical import (
    NO_FACTS,
    LexicalTable,
    WordNetFacts,
    table_path,
    wordnet_facts,
    write_table,
)
from covr.models.terms import ModelType, normalize_term

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def table(exclusivity_path: Path) -> LexicalTable:
    return LexicalTable.read(table_path(exclusivity_path))


def _no_wordnet() -> Any:
    raise AssertionError("WordNet was opened for a term the table holds")


def test_the_table_belongs_to_the_bundled_model(
    table: LexicalTable, exclusivity: OnnxExclusivity
) -> None:
    recorded = json.loads(exclusivity.metadata["lexical_table"])
    assert recorded["file"] == table_path(exclusivity.path).name
    assert recorded["sha256"] == table.sha256
    assert recorded["terms"] == len(table)
    assert table.model_version == exclusivity.version
    assert len(table) > 5000


def test_the_table_holds_every_name_of_the_bundled_samples(table: LexicalTable) -> None:
    """A fresh data directory's quick start scores the samples' names; one name outside the
    table opened WordNet in it (5 s of a 10 s quick start when the imSitu loader began naming
    verbs with their particle, ``surfing on``). A loader change that adds a name fails here:
    retrain with ``make models``."""
    from covr.cli.model_jobs import sample_scenes, sample_vocabulary

    names = sample_vocabulary(sample_scenes())
    missing = [
        (kind, term)
        for kind, terms in names.items()
        for term in sorted(terms)
        if table.get(kind, normalize_term(term)) is None
    ]
    assert all(names.values())
    assert not missing, missing


def test_every_entry_equals_what_wordnet_says(table: LexicalTable, wordnet: Any) -> None:
    wrong = [
        (kind, term)
        for kind, term in table.terms()
        if table.get(kind, term) != wordnet_facts(wordnet, kind, term)
    ]
    assert not wrong, f"{len(wrong)} entries differ from WordNet, e.g. {wrong[:5]}"


def test_table_features_equal_wordnet_features(
    exclusivity_path: Path, table: LexicalTable, wordnet: Any
) -> None:
    """Feature rows (hence ONNX outputs) are the same from the table and from WordNet."""
    from_table = OnnxExclusivity(exclusivity_path, open_wordnet=_no_wordnet)
    from_wordnet = OnnxExclusivity(exclusivity_path, wordnet=wordnet)
    from_wordnet.featurizer.table = None
    triples: list[Any] = [(g.kind, g.x, g.x_prime) for g in load_gold()]
    by_kind: dict[ModelType, list[str]] = {}
    for kind, term in table.terms():
        by_kind.setdefault(kind, []).append(term)
    rng = np.random.default_rng(0)
    for kind, terms in by_kind.items():
        for a, b in rng.choice(len(terms), size=(2000, 2)):
            triples.append((kind, terms[a], terms[b]))
    rows_table = from_table.featurizer.rows(triples)
    rows_wordnet = from_wordnet.featurizer.rows(triples)
    np.testing.assert_array_equal(rows_table, rows_wordnet)
    np.testing.assert_array_equal(
        from_table.predict_rows(rows_table), from_wordnet.predict_rows(rows_wordnet)
    )
    assert not from_table.featurizer.wordnet_loaded


def test_a_term_outside_the_table_opens_wordnet_once(
    exclusivity_path: Path, table: LexicalTable, wordnet: Any
) -> None:
    opened: list[int] = []

    def open_wordnet() -> Any:
        opened.append(1)
        return wordnet

    model = OnnxExclusivity(exclusivity_path, open_wordnet=open_wordnet)
    model.m("object", "man", "woman")
    assert opened == []
    assert table.get("object", "harpsichord") is None
    harpsichord = model.m("object", "harpsichord", "piano")
    model.m("object", "clavichord", "piano")
    assert opened == [1]
    reference = OnnxExclusivity(exclusivity_path, wordnet=wordnet)
    reference.featurizer.table = None
    assert harpsichord == reference.m("object", "harpsichord", "piano")


def test_a_stale_table_is_not_used(exclusivity_path: Path, tmp_path: Path, wordnet: Any) -> None:
    path = tmp_path / "exclusivity.onnx"
    shutil.copyfile(exclusivity_path, path)
    data = json.loads(table_path(exclusivity_path).read_text())
    data["model_version"] = "0.0.0+other"
    table_path(path).write_text(json.dumps(data))
    model = OnnxExclusivity(path, wordnet=wordnet)
    assert model.featurizer.table is None
    table_path(path).unlink()
    assert OnnxExclusivity(path, wordnet=wordnet).featurizer.table is None


def test_written_tables_are_canonical(tmp_path: Path, wordnet: Any) -> None:
    facts: list[tuple[ModelType, str, WordNetFacts]] = [
        ("object", "dog", wordnet_facts(wordnet, "object", "dog")),
        ("attribute", "red", wordnet_facts(wordnet, "attribute", "red")),
        ("relation", "riding", wordnet_facts(wordnet, "relation", "riding")),
        ("object", "blorfish", NO_FACTS),
    ]
    one = write_table(tmp_path / "a.json", facts, model="m", model_version="1", features_version=1)
    two = write_table(
        tmp_path / "b.json", facts[::-1], model="m", model_version="1", features_version=1
    )
    assert one["sha256"] == two["sha256"]
    table = LexicalTable.read(tmp_path / "a.json")
    for kind, term, expected in facts:
        assert table.get(kind, term) == expected


def test_tabled_terms_do_not_wait_for_wordnet_to_open(exclusivity_path: Path, wordnet: Any) -> None:
    """A server opens WordNet on a background thread (seconds to a minute); a request whose
    terms the table holds must be scored meanwhile, not queued behind the opening."""
    import threading

    release = threading.Event()

    def slow_open() -> Any:
        release.wait(30)
        return wordnet

    model = OnnxExclusivity(exclusivity_path, open_wordnet=slow_open)
    opener = threading.Thread(target=lambda: model.featurizer.wordnet, daemon=True)
    opener.start()
    try:
        scored: list[float] = []
        worker = threading.Thread(
            target=lambda: scored.append(model.m("object", "man", "woman")), daemon=True
        )
        worker.start()
        worker.join(10)
        assert scored, "scoring tabled terms waited for WordNet to open"
    finally:
        release.set()
        opener.join(30)
    assert model.featurizer.wordnet_loaded
