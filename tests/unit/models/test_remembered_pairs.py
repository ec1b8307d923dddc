"""Exclusivity scores remembered between processes (:mod:`covr.models.pair_memo`): a related
lookup scores each queried name against the whole vocabulary, ~15 % of a fresh ``covr generate``
run's CPU; the next process over the same data folder reads the scores instead."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from covr.models.exclusivity import OnnxExclusivity
from covr.models.features import FEATURES_VERSION
from covr.models.pair_memo import (
    PairTable,
    memo_path,
    read_memo,
    read_pairs,
    write_memo,
    write_pairs,
)
from covr.models.terms import NodeType

pytestmark = pytest.mark.unit

PAIRS: list[tuple[NodeType, str, str]] = [
    ("object", "dog", "cat"),
    ("object", "man", "person"),
    ("attribute", "red", "blue"),
    ("attribute", "red", "wooden"),
    ("relation", "riding", "near"),
    ("relmod", "on", "under"),
]


def _model(path: Path, folder: Path, source: str = "wordnet-a") -> OnnxExclusivity:
    return OnnxExclusivity(path, learned=(folder, source))


def test_the_next_process_reads_the_same_scores(exclusivity_path: Path, tmp_path: Path) -> None:
    first = _model(exclusivity_path, tmp_path)
    assert first.cache_size == 0
    expected = first.m_batch(PAIRS)
    assert first.remember_pairs()
    assert len(list(tmp_path.glob("*.pair-scores.npz"))) == 1

    second = _model(exclusivity_path, tmp_path)
    assert second.cache_size == first.cache_size > 0  # read before any scoring
    assert second.m_batch(PAIRS) == expected  # bit for bit: the float the cache held
    assert not second.remember_pairs()  # nothing new: the file is left alone


def test_a_remembered_score_is_what_the_model_answers(
    exclusivity_path: Path, tmp_path: Path
) -> None:
    """The memo is trusted for its own model version, features version and WordNet source (so
    this planted score comes back), and ignored for any other source."""
    model = _model(exclusivity_path, tmp_path)
    path = memo_path(tmp_path, exclusivity_path.stem, model.version)
    assert write_pairs(
        path, {("object", "dog", "cat"): 0.125}, model.version, FEATURES_VERSION, "wordnet-a"
    )
    assert _model(exclusivity_path, tmp_path).m("object", "dog", "cat") == 0.125
    other = _model(exclusivity_path, tmp_path, source="wordnet-b")
    assert other.cache_size == 0
    assert other.m("object", "dog", "cat") != 0.125
    assert read_pairs(path, model.version, FEATURES_VERSION + 1, "wordnet-a") == {}


def test_a_broken_file_is_ignored_with_a_warning(
    exclusivity_path: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = _model(exclusivity_path, tmp_path)
    expected = model.m_batch(PAIRS)
    path = memo_path(tmp_path, exclusivity_path.stem, model.version)
    path.write_bytes(b"PK\x03\x04 not a zip archive")
    with caplog.at_level(logging.WARNING):
        again = _model(exclusivity_path, tmp_path)
    assert again.cache_size == 0
    assert "ignoring remembered exclusivity scores" in caplog.text
    assert str(path) in caplog.text
    assert again.m_batch(PAIRS) == expected
    assert again.remember_pairs()  # the broken file is replaced by a good one
    assert _model(exclusivity_path, tmp_path).cache_size == again.cache_size


def test_an_unwritable_folder_is_a_warning_not_an_error(
    exclusivity_path: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    model = _model(exclusivity_path, blocker / "models")  # a folder under a file: cannot exist
    model.m_batch(PAIRS)
    with caplog.at_level(logging.WARNING):
        assert not model.remember_pairs()
    assert "not remembered" in caplog.text
    assert not list(tmp_path.rglob("*.tmp"))


def test_a_file_pointing_outside_its_names_is_ignored(
    exclusivity_path: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file whose pair indices do not fit its name list (written by something else, or cut)
    is a warning and no scores, never a wrong score or a crash."""
    model = _model(exclusivity_path, tmp_path)
    path = memo_path(tmp_path, exclusivity_path.stem, model.version)
    bad = PairTable(
        ["dog", "cat"],
        np.array([0], dtype=np.int64),
        np.array([0], dtype=np.int64),
        np.array([5], dtype=np.int64),  # no name 5
        np.array([0.5]),
    )
    assert write_memo(path, bad, model.version, FEATURES_VERSION, "wordnet-a")
    with caplog.at_level(logging.WARNING):
        assert read_memo(path, model.version, FEATURES_VERSION, "wordnet-a") is None
        assert _model(exclusivity_path, tmp_path).cache_size == 0
    assert "outside the names" in caplog.text


def test_the_whole_vocabulary_of_a_lookup_is_remembered(
    exclusivity_path: Path, tmp_path: Path
) -> None:
    """The bound counts 4-byte cells: every pair of a 60-name vocabulary in every direction
    (what a run scores) is kept and read back by the next process, none scored again."""
    names = [f"thing{i}" for i in range(60)]
    pairs: list[tuple[NodeType, str, str]] = [
        ("object", x, y) for x in names for y in names if x != y
    ]
    first = _model(exclusivity_path, tmp_path)
    expected = first.m_batch(pairs)
    assert first.cache_size == len(pairs)
    assert first.remember_pairs()
    second = _model(exclusivity_path, tmp_path)
    assert second.cache_size == len(pairs)
    assert second.m_batch(pairs) == expected
    assert second.cache_size == len(pairs)
