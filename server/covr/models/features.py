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
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from covr.models.terms import MODEL_TYPES, ModelType
from covr.models.wordnet import LEXNAMES
from covr.scene.text import singular

FEATURES_VERSION = 1
_POS: dict[ModelType, str] = {"object": "n", "attribute": "a", "relation": "v"}
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
    """Turns ``(type, x, x')`` triples into feature rows; caches term-level work."""

    def __init__(self, lexicon: Lexicon, wordnet: Any) -> None:
        self.lexicon = lexicon
        self.wordnet = wordnet
        self.names = feature_names(lexicon)
        self.width = len(self.names)
        self._term_width = len(LEXNAMES) + len(_TERM_EXTRA) + len(lexicon.categories)
        self._cache: dict[tuple[ModelType, str], TermInfo] = {}
        self._lock = threading.Lock()

    def term(self, kind: ModelType, term: str) -> TermInfo:
        key = (kind, term)
        info = self._cache.get(key)
        if info is None:
            with self._lock:  # nltk's reader is not safe for concurrent first use
                info = self._cache.get(key) or self._term(kind, term)
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
        lex = self.lexicon
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
            pairs.append(_pair(lex, a, b))
            types.append(_TYPE_INDEX[kind])
        out[np.arange(n), types] = 1.0
        out[:, 3 : 3 + tw] = np.stack(left)
        out[:, 3 + tw : pair_start] = np.stack(right)
        out[:, pair_start:] = np.asarray(pairs, dtype=np.float32)
        return out

    def _term(self, kind: ModelType, term: str) -> TermInfo:
        lex = self.lexicon
        tokens = term.split()
        head = tokens[-1] if kind != "relation" else tokens[0]
        synsets: list[Any] = []
        head_only = 0.0
        wn = self.wordnet
        if wn is not None:
            pos = _POS[kind]
            lookup = term.replace(" ", "_") if kind != "relation" else tokens[0]
            synsets = list(wn.synsets(lookup, pos))
            if kind == "attribute" and not synsets:
                synsets = list(wn.synsets(lookup, "s")) or list(wn.synsets(lookup, "n"))
            if not synsets and kind == "object" and len(tokens) > 1:
                synsets = list(wn.synsets(head, pos))
                head_only = 1.0 if synsets else 0.0
        first = synsets[:1]
        some = synsets[:3]
        ancestors: set[str] = set()
        first_anc: set[str] = set()
        depth: dict[str, int] = {}
        for rank, syn in enumerate(some):
            for anc in syn.closure(lambda s: s.hypernyms() + s.instance_hypernyms()):
                ancestors.add(anc.name())
                depth[anc.name()] = anc.min_depth()
                if rank == 0:
                    first_anc.add(anc.name())
        antonyms: set[str] = set()
        similar: set[str] = set()
        for syn in some:
            for lemma in syn.lemmas():
                similar.add(lemma.name().replace("_", " ").lower())
                antonyms |= {a.name().replace("_", " ").lower() for a in lemma.antonyms()}
            if kind == "attribute":
                for sim in syn.similar_tos():
                    for lemma in sim.lemmas():
                        similar.add(lemma.name().replace("_", " ").lower())
                        antonyms |= {a.name().replace("_", " ").lower() for a in lemma.antonyms()}
        lexname = LEXNAMES.index(first[0].lexname()) if first else -1
        lex_forms: set[str] = set()
        lex_anc: set[str] = set()
        groups: dict[str, frozenset[int]] = {}
        categories: set[str] = set()
        entailed: set[str] = set()
        equivalent: set[int] = set()
        prep = ""
        known = False
        if kind == "object":
            lex_forms = lex.noun_forms(term)
            lex_anc = lex.noun_ancestors(lex_forms)
            known = bool(lex_forms & lex.noun_vocab)
        elif kind == "attribute":
            for cat, index in lex.scales:
                if term in index:
                    groups[cat] = frozenset(index[term]) | groups.get(cat, frozenset())
                    categories.add(cat)
            lex_forms = {term} | {
                n for n, ids in lex.attr_syn.items() if ids & lex.attr_syn.get(term, set())
            }
            known = term in lex.attr_vocab
        else:
            entailed = lex.entailed(term)
            equivalent = set(lex.rel_equivalent.get(term, set())) | {
                1000 + g for g in lex.rel_mod_equivalent.get(term, set())
            }
            prep = lex.last_preposition(term)
            known = term in lex.rel_vocab
        vec = np.zeros(self._term_width, dtype=np.float32)
        if lexname >= 0:
            vec[lexname] = 1.0
        base = len(LEXNAMES)
        vec[base : base + len(_TERM_EXTRA)] = (
            1.0 if synsets else 0.0,
            float(np.log1p(len(synsets))),
            head_only,
            float(min(len(tokens), 5)),
            1.0 if known else 0.0,
            1.0 if term in lex.rel_general else 0.0,
        )
        cat_base = base + len(_TERM_EXTRA)
        for cat in categories:
            vec[cat_base + lex.categories.index(cat)] = 1.0
        own_depth = max((s.min_depth() for s in first), default=0)
        return TermInfo(
            term=term,
            kind=kind,
            vector=vec,
            tokens=frozenset(tokens),
            trigrams=_trigrams(term),
            singular=_norm(singular(term)),
            head=head,
            synsets=frozenset(s.name() for s in some),
            first=frozenset(s.name() for s in first),
            ancestors=frozenset(ancestors),
            first_ancestors=frozenset(first_anc),
            depth=depth,
            own_depth=own_depth,
            lexname=lexname,
            antonyms=frozenset(antonyms),
            similar=frozenset(similar),
            lex_forms=frozenset(lex_forms),
            lex_ancestors=frozenset(lex_anc),
            lex_groups=groups,
            lex_categories=frozenset(categories),
            entailed=frozenset(entailed),
            equivalent=frozenset(equivalent),
            preposition=prep,
            known=known or bool(synsets),
            cross=frozenset(
                (i, side)
                for i, sides in enumerate(lex.cross)
                for side in (0, 1)
                if kind == "object" and lex_forms & sides[side]
            ),
        )


def _trigrams(term: str) -> frozenset[str]:
    padded = f"  {term} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def _pair(lex: Lexicon, a: TermInfo, b: TermInfo) -> list[float]:
    """The pair-level block (order: :data:`PAIR_NAMES`).

    The lexicon blocks are only computed for the type they can be non-zero for (noun groups
    and hierarchy for objects, scales for attributes, equivalence/entailment for relations):
    the other types' term infos leave those sets empty, so the values are the same and a cold
    batch is faster.
    """
    common_depth = 0
    if a.ancestors or b.ancestors:
        common = (a.ancestors & b.ancestors) | (a.first & b.ancestors) | (b.first & a.ancestors)
        if common:
            depth_a, depth_b = a.depth, b.depth
            common_depth = max(depth_a.get(s, depth_b.get(s, 0)) for s in common)
    denom = max(a.own_depth, b.own_depth, 1)
    ta, tb = a.tokens, b.tokens
    ga, gb = a.trigrams, b.trigrams
    sa, sb = a.synsets, b.synsets
    row = [
        1.0 if a.singular == b.singular else 0.0,
        len(ta & tb) / len(ta | tb),
        len(ga & gb) / len(ga | gb),
        1.0 if ta <= tb else 0.0,
        1.0 if tb <= ta else 0.0,
        1.0 if a.head == b.head else 0.0,
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
    kind = a.kind
    if kind == "object":
        cross = bool(a.cross and b.cross) and any((i, 1 - side) in b.cross for i, side in a.cross)
        row += (
            1.0 if a.lex_forms & b.lex_forms else 0.0,
            1.0 if a.lex_forms & b.lex_ancestors else 0.0,
            1.0 if b.lex_forms & a.lex_ancestors else 0.0,
            1.0 if cross else 0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
        )
    elif kind == "attribute":
        same_group = other_group = 0.0
        shared = a.lex_categories & b.lex_categories
        for cat in shared:
            if a.lex_groups[cat] & b.lex_groups[cat]:
                same_group = 1.0
            else:
                other_group = 1.0
        row += (
            1.0 if a.lex_forms & b.lex_forms else 0.0,
            0.0,
            0.0,
            0.0,
            same_group,
            other_group,
            1.0 if shared else 0.0,
            0.0,
            0.0,
            0.0,
            0.0,
        )
    else:
        row += (
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            0.0,
            1.0 if a.equivalent & b.equivalent else 0.0,
            1.0 if b.term in a.entailed else 0.0,
            1.0 if a.term in b.entailed else 0.0,
            1.0 if a.preposition and a.preposition == b.preposition else 0.0,
        )
    row.append(1.0 if not a.known and not b.known else 0.0)
    return row


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
