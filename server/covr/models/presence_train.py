"""Training, calibration and export of the presence model (paper §2.2, App. B).

Examples as in the paper: for a simple subgraph ``g_s``, **positives** are images that contain it
and **negatives** are its distractor images (found by the related-images matcher, which the caller
runs: this room does not import it). Because a graph model would trivially see an annotated
``g_s``, each positive is shown with ``g_s`` *hidden* — one node type of every match removed —
which is exactly the situation the model exists for: a subgraph present in the image but missing
from its annotations. Evaluation does the same on held-out graphs; thresholds are calibrated per
changed node type so that >= 95 % of hidden subgraphs score above them, and the precision at
that point (hidden positives vs truly absent distractors) is reported.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from covr.models.features import FloatArray, Lexicon
from covr.models.onnx_io import (
    OPSET,
    MlpWeights,
    export_mlp,
    single_threaded,
    training_environment,
    weights_from_sklearn,
)
from covr.models.presence import (
    GRAPH_FEATURE_NAMES,
    IMAGE_FEATURES,
    PAPER_THRESHOLDS,
    PRESENCE_FEATURES_VERSION,
    PRESENCE_GRAPH_INPUT,
    PRESENCE_IMAGE_INPUT,
    PRESENCE_OUTPUT,
    PresenceFeaturizer,
    hide,
)
from covr.scene.edits import parse_signature
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph

MODEL_NAME = "covr-presence"
TYPE_ORDER = ("object", "relation", "attribute")
"""Ascending paper thresholds: a candidate with several changed types uses the largest (App. B)."""


@dataclass(frozen=True)
class Mined:
    """One simple subgraph with its positive images and (image, signature) distractors."""

    subgraph: Subgraph
    positives: tuple[SceneGraph, ...]
    negatives: tuple[tuple[SceneGraph, str], ...]


@dataclass(frozen=True)
class Example:
    subgraph: Subgraph
    scene: SceneGraph
    label: int
    kind: str
    """The node type hidden (positives) or changed (negatives)."""


@dataclass
class PresenceResult:
    weights: MlpWeights
    thresholds: dict[str, float]
    metrics: dict[str, Any]
    trained_on: dict[str, Any]
    version: str
    sklearn_model: Any = field(repr=False, default=None)


def node_types(g: Subgraph) -> list[str]:
    kinds = ["object"]
    if any(o.attribute is not None for o in g.objects):
        kinds.append("attribute")
    if g.relations:
        kinds.append("relation")
    return kinds


def changed_type(signature: str) -> str:
    """The changed node type that decides the threshold (the largest paper threshold)."""
    present = {part.kind for part in parse_signature(signature)}
    best = "object"
    for kind in TYPE_ORDER:
        if kind in present:
            best = kind
    return best


def examples(mined: Iterable[Mined], *, seed: int) -> list[Example]:
    """Hidden positives (one random node type per positive) and distractor negatives."""
    rng = random.Random(seed)
    out: list[Example] = []
    for item in mined:
        g = item.subgraph
        for scene in item.positives:
            kind = rng.choice(node_types(g))
            hidden = hide(scene, g, kind, pick=rng.randrange(2))
            if hidden is not None:
                out.append(Example(g, hidden, 1, kind))
        for scene, signature in item.negatives:
            out.append(Example(g, scene, 0, changed_type(signature)))
    return out


def calibrate(
    scores: FloatArray, labels: Sequence[int], kinds: Sequence[str], *, recall: float = 0.95
) -> tuple[dict[str, float], dict[str, Any]]:
    """Per-type thresholds catching ``recall`` of the hidden positives, with precision there,
    and the same numbers at the paper's default thresholds."""
    thresholds: dict[str, float] = {}
    report: dict[str, Any] = {}
    y = np.asarray(labels)
    k = np.asarray(kinds)
    for kind in TYPE_ORDER:
        mask = k == kind
        pos = np.sort(scores[mask & (y == 1)])
        if len(pos) == 0:
            thresholds[kind] = PAPER_THRESHOLDS[kind]
            continue
        cut = int(np.floor((1.0 - recall) * len(pos)))
        # Just below the cut score, rounded *down* so every score from the cut on stays above.
        tau = math.floor(float(np.nextafter(pos[cut], np.float32(-np.inf))) * 1e6) / 1e6
        thresholds[kind] = max(tau, 0.0)
        report[kind] = {
            "calibrated": metrics_at(scores[mask], y[mask], thresholds[kind]),
            "paper_default": metrics_at(scores[mask], y[mask], PAPER_THRESHOLDS[kind]),
        }
    return thresholds, report


def metrics_at(scores: FloatArray, y: np.ndarray, tau: float) -> dict[str, float | int]:
    """Recall, precision and base rate of the scores flagged above ``tau`` (label 1: hidden)."""
    flagged = scores > tau
    tp = int((flagged & (y == 1)).sum())
    fp = int((flagged & (y == 0)).sum())
    positives = int((y == 1).sum())
    return {
        "threshold": tau,
        "hidden": positives,
        "absent": int((y == 0).sum()),
        "recall": round(tp / positives, 4) if positives else 0.0,
        "precision": round(tp / (tp + fp), 4) if tp + fp else 0.0,
        "base_rate": round(positives / len(y), 4) if len(y) else 0.0,
    }


def train_presence(
    *,
    featurizer: PresenceFeaturizer,
    train: Sequence[Example],
    heldout: Sequence[Example],
    trained_on: dict[str, Any],
    seed: int,
) -> PresenceResult:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    def matrix(items: Sequence[Example]) -> FloatArray:
        graph = featurizer.rows([(e.subgraph, e.scene) for e in items])
        return np.hstack([graph, np.zeros((len(items), IMAGE_FEATURES), dtype=np.float32)])

    x_train = matrix(train)
    y_train = np.array([e.label for e in train])
    scaler = StandardScaler().fit(x_train)
    mlp = MLPClassifier(
        hidden_layer_sizes=(32,),
        alpha=1e-3,
        max_iter=400,
        random_state=seed,
        tol=1e-5,
        n_iter_no_change=15,
    )
    with warnings.catch_warnings(), single_threaded():
        # Hitting max_iter is expected: the iteration budget is part of the recipe (and the
        # reported metrics are what counts), so sklearn's ConvergenceWarning is noise here.
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp.fit(scaler.transform(x_train), y_train)
    weights = weights_from_sklearn(scaler, mlp)
    held_scores = weights.forward(matrix(heldout))
    labels = [e.label for e in heldout]
    kinds = [e.kind for e in heldout]
    thresholds, report = calibrate(held_scores, labels, kinds)
    y = np.asarray(labels)
    auc = roc_auc(held_scores, y)
    metrics = {
        "heldout_by_type": report,
        "heldout_auc": round(auc, 4),
        "heldout_examples": len(heldout),
        "train_examples": len(train),
        "target_recall": 0.95,
    }
    digest = hashlib.sha256()
    for w, b in weights.layers:
        digest.update(w.tobytes())
        digest.update(b.tobytes())
    version = f"1.{PRESENCE_FEATURES_VERSION}.{seed}+{digest.hexdigest()[:10]}"
    summary = dict(trained_on)
    summary.update(
        {
            "seed": seed,
            "positives": int(y_train.sum()),
            "negatives": int(len(y_train) - y_train.sum()),
            "environment": training_environment(),
        }
    )
    return PresenceResult(weights, thresholds, metrics, summary, version, mlp)


def roc_auc(scores: FloatArray, y: np.ndarray) -> float:
    """The area under the ROC curve (rank statistic; 0 when a class is empty)."""
    pos, neg = scores[y == 1], scores[y == 0]
    if len(pos) == 0 or len(neg) == 0:
        return 0.0
    order = np.argsort(np.concatenate([pos, neg]), kind="mergesort")
    ranks = np.empty(len(order))
    ranks[order] = np.arange(1, len(order) + 1)
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def export_presence(
    path: Path,
    result: PresenceResult,
    *,
    stats: dict[str, Any],
    lexicon: Lexicon,
    created_by: str,
) -> None:
    metadata = {
        "model_name": MODEL_NAME,
        "version": result.version,
        "labels": json.dumps(["absent", "present"]),
        "output": "probability that the simple subgraph is in the image (annotated or not)",
        "sees": "graphs, not pixels: the default model scores the image's annotated scene graph; "
        "image_features are zeros in training and may be zeros when serving",
        "trained_on": json.dumps(result.trained_on, sort_keys=True),
        "metrics": json.dumps(result.metrics, sort_keys=True),
        "thresholds": json.dumps(result.thresholds, sort_keys=True),
        "paper_thresholds": json.dumps(PAPER_THRESHOLDS, sort_keys=True),
        "features": json.dumps(
            {"version": PRESENCE_FEATURES_VERSION, "names": list(GRAPH_FEATURE_NAMES)}
        ),
        "stats": json.dumps(stats, sort_keys=True, separators=(",", ":")),
        "lexicon": json.dumps(lexicon.data, sort_keys=True),
        "opset": str(OPSET),
        "created_by": created_by,
    }
    export_mlp(
        path,
        result.weights,
        inputs=[
            (PRESENCE_GRAPH_INPUT, len(GRAPH_FEATURE_NAMES)),
            (PRESENCE_IMAGE_INPUT, IMAGE_FEATURES),
        ],
        output=PRESENCE_OUTPUT,
        graph_name="covr_presence",
        metadata=metadata,
    )
