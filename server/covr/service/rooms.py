"""The public APIs of the other rooms the service exposes, opened once per server.

The servicer never contains business logic; it validates, converts and calls what this object
holds. Every room is always there (a missing model file is reported by the models room itself,
``FAILED_PRECONDITION``, when a call needs it).

Wired: related images (``covr.related.lookup.RelatedLookup``, docs/related.md), question
generation (``covr.questions`` over the same lookup through ``StoreRelated``, docs/questions.md),
and the ONNX classifiers (``covr.models``, docs/models.md), which load on first use so that a
machine without WordNet still serves everything else.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from covr import models
from covr.graph.errors import GraphError
from covr.graph.store import GraphStore
from covr.models.config import ModelSettings
from covr.related.config import RelatedSettings
from covr.related.filters import RelatedLookups, serving_lookup
from covr.related.lookup import RelatedLookup
from covr.related.store_provider import StoreRelated

log = logging.getLogger("covr.service")


@dataclass
class Rooms:
    """Handles of the rooms behind the RPCs, shared by every call of one server."""

    related: RelatedLookup
    questions: StoreRelated
    models: Models
    related_plain: RelatedLookup
    """The lookup with the reviewed word lists (requests with ``skip_exclusivity_model``)."""

    def lookup(self, *, exclusivity_model: bool) -> RelatedLookup:
        """The related-image lookup of a request: the exclusivity model's, or the word lists'."""
        return self.related if exclusivity_model else self.related_plain

    def refresh_after_import(self) -> None:
        """After an import through this server, drop the lookups' caches now (one generation
        query each): a question call that starts by reading its source scene graph must not
        get the graph from before the import. Lookups check the generation themselves at every
        lookup, which also covers imports by other processes; a failed check here is only
        logged, the import itself has succeeded."""
        for lookup in {id(x): x for x in (self.related, self.related_plain)}.values():
            try:
                lookup.refresh()
            except GraphError as exc:
                log.warning("lookup caches not refreshed after an import: %s", exc)


def open_rooms(store: GraphStore, related: RelatedSettings, models: ModelSettings) -> Rooms:
    """Open every room whose public API exists, sharing ``store`` (deadline-bound): the lookups
    with their section (``related``) and the models room's, whose classifiers they use.

    Created once per server, after any fork, so caches are shared by every RPC.
    """
    lookups = RelatedLookups(store, related, models)
    plain = lookups.get(model=False)
    lookup, missing = serving_lookup(lookups)
    if missing is not None:  # no model files or WordNet: keep serving
        log.warning(
            "related lookups use the word lists: the exclusivity model is missing (%s)", missing
        )
    return Rooms(
        related=lookup, questions=StoreRelated(lookup), models=Models(models), related_plain=plain
    )


@cache
def _sha256(path: Path, size: int, mtime: float) -> str:
    del size, mtime  # part of the cache key: a replaced file is hashed again
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class Models:
    """The exclusivity and presence models, loaded once per process on first use."""

    settings: ModelSettings

    def warm(self) -> None:
        """Load both models now, and then WordNet (seconds to a minute), on the server's
        background thread: the lexical table covers the models' vocabulary, but a request that
        names another term opens WordNet, and it must not pay that inside its deadline.
        Failures are logged; calls then report them."""
        try:
            exclusivity = self.exclusivity()
            self.presence()
            _ = exclusivity.featurizer.wordnet
        except Exception as exc:  # a missing model or WordNet must not stop the server
            log.warning("models not loaded: %s", exc)

    def exclusivity(self) -> Any:
        return models.load_exclusivity_model(settings=self.settings)

    def presence(self) -> Any:
        return models.load_presence_model(settings=self.settings)

    def info(self) -> list[dict[str, Any]]:
        """One entry per model: name, version, kind, file, sha256, metadata, tensors."""
        out = []
        for kind, entry in models.model_info(self.settings).items():
            path = Path(entry["file"])
            stat = path.stat()
            meta = entry.get("metadata", {})
            out.append(
                {
                    "kind": kind,
                    "name": str(meta.get("model_name", kind)),
                    "version": str(meta.get("version", "")),
                    "path": str(path),
                    "sha256": _sha256(path, stat.st_size, stat.st_mtime),
                    "metadata": {
                        k: v if isinstance(v, str) else json.dumps(v, sort_keys=True)
                        for k, v in meta.items()
                    },
                    "inputs": [
                        (name, ["batch", str(width)]) for name, width in entry["inputs"].items()
                    ],
                    "outputs": [(str(entry["output"]), ["batch"])],
                }
            )
        return out
