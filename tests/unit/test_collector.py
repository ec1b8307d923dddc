"""Batch jobs make full collections rare and put the collector back as it was."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from covr.collector import FULL_COLLECTION_THRESHOLD, batch_collection
from covr.questions.generate import GenerationOptions, iter_examples
from covr.related.memory import InMemoryRelated
from tests.support.question_data import bundled_samples


@pytest.fixture(autouse=True)
def default_thresholds() -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*before)


def test_rare_full_collections_inside_and_restored_after() -> None:
    with batch_collection():
        assert gc.get_threshold() == (700, 10, FULL_COLLECTION_THRESHOLD)
        with batch_collection():  # nested: still the rarest, and the outer one's on exit
            assert gc.get_threshold()[2] == FULL_COLLECTION_THRESHOLD
        assert gc.get_threshold()[2] == FULL_COLLECTION_THRESHOLD
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_when_the_job_fails() -> None:
    with pytest.raises(RuntimeError), batch_collection():
        raise RuntimeError("boom")
    assert gc.get_threshold() == (700, 10, 10)


def test_a_caller_that_asked_for_rarer_collections_keeps_them() -> None:
    gc.set_threshold(700, 10, 5000)
    with batch_collection():
        assert gc.get_threshold()[2] == 5000
    assert gc.get_threshold() == (700, 10, 5000)


def test_generation_runs_with_rare_full_collections_and_restores() -> None:
    scenes = bundled_samples()["val"][:2]
    seen: list[int] = []
    stream = iter_examples(
        InMemoryRelated(scenes),
        GenerationOptions(split="val", seed=1),
        [s.image_id for s in scenes],
        progress=lambda _n: seen.append(gc.get_threshold()[2]),
    )
    examples = list(stream)
    assert examples
    assert seen == [FULL_COLLECTION_THRESHOLD] * len(scenes)
    assert gc.get_threshold() == (700, 10, 10)
