"""One store lookup: the round loop that finds positives and distractors of ``g``.

How (docs/related.md §3 has the long version):

1. **Candidates without store-order bias.** For an edit signature ``S`` every position outside
   ``S`` keeps ``g``'s name, so a distractor image must hold all those names. The candidate pool
   is the intersection of those names' image lists (:meth:`NameTables.pool`), or every image of
   the split when nothing is fixed, walked in a seeded order (:mod:`covr.related.sampling`).
2. **Verification in batches.** Candidates are checked a batch at a time by one query per
   *round*: one ``UNION ALL`` branch per unfinished signature (and one for positives), or one
   combined branch for many signatures; batches grow 4x per round; a signature stops when it
   has enough results or its pool is exhausted. After round 1 a signature with a large pool may
   switch to an exact, index-started match of its images (:class:`~covr.related.direct.DirectMatches`,
   which the search holds).
3. **Exclusion.** Images that produced a distractor row are checked once for an overlap-relaxed
   copy of ``g`` (which includes ``g`` itself): with the round where the store gains by it
   (:meth:`covr.graph.GraphStore.read_round`: Neo4j), else by a second statement (FalkorDB).
4. **Exactness.** Every row is decoded again with the exclusivity model (:mod:`covr.related.names`);
   the Cypher rules are only prefilters.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import Any

from covr.graph.store import GraphStore, RoundCheck, Row
from covr.related.api import Distractor, PresenceFilter, RelatedResult
from covr.related.config import RelatedSettings
from covr.related.cypher_path import (
    NEVER,
    Branch,
    CombinedBranch,
    Rule,
    combined_query,
    exact_rules,
    read_order,
    union_query,
)
from covr.related.direct import DirectMatches
from covr.related.names import (
    Changes,
    Concretes,
    NameTables,
    concrete_changes,
    embeddings,
    is_relaxed_reading,
    readings_of,
)
from covr.related.request import RelatedRequest
from covr.related.states import SigState
from covr.scene.edits import positions, signature, signature_sort_key
from covr.scene.subgraph import Subgraph

Verified = dict[str, tuple[bool, dict[str, set[Subgraph]]]]
"""Per image: whether it is a positive, and its concrete ``g'`` per signature."""
Hits = dict[int, dict[str, set[Subgraph]]]
"""Per state index: image id -> concrete ``g'`` found in it this round."""
RELAXED_TAG = -1
"""The tag of the exclusion check's rows when they come with a round's own (tags 0, 1, ...)."""
CHECK_IN_ROUND = True
"""Whether a round offers the store its exclusion check (:meth:`Search._unknown`; Neo4j runs it
in the round's own statement); off, the check is a statement of its own as on FalkorDB (the tests
compare the two)."""


class Search:
    """The state of one lookup between rounds (built, run once, thrown away)."""

    def __init__(
        self,
        store: GraphStore,
        names: NameTables,
        concretes: Concretes,
        presence_filter: PresenceFilter,
        settings: RelatedSettings,
        request: RelatedRequest,
    ) -> None:
        self.store = store
        self.names = names
        self.concretes = concretes
        self.presence_filter = presence_filter
        self.settings = settings
        self.request = request
        self.g = request.subgraph
        self.per_signature = request.per_signature_cap
        self.positives_limit = request.positives_cap
        self.table = names.table()
        self.all_positions = positions(self.g)
        self.direct = DirectMatches(store, names, settings, request, self.table, self._first_batch)
        self.states = self._states()
        # Few signatures (small subgraphs): one exact branch each returns fewer rows. Many
        # (chains, V-shapes, frames): one combined branch costs far less to parse and plan.
        self.combined = len(self.states) > settings.related_combined_min_signatures
        self.relaxed_known: dict[str, bool] = {}
        self.verified: Verified = {}
        self.rounds = 0
        self.spent = 0
        self.reached: set[str] = set()

    @cached_property
    def relaxed_rules(self) -> dict[str, Rule]:
        """Built when a round first needs them: they score every name's alternatives with the
        exclusivity model, which a positives-only lookup (max_distance 0) never uses, and a
        name outside the model's lexical table costs a WordNet load (seconds)."""
        return {p: self.names.relaxed_rule(self.g, p) for p in self.all_positions}

    @cached_property
    def combined_rules(self) -> dict[str, Rule]:
        """Built on first use, like :attr:`relaxed_rules`."""
        return {p: self.names.combined_rule(self.g, p) for p in self.all_positions}

    def run(self) -> RelatedResult:
        while any(not s.done for s in self.states):
            if not self._round():
                break
        return self._page()

    # -- states ----------------------------------------------------------------------------------

    def _target(self, cap: int | None) -> int | None:
        return None if cap is None else self.request.offset + cap + 1

    def _first_batch(self, want: int | None) -> int:
        if want is None:
            return self.settings.related_batch_max
        return max(self.settings.related_batch_min, 2 * want)

    def _states(self) -> list[SigState]:
        """The positives' state, then one per signature that can have results (canonical order)."""
        g, r = self.g, self.request
        exact = exact_rules(g)
        target = self._target(self.positives_limit)
        pool = self.names.pool(g, self.all_positions, r.split)
        first = SigState(
            "",
            (),
            dict(exact),
            self.table.stream(pool, r.seed, "", r.split),
            target,
            self._first_batch(target),
            anchor=self.names.anchor(g, self.all_positions),
        )
        others = list(self._signature_states(exact))
        return [first, *sorted(others, key=lambda s: signature_sort_key(s.signature))]

    def _signature_states(self, exact: Mapping[str, Rule]) -> Iterable[SigState]:
        g, r = self.g, self.request
        target = self._target(self.per_signature)
        for size in range(1, min(r.max_distance, len(self.all_positions)) + 1):
            for changed in itertools.combinations(self.all_positions, size):
                sig = signature(changed)
                edited = {pos: self.names.distractor_rule(g, pos) for pos in changed}
                if any(rule is None for rule in edited.values()):
                    continue
                fixed = [p for p in self.all_positions if p not in changed]
                pool = self.names.pool(g, fixed, r.split)
                if pool is not None and len(pool) == 0:
                    continue
                yield SigState(
                    sig,
                    tuple(changed),
                    {**exact, **{p: rule for p, rule in edited.items() if rule is not None}},
                    self.table.stream(pool, r.seed, sig, r.split),
                    target,
                    self._first_batch(target),
                    anchor=self.names.anchor(g, fixed),
                    salt=sig,
                )

    # -- one round -------------------------------------------------------------------------------

    def _round(self) -> bool:
        """Verify one batch per unfinished state; False when no state had candidates left
        (positives waiting on signatures that just ended get one more round to decide)."""
        first = self.states[0]
        going = self._positives_go()
        direct = []  # the positives' own round 1 (capped) or 3 (late), the signatures' round 1
        if going and first.taken in (1, 3) and self.direct.wanted(first, late=first.taken == 3):
            direct.append(first)
        if self.rounds == 1:
            direct.extend(s for s in self.states[1:] if not s.done and self.direct.wanted(s))
        self.direct.switch(direct)
        self.rounds += 1
        batches = self._take_batches(going)
        if not batches:  # the signatures just ended: the waiting positives decide next round
            return not going and not first.done
        check = self._unknown(batches)
        if self.combined:
            hits, positive_ids = self._verify_combined(batches, check)
        else:
            hits, positive_ids = self._verify_per_signature(batches, check)
        self.reached.update(positive_ids, *hits.values())
        self._exclude_relaxed(hits)
        candidates = self._candidates(batches, hits)
        self._record(batches, candidates, positive_ids)
        return True

    def _positives_go(self) -> bool:
        """Whether the positives take a batch this round.

        With ``positives_if_distractors`` (the question engine, when every form shows a
        distractor) a result without distractors is dropped, so after their first batch the
        positives wait until a signature has found one, and stop when the signatures ended
        without one before verifying every candidate (a scan-budget cut: at 1x GQA most large
        subgraphs end so, and their positives were a direct match from a common name each).
        The positives found are the same: they are the first hits of their own seeded stream
        whatever the rounds (a direct match keeps the order), and no other state depends on
        them. When every signature verified all its candidates, the positives go on, so that
        :attr:`RelatedResult.reached` stays complete."""
        first = self.states[0]
        if first.done or not self.request.positives_if_distractors or not first.taken:
            return not first.done
        others = self.states[1:]
        if any(state.found for state in others):
            return True
        if not all(state.done for state in others):
            return False  # wait for a distractor
        first.done = not all(state.stream.exhausted for state in others)
        return not first.done

    def _take_batches(self, positives: bool = True) -> dict[int, list[str]]:
        """The next batch of image ids of every unfinished state, within the scan budget
        (the positives' only when ``positives``)."""
        budget = self.settings.related_scan_budget
        # positives (signature "") are outside the budget: a question needs them whole
        budgeted = [s for s in self.states if not s.done and s.target is not None and s.signature]
        share = None
        if budget and budgeted:
            if self.spent >= budget:
                for state in budgeted:
                    state.done = True  # bounded effort: see docs/related.md §3
            share = max(1, (budget - self.spent) // len(budgeted))
        batches: dict[int, list[str]] = {}
        for n, state in enumerate(self.states):
            if state.done or (n == 0 and not positives):
                continue
            state.taken += 1
            limited = share is not None and state.target is not None and state.signature
            size = min(state.batch, share) if limited and share is not None else state.batch
            taken = state.stream.take(size)
            if limited:
                self.spent += len(taken)
            ids = [self.table.ids[i] for i in taken]
            state.batch = min(state.batch * 4, self.settings.related_batch_max)
            if not ids:
                state.done = True
                continue
            batches[n] = ids
        return batches

    def _unknown(self, batches: dict[int, list[str]]) -> list[str]:
        """The images this round offers the store to check for exclusion with its verifying
        statement (:meth:`GraphStore.read_round`): its distractor candidates whose exclusion is
        not known yet (the check covers those of them the round returns rows for). Why: on
        Neo4j every statement is a Bolt round trip with ~1 ms of fixed server work
        (docs/graph-store.md, "Neo4j's read path"), and the check, a second statement that
        waited for the hits, made a round two. FalkorDB leaves the check out (one call there
        costs ~0.3 ms): it is then a statement of its own (:meth:`_exclude_relaxed`)."""
        if not CHECK_IN_ROUND:
            return []
        known = self.relaxed_known
        return sorted({i for n, ids in batches.items() if n for i in ids} - known.keys())

    def _exclude_relaxed(self, hits: Hits) -> None:
        unknown = sorted({i for per in hits.values() for i in per} - self.relaxed_known.keys())
        if unknown:
            excluded = self._relaxed_images(unknown)
            for image_id in unknown:
                self.relaxed_known[image_id] = image_id in excluded

    def _candidates(self, batches: dict[int, list[str]], hits: Hits) -> dict[int, list[Distractor]]:
        """This round's distractors per signature state (relaxed copies and the presence
        filter's rejects removed)."""
        candidates: dict[int, list[Distractor]] = {}
        for n, ids in batches.items():
            if n == 0:
                continue
            per = hits.get(n, {})
            new = candidates[n] = []
            for image_id in ids:
                found = per.get(image_id)
                if not found or self.relaxed_known.get(image_id, True):
                    continue
                ordered = tuple(sorted(found, key=lambda s: s.key))
                new.append(Distractor(image_id, self.states[n].signature, ordered[0], ordered))
        every = [d for new in candidates.values() for d in new]
        if self.request.presence and every:
            # one call for the round's candidates of every signature (the filter decides each
            # candidate on its own), so the model filter reads their scene graphs in one
            # batched statement instead of one per signature
            kept = {id(d) for d in self.presence_filter(self.g, every)}
            candidates = {n: [d for d in new if id(d) in kept] for n, new in candidates.items()}
        return candidates

    def _record(
        self,
        batches: dict[int, list[str]],
        candidates: dict[int, list[Distractor]],
        positive_ids: set[str],
    ) -> None:
        for n, ids in batches.items():
            state = self.states[n]
            if n == 0:
                state.positives.extend(i for i in ids if i in positive_ids)
                if state.target is not None and len(state.positives) >= state.target:
                    state.done = True
            else:
                state.found.extend(candidates[n])
                if state.target is not None and len(state.found) >= state.target:
                    state.done = True
            if state.stream.exhausted:
                state.done = True

    def _page(self) -> RelatedResult:
        """The requested page: positives, then distractors interleaved signature by signature."""
        r = self.request
        more = False
        positives = self.states[0].positives[r.offset :]
        if self.positives_limit is not None:
            more = more or len(positives) > self.positives_limit
            positives = positives[: self.positives_limit]
        per_sig: list[list[Distractor]] = []
        for state in self.states[1:]:
            page = state.found[r.offset :]
            if self.per_signature is not None:
                more = more or len(page) > self.per_signature
                page = page[: self.per_signature]
            if page:
                per_sig.append(page)
        distractors: list[Distractor] = []
        for group in itertools.zip_longest(*per_sig):
            distractors.extend(d for d in group if d is not None)
        if r.limit is not None:
            distractors = distractors[: r.limit]
        caps = [c for c in (self.per_signature, self.positives_limit) if c is not None]
        next_offset = r.offset + min(caps) if more and caps else None
        whole = all(s.stream.exhausted for s in self.states)  # every match is known
        reached = frozenset(self.reached) if whole else None
        found = (tuple(positives), tuple(distractors))
        return RelatedResult(self.g, r.split, r.seed, *found, r.offset, next_offset, reached)

    # -- verification ----------------------------------------------------------------------------

    def _decode(self, changes: Iterable[Changes]) -> Iterable[Subgraph]:
        for change in changes:
            concrete = self.concretes.of(self.g, change)
            if concrete is not None:
                yield concrete

    def _read_round(self, first: list[tuple[str, dict[str, Any]]], among: list[str]) -> list[Row]:
        """``first``'s rows, read as one round by the store (:meth:`GraphStore.read_round`),
        offering it the exclusion check of the images they name that are ``among``; when the
        store ran it, those images' exclusion is recorded, and the check's rows are not
        returned."""
        check = RoundCheck(self._check_statement, ids="b0_ids", among=among) if among else None
        read = self.store.read_round(first, check=check)
        if read.checked is None:
            return read.rows
        rows: list[Row] = []
        relaxed: list[Row] = []
        for row in read.rows:
            (relaxed if int(row["tag"]) == RELAXED_TAG else rows).append(row)
        self._note_relaxed(read.checked, relaxed)
        return rows

    def _check_statement(self) -> tuple[str, dict[str, Any]]:
        """The exclusion check as one statement (the store sets its ids, ``$b0_ids``)."""
        return union_query(self._relaxed_branches([NEVER]))

    def _verify_per_signature(
        self, batches: dict[int, list[str]], check: list[str]
    ) -> tuple[Hits, set[str]]:
        """One exact branch per signature over its own batch (``UNION ALL``), with the
        exclusion check of ``check`` (:meth:`_unknown`): the concrete ``g'`` per branch and
        image, and the positives."""
        g = self.g
        # a row is read at its signature's positions only (a positive's at none)
        branches = [
            Branch(g, self.states[n].rules, ids, n, reads=self.states[n].changed)
            for n, ids in batches.items()
        ]
        hits: Hits = defaultdict(lambda: defaultdict(set))
        positives: set[str] = set()
        rows = self._read_round([union_query([b]) for b in branches], check)
        orders = {n: read_order(g, self.states[n].changed) for n in batches}
        exclusive = self.names.exclusive
        for row in rows:
            n = int(row["tag"])
            image_id = str(row["image_id"])
            if n == 0:
                positives.add(image_id)
                continue
            changed = self.states[n].changed
            for reading in readings_of(row, orders[n]):
                for concrete in self._decode(concrete_changes(g, changed, reading, exclusive)):
                    hits[n][image_id].add(concrete)
        return hits, positives

    def _verify_combined(
        self, batches: dict[int, list[str]], check: list[str]
    ) -> tuple[Hits, set[str]]:
        """The combined branch over the images not verified yet (with the exclusion check of
        ``check``); hits and positives of every state's batch from what is known per image."""
        fresh = sorted({i for ids in batches.values() for i in ids} - self.verified.keys())
        self._verify(fresh, check)
        verified = self.verified
        positive_ids = {i for ids in batches.values() for i in ids if verified[i][0]}
        hits: Hits = {}
        for n, ids in batches.items():
            sig = self.states[n].signature
            hits[n] = {i: verified[i][1][sig] for i in ids if sig in verified[i][1]}
        return hits, positive_ids

    def _verify(self, image_ids: list[str], check: list[str]) -> None:
        """Match ``g`` with up to ``max_distance`` edits in these images, one combined query per
        batch (each with the exclusion check of the images of ``check`` it returns rows for);
        record per image whether it is a positive and its concrete ``g'`` per signature."""
        g, step = self.g, self.settings.related_batch_max
        max_distance = self.request.max_distance
        nothing: tuple[bool, dict[str, set[Subgraph]]] = (False, {})
        self.verified.update(dict.fromkeys(image_ids, nothing))  # most images return no row
        found: dict[str, tuple[bool, dict[str, set[Subgraph]]]] = {}
        order = read_order(g, None)
        for start in range(0, len(image_ids), step):
            chunk = image_ids[start : start + step]
            query = combined_query(CombinedBranch(g, self.combined_rules, max_distance, chunk))
            rows = self._read_round([query], check)
            for row in rows:
                image_id = str(row["image_id"])
                positive, per = found.get(image_id) or (False, defaultdict(set))
                for reading in readings_of(row, order):
                    for changes in embeddings(g, reading, max_distance, self.names.exclusive):
                        if not changes:
                            positive = True
                            continue
                        concrete = self.concretes.of(g, changes)
                        if concrete is not None:
                            per[signature(p for p, _ in changes)].add(concrete)
                found[image_id] = (positive, per)
        self.verified.update({i: (pos, dict(per)) for i, (pos, per) in found.items()})

    def _relaxed_branches(self, image_ids: list[str]) -> list[Branch]:
        """The exclusion check of ``image_ids`` as branches (tag :data:`RELAXED_TAG`), one per
        ``COVR_RELATED_BATCH_MAX`` ids: ``g``'s shape with the overlap-relaxed rules."""
        step = self.settings.related_batch_max
        return [
            Branch(self.g, self.relaxed_rules, image_ids[start : start + step], RELAXED_TAG)
            for start in range(0, len(image_ids), step)
        ]

    def _relaxed_of(self, rows: Iterable[Row]) -> set[str]:
        """The images of the exclusion check's ``rows`` that hold a relaxed copy of ``g``."""
        excluded: set[str] = set()
        order = read_order(self.g, None)
        for row in rows:
            image_id = str(row["image_id"])
            if image_id not in excluded and any(
                is_relaxed_reading(self.g, reading, self.names.exclusive)
                for reading in readings_of(row, order)
            ):
                excluded.add(image_id)
        return excluded

    def _note_relaxed(self, image_ids: list[str], rows: list[Row]) -> None:
        """Record the exclusion of images checked with a round (``rows``: the check's rows)."""
        excluded = self._relaxed_of(rows)
        for image_id in image_ids:
            self.relaxed_known[image_id] = image_id in excluded

    def _relaxed_images(self, image_ids: list[str]) -> set[str]:
        """The images among ``image_ids`` that hold ``g`` or an overlap-relaxed copy of it
        (one statement per ``COVR_RELATED_BATCH_MAX`` ids, as before on every backend)."""
        excluded: set[str] = set()
        for branch in self._relaxed_branches(image_ids):
            excluded |= self._relaxed_of(self.store.read(*union_query([branch])))
        return excluded
