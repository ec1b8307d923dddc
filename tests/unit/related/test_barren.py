"""The memo that answers a lookup from a smaller subgraph's exhaustive one: when it answers,
what it answers, and when it must not (covr.related.barren)."""

from __future__ import annotations

import threading

import pytest

from covr.related import matcher
from covr.related.barren import BarrenMemo, as_scene
from covr.scene.subgraph import Subgraph

pytestmark = pytest.mark.unit

SMALL = Subgraph.from_key("man[tall]-(wearing)->shirt[red]")
LARGE = Subgraph.from_key("man[tall]{-(holding)->racket,-(wearing)->shirt[red]}")
SOURCE = "gqa:1"


def _always(image_id: str) -> bool:
    return True


def test_a_subgraph_is_its_own_scene() -> None:
    scene = as_scene(LARGE)
    assert matcher.contains(scene, LARGE)
    assert matcher.contains(scene, SMALL)
    assert not matcher.contains(as_scene(SMALL), LARGE)


def test_nothing_matched_means_nothing_for_a_larger_subgraph() -> None:
    memo = BarrenMemo()
    memo.note(SMALL, "val", 2, frozenset())
    assert memo.answer(LARGE, "val", 2, _always) == frozenset()
    assert memo.answer(SMALL, "val", 2, _always) == frozenset()  # g contains itself


def test_one_image_is_the_only_positive_when_it_holds_the_larger_subgraph() -> None:
    memo = BarrenMemo()
    memo.note(SMALL, "val", 2, frozenset({SOURCE}))
    asked: list[str] = []

    def holds(image_id: str) -> bool:
        asked.append(image_id)
        return image_id == SOURCE

    assert memo.answer(LARGE, "val", 2, holds) == frozenset({SOURCE})
    assert asked == [SOURCE]
    # the one matched image does not hold g: it may be a distractor, so g is looked up
    assert memo.answer(LARGE, "val", 2, lambda i: False) is None


def test_no_answer_without_a_contained_exhaustive_lookup() -> None:
    memo = BarrenMemo()
    memo.note(SMALL, "val", 2, None)  # the search was cut short: its matches are not all known
    memo.note(SMALL, "val", 2, frozenset({SOURCE, "gqa:2"}))  # more than one image
    assert memo.answer(LARGE, "val", 2, _always) is None
    memo.note(SMALL, "val", 2, frozenset())
    assert memo.answer(LARGE, "train", 2, _always) is None  # another split
    assert memo.answer(LARGE, "val", 1, _always) is None  # another edit distance
    # the same names in another structure: the names pass, the match does not
    reversed_ = Subgraph.from_key("shirt[red]{-(holding)->racket,-(wearing)->man[tall]}")
    assert memo.answer(reversed_, "val", 2, _always) is None
    # a name the remembered subgraph has and g lacks
    assert memo.answer(Subgraph.from_key("man[tall]-(holding)->racket"), "val", 2, _always) is None
    # an attribute of the remembered subgraph that g lacks
    assert memo.answer(Subgraph.from_key("man-(wearing)->shirt[red]"), "val", 2, _always) is None


def test_reset_and_bound() -> None:
    memo = BarrenMemo(limit=2)
    memo.note(SMALL, "val", 2, frozenset())
    memo.reset()
    assert memo.answer(LARGE, "val", 2, _always) is None
    memo.note(SMALL, "val", 2, frozenset())
    memo.note(Subgraph.from_key("racket"), "val", 2, frozenset({"gqa:9"}))
    memo.note(Subgraph.from_key("net"), "val", 2, frozenset())
    # the oldest entry (SMALL, nothing matched) went first; "racket" matched an image that
    # does not hold LARGE, and "net" is not in LARGE
    assert memo.answer(LARGE, "val", 2, lambda i: False) is None


def test_each_thread_has_its_own_unit_of_work() -> None:
    memo = BarrenMemo()
    memo.note(SMALL, "val", 2, frozenset())
    seen: list[frozenset[str] | None] = []
    worker = threading.Thread(target=lambda: seen.append(memo.answer(LARGE, "val", 2, _always)))
    worker.start()
    worker.join()
    assert seen == [None]
    assert memo.answer(LARGE, "val", 2, _always) == frozenset()


def test_an_entry_answers_only_in_its_store_generation() -> None:
    """A request that does not start with ``refresh`` may follow an import on the same thread:
    what was learned before it must not answer after it."""
    memo = BarrenMemo()
    memo.note(SMALL, "val", 2, frozenset(), "generation-1")
    assert memo.answer(LARGE, "val", 2, _always, "generation-2") is None
    assert memo.answer(LARGE, "val", 2, _always, "generation-1") == frozenset()
