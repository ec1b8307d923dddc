"""WordNet facts remembered between processes (issue 16, Performance): names outside the
exclusivity model's table opened WordNet (~9 CPU-s) in every ``covr generate`` process and in
every forked worker; :meth:`OnnxExclusivity.prime` computes a vocabulary's facts once and
:meth:`remember_facts` keeps them in the data folder, so the next process scores the same
pairs with the same values without opening WordNet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from covr.models.exclusivity import OnnxExclusivity
from covr.models.lexical import NO_FACTS, LexicalTable, table_path
from covr.models.terms import ModelType, NodeType

pytestmark = pytest.mark.unit

# Outside the model's table (checked below): a real word with senses and two made-up words.
TERMS: list[tuple[ModelType, str]] = [
    ("object", "aardvark"),
    ("attribute", "glorbish"),
    ("object", "zorblax"),
]
PAIRS: list[tuple[NodeType, str, str]] = [
    ("object", "aardvark", "zorblax"),
    ("object", "aardvark", "dog"),
    ("attribute", "glorbish", "red"),
]


def _no_wordnet() -> Any:
    raise AssertionError("WordNet was opened although the facts were remembered")


def test_a_second_process_scores_remembered_terms_without_wordnet(
    exclusivity_path: Path, wordnet: Any, tmp_path: Path
) -> None:
    table = LexicalTable.read(table_path(exclusivity_path))
    assert all(table.get(k, t) is None for k, t in TERMS)  # else the test proves nothing
    opened: list[int] = []

    def opener() -> Any:
        opened.append(1)
        return wordnet

    learned = (tmp_path, "wordnet-a")
    first = OnnxExclusivity(exclusivity_path, open_wordnet=opener, learned=learned)
    first.prime(TERMS)
    assert opened == [1]
    files = list(tmp_path.glob("*.wordnet-facts.json"))
    assert len(files) == 1
    assert first.featurizer.facts("object", "aardvark") != NO_FACTS  # a real roundtrip
    expected = first.m_batch(PAIRS)

    second = OnnxExclusivity(exclusivity_path, open_wordnet=_no_wordnet, learned=learned)
    assert second.m_batch(PAIRS) == expected
    assert not second.remember_facts()  # nothing new: the file is left alone

    # another WordNet source, or no folder: the file is not used
    other = OnnxExclusivity(exclusivity_path, open_wordnet=opener, learned=(tmp_path, "b"))
    assert other.m_batch(PAIRS) == expected
    assert opened == [1, 1]
    plain = OnnxExclusivity(exclusivity_path, open_wordnet=opener)
    assert plain.m_batch(PAIRS) == expected
    assert not plain.remember_facts()


def test_a_broken_remembered_file_is_ignored(
    exclusivity_path: Path, wordnet: Any, tmp_path: Path
) -> None:
    learned = (tmp_path, "wordnet-a")
    first = OnnxExclusivity(exclusivity_path, wordnet=wordnet, learned=learned)
    first.prime(TERMS)
    (path,) = tmp_path.glob("*.wordnet-facts.json")
    data = json.loads(path.read_text())
    expected = first.m_batch(PAIRS)
    path.write_text(json.dumps(data)[:100])  # cut short
    again = OnnxExclusivity(exclusivity_path, wordnet=wordnet, learned=learned)
    assert again.featurizer.learned is None
    assert again.m_batch(PAIRS) == expected
