"""The public APIs of the other rooms the service exposes, opened once per server.

Each room is optional here: a server whose build does not contain a room's public API (yet)
answers its RPCs with ``FAILED_PRECONDITION`` ("not available yet"). The servicer never contains
business logic; it validates, converts and calls what this object holds.

Wired: related images (``covr.related.lookup.RelatedLookup``, docs/related.md) and question
generation (``covr.questions`` over the same lookup through ``StoreRelated``, docs/questions.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from covr.graph.store import GraphStore
from covr.questions.store_source import StoreRelated
from covr.related.lookup import RelatedLookup
from covr.settings import Settings


@dataclass
class Rooms:
    """Handles of the rooms behind the RPCs; ``None`` = that room has not landed."""

    related: RelatedLookup | None = None
    exclusivity: Any | None = None
    presence: Any | None = None
    questions: StoreRelated | None = None
    models: Any | None = None


def open_rooms(store: GraphStore, settings: Settings) -> Rooms:
    """Open every room whose public API exists, sharing ``store`` (deadline-bound) and settings.

    Created once per server, after any fork, so caches are shared by every RPC.
    """
    lookup = RelatedLookup(store, settings=settings)
    return Rooms(related=lookup, questions=StoreRelated(lookup))
