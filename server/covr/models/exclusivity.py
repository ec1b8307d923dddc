"""The ONNX exclusivity model ``m(type, x, x')`` served with onnxruntime (DESIGN.md §6).

:class:`OnnxExclusivity` implements the related-images room's ``Exclusivity`` protocol
structurally (``m`` and ``m_batch``) without importing that room (DESIGN.md §1). Scores are cached
per ``(type, x, x')`` (:mod:`covr.models.score_rows`); the cache belongs to one model version
and is dropped by :meth:`refresh` when the file on disk carries another version. Identical names score 0.0 without the model, as
the protocol requires; ``relmod`` pairs use the relation head.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from covr.models.errors import ModelInputError, ModelResourceError
from covr.models.features import FEATURES_VERSION, Featurizer, FloatArray, Lexicon
from covr.models.lexical import LexicalTable, table_path, write_table
from covr.models.onnx_io import OnnxHead
from covr.models.pair_memo import memo_path, read_memo, write_memo
from covr.models.score_rows import ScoreRows
from covr.models.terms import (
    NODE_TYPES,
    ModelType,
    NodeType,
    model_type,
    node_type,
    normal_form,
    normalize_term,
)

EXCLUSIVITY_INPUT = "features"
EXCLUSIVITY_OUTPUT = "exclusive_probability"
CHUNK = 8192
_log = logging.getLogger(__name__)
_KIND: dict[str, ModelType] = {t: model_type(t) for t in NODE_TYPES}


class OnnxExclusivity:
    """Mutual-exclusivity scores from the ONNX head plus cached per-term features."""

    def __init__(
        self,
        path: Path,
        *,
        wordnet: Any = None,
        open_wordnet: Callable[[], Any] | None = None,
        threads: int = 1,
        max_pairs: int = 16_000_000,
        learned: tuple[Path, str] | None = None,
    ) -> None:
        """``wordnet`` (a reader) or ``open_wordnet`` (opens one on first need) answers for
        terms outside the model's lexical table; see :mod:`covr.models.lexical`. ``learned``
        is ``(folder, WordNet source)``: where the facts WordNet gave for such terms are kept
        between processes (:meth:`remember_facts`)."""
        self.path = path
        self._learned = learned
        self._wordnet = wordnet
        self._open_wordnet = open_wordnet
        self._threads = threads
        self._lock = threading.Lock()
        self._cache = ScoreRows(max_pairs)
        self._load()
        self._remembered = self._read_remembered()

    def _load(self) -> None:
        head = OnnxHead(self.path, threads=self._threads)
        meta = head.metadata
        if meta.get("model_name") != "covr-exclusivity":
            raise ModelResourceError(f"{self.path} is not an exclusivity model")
        spec = head.json_meta("features")
        if spec.get("version") != FEATURES_VERSION:
            raise ModelResourceError(
                f"{self.path}: features version {spec.get('version')} but this code computes "
                f"version {FEATURES_VERSION}; retrain with `covr models train exclusivity`"
            )
        featurizer = Featurizer(
            Lexicon(head.json_meta("lexicon")),
            self._wordnet,
            table=self._table(meta),
            open_wordnet=self._open_wordnet,
            learned=self._learned_table(meta.get("version", "")),
        )
        if featurizer.names != spec.get("names"):
            raise ModelResourceError(f"{self.path}: feature names differ from this code's")
        self._head = head
        self._featurizer = featurizer
        self.version: str = meta.get("version", "")
        self.metadata: dict[str, str] = meta

    def _table(self, meta: dict[str, str]) -> LexicalTable | None:
        """The lexical table beside the file when it belongs to this model, else None (then
        every term is looked up in WordNet: slower start, same scores)."""
        path = table_path(self.path)
        expected = meta.get("lexical_table")
        if expected is None or not path.is_file():
            if expected is not None:
                _log.warning("%s: lexical table %s missing; using WordNet", self.path, path)
            return None
        table = LexicalTable.read(path)
        sha = json.loads(expected).get("sha256")
        if table.sha256 != sha or table.model_version != meta.get("version"):
            _log.warning("%s: %s belongs to another model version; using WordNet", self.path, path)
            return None
        return table

    def _learned_path(self, version: str) -> Path | None:
        if self._learned is None:
            return None
        return self._learned[0] / f"{self.path.stem}-{version}.wordnet-facts.json"

    def _learned_table(self, version: str) -> LexicalTable | None:
        """The facts earlier processes remembered for this model version and WordNet source,
        or None (absent, unreadable, another source: then WordNet answers, same scores)."""
        path = self._learned_path(version)
        if path is None or not path.is_file():
            return None
        try:
            table = LexicalTable.read(path)
        except ModelResourceError as exc:
            _log.warning("ignoring remembered WordNet facts: %s", exc)
            return None
        ok = table.model_version == version and table.features_version == FEATURES_VERSION
        return table if ok and self._learned and table.source == self._learned[1] else None

    def prime(self, terms: Sequence[tuple[NodeType, str]]) -> None:
        """Compute the per-term features of ``terms`` now and remember the WordNet facts this
        needed: ``covr generate`` calls it with the store's vocabulary before forking workers,
        so WordNet (seconds of start-up) is opened at most once, in the parent, and not at all
        by the next process. Names the model cannot read are skipped (the lookup judges those
        pairs by the word lists)."""
        featurizer = self._featurizer
        for raw_kind, name in terms:
            try:
                kind, term, _ = self._key(0, (raw_kind, name, name))  # as scoring normalizes
            except ModelInputError:
                continue
            featurizer.term(kind, term)
        self.remember_facts()

    def remember_facts(self) -> bool:
        """Write the WordNet facts this process computed, with those already remembered, to
        ``<folder>/<model>-<version>.wordnet-facts.json`` (the lexical table's format); True
        when a file was written. Why: the model's own table covers its training vocabulary,
        and a store's other names (synthetic words, new datasets) otherwise open WordNet in
        every process, ~9 CPU-s each; the facts are what WordNet gives, so scores are equal."""
        path = self._learned_path(self.version)
        new = self._featurizer.computed_facts()
        if path is None or not new or self._learned is None:
            return False
        old = self._featurizer.learned
        known = [(k, t, f) for k, t in old.terms() if (f := old.get(k, t))] if old else []
        try:
            write_table(
                path,
                {(k, t): (k, t, f) for k, t, f in [*known, *new]}.values(),
                model=f"{self.path.stem}-learned",
                model_version=self.version,
                features_version=FEATURES_VERSION,
                source=self._learned[1],
            )
        except OSError as exc:  # a cache: generation goes on without it
            _log.warning("WordNet facts not remembered in %s: %s", path, exc)
            return False
        return True

    def _memo_path(self, folder: Path | None = None) -> Path | None:
        if self._learned is None:
            return None
        return memo_path(folder or self._learned[0], self.path.stem, self.version)

    def _read_remembered(self) -> int:
        """Fill the score cache from the scores earlier processes remembered (:mod:`pair_memo`);
        the number read."""
        path = self._memo_path()
        if path is None or self._learned is None:
            return 0
        table = read_memo(path, self.version, FEATURES_VERSION, self._learned[1])
        return 0 if table is None else self._cache.load(table)

    def remember_pairs(self, folder: Path | None = None) -> bool:
        """Write the scores cached now for the next process (``covr generate`` calls it at the
        end of a run); True when a file was written. Nothing new since the read: no write.

        ``folder`` is the caller's data folder for models: one model object serves every store
        of its process (it is loaded once per file), so the folder it was first opened for
        may belong to another data directory (a test session's earlier store)."""
        path = self._memo_path(folder)
        if path is None or self._learned is None:
            return False
        own = path == self._memo_path()  # the file it read at opening
        if own and len(self._cache) <= self._remembered:
            return False
        with self._lock:
            pairs = self._cache.table()
        written = write_memo(path, pairs, self.version, FEATURES_VERSION, self._learned[1])
        if written and own:
            self._remembered = len(pairs)
        return written

    def refresh(self) -> bool:
        """Re-read the file; drop the score cache if its model version changed (then True)."""
        with self._lock:
            old = self.version
            self._load()
            if self.version != old:
                self._cache.clear()
                self._remembered = self._read_remembered()
                return True
            return False

    @property
    def cache_size(self) -> int:
        return len(self._cache)

    def clear_cache(self) -> None:
        """Forget cached pair scores (per-term features stay: they do not depend on weights)."""
        self._cache.clear()

    def m(self, node_type: NodeType, x: str, x_prime: str) -> float:
        """Probability that ``x`` and ``x_prime`` are mutually exclusive (directional)."""
        return self.m_batch([(node_type, x, x_prime)])[0]

    def m_batch(self, pairs: Sequence[tuple[NodeType, str, str]]) -> list[float]:
        """:meth:`m` for many triples, in order; bad input raises ``ModelInputError``."""
        return [float(v) for v in self.scores(pairs)]

    def scores_against(self, node_type: NodeType, x: str, names: Sequence[str]) -> FloatArray:
        """``scores([(node_type, x, n) for n in names])``: one slice of ``x``'s cached row when
        every pair is remembered and the names are in normal form (a remembered name is its own
        key, as in :meth:`scores`), else the pairs one by one. The related lookup asks this for
        each queried name against its whole vocabulary: ~1,300 pairs a name, 1,071 names on the
        100-image sample."""
        kind = _KIND.get(node_type) if type(node_type) is str else None
        hit = None if kind is None else self._cache.slice(kind, x, names)
        return hit if hit is not None else self.scores([(node_type, x, n) for n in names])

    def scores(self, pairs: Sequence[tuple[Any, Any, Any]]) -> FloatArray:
        """The scores as a float32 array (the fast path for large batches)."""
        n = len(pairs)
        values = [0.0] * n
        cache = self._cache
        missing: dict[tuple[ModelType, str, str], list[int]] = {}
        for i, triple in enumerate(pairs):
            hit = cache.find(triple)  # a triple in normal form is its own key (idempotent)
            if hit is not None:
                values[i] = hit
                continue
            key = self._key(i, triple)
            if key[1] == key[2]:
                continue  # identical names are never exclusive
            hit = cache.get(*key)
            if hit is None:
                missing.setdefault(key, []).append(i)
            else:
                values[i] = hit
        if missing:
            todo = list(missing)
            for start in range(0, len(todo), CHUNK):
                part = todo[start : start + CHUNK]
                probs = self.predict_rows(self._featurizer.rows(part)).tolist()
                rows: dict[tuple[ModelType, str], tuple[list[str], list[float]]] = {}
                for key, p in zip(part, probs, strict=True):
                    names, scores = rows.setdefault(key[:2], ([], []))
                    names.append(key[2])
                    scores.append(p)
                    for i in missing[key]:
                        values[i] = p
                with self._lock:
                    for (kind, x), (names, scores) in rows.items():
                        cache.put_many(kind, x, names, scores)
        return np.asarray(values, dtype=np.float32)

    @staticmethod
    def _key(i: int, triple: Any) -> tuple[ModelType, str, str]:
        """Validated, normalized cache key; field names are built only for errors."""
        if type(triple) is not tuple or len(triple) != 3:
            raise ModelInputError(f"pairs[{i}]", "must be a (node_type, x, x_prime) triple")
        raw_kind, x, y = triple
        kind = _KIND.get(raw_kind) if type(raw_kind) is str else None
        if kind is None:
            kind = model_type(node_type(raw_kind, f"pairs[{i}].node_type"))
        if type(x) is str and type(y) is str:
            nx, px = normal_form(x)
            ny, py = normal_form(y)
            if px is None and py is None:
                return kind, nx, ny
        return (
            kind,
            normalize_term(x, f"pairs[{i}].x"),
            normalize_term(y, f"pairs[{i}].x_prime"),
        )

    def predict_rows(self, rows: FloatArray) -> FloatArray:
        """Raw model output for feature rows (tests compare it with the training-time head)."""
        return self._head.run({EXCLUSIVITY_INPUT: rows})

    @property
    def featurizer(self) -> Featurizer:
        return self._featurizer
