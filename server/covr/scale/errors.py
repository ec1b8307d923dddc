"""Bad input to a batch run on Ray (an unreachable cluster address, a shard count out of range,
a part file that does not belong to this run)."""

from __future__ import annotations

from covr.errors import CovrError


class ScaleError(CovrError):
    """A batch run cannot start or its parts cannot be merged; ``field`` names the input."""

    @classmethod
    def of_line(cls, path: str, line: int, message: str) -> ScaleError:
        """A line of a file (0: the file as a whole) cannot be used; the JSON-lines reader's
        error (:func:`covr.jsonlines.json_lines`)."""
        return cls(f"{path}:{line}" if line else path, message)
