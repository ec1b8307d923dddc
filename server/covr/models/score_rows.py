"""The exclusivity model's score cache: one float32 row per ``(type, x)`` over a name index.

Why rows and not a dict of pairs: a related lookup scores each queried name against the whole
vocabulary, so a generate run over a split asks for about vocabulary² pairs (540,465 on the
100-image synthetic sample, 1,296 names). As a dict that is ~200 bytes a pair; the old bound of
500,000 pairs sat just below that run's need, so every run evicted and scored ~50,000 pairs
again (about a fifth of its CPU, profile of 2026-11-27). As rows, a pair is one 4-byte cell: that
sample's scores fill 1,071 rows of 1,296 cells, ~5.5 MB, and a 3,000-name vocabulary takes ~36 MB,
so the bound can hold a split's full need.

The model's output is float32, so a cell holds exactly the score the model gave; NaN marks a
pair not scored yet. The bound counts allocated cells; beyond it the oldest rows go first
(dicts keep insertion order), until a tenth of the bound is free. Names get a column on first
sight; when the name index outgrows its bound (:data:`COLUMNS_PER_CELL`; a service fed ever
new names), everything is dropped and scoring starts over: memory stays bounded, scores the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from covr.models.features import FloatArray
from covr.models.pair_memo import IntArray, PairTable
from covr.models.terms import MODEL_TYPES, ModelType

COLUMNS_PER_CELL = 256
"""At most one name column per this many cells of the bound (a name costs ~100 bytes, a cell 4)."""


class ScoreRows:
    """Scores of ``(type, x, x')``, at most ``max_cells`` of them allocated (see module doc).

    Reads take no lock: a row only gains scores or is replaced by a longer copy, and while a
    writer moves it a read may miss (the caller then scores the pair again: same value).
    Writers hold the model's lock."""

    def __init__(self, max_cells: int) -> None:
        self.max_cells = max_cells
        self.max_columns = max(1000, max_cells // COLUMNS_PER_CELL)
        self._columns: dict[str, int] = {}
        self._rows: dict[tuple[ModelType, str], FloatArray] = {}
        self._cells = 0  # allocated
        self._known = 0  # scored cells

    def __len__(self) -> int:
        return self._known

    def get(self, kind: Any, x: Any, y: Any) -> float | None:
        """The remembered score, or None."""
        row = self._rows.get((kind, x))
        if row is None:
            return None
        column = self._columns.get(y)
        if column is None or column >= len(row):
            return None
        value = row[column]
        return None if value != value else float(value)  # NaN: not scored

    def slice(self, kind: ModelType, x: str, names: Sequence[str]) -> FloatArray | None:
        """The scores of ``x`` against every name of ``names`` as one array, or None unless all
        of them are remembered (a lookup asks this for its whole vocabulary)."""
        row = self._rows.get((kind, x))
        if row is None:
            return None
        get = self._columns.get
        columns = [get(n) for n in names]
        if None in columns:
            return None
        index = np.array(columns, dtype=np.int64)
        if len(index) and int(index.max()) >= len(row):
            return None
        out = row[index]
        return None if np.isnan(out).any() else out

    def find(self, triple: object) -> float | None:
        """:meth:`get` of a request's raw item: None unless it is a remembered triple (a
        malformed or unhashable one is left to the caller's validation, which names the field)."""
        if type(triple) is not tuple or len(triple) != 3:
            return None
        try:
            return self.get(*triple)
        except TypeError:
            return None

    def put_many(
        self, kind: ModelType, x: str, names: Sequence[str], scores: Sequence[float]
    ) -> None:
        """Remember ``(kind, x, names[i]) -> scores[i]``."""
        columns = self._columns
        new = [n for n in {x: None, **dict.fromkeys(names)} if n not in columns]
        if len(columns) + len(new) > self.max_columns:
            self.clear()
            new = list({x: None, **dict.fromkeys(names)})
        for name in new:
            columns[name] = len(columns)
        index = np.fromiter((columns[n] for n in names), dtype=np.int64, count=len(names))
        self._put(kind, x, index, np.asarray(scores, dtype=np.float32))

    def _put(self, kind: ModelType, x: str, index: IntArray, values: FloatArray) -> None:
        key = (kind, x)
        row = self._rows.get(key)
        if row is None or (len(index) and int(index.max()) >= len(row)):
            old = row
            width = int(index.max()) + 1 if len(index) else 0
            row = np.full(max(width, len(self._columns)), np.nan, dtype=np.float32)
            if old is not None:
                row[: len(old)] = old
                self._cells -= len(old)
                del self._rows[key]
            self._cells += len(row)
        else:
            del self._rows[key]  # moved to the end: the newest rows are evicted last
        new = int(np.count_nonzero(np.isnan(row[np.unique(index)])))
        row[index] = values
        self._known += new
        self._rows[key] = row
        if self._cells > self.max_cells:
            self._evict(keep=key)

    def _evict(self, keep: tuple[ModelType, str]) -> None:
        goal = self.max_cells - self.max_cells // 10
        for key in list(self._rows):
            if self._cells <= goal or key == keep:
                break
            row = self._rows.pop(key)
            self._cells -= len(row)
            self._known -= int(np.count_nonzero(~np.isnan(row)))

    def load(self, table: PairTable) -> int:
        """Remember a file's scores (:mod:`covr.models.pair_memo`), oldest rows first dropped
        if they exceed the bound; the number now known."""
        if not len(table) or len(self._columns) + len(table.names) > self.max_columns:
            return self._known
        names = table.names
        columns = np.fromiter(
            (self._columns.setdefault(n, len(self._columns)) for n in names),
            dtype=np.int64,
            count=len(names),
        )
        order = np.lexsort((table.x, table.kinds))
        kinds, xs = table.kinds[order], table.x[order]
        ys, scores = columns[table.y[order]], table.scores[order].astype(np.float32)
        starts = np.flatnonzero(np.r_[True, (kinds[1:] != kinds[:-1]) | (xs[1:] != xs[:-1])])
        ends = [*starts[1:].tolist(), len(order)]
        for start, end in zip(starts.tolist(), ends, strict=True):
            kind = MODEL_TYPES[int(kinds[start])]
            self._put(kind, names[int(xs[start])], ys[start:end], scores[start:end])
        return self._known

    def table(self) -> PairTable:
        """Every remembered score as arrays (for the file kept between processes)."""
        kind_index = {t: i for i, t in enumerate(MODEL_TYPES)}
        rows = list(self._rows.items())
        known = [np.flatnonzero(~np.isnan(row)) for _, row in rows]
        sizes = [len(k) for k in known]
        return PairTable(
            list(self._columns),
            np.repeat(np.array([kind_index[k] for (k, _), _ in rows], dtype=np.int64), sizes),
            np.repeat(np.array([self._columns[x] for (_, x), _ in rows], dtype=np.int64), sizes),
            np.concatenate([np.zeros(0, dtype=np.int64), *known]).astype(np.int64),
            np.concatenate(
                [
                    np.zeros(0, dtype=np.float32),
                    *(row[k] for (_, row), k in zip(rows, known, strict=True)),
                ]
            ).astype(np.float64),
        )

    def clear(self) -> None:
        self._columns.clear()
        self._rows.clear()
        self._cells = 0
        self._known = 0
