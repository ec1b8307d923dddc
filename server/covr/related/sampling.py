"""Seeded candidate orders: the one place that decides which images a lookup looks at first.

Both providers need a reproducible sample that depends only on the data, ``g`` and the seed
(never on how the store or a set orders anything). They get it from two orders that live here:

- **Store order** (:class:`ImageTable`, :class:`Stream`, :class:`WholeStream`): a fixed
  permutation of every image id (by a keyed 64-bit hash) rotated to a start drawn from
  ``(seed, salt)``. Cheap for any pool size and independent of the pool's contents, which is
  what the Cypher provider needs for batches of millions of candidates.
- **Draw order** (:func:`seeded_order`, :func:`filtered_order`): a ``random.Random`` seeded with
  :func:`stable_seed` draws pool indices lazily. The in-memory provider uses it; its outputs are
  pinned by tests (the question goldens), so it keeps its exact draws.

The two are not merged into one algorithm on purpose: either choice would change one provider's
pinned samples (docs/architecture.md, "related").
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

IdArray = npt.NDArray[np.int64]


def stable_seed(*parts: object) -> int:
    """A 64-bit seed from text parts (hash-seed independent, unlike ``hash``)."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


# -- store order ---------------------------------------------------------------------------


def hash64(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


class Stream:
    """Image indices of a pool, handed out in the order of their seeded keys."""

    def __init__(self, pool: IdArray, keys: IdArray) -> None:
        self.pool = pool
        self.keys = keys
        self.cursor = 0
        self._sorted: IdArray = np.empty(0, dtype=np.int64)

    @property
    def exhausted(self) -> bool:
        return self.cursor >= len(self.pool)

    def remaining(self) -> int:
        return len(self.pool) - self.cursor

    def seen(self) -> IdArray:
        """The indices handed out so far."""
        return self._sorted[: self.cursor]

    def take(self, n: int) -> IdArray:
        end = min(len(self.pool), self.cursor + n)
        if end > len(self._sorted):
            size = len(self.pool)
            want = min(size, max(end, 2 * len(self._sorted)))
            part = np.argpartition(self.keys, want - 1)[:want] if want < size else np.arange(size)
            order = part[np.argsort(self.keys[part], kind="stable")]
            self._sorted = self.pool[order]
        out = self._sorted[self.cursor : end]
        self.cursor = end
        return out


class WholeStream:
    """Every image of a split in the same seeded order as :class:`Stream`, without sorting:
    walking the fixed permutation from the seeded start costs only what is handed out."""

    def __init__(self, table: ImageTable, start: int, split_code: int | None) -> None:
        self.table = table
        self.start = start
        self.mask = None if split_code is None else table.splits == split_code
        self.size = len(table.ids) if self.mask is None else int(self.mask.sum())
        self.cursor = 0
        self.walked = 0
        self._handed: list[IdArray] = []

    @property
    def exhausted(self) -> bool:
        return self.cursor >= self.size

    def remaining(self) -> int:
        return self.size - self.cursor

    def seen(self) -> IdArray:
        if not self._handed:
            return np.empty(0, dtype=np.int64)
        return np.concatenate(self._handed)

    def take(self, n: int) -> IdArray:
        total = len(self.table.ids)
        parts: list[IdArray] = []
        got = 0
        while got < n and self.walked < total:
            chunk = min(total - self.walked, max(2 * (n - got), 64))
            steps = (self.start + self.walked + np.arange(chunk, dtype=np.int64)) % total
            found: IdArray = self.table.perm[steps]
            if self.mask is not None:
                keep = np.flatnonzero(self.mask[found])
                found = found[keep]
                steps = steps[keep]
            if got + len(found) > n:
                found = found[: n - got]
                steps = steps[: n - got]
                self.walked = int((steps[-1] - self.start) % total) + 1
            else:
                self.walked += chunk
            parts.append(found)
            got += len(found)
        out = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
        self._handed.append(out)
        self.cursor += len(out)
        return out


class ImageTable:
    """Every image id of the store with its split and a per-image base hash (one generation)."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        rows = sorted(rows, key=lambda r: str(r["id"]))
        self.ids = [str(r["id"]) for r in rows]
        self.index = {image_id: n for n, image_id in enumerate(self.ids)}
        names = sorted({str(r["split"]) for r in rows})
        self.split_codes = {name: code for code, name in enumerate(names)}
        self.splits = np.array([self.split_codes[str(r["split"])] for r in rows], dtype=np.int64)
        self.base = np.array([hash64(i) for i in self.ids], dtype=np.uint64)
        # A fixed pseudo-random permutation of all images (by hash of the id); a seeded order is
        # this permutation rotated to a start drawn from (seed, salt). Cheap for any pool size.
        self.perm: IdArray = np.argsort(self.base, kind="stable").astype(np.int64)
        self.rank: IdArray = np.empty(len(self.ids), dtype=np.int64)
        self.rank[self.perm] = np.arange(len(self.ids), dtype=np.int64)

    def in_split(self, pool: IdArray, split: str | None) -> IdArray:
        if split is None:
            return pool
        code = self.split_codes.get(split)
        if code is None:
            return np.empty(0, dtype=np.int64)
        kept: IdArray = pool[self.splits[pool] == code]
        return kept

    def start(self, seed: int, salt: str) -> int:
        return hash64(f"{seed}\x1f{salt}") % max(1, len(self.ids))

    def stream(
        self, pool: IdArray | None, seed: int, salt: str, split: str | None
    ) -> Stream | WholeStream:
        """``pool`` in the seeded order; ``None`` = every image of ``split``."""
        start = self.start(seed, salt)
        if pool is None:
            code = None if split is None else self.split_codes.get(split, -1)
            return WholeStream(self, start, code)
        keys: IdArray = (self.rank[pool] - start) % max(1, len(self.ids))
        return Stream(pool, keys)


# -- draw order ----------------------------------------------------------------------------


def seeded_order(pool: Sequence[str], rng: random.Random) -> Iterable[str]:
    """The pool in a random order drawn lazily (cheap when only a few items are needed)."""
    n = len(pool)
    if n <= 64:
        order = list(pool)
        rng.shuffle(order)
        yield from order
        return
    seen: set[int] = set()
    while len(seen) < n:
        i = rng.randrange(n)
        if i in seen:
            if len(seen) > n // 2:  # dense: finish with a shuffle of the rest
                rest = [j for j in range(n) if j not in seen]
                rng.shuffle(rest)
                for j in rest:
                    yield pool[j]
                return
            continue
        seen.add(i)
        yield pool[i]


def filtered_order(
    pool: Sequence[str], rest: Sequence[set[str]], rng: random.Random, max_scan: int
) -> Iterator[str]:
    """The items of ``pool`` that are in every set of ``rest``, in the order of
    :func:`seeded_order` over ``pool``, looking at most ``max_scan`` items.

    The hot loop of the related-images stage: at 1x most lookups look at every item of a pool of
    a few thousand images for a handful of hits. One loop with ``rng.getrandbits`` inlined instead
    of a generator step and a ``random.randrange`` call per draw; it makes exactly the draws of
    ``seeded_order`` (CPython's ``_randbelow_with_getrandbits``: ``k = n.bit_length()`` bits,
    redrawn while ``>= n``; the same dense fallback and shuffle), so the order and the generator's
    state after every yielded item are the same (a unit test compares them). Drawing the words
    ahead with numpy's MT19937 (same generator) was tried and was slower at 1x. As in
    ``enumerate(seeded_order(...))`` with a ``looked >= max_scan`` stop, the item after the
    ``max_scan`` looked-at ones is drawn (consuming random numbers) but not checked.
    """
    n = len(pool)
    looked = 0
    if n <= 64:
        order = list(pool)
        shuffle(rng, order)
        for image_id in order:
            if looked >= max_scan:
                return
            looked += 1
            for r in rest:
                if image_id not in r:
                    break
            else:
                yield image_id
        return
    getrandbits = rng.getrandbits
    k = n.bit_length()
    half = n // 2
    seen: set[int] = set()
    add = seen.add
    while len(seen) < n:
        i = getrandbits(k)
        while i >= n:
            i = getrandbits(k)
        if i in seen:
            if len(seen) > half:  # dense: the rest of the pool in a shuffled order
                remaining = [j for j in range(n) if j not in seen]
                shuffle(rng, remaining)
                for j in remaining:
                    if looked >= max_scan:
                        return
                    looked += 1
                    image_id = pool[j]
                    for r in rest:
                        if image_id not in r:
                            break
                    else:
                        yield image_id
                return
            continue
        add(i)
        if looked >= max_scan:
            return
        looked += 1
        image_id = pool[i]
        for r in rest:
            if image_id not in r:
                break
        else:
            yield image_id


def shuffle(rng: random.Random, items: list[Any]) -> None:
    """``rng.shuffle(items)`` with ``_randbelow`` inlined: the same draws (``i + 1`` has ``k``
    bits; ``getrandbits(k)`` redrawn while ``> i``), the same order and final state."""
    getrandbits = rng.getrandbits
    for i in range(len(items) - 1, 0, -1):
        k = (i + 1).bit_length()
        j = getrandbits(k)
        while j > i:
            j = getrandbits(k)
        items[i], items[j] = items[j], items[i]
