"""The exclusivity score cache kept as rows (:mod:`covr.models.score_rows`)."""

from __future__ import annotations

import numpy as np
import pytest

from covr.models.pair_memo import PairTable
from covr.models.score_rows import ScoreRows

pytestmark = pytest.mark.unit

NAMES = [f"n{i}" for i in range(40)]


def _score(x: str, y: str) -> float:
    return float(np.float32((int(x[1:]) * 41 + int(y[1:])) / 2000))


def _fill(rows: ScoreRows, xs: list[str]) -> None:
    for x in xs:
        others = [y for y in NAMES if y != x]
        rows.put_many("object", x, others, [_score(x, y) for y in others])


def test_a_score_comes_back_exactly_and_unknown_pairs_miss() -> None:
    rows = ScoreRows(100_000)
    rows.put_many("object", "dog", ["cat", "horse"], [0.75, 0.1])
    assert rows.get("object", "dog", "cat") == 0.75
    assert rows.get("object", "dog", "horse") == float(np.float32(0.1))  # the model's float32
    assert rows.get("object", "dog", "dog") is None  # a column, never scored
    assert rows.get("object", "cat", "dog") is None  # directional
    assert rows.get("attribute", "dog", "cat") is None  # per node type
    assert rows.get("object", "dog", "zebra") is None  # no column
    rows.put_many("object", "bird", ["zebra"], [0.5])  # a new column past dog's row
    assert rows.get("object", "dog", "zebra") is None
    rows.put_many("object", "dog", ["zebra"], [0.25])  # the row grows, keeps its scores
    assert (rows.get("object", "dog", "zebra"), rows.get("object", "dog", "cat")) == (0.25, 0.75)
    assert len(rows) == 4


def test_find_leaves_malformed_items_to_the_caller() -> None:
    rows = ScoreRows(100_000)
    rows.put_many("object", "dog", ["cat"], [0.75])
    assert rows.find(("object", "dog", "cat")) == 0.75
    assert rows.find(["object", "dog", "cat"]) is None  # not a tuple
    assert rows.find(("object", "dog")) is None
    assert rows.find(("object", ["dog"], "cat")) is None  # unhashable
    assert rows.find(("object", "dog", {"cat"})) is None


def test_the_bound_drops_the_oldest_rows_and_keeps_the_newest() -> None:
    rows = ScoreRows(1000)  # 40 columns a row: 25 rows fit
    _fill(rows, NAMES)
    assert rows._cells <= 1000
    kept = [x for x in NAMES if rows.get("object", x, "n0" if x != "n0" else "n1") is not None]
    assert kept == NAMES[-len(kept) :]  # the newest
    assert 20 <= len(kept) <= 25
    assert len(rows) == 39 * len(kept)
    x, y = NAMES[-1], NAMES[0]
    assert rows.get("object", x, y) == _score(x, y)


def test_too_many_names_start_over() -> None:
    rows = ScoreRows(1000)
    assert rows.max_columns == 1000
    rows.put_many("object", "dog", ["cat"], [0.75])
    many = [f"w{i}" for i in range(1000)]
    rows.put_many("object", "bird", many, [0.5] * len(many))
    assert rows.get("object", "dog", "cat") is None  # dropped with the old name index
    assert rows.get("object", "bird", "w999") == 0.5


def test_a_table_round_trip_keeps_every_score() -> None:
    rows = ScoreRows(100_000)
    _fill(rows, NAMES[:10])
    rows.put_many("relation", "on", ["under", "n3"], [0.875, 0.0625])
    table = rows.table()
    assert len(table) == len(rows) == 10 * 39 + 2
    again = ScoreRows(100_000)
    assert again.load(table) == len(rows)
    for x in NAMES[:10]:
        for y in NAMES:
            assert again.get("object", x, y) == rows.get("object", x, y)
    assert again.get("relation", "on", "under") == 0.875
    assert again.get("relation", "on", "n3") == 0.0625
    assert again.get("object", "on", "under") is None


def test_a_table_larger_than_the_name_bound_is_not_loaded() -> None:
    names = [f"w{i}" for i in range(1001)]
    table = PairTable(
        names,
        np.zeros(1, dtype=np.int64),
        np.zeros(1, dtype=np.int64),
        np.ones(1, dtype=np.int64),
        np.array([0.5]),
    )
    rows = ScoreRows(1000)
    assert rows.load(table) == 0
    assert rows.get("object", "w0", "w1") is None
    assert ScoreRows(100_000_000).load(table) == 1


def test_an_empty_cache_writes_an_empty_table() -> None:
    table = ScoreRows(1000).table()
    assert len(table) == 0
    assert table.names == []


def test_a_slice_needs_every_name_remembered() -> None:
    rows = ScoreRows(100_000)
    rows.put_many("object", "dog", ["cat", "horse"], [0.75, 0.25])
    rows.put_many("object", "bird", ["zebra"], [0.5])  # a column past dog's row
    got = rows.slice("object", "dog", ["horse", "cat"])
    assert got is not None
    assert got.tolist() == [0.25, 0.75]
    assert rows.slice("object", "dog", []) is not None
    assert rows.slice("object", "dog", ["cat", "zebra"]) is None  # past the row
    assert rows.slice("object", "dog", ["cat", "unknown"]) is None  # no column
    assert rows.slice("object", "dog", ["cat", "bird"]) is None  # a column, not scored
    assert rows.slice("object", "cat", ["dog"]) is None  # no row
    assert rows.slice("attribute", "dog", ["cat"]) is None
