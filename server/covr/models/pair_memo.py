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
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from covr.models.terms import MODEL_TYPES, ModelType

PairKey = tuple[ModelType, str, str]
_log = logging.getLogger(__name__)


def memo_path(folder: Path, model_stem: str, version: str) -> Path:
    return folder / f"{model_stem}-{version}.pair-scores.npz"


def _meta(version: str, features_version: int, source: str) -> str:
    return json.dumps(
        {"model_version": version, "features_version": features_version, "source": source},
        sort_keys=True,
    )


def read_pairs(
    path: Path, version: str, features_version: int, source: str
) -> dict[PairKey, float]:
    """The remembered scores of this model version and WordNet source; empty when the file is
    absent, of another model or source, or unreadable (then with a warning)."""
    if not path.is_file():
        return {}
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["meta"]) != _meta(version, features_version, source):
                return {}
            names = data["names"].tolist()
            kinds = data["kinds"].tolist()
            xs = data["x"].tolist()
            ys = data["y"].tolist()
            scores = data["scores"].tolist()
        return {
            (MODEL_TYPES[k], names[x], names[y]): s
            for k, x, y, s in zip(kinds, xs, ys, scores, strict=True)
        }
    except (OSError, ValueError, KeyError, IndexError, EOFError, zipfile.BadZipFile) as exc:
        _log.warning("ignoring remembered exclusivity scores in %s: %s", path, exc)
        return {}


def write_pairs(
    path: Path,
    pairs: Mapping[PairKey, float],
    version: str,
    features_version: int,
    source: str,
) -> bool:
    """Write ``pairs`` atomically (a reader never sees half a file); False when it failed (a
    cache: the caller goes on without it)."""
    index: dict[str, int] = {}
    kind_index = {t: i for i, t in enumerate(MODEL_TYPES)}
    kinds: list[int] = []
    xs: list[int] = []
    ys: list[int] = []
    scores: list[float] = []
    for (kind, x, y), score in pairs.items():
        kinds.append(kind_index[kind])
        xs.append(index.setdefault(x, len(index)))
        ys.append(index.setdefault(y, len(index)))
        scores.append(score)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("wb") as handle:
            np.savez(
                handle,
                meta=np.array(_meta(version, features_version, source)),
                names=np.array(list(index), dtype=str),
                kinds=np.array(kinds, dtype=np.uint8),
                x=np.array(xs, dtype=np.int32),
                y=np.array(ys, dtype=np.int32),
                scores=np.array(scores, dtype=np.float64),
            )
        os.replace(tmp, path)
    except OSError as exc:
        _log.warning("exclusivity scores not remembered in %s: %s", path, exc)
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return False
    return True
