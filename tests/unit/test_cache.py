"""The server's one LRU helper (covr.cache)."""

from __future__ import annotations

import pytest

from covr.cache import LRU

pytestmark = pytest.mark.unit


def test_least_recently_used_goes_first() -> None:
    cache: LRU[str, int] = LRU(2)
    assert cache.put("a", 1) == 1
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the oldest
    cache.put("c", 3)
    assert cache.get("b") is None
    assert cache.get("a") == 1
    assert cache.get("c") == 3
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0


def test_size_zero_caches_nothing() -> None:
    cache: LRU[str, int] = LRU(0)
    assert cache.put("a", 1) == 1
    assert cache.get("a") is None
