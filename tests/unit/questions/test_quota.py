"""FormQuota: per-form quotas, texts kept whole, and the run's image share (issue 36 items 1-2)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from covr.questions.quota import POOL, FormQuota, by_text

pytestmark = pytest.mark.unit


def _text(form: str, n: int, images: list[list[str]], source: str = "s") -> list[dict[str, Any]]:
    return [
        {"template": form, "utterance": f"{form} {n}", "source_image": source, "scenes": scenes}
        for scenes in images
    ]


def _top(texts: list[list[dict[str, Any]]]) -> tuple[int, int]:
    shown = Counter(i for t in texts for e in t for i in set(e["scenes"]))
    return shown.most_common(1)[0][1], sum(len(t) for t in texts)


def test_by_text_groups_a_texts_consecutive_examples() -> None:
    a, b = _text("f", 1, [["x"], ["y"]]), _text("f", 2, [["x"]])
    assert list(by_text([*a, *b])) == [a, b]


def test_a_full_form_admits_nothing_more_and_a_pair_stays_whole() -> None:
    quota = FormQuota(limit=3)
    assert quota.admit(_text("f", 1, [["a"], ["b"]]))
    assert quota.admit(_text("f", 2, [["a"], ["c"]]))  # the pair takes the form one past 3
    assert quota.made["f"] == 4
    assert "f" in quota.full
    assert not quota.admit(_text("f", 3, [["d"], ["e"]]))
    assert quota.over["f"] == 2
    assert quota.done(["f"])
    assert not quota.done(["f", "g"])


def _pool(rng: random.Random, forms: dict[str, int], images: int) -> list[list[dict[str, Any]]]:
    """Texts whose images lean on a few busy images (as real GQA distractors do)."""
    busy = [f"i{k}" for k in range(5)]
    texts = []
    for form, count in forms.items():
        for n in range(count):
            pair = []
            for _ in range(2):
                scenes = rng.sample([f"i{k}" for k in range(images)], 3)
                if rng.random() < 0.3:
                    scenes.append(rng.choice(busy))
                pair.append(sorted(set(scenes)))
            texts.append(_text(form, n, pair, source=f"s{n % 50}"))
    return texts


def test_the_selection_holds_the_share_and_keeps_the_rare_forms() -> None:
    rng = random.Random(3)
    texts = _pool(rng, {"common": 400, "rare": 6}, images=200)
    quota = FormQuota(image_share=0.05)
    for text in texts:
        assert quota.admit(text)
    kept = quota.select(texts)
    top, size = _top(kept)
    assert top <= 0.05 * size
    assert quota.share_held
    assert {t[0]["template"] for t in kept} == {"common", "rare"}
    assert quota.made["common"] + quota.made["rare"] == size
    assert quota.capped["common"] + quota.made["common"] == 800
    assert kept == [t for t in texts if t in kept]  # merge order kept


def test_an_even_spread_over_the_share_leaves_the_run_to_the_quota() -> None:
    texts = [_text("f", n, [["a", "b", "c"], ["a", "b", "d"]], f"s{n}") for n in range(10)]
    quota = FormQuota(limit=8, image_share=0.05)
    admitted = [t for t in texts if quota.admit(t)]
    assert len(admitted) == min(10, POOL * 8 // 2)
    kept = quota.select(admitted)
    assert not quota.share_held
    assert kept == texts[:4]  # the quota's own 8 examples, in order


def test_with_a_quota_the_selection_keeps_at_least_half() -> None:
    rng = random.Random(5)
    texts = _pool(rng, {"f": 60}, images=30)
    quota = FormQuota(limit=40, image_share=0.05)
    admitted = [t for t in texts if quota.admit(t)]
    kept = quota.select(admitted)
    assert sum(len(t) for t in kept) >= 20
    assert quota.share_held == (_top(kept)[0] <= max(2, 0.05 * _top(kept)[1]))


def test_too_few_source_images_leave_the_run_to_the_quota() -> None:
    """Each source image is in all of its own examples: with fewer than 1 / share of them the
    share cannot hold, and nothing is taken out for it."""
    rng = random.Random(3)
    texts = [t for t in _pool(rng, {"f": 40}, images=400) if t[0]["source_image"] < "s2"]
    quota = FormQuota(image_share=0.05)
    admitted = [t for t in texts if quota.admit(t)]
    assert quota.select(admitted) == admitted
    assert not quota.share_held


def test_a_share_outside_0_1_is_refused() -> None:
    with pytest.raises(ValueError, match="image_share"):
        FormQuota(image_share=0)
