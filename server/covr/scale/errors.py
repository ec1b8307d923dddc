"""Bad input to a batch run on Ray (an unreachable cluster address, a shard count out of range,
a part file that does not belong to this run)."""

from __future__ import annotations

from covr.errors import CovrError


class ScaleError(CovrError):
    """A batch run cannot start or its parts cannot be merged; ``field`` names the input."""
