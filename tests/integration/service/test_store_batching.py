"""Behind the gRPC service, the store's own batching runs (issue 38).

The service wraps its store in a :class:`~covr.service.deadline.DeadlineStore`. That wrapper
once had no ``read_many`` and no ``forget_plans``, so through the service a Neo4j lookup's
batch of statements (one transaction) arrived at the store as one read per statement, and the
plan reset after a large import did nothing; a lookup in-process (``covr related``) batched
and the same lookup behind the service did not. Here a real server serves a real store wrapped
in a :class:`~tests.support.recording_store.RecordingStore` (below the deadline view), and
FindRelatedImages calls are counted where the rooms ask the service's store and where the
store is reached: the two must be the same calls, and on Neo4j a round is one transaction.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from covr.graph import GraphStore
from covr.related import search
from covr.related.direct import DirectMatches
from covr.related.states import SigState
from covr.scene.enumerate import enumerate_subgraphs
from covr.scene.model import SceneGraph
from covr.service.deadline import DeadlineStore
from covr.service.server import Service
from covr_loaders import synthetic
from tests.integration.related.helpers import put
from tests.support.recording_store import RecordingStore
from tests.support.service_server import running_server

pytestmark = pytest.mark.integration

LOOKUP_TIMEOUT_S = 100.0  # a cold Neo4j plans each new statement text first


def subjects(scenes: list[SceneGraph], per_shape: int) -> list[str]:
    """``per_shape`` subgraph keys of each shape (single, hop, chain, V...) from seeded images."""
    rng = random.Random(5)
    by_shape: dict[str, list[str]] = {}
    for scene in rng.sample(scenes, 40):
        for g in enumerate_subgraphs(scene):
            by_shape.setdefault(g.shape, []).append(g.key)
    return [key for shape in sorted(by_shape) for key in rng.sample(by_shape[shape], per_shape)]


@dataclass
class Asked:
    """What the rooms asked of the service's store, and the lookup rounds that asked it."""

    calls: list[tuple[str, int]] = field(default_factory=list)
    """(method, statements) of every read the rooms asked for, in order."""
    rounds: int = 0
    directs: int = 0
    in_rounds: int = 0
    """Calls of a round's own statements (its verification, its direct match) that reached
    the store."""


def service_store(service: Service) -> DeadlineStore:
    """The store the servicer and its rooms hold: the deadline view the server built."""
    view = service.rooms.related.store
    assert isinstance(view, DeadlineStore)
    return view


@contextmanager
def asking(
    view: DeadlineStore, recorder: RecordingStore, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Asked]:
    """Count the reads asked of ``view`` and the lookup's rounds (``Search._round``) and direct
    matches, and the calls that reached ``recorder`` during the rounds."""
    asked = Asked()
    real_read, real_many, real_store_round = view.read, view.read_many, view.read_round
    real_round, real_direct = search.Search._round, DirectMatches.switch

    def read(query: Any, params: Any = None, **kw: Any) -> Any:
        asked.calls.append(("read", 1))
        return real_read(query, params, **kw)

    def read_many(statements: Any, **kw: Any) -> Any:
        batch = list(statements)
        asked.calls.append(("read_many", len(batch)))
        return real_many(batch, **kw)

    def read_round(statements: Any, **kw: Any) -> Any:
        batch = list(statements)
        asked.calls.append(("read_round", len(batch)))
        return real_store_round(batch, **kw)

    def round_(self: search.Search) -> bool:
        before = len(recorder.calls)
        ran = real_round(self)
        asked.rounds += int(ran)
        # the round's own statements are builder text; a catalog read in a round is the
        # presence filter's scene views of new candidates, not part of the verification
        asked.in_rounds += sum(
            all(name.startswith("<inline>") for name in call.statements)
            for call in recorder.calls[before:]
        )
        return ran

    def go_direct(self: DirectMatches, states: list[SigState]) -> None:
        asked.directs += int(bool(states))
        real_direct(self, states)

    with monkeypatch.context() as patch:
        patch.setattr(view, "read", read)
        patch.setattr(view, "read_many", read_many)
        patch.setattr(view, "read_round", read_round)
        patch.setattr(search.Search, "_round", round_)
        patch.setattr(DirectMatches, "switch", go_direct)
        yield asked


def test_a_lookup_round_reaches_the_store_as_one_read_many(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FindRelatedImages through the service: every read the lookup asks of the service's
    store reaches the store as the same call (a ``read_round`` stays one ``read_round``, which
    the backend reads its own way: one ``UNION ALL`` on FalkorDB; on Neo4j a round and a
    direct match are one statement or transaction each).

    ``COVR_RELATED_DIRECT_MIN_POOL=0`` lets a direct match start over this small store, so
    that a round matches several anchors in one ``read_round`` (measured before the
    ``read_many`` fix: its 2 statements reached Neo4j as 2 reads)."""
    scenes = list(synthetic.generate(150, seed=9, split="val"))
    put(store, scenes)
    keys = subjects(scenes, 2)
    recorder = RecordingStore(store)
    with running_server(store=recorder, related_direct_min_pool=0) as own, own.client() as client:
        view = service_store(own.service)
        for key in keys:  # plans, name tables and image table warmed, not counted
            list(client.find_related_images(key, seed=1, split="val", timeout=LOOKUP_TIMEOUT_S))
        recorder.forget()
        with asking(view, recorder, monkeypatch) as asked:
            for key in keys:
                pages = client.find_related_images(
                    key, seed=2, split="val", timeout=LOOKUP_TIMEOUT_S
                )
                assert list(pages), key
    reached = [
        (call.method, len(call.statements))
        for call in recorder.calls
        if call.method in ("read", "read_many", "read_round")
    ]
    assert asked.rounds >= len(keys), vars(asked)
    assert reached == asked.calls  # nothing split, merged or dropped on the way
    rounds = [n for method, n in asked.calls if method == "read_round"]
    assert any(n >= 2 for n in rounds), asked.calls  # else this shows no round of several
    assert len(recorder.of("read_round")) == len(rounds)
    if store.backend.dialect == "neo4j":
        # one statement per round (its exclusion check inside) and one batch per direct match
        assert asked.in_rounds <= asked.rounds + asked.directs, vars(asked)


def test_the_service_store_passes_read_many_and_forget_plans_on(store: GraphStore) -> None:
    """On every backend, the store the servicer holds hands ``read_many`` and ``forget_plans``
    to the real store's own (a backend without batching still gets its ``read_many`` call)."""
    recorder = RecordingStore(store)
    with running_server(store=recorder) as own:
        view = service_store(own.service)
        recorder.forget()
        rows = view.read_many(
            (query, {"n": n}) for n, query in enumerate(["RETURN $n AS n", "RETURN $n AS n"])
        )
        assert rows == [{"n": 0}, {"n": 1}]
        assert [(c.method, len(c.statements)) for c in recorder.calls] == [("read_many", 2)]
        view.forget_plans()
        assert [c.method for c in recorder.calls] == ["read_many", "forget_plans"]
