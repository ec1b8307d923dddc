"""Training data, training and export of the exclusivity classifier (paper §2.2, arXiv App. A).

Where the labelled pairs come from (all reachable on the machine, no download):

- **which pairs**: the arXiv App. A contexts mined from scene graphs — attributes seen on the same
  noun, nouns seen with the same relation, relations seen between the same noun pair — plus the
  vocabulary of the project's lexicon and WordNet neighbours of every known noun (synonyms,
  hypernyms, hyponyms, siblings) and adjective (antonyms, similar-to);
- **labels** (silver, by rule): nouns are exclusive unless WordNet or the lexicon makes them
  synonyms, hypernym/hyponym or cross-cutting (App. A); attributes follow the lexicon's scales and
  WordNet antonyms / similar-to; relations follow the lexicon's *directional* rules. The caller
  passes the lexicon rules as a ``reference`` scorer (the related room's resource model), so this
  room does not import that room (DESIGN.md §1).

Every gold pair (``gold.py``) is removed from training in both orders; accuracy is reported on the
gold set only, next to a silver held-out split.
"""

from __future__ import annotations

import hashlib
import json
import random
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from covr.models.errors import ModelInputError
from covr.models.exclusivity import EXCLUSIVITY_INPUT, EXCLUSIVITY_OUTPUT
from covr.models.features import FEATURES_VERSION, Featurizer, FloatArray, Lexicon
from covr.models.gold import GoldPair, gold_keys
from covr.models.lexical import table_path, write_table
from covr.models.onnx_io import (
    OPSET,
    MlpWeights,
    export_mlp,
    single_threaded,
    training_environment,
    weights_from_sklearn,
)
from covr.models.terms import MODEL_TYPES, ModelType, normalize_term
from covr.scene.model import SceneGraph

PAPER_ACCURACY: dict[ModelType, float] = {"object": 0.944, "attribute": 0.957, "relation": 0.825}
MODEL_NAME = "covr-exclusivity"


class ReferenceScorer(Protocol):
    """The lexicon rules as a scorer (``m > 0.5`` = exclusive)."""

    def m(self, node_type: Any, x: str, x_prime: str) -> float: ...


@dataclass(frozen=True, slots=True)
class Labelled:
    kind: ModelType
    x: str
    x_prime: str
    label: int
    source: str


@dataclass
class TrainOptions:
    seed: int = 0
    hidden: tuple[int, ...] = (64,)
    max_iter: int = 60
    context_pairs_per_type: int = 4000
    heldout_fraction: float = 0.2


@dataclass
class TrainResult:
    weights: MlpWeights
    metrics: dict[str, Any]
    trained_on: dict[str, Any]
    feature_names: list[str]
    version: str
    sklearn_model: Any = field(repr=False, default=None)


# -- contexts (arXiv App. A) -------------------------------------------------------------------


def mine_contexts(
    scenes: Iterable[SceneGraph], *, seed: int = 0, max_group: int = 40
) -> dict[ModelType, Counter[tuple[str, str]]]:
    """Pairs that share a context, with how many contexts they share."""
    attrs_of: dict[str, set[str]] = defaultdict(set)
    nouns_of: dict[tuple[str, str], set[str]] = defaultdict(set)
    rels_of: dict[tuple[str, str], set[str]] = defaultdict(set)
    for scene in scenes:
        names = {o.id: _safe(o.name) for o in scene.objects}
        for obj in scene.objects:
            noun = names[obj.id]
            if noun:
                attrs_of[noun].update(a for a in map(_safe, obj.attributes) if a)
        for rel in scene.relations:
            r, s, o = _safe(rel.name), names.get(rel.subject), names.get(rel.object)
            if r and s and o:
                nouns_of[(r, "subject")].add(s)
                nouns_of[(r, "object")].add(o)
                rels_of[(s, o)].add(r)
    rng = random.Random(seed)
    out: dict[ModelType, Counter[tuple[str, str]]] = {t: Counter() for t in MODEL_TYPES}
    groups: list[tuple[ModelType, Mapping[Any, set[str]]]] = [
        ("attribute", attrs_of),
        ("object", nouns_of),
        ("relation", rels_of),
    ]
    for kind, by_context in groups:
        for context in sorted(by_context):
            members = sorted(by_context[context])
            if len(members) > max_group:
                members = sorted(rng.sample(members, max_group))
            for i, a in enumerate(members):
                for b in members[i + 1 :]:
                    out[kind][(a, b)] += 1
    return out


def _safe(name: str) -> str:
    try:
        return normalize_term(name)
    except ModelInputError:
        return ""


# -- labels ------------------------------------------------------------------------------------


class Labeler:
    """Silver labels from WordNet and the lexicon rules (see the module docstring)."""

    def __init__(self, featurizer: Featurizer, reference: ReferenceScorer) -> None:
        self.f = featurizer
        self.reference = reference

    def label(self, kind: ModelType, x: str, y: str) -> int | None:
        if x == y:
            return None
        ref = self.reference.m(kind, x, y) > 0.5
        a, b = self.f.term(kind, x), self.f.term(kind, y)
        if kind == "relation":
            return int(ref)
        if kind == "attribute":
            lex = self.f.lexicon
            if x in lex.attr_vocab and y in lex.attr_vocab:
                return int(ref)
            if y in a.antonyms or x in b.antonyms or a.antonyms & b.similar:
                return 1
            if y in a.similar or x in b.similar:
                return 0
            return int(ref)
        # nouns (App. A): exclusive unless synonyms, hypernym or hyponym, by the lexicon or by
        # WordNet. WordNet uses the *first* (most frequent) sense of the more specific word
        # against any sense of the other, so that rare senses ("cat" = a spiteful woman) do not
        # make overlaps while "shoe" still finds the second sense of "footwear".
        if not ref:
            return 0
        if a.first & b.synsets or b.first & a.synsets:
            return 0
        if a.first_ancestors & b.synsets or b.first_ancestors & a.synsets:
            return 0
        return 1


# -- candidate pairs ---------------------------------------------------------------------------


def wordnet_neighbours(
    wordnet: Any, nouns: Iterable[str], adjectives: Iterable[str], rng: random.Random
) -> dict[ModelType, set[tuple[str, str]]]:
    """Noun synonyms/hypernyms/hyponyms/siblings and adjective antonyms/similar-to pairs."""
    out: dict[ModelType, set[tuple[str, str]]] = {"object": set(), "attribute": set()}
    if wordnet is None:
        return out

    def lemma(syn: Any) -> str:
        return str(syn.lemmas()[0].name()).replace("_", " ").lower()

    def ordered(synsets: Iterable[Any]) -> list[Any]:
        # nltk keeps pointers in sets of (pos, offset): their order changes with the process's
        # hash seed, so sort before slicing or sampling or retraining would not be reproducible.
        return sorted(synsets, key=lambda s: str(s.name()))

    for noun in sorted(set(nouns)):
        syns = wordnet.synsets(noun.replace(" ", "_"), "n")[:2]
        for syn in syns:
            for lem in syn.lemmas()[:3]:
                out["object"].add((noun, lem.name().replace("_", " ").lower()))
            level = [syn]
            for _ in range(4):
                level = [h for s in level for h in ordered(s.hypernyms())[:1]]
                for hyper in level:
                    out["object"].add((noun, lemma(hyper)))
            hypos = ordered(syn.hyponyms())
            for hypo in rng.sample(hypos, min(3, len(hypos))):
                out["object"].add((noun, lemma(hypo)))
            for parent in ordered(syn.hypernyms())[:1]:
                sibs = [s for s in ordered(parent.hyponyms()) if s != syn]
                for sib in rng.sample(sibs, min(4, len(sibs))):
                    out["object"].add((noun, lemma(sib)))
    for adj in sorted(set(adjectives)):
        for syn in wordnet.synsets(adj.replace(" ", "_"), "a")[:2]:
            for lem in syn.lemmas():
                for ant in lem.antonyms():
                    out["attribute"].add((adj, ant.name().replace("_", " ").lower()))
            for sim in ordered(syn.similar_tos())[:3]:
                out["attribute"].add((adj, lemma(sim)))
    return {k: {(a, b) for a, b in v if a != b and _safe(b) == b} for k, v in out.items()}


def build_pairs(
    *,
    featurizer: Featurizer,
    reference: ReferenceScorer,
    contexts: Mapping[ModelType, Counter[tuple[str, str]]],
    extra_vocab: Mapping[ModelType, Iterable[str]],
    gold: Sequence[GoldPair],
    options: TrainOptions,
) -> tuple[list[Labelled], dict[str, Any]]:
    """Labelled training pairs (gold pairs removed) and a summary of where they came from."""
    rng = random.Random(options.seed)
    lex = featurizer.lexicon
    labeler = Labeler(featurizer, reference)
    candidates: dict[ModelType, dict[tuple[str, str], str]] = {t: {} for t in MODEL_TYPES}

    def add(kind: ModelType, a: str, b: str, source: str) -> None:
        if a != b:
            candidates[kind].setdefault((a, b), source)

    for kind in MODEL_TYPES:
        ranked = sorted(contexts.get(kind, Counter()).items(), key=lambda kv: (-kv[1], kv[0]))
        for (a, b), _ in ranked[: options.context_pairs_per_type]:
            add(kind, a, b, "context")
    vocab: dict[ModelType, list[str]] = {
        "object": sorted(lex.noun_vocab | {_safe(w) for w in extra_vocab.get("object", ())}),
        "attribute": sorted(lex.attr_vocab | {_safe(w) for w in extra_vocab.get("attribute", ())}),
        "relation": sorted(lex.rel_vocab | {_safe(w) for w in extra_vocab.get("relation", ())}),
    }
    for kind in MODEL_TYPES:
        words = [w for w in vocab[kind] if w]
        vocab[kind] = words
        limit = {"object": 4000, "attribute": 5000, "relation": 8000}[kind]
        all_pairs = [(a, b) for i, a in enumerate(words) for b in words[i + 1 :]]
        for a, b in rng.sample(all_pairs, min(limit, len(all_pairs))):
            add(kind, a, b, "vocabulary")
    # pairs the lexicon states explicitly (groups, hierarchy, scales)
    for _, groups in lex.scales:
        by_group: dict[int, list[str]] = defaultdict(list)
        for word, ids in groups.items():
            for gid in ids:
                by_group[gid].append(word)
        for members in by_group.values():
            for i, a in enumerate(sorted(members)):
                for b in sorted(members)[i + 1 :]:
                    add("attribute", a, b, "lexicon")
    for child, parents in lex.noun_parents.items():
        for parent in parents:
            add("object", child, parent, "lexicon")
    for name in sorted(lex.rel_vocab):
        for other in sorted(lex.entailed(name)):
            add("relation", name, other, "lexicon")
    neighbours = wordnet_neighbours(
        featurizer.wordnet, vocab["object"][:1500], vocab["attribute"], rng
    )
    for kind, found in neighbours.items():
        for a, b in sorted(found):
            add(kind, a, b, "wordnet")
    blocked = gold_keys(list(gold))
    pairs: list[Labelled] = []
    removed = 0
    for kind in MODEL_TYPES:
        for (a, b), source in sorted(candidates[kind].items()):
            if (kind, frozenset((a, b))) in blocked:
                removed += 1
                continue
            orders = [(a, b), (b, a)]
            for x, y in orders:
                label = labeler.label(kind, x, y)
                if label is not None:
                    pairs.append(Labelled(kind, x, y, label, source))
    summary: dict[str, Any] = {
        "pairs": {t: sum(1 for p in pairs if p.kind == t) for t in MODEL_TYPES},
        "exclusive": {t: sum(p.label for p in pairs if p.kind == t) for t in MODEL_TYPES},
        "by_source": dict(Counter(p.source for p in pairs)),
        "gold_pairs_removed": removed,
    }
    return pairs, summary


# -- training ----------------------------------------------------------------------------------


def _split(pairs: Sequence[Labelled], fraction: float) -> tuple[list[int], list[int]]:
    """Held-out by unordered pair (both orders on one side), deterministic by hash."""
    train: list[int] = []
    held: list[int] = []
    for i, p in enumerate(pairs):
        key = "|".join(sorted((p.x, p.x_prime))) + p.kind
        bucket = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        (held if bucket < fraction else train).append(i)
    return train, held


def accuracy_by_type(
    kinds: Sequence[ModelType], labels: Sequence[int], probs: FloatArray
) -> dict[str, dict[str, float | int]]:
    out: dict[str, dict[str, float | int]] = {}
    for kind in MODEL_TYPES:
        idx = [i for i, k in enumerate(kinds) if k == kind]
        if not idx:
            continue
        y = np.array([labels[i] for i in idx])
        pred = (probs[idx] > 0.5).astype(int)
        out[kind] = {
            "n": len(idx),
            "accuracy": round(float((pred == y).mean()), 4),
            "false_exclusive": int(((pred == 1) & (y == 0)).sum()),
            "false_overlap": int(((pred == 0) & (y == 1)).sum()),
        }
    return out


def train_exclusivity(
    *,
    featurizer: Featurizer,
    pairs: Sequence[Labelled],
    gold: Sequence[GoldPair],
    trained_on: dict[str, Any],
    options: TrainOptions,
) -> TrainResult:
    """Fit scaler + MLP on the silver pairs; report silver held-out and gold accuracy."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    triples = [(p.kind, p.x, p.x_prime) for p in pairs]
    x_all = featurizer.rows(triples)
    y_all = np.array([p.label for p in pairs], dtype=np.int64)
    train_idx, held_idx = _split(pairs, options.heldout_fraction)
    scaler = StandardScaler().fit(x_all[train_idx])
    mlp = MLPClassifier(
        hidden_layer_sizes=options.hidden,
        alpha=1e-3,
        max_iter=options.max_iter,
        random_state=options.seed,
        early_stopping=False,
        batch_size=min(512, len(train_idx)),
        tol=1e-4,
        n_iter_no_change=5,
    )
    with warnings.catch_warnings(), single_threaded():
        # Hitting max_iter is expected: the iteration budget is part of the recipe (and the
        # reported metrics are what counts), so sklearn's ConvergenceWarning is noise here.
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp.fit(scaler.transform(x_all[train_idx]), y_all[train_idx])
    weights = weights_from_sklearn(scaler, mlp)
    held_probs = weights.forward(x_all[held_idx])
    gold_triples = [(g.kind, g.x, g.x_prime) for g in gold]
    gold_probs = weights.forward(featurizer.rows(gold_triples))
    metrics: dict[str, Any] = {
        "gold": accuracy_by_type([g.kind for g in gold], [g.label for g in gold], gold_probs),
        "silver_heldout": accuracy_by_type(
            [pairs[i].kind for i in held_idx], [pairs[i].label for i in held_idx], held_probs
        ),
        "paper_accuracy": PAPER_ACCURACY,
    }
    digest = hashlib.sha256()
    for w, b in weights.layers:
        digest.update(w.tobytes())
        digest.update(b.tobytes())
    version = f"1.{FEATURES_VERSION}.{options.seed}+{digest.hexdigest()[:10]}"
    summary = dict(trained_on)
    summary.update(
        {
            "train_pairs": len(train_idx),
            "heldout_pairs": len(held_idx),
            "seed": options.seed,
            "hidden": list(options.hidden),
            "environment": training_environment(),
        }
    )
    return TrainResult(weights, metrics, summary, featurizer.names, version, mlp)


def write_lexical_table(
    model_path: Path,
    featurizer: Featurizer,
    result: TrainResult,
    extra_terms: Mapping[ModelType, Iterable[str]],
) -> dict[str, Any]:
    """Write the model's lexical table beside ``model_path``: WordNet's facts for every term the
    training saw plus ``extra_terms`` (vocabularies the model is expected to serve), so serving
    them never opens WordNet. Returns the entry the ONNX metadata records (name, hash, size)."""
    for kind, words in extra_terms.items():
        for word in sorted(set(words)):
            term = _safe(word)
            if term:
                featurizer.facts(kind, term)
    return write_table(
        table_path(model_path),
        featurizer.known_facts(),
        model=MODEL_NAME,
        model_version=result.version,
        features_version=FEATURES_VERSION,
    )


def export_exclusivity(
    path: Path,
    result: TrainResult,
    lexicon: Lexicon,
    *,
    created_by: str,
    lexical_table: Mapping[str, Any] | None = None,
) -> None:
    """Write the ONNX file with everything serving needs in its metadata (the lexical table
    itself is a file beside it; the metadata holds its hash so a stale table is not used)."""
    metadata = {
        "model_name": MODEL_NAME,
        "version": result.version,
        "labels": json.dumps(["not_exclusive", "exclusive"]),
        "output": "probability that x and x_prime are mutually exclusive (directional)",
        "trained_on": json.dumps(result.trained_on, sort_keys=True),
        "metrics": json.dumps(result.metrics, sort_keys=True),
        "features": json.dumps({"version": FEATURES_VERSION, "names": result.feature_names}),
        "lexicon": json.dumps(lexicon.data, sort_keys=True),
        "preprocessing": "terms lower-cased, whitespace collapsed, accents folded; relmod uses "
        "the relation type; identical terms score 0 without the model",
        "opset": str(OPSET),
        "created_by": created_by,
    }
    if lexical_table is not None:
        metadata["lexical_table"] = json.dumps(dict(lexical_table), sort_keys=True)
    export_mlp(
        path,
        result.weights,
        inputs=[(EXCLUSIVITY_INPUT, len(result.feature_names))],
        output=EXCLUSIVITY_OUTPUT,
        graph_name="covr_exclusivity",
        metadata=metadata,
    )


def feature_matrix(featurizer: Featurizer, pairs: Sequence[Labelled]) -> FloatArray:
    return featurizer.rows([(p.kind, p.x, p.x_prime) for p in pairs])
