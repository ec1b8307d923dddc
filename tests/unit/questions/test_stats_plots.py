"""`covr stats --plots` charts: integer categories keep their empty values (issue 20, item 5)."""

from __future__ import annotations

from collections import Counter

import pytest

from covr.questions.stats import integer_categories

pytestmark = pytest.mark.unit


def test_missing_counts_are_zero_bars() -> None:
    assert integer_categories(Counter({1: 5, 2: 3, 4: 1, 6: 2})) == [
        ("1", 5),
        ("2", 3),
        ("3", 0),
        ("4", 1),
        ("5", 0),
        ("6", 2),
    ]


def test_zero_is_a_category_only_when_present() -> None:
    assert integer_categories(Counter({0: 2, 2: 1}))[0] == ("0", 2)
    assert integer_categories(Counter({3: 1}))[0] == ("1", 0)
    assert integer_categories(Counter()) == []
