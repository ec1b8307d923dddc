"""Statements a warm related-image lookup sends, counted on both backends.

Why counted: on Neo4j every statement is a Bolt round trip with ~1 ms of fixed server cost, and
a round used to send two dependent ones (the verification, then the exclusion check of the images
with a hit; docs/graph-store.md, "Neo4j's read path"). A Neo4j round now checks exclusion in its
own statement (``covr.graph.neo4j_batch.then_check``): one statement per round and per direct
match, nothing else. The same lookups with that turned off (``CHECK_IN_ROUND = False``: the
check is a statement of its own, as before and as on FalkorDB) must give the same answers and,
on Neo4j, send more statements, so the saving cannot silently regress; FalkorDB must send what
it sent before.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from covr.graph import GraphStore
from covr.graph.neo4j_batch import coalesce
from covr.graph.store import as_statement
from covr.related import search
from covr.related.direct import DirectMatches
from covr.related.lookup import RelatedLookup
from covr.related.states import SigState
from covr.scene.enumerate import enumerate_subgraphs
from covr.scene.subgraph import Subgraph
from covr.settings import Settings
from covr_loaders import synthetic
from tests.integration.graph.test_neo4j_plans import assert_plans_well
from tests.integration.related.helpers import put

pytestmark = [pytest.mark.integration, pytest.mark.slow]


class Sent:
    """Statements the server gets: one per ``read``; per ``read_many``, one per statement
    Neo4j's backend sends (consecutive statements of one text coalesced,
    ``covr.graph.neo4j_batch``), FalkorDB's base ``read_many`` counted through its reads."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.statements = 0
        self.rounds = 0
        self.directs = 0
        self.separate = 0
        """Exclusion checks sent as statements of their own (``Search._relaxed_images``)."""
        self.checked: dict[str, tuple[Any, Any]] = {}
        """Per text, a round statement with its exclusion check (Neo4j): text -> (query, params)."""


@contextmanager
def counting(store: GraphStore, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sent]:
    sent = Sent()
    real_read, real_many = store.read, store.read_many
    real_round, real_direct = search.Search._round, DirectMatches.switch
    real_relaxed = search.Search._relaxed_images
    inside = [False]

    def read(query: Any, params: Any = None, **kw: Any) -> Any:
        sent.statements += 0 if inside[0] else 1
        if str(getattr(query, "name", "")).endswith("(then checked)"):
            sent.checked.setdefault(query.text, (query, params))
        return real_read(query, params, **kw)

    def read_many(statements: Iterable[Any], **kw: Any) -> Any:
        batch = list(statements)
        if store.backend.dialect == "neo4j":
            sent.statements += len(coalesce([(as_statement(q), dict(p)) for q, p in batch]))
            inside[0] = True
        try:
            return real_many(batch, **kw)
        finally:
            inside[0] = False

    def round_(self: search.Search) -> bool:
        ran = real_round(self)
        sent.rounds += int(ran)
        return ran

    def go_direct(self: DirectMatches, states: list[SigState]) -> None:
        sent.directs += int(bool(states))
        real_direct(self, states)

    def relaxed_images(self: search.Search, image_ids: list[str]) -> set[str]:
        sent.separate += len(self._relaxed_branches(image_ids))  # one statement per chunk
        return real_relaxed(self, image_ids)

    with monkeypatch.context() as patch:
        patch.setattr(store, "read", read)
        patch.setattr(store, "read_many", read_many)
        patch.setattr(search.Search, "_round", round_)
        patch.setattr(DirectMatches, "switch", go_direct)
        patch.setattr(search.Search, "_relaxed_images", relaxed_images)
        yield sent


def queries(scenes: list[Any], count: int) -> list[Subgraph]:
    """``count`` subgraphs per shape (single, hop, chain, V, ...) from random images."""
    rng = random.Random(5)
    by_shape: dict[str, list[Subgraph]] = {}
    for s in rng.sample(scenes, 40):
        for g in enumerate_subgraphs(s):
            by_shape.setdefault(g.shape, []).append(g)
    return [g for shape in sorted(by_shape) for g in rng.sample(by_shape[shape], count)]


def answers(
    store: GraphStore, settings: Settings, subjects: list[Subgraph], sent: Sent | None = None
) -> list[tuple[Any, ...]]:
    """Each subject's warm lookup (ED <= 2, 3 per signature; primed with another seed), counted
    in ``sent`` when given; no store-generation query in the counted pass."""
    lookup = RelatedLookup(store, settings=settings.related)
    lookup.warm()
    for g in subjects:
        lookup.related(g, per_signature=3, positives_limit=3, seed=1)
    if sent is not None:
        sent.reset()  # the warm pass only: no image table, vocabulary or name postings read
    out = []
    for g in subjects:
        before = sent.statements if sent is not None else 0
        r = lookup.related(g, per_signature=3, positives_limit=3, seed=2, refresh=False)
        if sent is not None:
            assert sent.statements > before, g.key  # every lookup reads (no cached answer)
        distractors = tuple((d.image_id, d.signature, d.subgraph.key) for d in r.distractors)
        out.append((g.key, r.positives, distractors, r.next_offset))
    return out


@pytest.mark.parametrize("combined", [False, True], ids=["per_signature", "combined"])
def test_a_round_is_one_statement_and_answers_do_not_change(
    store: GraphStore, settings: Settings, monkeypatch: pytest.MonkeyPatch, combined: bool
) -> None:
    scenes = list(synthetic.generate(150, seed=9, split="val"))
    put(store, scenes)
    # combined: every lookup verifies with the combined branch; else never (per signature)
    mode = settings.model_copy(
        update={"related_combined_min_signatures": 0 if combined else 10_000}
    )
    subjects = queries(scenes, 3)
    assert len({g.shape for g in subjects}) >= 4

    with counting(store, monkeypatch) as checked:
        new = answers(store, mode, subjects, checked)
    monkeypatch.setattr(search, "CHECK_IN_ROUND", False)  # the check: a statement of its own
    with counting(store, monkeypatch) as after:
        old = answers(store, mode, subjects, after)

    assert new == old
    assert sum(1 for _, _, distractors, _ in new if distractors) >= 3  # exclusion mattered
    assert (checked.rounds, checked.directs) == (after.rounds, after.directs)
    # the checks that waited for the hits were statements of their own
    assert after.separate >= len(subjects) // 2, vars(after)
    if store.backend.dialect == "neo4j":
        # at most one statement per round (none when a combined round has nothing new to
        # verify) and per direct match, nothing else: what the old rounds sent, less the checks
        assert checked.separate == 0, vars(checked)
        assert checked.statements <= checked.rounds + checked.directs, vars(checked)
        assert checked.statements == after.statements - after.separate, vars(checked)
        # and that statement scans no whole label and joins nothing by a cartesian product (an
        # index seek is not asked for: over this small store Neo4j once planned the nested
        # statement's image lookup as a scan of the image id index and a hash join)
        assert checked.checked
        for n, (query, params) in enumerate(checked.checked.values()):
            plan = store.explain(query, params)  # type: ignore[attr-defined]
            assert_plans_well(f"round statement {n + 1}", query.text, plan, needs_seek=False)
    else:  # FalkorDB sends what it sent
        assert vars(checked) == vars(after)
