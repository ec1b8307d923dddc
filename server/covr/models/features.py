"""Features of a term pair for the exclusivity classifier (paper §2.2, arXiv App. A).

Why these features: the paper fine-tuned RoBERTa on hand-labelled pairs; here the knowledge comes
from sources on the machine — WordNet 3.0 (synonymy, hypernymy, antonymy, lexicographer files),
the project's reviewed lexicon (attribute scales, relation equivalence/entailment, noun groups;
stored *inside* the ONNX file so a model is self-contained) and the strings themselves. A small MLP
then learns how to weigh them per node type.

Layout of one row (``FEATURE_NAMES``): type one-hot, then the term-level block of ``x``, the
term-level block of ``x'`` (so relations stay directional), then pair-level features. Term-level
blocks are computed once per ``(type, term)`` and cached; pair-level features are a handful of
set operations, so featurizing is cheap enough for >= 50k pairs/s.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from covr.models.lexical import NO_FACTS, LexicalTable, WordNetFacts, wordnet_facts
from covr.models.terms import MODEL_TYPES, ModelType
from covr.models.wordnet import LEXNAMES
from covr.scene.text import singular

FEATURES_VERSION = 1
_TERM_EXTRA = ("wn_known", "wn_senses", "wn_head_only", "tokens", "lex_known", "lex_general")
PAIR_NAMES = (
    "same_singular",
    "token_jaccard",
    "trigram_jaccard",
    "x_tokens_in_y",
    "y_tokens_in_x",
    "same_head",
    "wn_synonym",
    "wn_synonym_first",
    "wn_x_hypernym_of_y",
    "wn_y_hypernym_of_x",
    "wn_x_hypernym_of_y_first",
    "wn_y_hypernym_of_x_first",
    "wn_common_depth",
    "wn_same_lexname",
    "wn_antonym",
    "wn_antonym_of_similar",
    "wn_similar",
    "lex_synonym",
    "lex_x_ancestor_of_y",
    "lex_y_ancestor_of_x",
    "lex_cross_cutting",
    "lex_same_group",
    "lex_other_group_same_scale",
    "lex_shared_category",
    "lex_equivalent",
    "lex_x_entails_y",
    "lex_y_entails_x",
    "same_last_preposition",
    "both_unknown",
)

FloatArray = npt.NDArray[np.float32]
_TYPE_INDEX: dict[str, int] = {t: i for i, t in enumerate(MODEL_TYPES)}


def _norm(name: str) -> str:
    return " ".join(name.lower().split())


class Lexicon:
    """The reviewed word lists (nouns, attribute scales, relations) as lookup structures."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        nouns = data.get("nouns", {})
        attributes = data.get("attributes", {})
        relations = data.get("relations", {})
        self.data = {"nouns": nouns, "attributes": attributes, "relations": relations}
        self.noun_syn = _group_index(nouns.get("synonyms", []))
        self.noun_parents: dict[str, set[str]] = {}
        for hyper, hypos in nouns.get("hyponyms", {}).items():
            for hypo in hypos:
                self.noun_parents.setdefault(_norm(hypo), set()).add(_norm(hyper))
        self.cross = [
            ({_norm(n) for n in left}, {_norm(n) for n in right})
            for left, right in nouns.get("cross_cutting", [])
        ]
        self.scales = [
            (str(s["category"]), _group_index(s["groups"])) for s in attributes.get("scales", [])
        ]
        self.categories = sorted({c for c, _ in self.scales})
        self.attr_syn = _group_index(attributes.get("synonyms", []))
        self.rel_equivalent = _group_index(relations.get("equivalent", []))
        self.rel_general = {_norm(n) for n in relations.get("general", [])}
        self.prepositions = sorted(
            (_norm(p) for p in relations.get("prepositions", [])), key=len, reverse=True
        )
        self.implies = {
            _norm(k): {_norm(v) for v in vs} for k, vs in relations.get("implies", {}).items()
        }
        self.rel_mod_equivalent = _group_index(relations.get("relmod_equivalent", []))
        self.noun_vocab = set(self.noun_syn) | set(self.noun_parents)
        for hyper in nouns.get("hyponyms", {}):
            self.noun_vocab.add(_norm(hyper))
        for left, right in self.cross:
            self.noun_vocab |= left | right
        self.attr_vocab = set(self.attr_syn)
        for _, groups in self.scales:
            self.attr_vocab |= set(groups)
        self.rel_vocab = set(self.rel_equivalent) | self.rel_general | set(self.implies)
        self.rel_vocab |= set(self.prepositions)

    # nouns
    def noun_forms(self, name: str) -> set[str]:
        base = {name, _norm(singular(name))}
        out = set(base)
        for form in base:
            for gid in self.noun_syn.get(form, ()):
                out |= {n for n, ids in self.noun_syn.items() if gid in ids}
        return out

    def noun_ancestors(self, forms: set[str]) -> set[str]:
        seen: set[str] = set()
        stack = list(forms)
        while stack:
            for parent in self.noun_parents.get(stack.pop(), ()):
                for form in self.noun_forms(parent):
                    if form not in seen:
                        seen.add(form)
                        stack.append(form)
        return seen

    # relations
    def last_preposition(self, name: str) -> str:
        for prep in self.prepositions:
            if name == prep or name.endswith(" " + prep):
                return prep
        return ""

    def entailed(self, name: str) -> set[str]:
        seen: set[str] = set()
        stack = [name]
        while stack:
            current = stack.pop()
            nxt = set(self.implies.get(current, ()))
            prep = self.last_preposition(current)
            if prep and prep != current:
                nxt.add(prep)
            for gid in self.rel_equivalent.get(current, ()):
                nxt |= {n for n, ids in self.rel_equivalent.items() if gid in ids}
            for item in nxt:
                if item not in seen and item != name:
                    seen.add(item)
                    stack.append(item)
        return seen


def _group_index(raw: Iterable[Iterable[str]]) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for gid, group in enumerate(raw):
        for name in group:
            out.setdefault(_norm(name), set()).add(gid)
    return out


@dataclass(frozen=True, slots=True)
class TermInfo:
    """Everything about one ``(type, term)`` that pair features need (computed once)."""

    term: str
    kind: ModelType
    vector: FloatArray
    tokens: frozenset[str]
    trigrams: frozenset[str]
    singular: str
    head: str
    synsets: frozenset[str]
    first: frozenset[str]
    ancestors: frozenset[str]
    first_ancestors: frozenset[str]
    depth: Mapping[str, int]
    own_depth: int
    lexname: int
    antonyms: frozenset[str]
    similar: frozenset[str]
    lex_forms: frozenset[str]
    lex_ancestors: frozenset[str]
    lex_groups: Mapping[str, frozenset[int]]
    lex_categories: frozenset[str]
    entailed: frozenset[str]
    equivalent: frozenset[int]
    preposition: str
    known: bool
    cross: frozenset[tuple[int, int]]
    """(index of a cross-cutting pair of the lexicon, side 0 or 1) this noun belongs to."""


class Featurizer:
    """Turns ``(type, x, x')`` triples into feature rows; caches term-level work.

    WordNet facts come from ``table`` (the model's precomputed table) when it holds the term,
    else from ``wordnet`` (a reader) or ``open_wordnet`` (called once, on the first term the
    table misses, so serving a model's own vocabulary never loads WordNet). With neither,
    terms outside the table get :data:`NO_FACTS`.
    """

    def __init__(
        self,
        lexicon: Lexicon,
        wordnet: Any = None,
        *,
        table: LexicalTable | None = None,
        open_wordnet: Callable[[], Any] | None = None,
        learned: LexicalTable | None = None,
    ) -> None:
        self.lexicon = lexicon
        self.table = table
        self.learned = learned
        """Facts an earlier process computed from WordNet for terms outside ``table``
        (:meth:`~covr.models.exclusivity.OnnxExclusivity.remember_facts`), read before WordNet."""
        self._computed: dict[tuple[ModelType, str], WordNetFacts] = {}
        self._wordnet = wordnet
        self._open_wordnet = open_wordnet
        self.names = feature_names(lexicon)
        self.width = len(self.names)
        self._term_width = len(LEXNAMES) + len(_TERM_EXTRA) + len(lexicon.categories)
        self._cache: dict[tuple[ModelType, str], TermInfo] = {}
        self._facts: dict[tuple[ModelType, str], WordNetFacts] = {}
        # Only reading nltk needs a lock (its reader is not safe for concurrent first use).
        # Terms the table holds never take it: a server's background thread may hold it for
        # the seconds WordNet takes to open, and a request for tabled terms must not wait.
        self._wordnet_lock = threading.RLock()

    @property
    def wordnet(self) -> Any:
        """The WordNet reader, opened on first use (None when none was configured)."""
        if self._wordnet is None and self._open_wordnet is not None:
            with self._wordnet_lock:
                if self._wordnet is None:
                    self._wordnet = self._open_wordnet()
        return self._wordnet

    @property
    def wordnet_loaded(self) -> bool:
        return self._wordnet is not None

    def facts(self, kind: ModelType, term: str) -> WordNetFacts:
        """What WordNet says about ``term``: from the table, else from WordNet itself."""
        key = (kind, term)
        found = self._facts.get(key)
        if found is None:
            found = self.table.get(kind, term) if self.table is not None else None
            if found is None and self.learned is not None:
                found = self.learned.get(kind, term)
            if found is None:
                with self._wordnet_lock:
                    wn = self.wordnet
                    found = NO_FACTS if wn is None else wordnet_facts(wn, kind, term)
                if wn is not None:
                    self._computed[key] = found
            self._facts[key] = found
        return found

    def computed_facts(self) -> list[tuple[ModelType, str, WordNetFacts]]:
        """The facts this process read from WordNet itself (neither table held them)."""
        return [(k, t, f) for (k, t), f in self._computed.items()]

    def known_facts(self) -> list[tuple[ModelType, str, WordNetFacts]]:
        """Every term's facts computed so far (training writes them as the lexical table)."""
        return [(k, t, f) for (k, t), f in self._facts.items()]

    def term(self, kind: ModelType, term: str) -> TermInfo:
        key = (kind, term)
        info = self._cache.get(key)
        if info is None:
            # no lock: two threads may compute the same entry once each, with equal results
            info = self._term(kind, term)
            self._cache[key] = info
        return info

    def rows(self, triples: Sequence[tuple[ModelType, str, str]]) -> FloatArray:
        """Feature matrix ``[len(triples), width]`` (terms must be normalized already)."""
        n = len(triples)
        out = np.zeros((n, self.width), dtype=np.float32)
        if n == 0:
            return out
        tw = self._term_width
        pair_start = 3 + 2 * tw
        cache = self._cache
        left: list[FloatArray] = []
        right: list[FloatArray] = []
        pairs: list[list[float]] = []
        types: list[int] = []
        for kind, x, y in triples:
            a = cache.get((kind, x)) or self.term(kind, x)
            b = cache.get((kind, y)) or self.term(kind, y)
            left.append(a.vector)
            right.append(b.vector)
            pairs.append(_pair(a, b))
            types.append(_TYPE_INDEX[kind])
        out[np.arange(n), types] = 1.0
        out[:, 3 : 3 + tw] = np.stack(left)
        out[:, 3 + tw : pair_start] = np.stack(right)
        out[:, pair_start:] = np.asarray(pairs, dtype=np.float32)
        return out

    def _term(self, kind: ModelType, term: str) -> TermInfo:
        lex = self.lexicon
        tokens = term.split()
        wn = self.facts(kind, term)
        side = _lexicon_side(lex, kind, term)
        vec = np.zeros(self._term_width, dtype=np.float32)
        if wn.lexname >= 0:
            vec[wn.lexname] = 1.0
        base = len(LEXNAMES)
        vec[base : base + len(_TERM_EXTRA)] = (
            1.0 if wn.senses else 0.0,
            float(np.log1p(wn.senses)),
            1.0 if wn.head_only else 0.0,
            float(min(len(tokens), 5)),
            1.0 if side.known else 0.0,
            1.0 if term in lex.rel_general else 0.0,
        )
        cat_base = base + len(_TERM_EXTRA)
        for cat in side.categories:
            vec[cat_base + lex.categories.index(cat)] = 1.0
        return TermInfo(
            term=term,
            kind=kind,
            vector=vec,
            tokens=frozenset(tokens),
            trigrams=_trigrams(term),
            singular=_norm(singular(term)),
            head=tokens[-1] if kind != "relation" else tokens[0],
            synsets=frozenset(wn.synsets),
            first=frozenset(wn.synsets[:1]),
            ancestors=frozenset(wn.ancestors),
            first_ancestors=wn.first_ancestors,
            depth=wn.ancestors,
            own_depth=wn.own_depth,
            lexname=wn.lexname,
            antonyms=wn.antonyms,
            similar=wn.similar,
            lex_forms=frozenset(side.forms),
            lex_ancestors=frozenset(side.ancestors),
            lex_groups=side.groups,
            lex_categories=frozenset(side.categories),
            entailed=frozenset(side.entailed),
            equivalent=frozenset(side.equivalent),
            preposition=side.preposition,
            known=side.known or wn.senses > 0,
            cross=frozenset(
                (i, s)
                for i, sides in enumerate(lex.cross)
                for s in (0, 1)
                if kind == "object" and side.forms & sides[s]
            ),
        )


@dataclass
class _LexiconSide:
    """What the project's lexicon says about one term (only its type's fields are filled)."""

    forms: set[str] = field(default_factory=set)
    ancestors: set[str] = field(default_factory=set)
    groups: dict[str, frozenset[int]] = field(default_factory=dict)
    categories: set[str] = field(default_factory=set)
    entailed: set[str] = field(default_factory=set)
    equivalent: set[int] = field(default_factory=set)
    preposition: str = ""
    known: bool = False


def _lexicon_side(lex: Lexicon, kind: ModelType, term: str) -> _LexiconSide:
    out = _LexiconSide()
    if kind == "object":
        out.forms = lex.noun_forms(term)
        out.ancestors = lex.noun_ancestors(out.forms)
        out.known = bool(out.forms & lex.noun_vocab)
    elif kind == "attribute":
        for cat, index in lex.scales:
            if term in index:
                out.groups[cat] = frozenset(index[term]) | out.groups.get(cat, frozenset())
                out.categories.add(cat)
        own = lex.attr_syn.get(term, set())
        out.forms = {term} | {n for n, ids in lex.attr_syn.items() if ids & own}
        out.known = term in lex.attr_vocab
    else:
        out.entailed = lex.entailed(term)
        out.equivalent = set(lex.rel_equivalent.get(term, set())) | {
            1000 + g for g in lex.rel_mod_equivalent.get(term, set())
        }
        out.preposition = lex.last_preposition(term)
        out.known = term in lex.rel_vocab
    return out


def _trigrams(term: str) -> frozenset[str]:
    padded = f"  {term} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def _pair(a: TermInfo, b: TermInfo) -> list[float]:
    """The pair-level block (order: :data:`PAIR_NAMES`): strings, WordNet, lexicon, unknowns."""
    row = _string_pair(a, b) + _wordnet_pair(a, b)
    if a.kind == "object":
        row += _object_pair(a, b)
    elif a.kind == "attribute":
        row += _attribute_pair(a, b)
    else:
        row += _relation_pair(a, b)
    row.append(1.0 if not a.known and not b.known else 0.0)
    return row


def _string_pair(a: TermInfo, b: TermInfo) -> list[float]:
    ta, tb = a.tokens, b.tokens
    ga, gb = a.trigrams, b.trigrams
    return [
        1.0 if a.singular == b.singular else 0.0,
        len(ta & tb) / len(ta | tb),
        len(ga & gb) / len(ga | gb),
        1.0 if ta <= tb else 0.0,
        1.0 if tb <= ta else 0.0,
        1.0 if a.head == b.head else 0.0,
    ]


def _wordnet_pair(a: TermInfo, b: TermInfo) -> list[float]:
    common_depth = 0
    if a.ancestors or b.ancestors:
        common = (a.ancestors & b.ancestors) | (a.first & b.ancestors) | (b.first & a.ancestors)
        if common:
            depth_a, depth_b = a.depth, b.depth
            common_depth = max(depth_a.get(s, depth_b.get(s, 0)) for s in common)
    denom = max(a.own_depth, b.own_depth, 1)
    sa, sb = a.synsets, b.synsets
    return [
        1.0 if sa & sb else 0.0,
        1.0 if a.first & sb or b.first & sa else 0.0,
        1.0 if sa & b.ancestors else 0.0,
        1.0 if sb & a.ancestors else 0.0,
        1.0 if sa & b.first_ancestors else 0.0,
        1.0 if sb & a.first_ancestors else 0.0,
        common_depth / denom,
        1.0 if a.lexname >= 0 and a.lexname == b.lexname else 0.0,
        1.0 if b.term in a.antonyms or a.term in b.antonyms else 0.0,
        1.0 if a.antonyms & b.similar or b.antonyms & a.similar else 0.0,
        1.0 if b.term in a.similar or a.term in b.similar else 0.0,
    ]


# The lexicon block is only computed for the type it can be non-zero for (noun groups and
# hierarchy for objects, scales for attributes, equivalence/entailment for relations): the
# other types' term infos leave those sets empty, so the values are the same and a cold batch
# is faster. Each block has the 11 columns from ``lex_synonym`` to ``same_last_preposition``.


def _object_pair(a: TermInfo, b: TermInfo) -> list[float]:
    cross = bool(a.cross and b.cross) and any((i, 1 - side) in b.cross for i, side in a.cross)
    return [
        1.0 if a.lex_forms & b.lex_forms else 0.0,
        1.0 if a.lex_forms & b.lex_ancestors else 0.0,
        1.0 if b.lex_forms & a.lex_ancestors else 0.0,
        1.0 if cross else 0.0,
        *([0.0] * 7),
    ]


def _attribute_pair(a: TermInfo, b: TermInfo) -> list[float]:
    same_group = other_group = 0.0
    shared = a.lex_categories & b.lex_categories
    for cat in shared:
        if a.lex_groups[cat] & b.lex_groups[cat]:
            same_group = 1.0
        else:
            other_group = 1.0
    return [
        1.0 if a.lex_forms & b.lex_forms else 0.0,
        0.0,
        0.0,
        0.0,
        same_group,
        other_group,
        1.0 if shared else 0.0,
        *([0.0] * 4),
    ]


def _relation_pair(a: TermInfo, b: TermInfo) -> list[float]:
    return [
        *([0.0] * 7),
        1.0 if a.equivalent & b.equivalent else 0.0,
        1.0 if b.term in a.entailed else 0.0,
        1.0 if a.term in b.entailed else 0.0,
        1.0 if a.preposition and a.preposition == b.preposition else 0.0,
    ]


def feature_names(lexicon: Lexicon) -> list[str]:
    """Names of the columns of :meth:`Featurizer.rows`."""
    term = [f"lexname:{n}" for n in LEXNAMES] + list(_TERM_EXTRA)
    term += [f"category:{c}" for c in lexicon.categories]
    return (
        [f"type:{t}" for t in MODEL_TYPES]
        + [f"x.{n}" for n in term]
        + [f"y.{n}" for n in term]
        + [f"pair.{n}" for n in PAIR_NAMES]
    )


TripleFn = Callable[[Sequence[tuple[ModelType, str, str]]], FloatArray]
