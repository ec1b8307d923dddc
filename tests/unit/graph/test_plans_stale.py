"""When a new statistics generation makes the store drop its cached plans (Neo4j replans over
index samples that lag a load; a 300-image store ran a lookup statement planned for a much
smaller one past the 30 s query timeout)."""

from __future__ import annotations

import pytest

from covr.graph.name_stats import PLANS_SMALL_IMAGES, PLANS_STALE_FACTOR, plans_stale

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("before", "images", "stale"),
    [
        (None, 10_000, False),  # nothing known about the plans: Neo4j's own replanning decides
        (8, 300, True),  # a clear and a reload of a much larger store
        (300, 8, True),
        (400, 300, False),  # within the factor
        (8_500, 8_501, False),  # one imported scene graph
        (8_500, 85_000, True),
        (5, 60, False),  # both small: any plan answers in milliseconds
        (0, PLANS_SMALL_IMAGES, True),
    ],
)
def test_plans_are_dropped_only_for_a_large_change_of_a_store_that_is_not_tiny(
    before: int | None, images: int, stale: bool
) -> None:
    assert plans_stale(before, images) is stale


def test_the_factor_is_a_strict_bound() -> None:
    big = PLANS_SMALL_IMAGES * 4
    assert plans_stale(big, big * PLANS_STALE_FACTOR)
    assert not plans_stale(big, big * PLANS_STALE_FACTOR - 1)
    assert plans_stale(big, big // PLANS_STALE_FACTOR)
