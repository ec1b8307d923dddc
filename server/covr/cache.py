"""The server's one bounded cache (least recently used first out).

Why one helper: the related lookup, the scene-graph reader and the in-memory provider each kept
their own LRU with slightly different rules; one small class keeps eviction and locking the same
everywhere. Every operation takes a lock because lookups run concurrently in the service's
thread pool; ``None`` is never a cached value (``get`` uses it for a miss).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``size`` entries; ``size <= 0`` caches nothing."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._guard = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._guard:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> V:
        """Store ``value`` and return it (so a miss reads ``cache.put(key, compute())``)."""
        if self.size <= 0:
            return value
        with self._guard:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._guard:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
