"""What WordNet says about a term, and the precomputed table of it shipped with each model.

Why a table: reading WordNet through nltk costs seconds to minutes of start-up (every index and
exception file is parsed), yet a model only ever asks about a few thousand terms — its training
vocabulary. Training writes those answers next to the ONNX file (``<model>.lexical.json``) with the
model's version and the file's SHA-256 recorded in the model's metadata; serving reads the table
(tens of milliseconds) and opens WordNet lazily, only for a term the table does not hold. The
facts are exactly what :func:`wordnet_facts` computes, so a term from the table gets the same
feature row, and the same score, as one computed from WordNet (a unit test checks every entry).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from covr.models.errors import ModelResourceError
from covr.models.terms import MODEL_TYPES, ModelType
from covr.models.wordnet import LEXNAMES

TABLE_FORMAT = 1
TABLE_SUFFIX = ".lexical.json"
_POS: dict[ModelType, str] = {"object": "n", "attribute": "a", "relation": "v"}


@dataclass(frozen=True, slots=True)
class WordNetFacts:
    """The WordNet part of one ``(type, term)``'s features (all other parts are cheap)."""

    senses: int
    """How many synsets the lookup found (all of them, not only the first three)."""
    head_only: bool
    """Found only through the last word of a multi-word noun."""
    lexname: int
    """Index in ``LEXNAMES`` of the first sense's lexicographer file, -1 without senses."""
    synsets: tuple[str, ...]
    """Names of the (at most three) most frequent senses, most frequent first."""
    ancestors: Mapping[str, int] = field(hash=False)
    """Hypernym closure of those senses: synset name -> its minimum depth."""
    first_ancestors: frozenset[str]
    own_depth: int
    """Minimum depth of the first sense (0 without senses)."""
    antonyms: frozenset[str]
    similar: frozenset[str]


NO_FACTS = WordNetFacts(0, False, -1, (), {}, frozenset(), 0, frozenset(), frozenset())
"""What a term WordNet does not know gets (also every term when WordNet is switched off)."""


def _lemma(name: str) -> str:
    return name.replace("_", " ").lower()


def wordnet_facts(wn: Any, kind: ModelType, term: str) -> WordNetFacts:
    """Ask nltk's reader about a normalized term (the reference the table is built from)."""
    tokens = term.split()
    pos = _POS[kind]
    lookup = term.replace(" ", "_") if kind != "relation" else tokens[0]
    synsets = list(wn.synsets(lookup, pos))
    if kind == "attribute" and not synsets:
        synsets = list(wn.synsets(lookup, "s")) or list(wn.synsets(lookup, "n"))
    head_only = False
    if not synsets and kind == "object" and len(tokens) > 1:
        synsets = list(wn.synsets(tokens[-1], pos))
        head_only = bool(synsets)
    if not synsets:
        return NO_FACTS
    some = synsets[:3]
    ancestors: dict[str, int] = {}
    first_anc: set[str] = set()
    for rank, syn in enumerate(some):
        for anc in syn.closure(lambda s: s.hypernyms() + s.instance_hypernyms()):
            ancestors[anc.name()] = anc.min_depth()
            if rank == 0:
                first_anc.add(anc.name())
    antonyms: set[str] = set()
    similar: set[str] = set()
    for syn in some:
        lemmas = list(syn.lemmas())
        if kind == "attribute":
            lemmas += [lemma for sim in syn.similar_tos() for lemma in sim.lemmas()]
        for lemma in lemmas:
            similar.add(_lemma(lemma.name()))
            antonyms |= {_lemma(a.name()) for a in lemma.antonyms()}
    return WordNetFacts(
        senses=len(synsets),
        head_only=head_only,
        lexname=LEXNAMES.index(synsets[0].lexname()),
        synsets=tuple(s.name() for s in some),
        ancestors=ancestors,
        first_ancestors=frozenset(first_anc),
        own_depth=int(synsets[0].min_depth()),
        antonyms=frozenset(antonyms),
        similar=frozenset(similar),
    )


class LexicalTable:
    """The facts of a model's vocabulary, decoded per term on first use.

    File layout (JSON): ``format``, ``model``, ``model_version``, ``features_version``,
    ``source``, ``synsets`` (every synset name once, sorted) and ``terms``:
    ``{type: {term: [senses, head_only, lexname, [synset ids], [ancestor id, depth, ...],
    [first-sense ancestor ids], own_depth, [antonyms], [similar]]}}``; ids index ``synsets``.
    """

    def __init__(self, data: Mapping[str, Any], sha256: str = "") -> None:
        if data.get("format") != TABLE_FORMAT:
            raise ModelResourceError(f"lexical table format {data.get('format')!r} is not known")
        self.model_version = str(data.get("model_version", ""))
        self.source = str(data.get("source", ""))
        self.features_version = data.get("features_version")
        self.sha256 = sha256
        self._names: list[str] = list(data["synsets"])
        self._raw: dict[str, dict[str, list[Any]]] = {k: dict(v) for k, v in data["terms"].items()}
        self._decoded: dict[tuple[ModelType, str], WordNetFacts] = {}

    def __len__(self) -> int:
        return sum(len(v) for v in self._raw.values())

    def terms(self) -> list[tuple[ModelType, str]]:
        return [(k, t) for k in MODEL_TYPES for t in sorted(self._raw.get(k, {}))]

    def get(self, kind: ModelType, term: str) -> WordNetFacts | None:
        """The facts of ``term``, or None when the table does not hold it."""
        key = (kind, term)
        facts = self._decoded.get(key)
        if facts is None:
            raw = self._raw.get(kind, {}).get(term)
            if raw is None:
                return None
            facts = self._decode(raw)
            self._decoded[key] = facts
        return facts

    def _decode(self, raw: list[Any]) -> WordNetFacts:
        senses, head_only, lexname, syns, anc, first, own_depth, antonyms, similar = raw
        if senses == 0:
            return NO_FACTS
        names = self._names
        return WordNetFacts(
            senses=int(senses),
            head_only=bool(head_only),
            lexname=int(lexname),
            synsets=tuple(names[i] for i in syns),
            ancestors={names[anc[i]]: int(anc[i + 1]) for i in range(0, len(anc), 2)},
            first_ancestors=frozenset(names[i] for i in first),
            own_depth=int(own_depth),
            antonyms=frozenset(antonyms),
            similar=frozenset(similar),
        )

    @classmethod
    def read(cls, path: Path) -> LexicalTable:
        try:
            raw = path.read_bytes()
            return cls(json.loads(raw), hashlib.sha256(raw).hexdigest())
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelResourceError(f"cannot read lexical table {path}: {exc}") from exc


def table_path(model_path: Path) -> Path:
    """Where a model's table lives: ``exclusivity.onnx`` -> ``exclusivity.lexical.json``."""
    return model_path.with_name(model_path.stem + TABLE_SUFFIX)


def write_table(
    path: Path,
    facts: Iterable[tuple[ModelType, str, WordNetFacts]],
    *,
    model: str,
    model_version: str,
    features_version: int,
    source: str = "WordNet 3.0 (Debian wordnet-base) read by nltk at training time",
) -> dict[str, Any]:
    """Write the table; returns what the model's metadata records about it (file, hash, size).

    The output is canonical (sorted names and terms, no whitespace), so the same vocabulary and
    WordNet give the same bytes and the same hash.
    """
    items = sorted(facts, key=lambda f: (f[0], f[1]))
    names = sorted({n for _, _, f in items for n in (*f.synsets, *f.ancestors, *f.first_ancestors)})
    ids = {n: i for i, n in enumerate(names)}
    terms: dict[str, dict[str, list[Any]]] = {k: {} for k in MODEL_TYPES}
    for kind, term, f in items:
        anc: list[int] = []
        for name in sorted(f.ancestors):
            anc += [ids[name], f.ancestors[name]]
        terms[kind][term] = [
            f.senses,
            int(f.head_only),
            f.lexname,
            [ids[n] for n in f.synsets],
            anc,
            sorted(ids[n] for n in f.first_ancestors),
            f.own_depth,
            sorted(f.antonyms),
            sorted(f.similar),
        ]
    data = {
        "format": TABLE_FORMAT,
        "model": model,
        "model_version": model_version,
        "features_version": features_version,
        "source": source,
        "synsets": names,
        "terms": terms,
    }
    raw = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")  # processes may write at once
    tmp.write_bytes(raw)
    tmp.replace(path)
    return {
        "file": path.name,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "terms": len(items),
        "format": TABLE_FORMAT,
    }
