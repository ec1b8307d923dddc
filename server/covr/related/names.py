"""What a store lookup knows about names, kept for one store generation, and the pure rules
that turn names into prefilters and rows back into concrete subgraphs.

Why a class of its own: the image table, the per-split vocabularies (name -> images, nodes),
the image list of each name and the exclusivity decisions are read or computed once and shared
by every lookup until a load changes the store; the round loop (:mod:`covr.related.search`) only
asks questions of it. The owner (:class:`~covr.related.lookup.RelatedLookup`) calls
:meth:`NameTables.reset` on a new generation, under its exclusive lock.

Why the rules are pure functions (no store, unit-tested alone): which Cypher prefilter a
position gets, and how a returned row becomes concrete ``g'`` subgraphs, decide the lookup's
correctness; as functions of plain values (the vocabulary lists and an ``exclusive(kind, x, y)``
decision) they are tested without a graph server. The rules only prefilter (docs/related.md
§3): every row is decoded again with the exclusivity decision itself. They live beside the
tables because the tables are their only source of names (one module on a request's path, not
two).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from covr.cache import LRU
from covr.graph import catalog, name_stats
from covr.graph.store import GraphStore
from covr.related.config import RelatedSettings
from covr.related.cypher_path import Rule
from covr.related.exclusivity import EXCLUSIVE_THRESHOLD, Exclusivity, scores_against
from covr.related.sampling import IdArray, ImageTable
from covr.scene.edits import NodeType, Position, name_at, positions, substitute
from covr.scene.subgraph import Subgraph, SubgraphError

Exclusive = Callable[[NodeType, str, str], bool]
"""``exclusive(kind, x, y)``: whether ``y`` may replace ``x`` in a distractor."""
Changes = tuple[tuple[Position, str], ...]
"""The substitutions of one concrete ``g'``, sorted by position."""

# -- rules -------------------------------------------------------------------------------------


def distractor_rule(
    kind: NodeType, x: str, exclusive: Sequence[str], others: Sequence[str], cap: int
) -> Rule | None:
    """Rule of a changed position (None: no name of the store could be exclusive with ``x``).

    ``exclusive``/``others`` are the vocabulary's names other than ``x`` that are / are not
    exclusive with it; the shorter list that fits ``cap`` becomes a list parameter.
    """
    if not exclusive:
        return None
    if kind == "attribute":
        if len(exclusive) <= cap:
            return Rule("in", values=tuple(exclusive))
        if len(others) <= cap:
            return Rule("ne_not_in", x, tuple(others))
        return Rule("ne", x)
    if len(others) <= cap:
        return Rule("ne_not_in", x, tuple(others)) if others else Rule("ne", x)
    if len(exclusive) <= cap:
        return Rule("in", values=tuple(exclusive))
    return Rule("ne", x)


def relaxed_rule(x: str, exclusive: Sequence[str], others: Sequence[str], cap: int) -> Rule:
    """Rule of a position in the overlap-relaxed copy of ``g``: ``x`` or a non-exclusive name."""
    if len(others) + 1 <= cap:
        return Rule("in", values=(x, *others))
    if len(exclusive) <= cap:
        return Rule("not_in", values=tuple(exclusive))
    return Rule("any")


def combined_rule(x: str, edited: Rule | None) -> Rule:
    """Rule of a position in a combined branch: ``g``'s name or a possible edit."""
    if edited is None:
        return Rule("eq", x)
    if edited.op == "ne_not_in":
        return Rule("not_in", values=edited.values)
    if edited.op == "in":
        return Rule("eq_or_in", x, edited.values)
    return Rule("any")


def choose_anchor(
    g: Subgraph, fixed: Sequence[Position], nodes: Callable[[NodeType, str], int]
) -> Position | None:
    """The fixed non-attribute position whose name has the fewest nodes (None: none fixed)."""
    best: tuple[int, Position] | None = None
    for pos in fixed:
        if pos.kind == "attribute":
            continue
        count = nodes(pos.kind, name_at(g, pos))
        if best is None or (count, pos) < best:
            best = (count, pos)
    return None if best is None else best[1]


# -- row decoding ------------------------------------------------------------------------------


def _found(reading: Mapping[Position, Any], pos: Position) -> list[str]:
    """The names a reading holds at ``pos`` (an attribute position: the object's attributes)."""
    value = reading[pos]
    if pos.kind == "attribute":
        return [str(a) for a in dict.fromkeys(value or ())]
    return [str(value)]


def concrete_changes(
    g: Subgraph, changed: Sequence[Position], reading: Mapping[Position, Any], exclusive: Exclusive
) -> list[Changes]:
    """The substitutions of every concrete ``g'`` a distractor's reading holds (``reading``:
    position -> what the image has there; attribute choices expanded); empty when a changed
    position holds no exclusive name."""
    options: list[list[tuple[Position, str]]] = []
    for pos in changed:
        x = name_at(g, pos)
        good = [(pos, y) for y in _found(reading, pos) if exclusive(pos.kind, x, y)]
        if not good:
            return []
        options.append(good)
    return [tuple(sorted(combo)) for combo in itertools.product(*options)]


def embeddings(
    g: Subgraph, reading: Mapping[Position, Any], max_distance: int, exclusive: Exclusive
) -> list[Changes]:
    """The edits a reading of every position of ``g`` allows (attribute choices expanded):
    equal names cost nothing, exclusive ones one edit, anything else rejects the reading."""
    fixed: list[tuple[Position, str]] = []
    options: list[list[tuple[Position, str] | None]] = []
    for pos in positions(g):
        x = name_at(g, pos)
        if pos.kind == "attribute":
            values = _found(reading, pos)
            choice: list[tuple[Position, str] | None] = [None] if x in values else []
            choice += [(pos, a) for a in values if exclusive(pos.kind, x, a)]
            if not choice:
                return []
            options.append(choice)
            continue
        y = _found(reading, pos)[0]
        if y == x:
            continue
        if not exclusive(pos.kind, x, y):
            return []
        fixed.append((pos, y))
    if len(fixed) > max_distance:
        return []
    out = []
    for combo in itertools.product(*options):
        changes = fixed + [c for c in combo if c is not None]
        if len(changes) <= max_distance:
            out.append(tuple(sorted(changes)))
    return out


def is_relaxed_reading(g: Subgraph, reading: Mapping[Position, Any], exclusive: Exclusive) -> bool:
    """Whether a reading of every position of ``g`` is an overlap-relaxed copy of it: every name
    equal to ``g``'s or not exclusive with it (an attribute: some attribute of the object
    qualifies)."""
    for pos in positions(g):
        x = name_at(g, pos)
        found = _found(reading, pos)
        if pos.kind == "attribute":
            if all(exclusive(pos.kind, x, a) for a in found):
                return False
            continue
        if exclusive(pos.kind, x, found[0]):
            return False
    return True


def readings_of(row: Mapping[str, Any], order: Sequence[Position]) -> Iterator[dict[Position, Any]]:
    """The readings of an image-walk row as ``position -> value`` (``order``: the branch's
    :func:`~covr.related.cypher_path.read_order`). A reading of another length (a node without a
    name leaves no item) is skipped: its values cannot be placed."""
    for reading in row["readings"]:
        if len(reading) == len(order):
            yield dict(zip(order, reading, strict=True))


# -- tables ------------------------------------------------------------------------------------

_POSTINGS = {
    "object": "match/related/postings_object",
    "relation": "match/related/postings_relation",
    "relmod": "match/related/postings_relmod",
}
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]

_ANCHOR_ENOUGH = 256
"""Stop intersecting further names' image lists once a pool is this small."""


class NameTables:
    """Image table, vocabularies, name postings and exclusivity decisions of one generation."""

    def __init__(
        self, store: GraphStore, exclusivity: Exclusivity, settings: RelatedSettings
    ) -> None:
        self.store = store
        self.exclusivity = exclusivity
        self.settings = settings
        self._images: ImageTable | None = None
        self._table_lock = threading.Lock()
        self._vocab: dict[tuple[str, str | None], dict[str, tuple[int, int]]] = {}
        self._lists: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._m: dict[tuple[str, str, str], bool] = {}
        self._postings: LRU[tuple[str, str], IdArray] = LRU(settings.related_cache_postings)
        self._pools: LRU[tuple[Any, ...], tuple[IdArray | None]] = LRU(
            settings.related_cache_postings
        )
        self._rules: dict[tuple[bool, str, str], Rule | None] = {}
        self._sorted: dict[str, tuple[str, ...]] = {}

    def reset(self, *, decisions: bool = False) -> None:
        """Forget what depends on the store's contents (``decisions``: the model's too)."""
        self._images = None
        self._vocab.clear()
        self._lists.clear()
        self._postings.clear()
        self._pools.clear()
        self._rules.clear()
        self._sorted.clear()
        if decisions:
            self._m.clear()

    def table(self) -> ImageTable:
        """The generation's one image table, built by the first lookup that needs it.

        Concurrent first lookups must not each read their own: the store can gain images
        between two reads (an import), and a search that drew candidates from one table and
        ranked them in the other indexed past its end (a soak's INTERNAL: ``IndexError: index
        1198 is out of bounds for axis 0 with size 1198``). The others wait for the first read.
        """
        images = self._images
        if images is None:
            with self._table_lock:
                images = self._images
                if images is None:
                    rows = self.store.read(
                        catalog.get("match/related/images"),
                        timeout=self.settings.table_timeout_s,
                    )
                    images = ImageTable(rows)
                    self._images = images
        return images

    def vocabulary(self, node_type: str, split: str | None) -> dict[str, tuple[int, int]]:
        """``name -> (images, nodes)`` of one node type in ``split`` (None: every split)."""
        key = (node_type, split)
        if key not in self._vocab:
            self._vocab[key] = name_stats.vocabulary(self.store, node_type, split)  # type: ignore[arg-type]
        return self._vocab[key]

    def nodes(self, kind: NodeType, name: str) -> int:
        """How many nodes of the whole store carry ``name``."""
        return self.vocabulary(kind, None).get(name, (0, 0))[1]

    # -- exclusivity -----------------------------------------------------------------------------

    def exclusive(self, node_type: NodeType, x: str, y: str) -> bool:
        key = (node_type, x, y)
        hit = self._m.get(key)
        if hit is None:
            hit = x != y and self.exclusivity.m(node_type, x, y) > EXCLUSIVE_THRESHOLD
            if len(self._m) > self.settings.related_cache_decisions:
                self._m.clear()
            self._m[key] = hit
        return hit

    def _scores_against(self, node_type: NodeType, x: str, names: Sequence[str]) -> BoolArray:
        """Whether each of ``names`` is exclusive with ``x``, decided in one call.

        A name's alternatives cover the whole vocabulary (1,700 object names at 0.1x GQA): one
        model call per pair was ~70 % of a new process's first lookups (profile, 8,500
        images); one batch gives the same scores (checked bit for bit on that vocabulary). A
        model that keeps scores in rows answers with one slice of ``x``'s row. The decisions are
        the ones :meth:`exclusive` takes (the same scores, the same threshold); they are not
        stored per pair, which was ~540,000 dict entries on the 100-image sample.
        """
        scores = scores_against(self.exclusivity, node_type, x, names)
        return np.asarray(scores, dtype=np.float64) > EXCLUSIVE_THRESHOLD

    def _sorted_vocabulary(self, node_type: str) -> tuple[str, ...]:
        known = self._sorted.get(node_type)
        if known is None:  # sorted once per generation, not once per name asked about
            known = self._sorted[node_type] = tuple(sorted(self.vocabulary(node_type, None)))
        return known

    def alternatives(self, node_type: NodeType, x: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(exclusive, non-exclusive) names of the vocabulary other than ``x``."""
        key = (node_type, x)
        if key not in self._lists:
            names = [n for n in self._sorted_vocabulary(node_type) if n != x]
            exclusive = self._scores_against(node_type, x, names)
            self._lists[key] = (
                tuple(itertools.compress(names, exclusive)),
                tuple(itertools.compress(names, ~exclusive)),
            )
        return self._lists[key]

    # -- rules of one subgraph -------------------------------------------------------------------

    def _rule(self, edited: bool, kind: NodeType, x: str) -> Rule | None:
        """A position's distractor (``edited``) or relaxed rule, kept per name: the subgraphs of
        one image share most names, and a rule copies lists of up to ``related_list_max``."""
        key = (edited, kind, x)
        if key not in self._rules:
            exclusive, others = self.alternatives(kind, x)
            cap = self.settings.related_list_max
            self._rules[key] = (
                distractor_rule(kind, x, exclusive, others, cap)
                if edited
                else relaxed_rule(x, exclusive, others, cap)
            )
        return self._rules[key]

    def distractor_rule(self, g: Subgraph, pos: Position) -> Rule | None:
        return self._rule(True, pos.kind, name_at(g, pos))

    def relaxed_rule(self, g: Subgraph, pos: Position) -> Rule:
        rule = self._rule(False, pos.kind, name_at(g, pos))
        assert rule is not None  # a relaxed rule always exists
        return rule

    def combined_rule(self, g: Subgraph, pos: Position) -> Rule:
        return combined_rule(name_at(g, pos), self.distractor_rule(g, pos))

    def anchor(self, g: Subgraph, fixed: Sequence[Position]) -> Position | None:
        return choose_anchor(g, fixed, self.nodes)

    # -- candidate pools -------------------------------------------------------------------------

    def posting(self, node_type: str, name: str) -> IdArray:
        """Table indices of the images holding a node named ``name`` (cached)."""
        key = (node_type, name)
        hit = self._postings.get(key)
        if hit is None:
            table = self.table()
            rows = self.store.read(catalog.get(_POSTINGS[node_type]), {"name": name})
            found = [table.index[r["id"]] for r in rows if r["id"] in table.index]
            hit = self._postings.put(key, np.unique(np.array(found, dtype=np.int64)))
        return hit

    def pool(self, g: Subgraph, fixed: Sequence[Position], split: str | None) -> IdArray | None:
        """Images holding every fixed non-attribute name (rarest first), in ``split``; None when
        nothing is fixed (every image of the split is a candidate)."""
        table = self.table()
        typed = []
        for pos in fixed:
            if pos.kind == "attribute":
                continue  # attributes are a list property: no index to draw candidates from
            name = name_at(g, pos)
            images = self.vocabulary(pos.kind, split).get(name, (0, 0))[0]
            typed.append((images, pos.kind, name))
        if not typed:
            return None
        typed.sort()
        key = (tuple(typed), split)
        hit = self._pools.get(key)
        if hit is None:  # the subgraphs of one image fix the same names again and again
            hit = self._pools.put(key, (self._intersect(typed, table, split),))
        return hit[0]

    def _intersect(
        self, typed: Sequence[tuple[int, str, str]], table: ImageTable, split: str | None
    ) -> IdArray | None:
        if typed[0][0] == 0:
            return np.empty(0, dtype=np.int64)
        pool: IdArray | None = None
        cap = self.settings.related_postings_max_images
        for images, kind, name in typed:
            if pool is not None and len(pool) <= _ANCHOR_ENOUGH:
                break
            if cap and images > cap:
                break  # fetching a very common name's image list costs more than it saves
            ids = self.posting(kind, name)
            pool = ids if pool is None else np.intersect1d(pool, ids, assume_unique=True)
        if pool is None:
            return None
        return table.in_split(pool, split)


_UNKNOWN = object()
"""Marks a concrete subgraph not computed yet (None is a valid, cached answer)."""


class Concretes:
    """``g`` with substitutions applied, memoized: a lookup decodes the same edits again and
    again (one per row and round); None marks an edit that is not a valid subgraph."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        """Entries kept before the table starts over (``COVR_RELATED_CACHE_CONCRETES``)."""
        self._made: dict[tuple[str, Changes], Subgraph | None] = {}

    def of(self, g: Subgraph, changes: Changes) -> Subgraph | None:
        key = (g.key, changes)
        hit = self._made.get(key, _UNKNOWN)
        if hit is not _UNKNOWN:
            return hit  # type: ignore[return-value]
        try:
            concrete: Subgraph | None = substitute(g, dict(changes))
        except SubgraphError:  # the edit repeats a noun of g: not a valid subgraph
            concrete = None
        if len(self._made) > self.limit:
            self._made.clear()
        self._made[key] = concrete
        return concrete
