"""Errors of the related-images room: bad lookup input, unknown images and subgraphs.

Kept in their own module so that the service's one error table (and whoever unifies the rooms'
error types) can import them without pulling in the lookup.
"""

from __future__ import annotations

from covr.errors import CovrError


class RelatedError(CovrError):
    """Bad input to a lookup; ``field`` names the argument (the room's :class:`CovrError`)."""


class UnknownImage(RelatedError):
    """The image id is not in the store."""


class UnknownSubgraph(RelatedError):
    """The subgraph key is not a subgraph of the image."""


class StatsMissing(RelatedError):
    """The store holds images but no name statistics (written at the end of every load)."""
