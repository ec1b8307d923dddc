"""Exclusivity and presence classifiers: features, training, ONNX export, onnxruntime serving.

This room imports only ``covr.scene`` (DESIGN.md §1). Public entry points:

- :func:`load_exclusivity_model` -> :class:`OnnxExclusivity` (``m`` / ``m_batch``: the
  related room's ``Exclusivity`` protocol, structurally);
- :func:`load_presence_model` -> :class:`PresenceModel` (``score`` / ``score_batch`` for simple
  subgraphs, ``thresholds`` per changed node type), :func:`simple_parts`, :func:`is_simple`;
- :func:`model_info`: metadata of both files (for ``covr models info`` and the model-info RPC).

One session per model file per process: the loaders cache by path; call ``refresh()`` on the
exclusivity model after replacing its file (its score cache is dropped when the version changes).
"""

from __future__ import annotations

import json
import threading
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from covr.models.errors import ModelInputError, ModelResourceError

if TYPE_CHECKING:
    from covr.models.config import ModelSettings
    from covr.models.exclusivity import OnnxExclusivity
    from covr.models.presence import PresenceModel

__all__ = [
    "EXCLUSIVITY_FILE",
    "PRESENCE_FILE",
    "ModelInputError",
    "ModelResourceError",
    "bundled_model_path",
    "is_simple",
    "learned_dir",
    "load_exclusivity_model",
    "load_presence_model",
    "model_info",
    "model_path",
    "open_configured_wordnet",
    "simple_parts",
]

EXCLUSIVITY_FILE = "exclusivity.onnx"
PRESENCE_FILE = "presence.onnx"
_LOCK = threading.Lock()
_LOADED: dict[tuple[str, Path], Any] = {}


def bundled_model_path(name: str) -> Path:
    """Where the committed model files live (``covr/models/resources``)."""
    return Path(str(resources.files("covr.models").joinpath("resources", name)))


def model_path(name: str, settings: ModelSettings) -> Path:
    """``COVR_MODELS_DIR/<name>`` when that setting is given, else the bundled file."""
    if settings.models_dir is not None and str(settings.models_dir) not in ("", "."):
        return settings.models_dir / name
    return bundled_model_path(name)


def learned_dir(settings: ModelSettings) -> Path:
    """Where a process keeps what the exclusivity model learned for the next (pair scores and
    WordNet facts: ``<data_dir>/models``)."""
    return settings.data_dir / "models"


def open_configured_wordnet(settings: ModelSettings) -> Any:
    """The shared nltk WordNet reader over ``COVR_WORDNET_DIR`` (prepared in the data dir)."""
    from covr.models.wordnet import open_wordnet

    return open_wordnet(settings.wordnet_dir, settings.data_dir / "nltk_data")


def load_exclusivity_model(path: Path | None = None, *, settings: ModelSettings) -> OnnxExclusivity:
    """The exclusivity model (one instance per file per process); the memo of checked terms
    gets ``COVR_MODEL_CACHE_TERMS`` entries (:func:`covr.models.terms.size_term_cache`)."""
    from covr.models.exclusivity import OnnxExclusivity
    from covr.models.terms import size_term_cache

    size_term_cache(settings.model_cache_terms)
    path = (path or model_path(EXCLUSIVITY_FILE, settings)).resolve()
    with _LOCK:
        model = _LOADED.get(("exclusivity", path))
        if model is None:
            model = OnnxExclusivity(
                path,
                open_wordnet=lambda: open_configured_wordnet(settings),
                threads=settings.model_threads,
                max_pairs=settings.model_cache_pairs,
                learned=(learned_dir(settings), str(settings.wordnet_dir.resolve())),
            )
            _LOADED[("exclusivity", path)] = model
    assert isinstance(model, OnnxExclusivity)
    return model


def load_presence_model(path: Path | None = None, *, settings: ModelSettings) -> PresenceModel:
    """The presence model (one instance per file per process)."""
    from covr.models.presence import PresenceModel

    path = (path or model_path(PRESENCE_FILE, settings)).resolve()
    with _LOCK:
        model = _LOADED.get(("presence", path))
        if model is None:
            model = PresenceModel(path, threads=settings.model_threads)
            _LOADED[("presence", path)] = model
    assert isinstance(model, PresenceModel)
    return model


def model_info(settings: ModelSettings) -> dict[str, Any]:
    """Name, version, file, inputs and metadata of both models (large entries summarized)."""
    from covr.models.onnx_io import OnnxHead

    out: dict[str, Any] = {}
    for key, name in (("exclusivity", EXCLUSIVITY_FILE), ("presence", PRESENCE_FILE)):
        path = model_path(name, settings)
        head = OnnxHead(path)
        meta: dict[str, Any] = {}
        for k, v in sorted(head.metadata.items()):
            if k in ("lexicon", "stats"):
                meta[k] = f"<{len(v)} bytes of JSON>"
            elif k == "features":
                spec = json.loads(v)
                meta[k] = {"version": spec.get("version"), "count": len(spec.get("names", []))}
            else:
                try:
                    meta[k] = json.loads(v) if v[:1] in "[{" else v
                except json.JSONDecodeError:
                    meta[k] = v
        out[key] = {
            "file": str(path),
            "bytes": path.stat().st_size,
            "inputs": dict(head.inputs),
            "output": head.output,
            "metadata": meta,
        }
    return out


def is_simple(g: Any) -> bool:
    from covr.models.presence import is_simple as _is_simple

    return _is_simple(g)


def simple_parts(g: Any) -> list[Any]:
    from covr.models.presence import simple_parts as _simple_parts

    return list(_simple_parts(g))
