"""The seeded draw order's fast paths (covr.related.sampling) make exactly the draws of the plain ones."""

from __future__ import annotations

import random

import pytest

from covr.related.sampling import filtered_order as _filtered_order
from covr.related.sampling import seeded_order as _seeded_order
from covr.related.sampling import shuffle as _shuffle

pytestmark = pytest.mark.unit


def _plain(
    pool: list[str], rest: list[set[str]], rng: random.Random, max_scan: int
) -> list[tuple[str, tuple[object, ...]]]:
    """What the generic path yields, with the generator's state after each yielded item."""
    out = []
    for looked, image_id in enumerate(_seeded_order(pool, rng)):
        if looked >= max_scan:
            break
        if all(image_id in r for r in rest):
            out.append((image_id, rng.getstate()))
    return out


@pytest.mark.parametrize(
    ("size", "max_scan"),
    [
        (0, 10),
        (5, 10),
        (64, 100),
        (65, 100),
        (65, 20),
        (511, 4096),
        (512, 4096),
        (600, 100),
        (600, 300),
        (600, 301),
        (1000, 600),
        (4000, 4096),
        (8194, 4096),
        (9000, 50),
        (20000, 4096),
    ],
)
@pytest.mark.parametrize("sets", [0, 1, 2, 3])
def test_filtered_order_equals_seeded_order(size: int, max_scan: int, sets: int) -> None:
    pool = [f"img{i:05d}" for i in range(size)]
    pick = random.Random(size * 10 + sets)
    share = 0.6 if sets < 3 else 0.02  # three sets: few hits (most pools are scanned to the end)
    rest = [{p for p in pool if pick.random() < share} for _ in range(sets)]
    for seed in range(3):
        expected = _plain(pool, rest, random.Random(seed), max_scan)
        rng = random.Random(seed)
        got = [
            (image_id, rng.getstate()) for image_id in _filtered_order(pool, rest, rng, max_scan)
        ]
        assert got == expected
        # The state after the exhausted generator matches too (later patterns share the stream).
        plain_rng, fast_rng = random.Random(seed), random.Random(seed)
        _plain(pool, rest, plain_rng, max_scan)
        list(_filtered_order(pool, rest, fast_rng, max_scan))
        assert fast_rng.getstate() == plain_rng.getstate()


def test_shuffle_equals_random_shuffle() -> None:
    for size in [0, 1, 2, 3, 17, 64, 65, 129, 1000]:
        for seed in range(3):
            plain_rng, fast_rng = random.Random(seed), random.Random(seed)
            plain, fast = list(range(size)), list(range(size))
            plain_rng.shuffle(plain)
            _shuffle(fast_rng, fast)
            assert fast == plain
            assert fast_rng.getstate() == plain_rng.getstate()
