"""Direct matches: a signature's exact candidate pool from an index-started match of ``g``.

Why a module of its own: the round loop (:mod:`covr.related.search`) decides *when* a state
switches from sampled batches to its exact pool; how that pool is read (one anchored branch per
anchor, shared by the signatures that start from the same name) is a separate piece with its own
statement shapes (:func:`covr.related.cypher_path.anchored_query`). :class:`DirectMatches` is a
collaborator the search holds: it gets the lookup's request, tables and store, and changes only
the states it is handed (:class:`covr.related.states.SigState`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import numpy as np

from covr.graph.store import GraphStore, Row
from covr.related.config import RelatedSettings
from covr.related.cypher_path import AnchoredBranch, Rule, anchored_query, read_order
from covr.related.names import NameTables, embeddings, readings_of
from covr.related.request import RelatedRequest
from covr.related.sampling import ImageTable
from covr.related.states import SigState
from covr.scene.edits import Position, name_at, positions, signature


class DirectMatches:
    """The direct-match half of one lookup: held by its :class:`~covr.related.search.Search`,
    which asks :meth:`wanted` per state and hands the chosen ones to :meth:`switch`."""

    def __init__(
        self,
        store: GraphStore,
        names: NameTables,
        settings: RelatedSettings,
        request: RelatedRequest,
        table: ImageTable,
        first_batch: Callable[[int | None], int],
    ) -> None:
        self.store = store
        self.names = names
        self.settings = settings
        self.request = request
        self.g = request.subgraph
        self.table = table
        self.all_positions = positions(self.g)
        self.first_batch = first_batch
        """The search's first-batch size for a state that wants ``want`` results."""

    def _read_anchored(self, branches: list[AnchoredBranch]) -> list[Row]:
        """The rows of every direct branch, read as one round by the store
        (:meth:`GraphStore.read_round`), each branch a statement of its own: a union of anchors
        would be a new text for every new combination of anchors, which Neo4j plans anew."""
        return self.store.read_round([anchored_query([b]) for b in branches]).rows

    def wanted(self, state: SigState, *, late: bool = False) -> bool:
        """After a sampled first round: switch a signature with a large remaining pool to an
        exact, index-started match of its images (most signatures have few or no hits, and a
        direct match proves that far cheaper than verifying the whole pool image by image).

        The positives follow the same node cap in round 1 (a direct match from a common name
        such as "shirt" reads every such node: 0.2-0.3 s at 1x GQA, while a second, 4x larger
        sampled round usually finds them); ``late`` (round 3) lifts the cap for positives still
        short, because they are never cut short by the scan budget."""
        if state.anchor is None or state.exact:
            return False
        if state.stream.remaining() <= self.settings.related_direct_min_pool:
            return False
        if state.target is None or (late and not state.signature):
            return True  # a full result, or positives still short: the exact pool beats the scan
        cap = self.settings.related_direct_max_nodes
        nodes = self.names.nodes(state.anchor.kind, name_at(self.g, state.anchor))
        return not cap or nodes <= cap

    def switch(self, states: list[SigState]) -> None:
        """Exact candidate pools of ``states`` from index-started matches, one query.

        Signatures that share an anchor share one *counting* branch: its walk from the anchor
        is done once (it dominated the cost: the same 1,500-node index scan and first hop per
        signature, measured with GRAPH.PROFILE at 1x), every other position holds ``g``'s name
        or a possible edit, and each returned embedding is sorted into its signature here with
        the exact rules of :func:`covr.related.names.embeddings`. A signature alone on its
        anchor keeps the plain branch with its own rules, which returns only image ids.
        """
        if not states:
            return
        branches, shared, counting = self._direct_branches(states)
        pools: dict[int, set[int]] = defaultdict(set)
        every = len(self.all_positions)
        order = read_order(self.g, None)
        for row in self._read_anchored(branches):
            index = self.table.index.get(str(row["image_id"]))
            if index is None:
                continue
            by_signature = shared[int(row["tag"])]
            if not counting:
                pools[next(iter(by_signature.values()))].add(index)
                continue
            for reading in readings_of(row, order):
                for changes in embeddings(self.g, reading, every, self.names.exclusive):
                    member = by_signature.get(signature(p for p, _ in changes))
                    if member is not None:
                        pools[member].add(index)
        r = self.request
        for n, state in enumerate(states):
            seen = state.stream.seen()
            exact = np.setdiff1d(np.array(sorted(pools.get(n, ())), dtype=np.int64), seen)
            state.stream = self.table.stream(exact, r.seed, state.salt, r.split)
            state.exact = True
            if len(exact) == 0:
                state.done = True
            elif not state.signature and state.target is not None:
                # An exact pool is all hits: verify what is still missing, not the batch the
                # sampled rounds grew to (at 1x a late direct match verified 1,024 images
                # for 8 positives). The positives are the first ones in the seeded order
                # either way, and they are outside the scan budget, so nothing else changes.
                state.batch = self.first_batch(state.target - len(state.positives))

    def _direct_branches(
        self, states: list[SigState]
    ) -> tuple[list[AnchoredBranch], dict[int, dict[str, int]], bool]:
        """One anchored branch per anchor; per branch tag, signature -> index in ``states``;
        whether the branches count edits (``UNION ALL`` needs one set of columns, so plain
        branches only when no anchor is shared)."""
        g, split = self.g, self.request.split
        groups: dict[Position, list[int]] = defaultdict(list)
        for n, state in enumerate(states):
            if state.anchor is not None:
                groups[state.anchor].append(n)
        branches: list[AnchoredBranch] = []
        shared: dict[int, dict[str, int]] = {}
        counting = any(len(members) > 1 for members in groups.values())
        for anchor, members in groups.items():
            tag = len(branches)
            if len(members) == 1:
                state = states[members[0]]
                most = len(state.changed) if counting else None
                branches.append(AnchoredBranch(g, state.rules, anchor, split, tag, most))
                shared[tag] = {state.signature: members[0]}
                continue
            changeable = {p for n in members for p in states[n].changed}
            branch_rules: dict[str, Rule] = {
                p: self.names.combined_rule(g, p) if p in changeable else Rule("eq", name_at(g, p))
                for p in self.all_positions
            }
            most = max(len(states[n].changed) for n in members)
            branches.append(AnchoredBranch(g, branch_rules, anchor, split, tag, max_changes=most))
            shared[tag] = {states[n].signature: n for n in members}
        return branches, shared, counting
