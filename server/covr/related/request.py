"""One related-images request: what a lookup is asked, checked once, hashable.

Why one type: the same lookup arguments used to be spelled out as a signature, a cache-key tuple
and an internal request in the lookup, again in the service's paging (a ``dict`` passed with
``**``), the question engine's provider and the batch jobs, so a new option meant editing six
files. Now every caller builds a :class:`RelatedRequest` once; the lookup
(:meth:`covr.related.lookup.RelatedLookup.find`) caches its result under it, one search
(:class:`covr.related.search.Search`) reads it, and the service binds its page tokens to
:meth:`RelatedRequest.binding`. Adding an option is a field here (checked in
:meth:`RelatedRequest.__post_init__`) and its use in the search.

The arguments' meaning is docs/related.md §1.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from covr.related.config import RelatedSettings
from covr.related.errors import RelatedError
from covr.scene.subgraph import Subgraph

__all__ = ["DEFAULT", "Default", "RelatedRequest", "as_subgraph"]


class Default(Enum):
    """Marks an argument whose value comes from settings (``COVR_RELATED_*``)."""

    VALUE = "default"


DEFAULT = Default.VALUE


def as_subgraph(g: Subgraph | str) -> Subgraph:
    """A subgraph from itself or its key (the lookup's public methods take either)."""
    if isinstance(g, Subgraph):
        return g
    if isinstance(g, str):
        return Subgraph.from_key(g)
    raise RelatedError("g", f"expected a Subgraph or a subgraph key, got {type(g).__name__}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class RelatedRequest:
    """The arguments of one lookup (docs/related.md §1), checked when built.

    ``g`` may be given as a subgraph key; ``None`` is a request not bound to a subgraph yet
    (``RelatedLookup.for_image`` and the service's image target bind each subgraph of an image
    with :meth:`about`). ``per_signature`` and ``positives_limit`` may be :data:`DEFAULT`
    (``COVR_RELATED_PER_SIGNATURE`` / ``COVR_RELATED_POSITIVES``) until :meth:`resolved`.

    Two requests are equal (and hash alike) when their subgraph *keys* and other fields are:
    the lookup's result cache uses the request itself as its key.
    """

    g: Subgraph | str | None = field(default=None, compare=False)
    """A key given here is parsed when the request is built: it is a :class:`Subgraph` after."""
    split: str | None = None
    max_distance: int = 2
    per_signature: int | Default | None = DEFAULT
    limit: int | None = None
    positives_limit: int | Default | None = DEFAULT
    seed: int = 0
    offset: int = 0
    presence: bool = True
    positives_if_distractors: bool = False
    """The caller drops a result without distractors: the positives may then be left short
    when no distractor is found (:meth:`covr.related.search.Search._positives_go`)."""
    key: str | None = field(default=None, init=False)
    """``g``'s key (what equality and the hash use for the subgraph)."""

    def __post_init__(self) -> None:
        if self.g is not None:
            g = as_subgraph(self.g)
            object.__setattr__(self, "g", g)
            object.__setattr__(self, "key", g.key)
        _check(self)

    @property
    def subgraph(self) -> Subgraph:
        """``g``; :class:`RelatedError` when the request is not bound to a subgraph."""
        if not isinstance(self.g, Subgraph):
            raise RelatedError("g", "the request names no subgraph")
        return self.g

    @property
    def per_signature_cap(self) -> int | None:
        """``per_signature`` of a :meth:`resolved` request."""
        return _resolved("per_signature", self.per_signature)

    @property
    def positives_cap(self) -> int | None:
        """``positives_limit`` of a :meth:`resolved` request."""
        return _resolved("positives_limit", self.positives_limit)

    def resolved(self, settings: RelatedSettings) -> RelatedRequest:
        """The request with :data:`DEFAULT` values taken from ``settings`` (itself when none
        is left): a default and the value it stands for are one cache entry."""
        changes: dict[str, Any] = {}
        if isinstance(self.per_signature, Default):
            changes["per_signature"] = settings.related_per_signature
        if isinstance(self.positives_limit, Default):
            changes["positives_limit"] = settings.related_positives
        return replace(self, **changes) if changes else self

    def about(self, g: Subgraph | str) -> RelatedRequest:
        """The same request about ``g``."""
        return replace(self, g=as_subgraph(g))

    def at(self, offset: int) -> RelatedRequest:
        """The same request for the page at ``offset``."""
        return replace(self, offset=offset)

    def binding(self) -> dict[str, Any]:
        """The fields a page token of this request is only valid for: all but the page itself
        (``offset``, and ``limit``, which a client may change between pages), as JSON values
        (``g`` as its key, a default as ``"default"``)."""
        out: dict[str, Any] = {"key": self.key}
        for name in _BOUND:
            value = getattr(self, name)
            out[name] = "default" if isinstance(value, Default) else value
        return out


_BOUND = (
    "split",
    "max_distance",
    "per_signature",
    "positives_limit",
    "seed",
    "presence",
    "positives_if_distractors",
)


def _resolved(name: str, value: int | Default | None) -> int | None:
    if isinstance(value, Default):
        raise RelatedError(name, "is still the default: resolve the request first")
    return value


def _check(r: RelatedRequest) -> None:
    """Raise :class:`RelatedError` naming the first bad argument."""
    if not _is_int(r.max_distance) or not 0 <= r.max_distance <= 2:
        raise RelatedError("max_distance", f"must be 0, 1 or 2, got {r.max_distance!r}")
    for name, value in (
        ("per_signature", r.per_signature),
        ("limit", r.limit),
        ("positives_limit", r.positives_limit),
    ):
        if value is None or value is DEFAULT:
            continue
        if not _is_int(value) or value < 1:
            raise RelatedError(name, f"must be >= 1 or None, got {value!r}")
    if not _is_int(r.offset) or r.offset < 0:
        raise RelatedError("offset", f"must be >= 0, got {r.offset!r}")
    if not _is_int(r.seed):
        raise RelatedError("seed", f"must be an integer, got {r.seed!r}")
    if r.split is not None and (not isinstance(r.split, str) or not r.split):
        raise RelatedError("split", f"must be a non-empty string or None, got {r.split!r}")
