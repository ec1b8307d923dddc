"""Answering a lookup from a smaller subgraph's exhaustive one, without the store.

Why: on the 100-image sample, 1,941 of the 2,387 lookups of ``covr generate`` found neither a
positive nor a distractor (large subgraphs that only their own image holds), and they cost a
third of the run's CPU (client and store). Many contain an earlier subgraph of the same source
image whose lookup had already verified every candidate and matched only the source image.

Why the answer is exact: if ``g2`` is contained in ``g`` (names and attributes equal), every
match of ``g`` or of an edit of ``g`` in an image restricts to a match of ``g2`` or of an edit of
``g2`` with the same substitutions at fewer positions (an injective embedding composed with
one is injective; the substituted names are the same exclusive alternatives; a concrete edit of
``g2`` repeats a noun only if the edit of ``g`` does). So ``g``'s matches before the exclusion
check and the presence filter lie among ``g2``'s (:attr:`RelatedResult.reached`). When those are
none, ``g`` has no positive and no distractor; when they are the one image ``S`` and ``S`` holds
``g``, ``S`` is ``g``'s only positive and no distractor (the exclusion check removes an image
that holds ``g``). Anything else is looked up as before.

The memo lives for one unit of work (one source image: :meth:`BarrenMemo.reset` at each
``refresh``), per thread (the service runs requests on several), and is bounded; an entry only
answers in the store generation it was learned in (a request that does not start with
``refresh`` may follow an import on the same thread).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from covr.related import matcher
from covr.scene.edits import name_at, positions
from covr.scene.model import Object, Relation, RelMod, SceneGraph
from covr.scene.subgraph import Subgraph

MEMO_LIMIT = 64
"""Exhaustive lookups remembered per unit of work (an image asks about 24 subgraphs)."""


def _names(g: Subgraph) -> Counter[tuple[str, str]]:
    """The multiset of ``g``'s names by node type: a contained subgraph's is a sub-multiset."""
    return Counter((pos.kind, name_at(g, pos)) for pos in positions(g))


def as_scene(g: Subgraph) -> SceneGraph:
    """``g`` as a scene graph of its own, so the matcher can tell what it contains."""
    mods: dict[int, list[RelMod]] = {}
    for k, m in enumerate(g.relmods):
        mods.setdefault(m.relation, []).append(
            RelMod(id=f"m{k}", name=m.name, object=f"o{m.object}")
        )
    return SceneGraph(
        source="subgraph",
        original_id=g.key,
        split="",
        objects=tuple(
            Object(id=f"o{k}", name=o.name, attributes=(o.attribute,) if o.attribute else ())
            for k, o in enumerate(g.objects)
        ),
        relations=tuple(
            Relation(
                id=f"r{k}",
                name=r.name,
                subject=f"o{r.subject}",
                object=f"o{r.object}",
                mods=tuple(mods.get(k, ())),
            )
            for k, r in enumerate(g.relations)
        ),
    )


@dataclass(frozen=True)
class _Entry:
    g: Subgraph
    names: Counter[tuple[str, str]]
    split: str | None
    max_distance: int
    reached: frozenset[str]
    generation: str | None


class BarrenMemo:
    """Exhaustive lookups that matched at most one image, per thread and unit of work."""

    def __init__(self, limit: int = MEMO_LIMIT) -> None:
        self.limit = limit
        self._local = threading.local()

    def _entries(self) -> list[_Entry]:
        entries: list[_Entry] | None = getattr(self._local, "entries", None)
        if entries is None:
            entries = self._local.entries = []
        return entries

    def reset(self) -> None:
        """Start a unit of work (the store's generation may have moved)."""
        self._local.entries = []

    def note(
        self,
        g: Subgraph,
        split: str | None,
        max_distance: int,
        reached: frozenset[str] | None,
        generation: str | None = None,
    ) -> None:
        """Remember a lookup that verified every candidate and matched at most one image
        (``generation``: the store generation its answer belongs to)."""
        if reached is None or len(reached) > 1:
            return
        entries = self._entries()
        if len(entries) >= self.limit:
            del entries[0]
        entries.append(_Entry(g, _names(g), split, max_distance, reached, generation))

    def answer(
        self,
        g: Subgraph,
        split: str | None,
        max_distance: int,
        holds: Callable[[str], bool],
        generation: str | None = None,
    ) -> frozenset[str] | None:
        """``g``'s positives when a remembered lookup of this store ``generation`` decides them
        and proves ``g`` has no distractor (``holds(image)``: whether that image holds ``g``);
        None: look ``g`` up."""
        names = _names(g)
        scene: SceneGraph | None = None
        for entry in self._entries():
            if (entry.split, entry.max_distance, entry.generation) != (
                split,
                max_distance,
                generation,
            ):
                continue
            if entry.names - names:
                continue  # a name of the remembered subgraph that g lacks: not contained
            if scene is None:
                scene = as_scene(g)
            if not matcher.contains(scene, entry.g):
                continue
            if not entry.reached:
                return frozenset()
            (only,) = entry.reached
            if holds(only):
                return entry.reached
        return None
