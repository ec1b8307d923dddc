"""What can go wrong with an input, said so a person can find it: file, record, field.

A :class:`Problem` is one bad record (or the unreadable rest of a file); readers yield it instead
of raising so that the valid records around it are still loaded. :class:`InputFileError` is a
file that cannot be read at all (missing, a directory, empty, not JSON of the expected shape);
:class:`LoadFailed` is what ``--strict`` turns problems into.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from covr.errors import CovrError

REST_OF_FILE = "<rest of file>"
"""``Problem.record`` when a file breaks off (truncated, bad bytes): nothing after it is read."""


@dataclass(frozen=True)
class Problem:
    """One skipped record, with enough detail to find it in the file."""

    file: str
    record: str
    field: str
    message: str
    offset: int | None = None

    @property
    def reason(self) -> str:
        """A short, record-independent reason used to group problems in summaries."""
        return self.message.split(":", 1)[0]

    def __str__(self) -> str:
        where = f" (near byte {self.offset})" if self.offset is not None else ""
        field = f" field {self.field}:" if self.field else ""
        return f"{self.file}: record {self.record}{where}:{field} {self.message}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready view."""
        return asdict(self)


class RecordError(CovrError):
    """Raised inside a converter; the reader adds file and record and yields a :class:`Problem`."""


class InputFileError(Exception):
    """A file that cannot be read at all; loading stops before anything is written from it."""

    def __init__(self, file: str, message: str) -> None:
        super().__init__(f"{file}: {message}")
        self.file = file
        self.message = message


class LoadFailed(Exception):
    """A ``--strict`` load met problems; nothing was written."""

    def __init__(self, problems: list[Problem]) -> None:
        head = "; ".join(str(p) for p in problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        super().__init__(f"{len(problems)} bad record(s): {head}{more}")
        self.problems = problems


def reasons(problems: Iterable[Problem]) -> dict[str, int]:
    """Problem counts per reason, most frequent first."""
    return dict(Counter(p.reason for p in problems).most_common())
