"""Request sizes every RPC checks the same way: page sizes, batch sizes, subgraph caps.

The limits come from the ``COVR_SERVICE_*`` settings; a value over a limit is a bad field
(``INVALID_ARGUMENT`` naming it) rather than a silently shortened answer, and 0 means "the
server's default", as the proto comments promise.
"""

from __future__ import annotations

from dataclasses import dataclass

from covr.service.errors import InvalidArgument
from covr.settings import Settings


@dataclass(frozen=True)
class RequestLimits:
    """The size checks of one server (its settings)."""

    settings: Settings

    def page_size(self, requested: int, field: str = "page_size") -> int:
        """The page size to use: the default for 0, the request's value up to the maximum."""
        if requested == 0:
            return self.settings.service_page_size
        if requested > self.settings.service_max_page_size:
            raise InvalidArgument.field(
                field, f"{requested} is larger than {self.settings.service_max_page_size}"
            )
        return requested

    def batch(self, count: int, field: str) -> None:
        """A batch request (pairs, queries) holds at least one and at most a page of entries."""
        if count == 0:
            raise InvalidArgument.field(field, "must not be empty")
        if count > self.settings.service_max_page_size:
            raise InvalidArgument.field(
                field, f"has {count} entries (at most {self.settings.service_max_page_size})"
            )

    def max_subgraphs(self, requested: int) -> int:
        """How many subgraphs of an image a request may use: the cap for 0, else up to it."""
        cap = self.settings.service_max_subgraphs
        if requested > cap:
            raise InvalidArgument.field("max_subgraphs", f"{requested} is larger than {cap}")
        return requested or cap
