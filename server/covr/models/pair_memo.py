"""Exclusivity scores kept between processes: ``<folder>/<model>-<version>.pair-scores.npz``.

Why: a related lookup scores each queried name against the store's whole vocabulary (the
Cypher prefilter needs the exclusive and the non-exclusive names), ~490 pairs a name on the
100-image synthetic sample; in a fresh ``covr generate`` process that was ~15 % of the run's CPU
(profile of 30 source images), paid again by every run over the same store. A score depends
only on the model version, the features version and the WordNet source (facts for names outside
the model's table), so it is written once and read back by the next process; a file of another
model or source, or one that does not read, is ignored (the model scores again: same values).

The format is numpy's ``.npz`` without pickles: the distinct names once, then per pair the node
type's index, the two names' indices and the score as float64 (exactly the float the cache held).
The score cache reads and writes it as arrays (:class:`PairTable`); :func:`read_pairs` and
:func:`write_pairs` are the same file as a mapping.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from covr.models.terms import MODEL_TYPES, ModelType

IntArray = np.ndarray[Any, np.dtype[np.int64]]
ScoreArray = np.ndarray[Any, np.dtype[np.float64]]

PairKey = tuple[ModelType, str, str]
_log = logging.getLogger(__name__)


def memo_path(folder: Path, model_stem: str, version: str) -> Path:
    return folder / f"{model_stem}-{version}.pair-scores.npz"


def _meta(version: str, features_version: int, source: str) -> str:
    return json.dumps(
        {"model_version": version, "features_version": features_version, "source": source},
        sort_keys=True,
    )


@dataclass(frozen=True)
class PairTable:
    """Remembered scores as arrays: pair ``i`` is ``(MODEL_TYPES[kinds[i]], names[x[i]],
    names[y[i]]) -> scores[i]``."""

    names: list[str]
    kinds: IntArray
    x: IntArray
    y: IntArray
    scores: ScoreArray

    def __len__(self) -> int:
        return len(self.scores)


def read_memo(path: Path, version: str, features_version: int, source: str) -> PairTable | None:
    """The remembered scores of this model version and WordNet source; None when the file is
    absent, of another model or source, or unreadable (then with a warning)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["meta"]) != _meta(version, features_version, source):
                return None
            table = PairTable(
                data["names"].tolist(),
                data["kinds"].astype(np.int64),
                data["x"].astype(np.int64),
                data["y"].astype(np.int64),
                data["scores"].astype(np.float64),
            )
        sizes = {len(table.kinds), len(table.x), len(table.y), len(table.scores)}
        if len(sizes) != 1:
            raise ValueError("arrays of different lengths")
        if len(table) and (
            int(table.kinds.max()) >= len(MODEL_TYPES)
            or min(int(table.x.min()), int(table.y.min()), int(table.kinds.min())) < 0
            or max(int(table.x.max()), int(table.y.max())) >= len(table.names)
        ):
            raise IndexError("an index outside the names or node types")
        return table
    except (OSError, ValueError, KeyError, IndexError, EOFError, zipfile.BadZipFile) as exc:
        _log.warning("ignoring remembered exclusivity scores in %s: %s", path, exc)
        return None


def write_memo(
    path: Path, table: PairTable, version: str, features_version: int, source: str
) -> bool:
    """Write ``table`` atomically (a reader never sees half a file); False when it failed (a
    cache: the caller goes on without it)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("wb") as handle:
            np.savez(
                handle,
                meta=np.array(_meta(version, features_version, source)),
                names=np.array(table.names, dtype=str),
                kinds=table.kinds.astype(np.uint8),
                x=table.x.astype(np.int32),
                y=table.y.astype(np.int32),
                scores=table.scores.astype(np.float64),
            )
        os.replace(tmp, path)
    except OSError as exc:
        _log.warning("exclusivity scores not remembered in %s: %s", path, exc)
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return False
    return True


def read_pairs(
    path: Path, version: str, features_version: int, source: str
) -> dict[PairKey, float]:
    """:func:`read_memo` as a mapping (empty when there is nothing to read)."""
    table = read_memo(path, version, features_version, source)
    if table is None:
        return {}
    names = table.names
    return {
        (MODEL_TYPES[k], names[x], names[y]): s
        for k, x, y, s in zip(
            table.kinds.tolist(),
            table.x.tolist(),
            table.y.tolist(),
            table.scores.tolist(),
            strict=True,
        )
    }


def write_pairs(
    path: Path,
    pairs: Mapping[PairKey, float],
    version: str,
    features_version: int,
    source: str,
) -> bool:
    """:func:`write_memo` of a mapping."""
    index: dict[str, int] = {}
    kind_index = {t: i for i, t in enumerate(MODEL_TYPES)}
    rows = [
        (kind_index[kind], index.setdefault(x, len(index)), index.setdefault(y, len(index)), s)
        for (kind, x, y), s in pairs.items()
    ]
    kinds, xs, ys, scores = (list(c) for c in zip(*rows, strict=True)) if rows else ([],) * 4
    table = PairTable(
        list(index),
        np.array(kinds, dtype=np.int64),
        np.array(xs, dtype=np.int64),
        np.array(ys, dtype=np.int64),
        np.array(scores, dtype=np.float64),
    )
    return write_memo(path, table, version, features_version, source)
