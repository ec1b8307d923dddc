"""The one error type of bad input, shared by every room: which field is wrong, and why.

Each room raises its own subclass (``SceneGraphError``, ``RelatedError``, ``ModelInputError``,
``GenerationError``, ``RecordError``...) so that callers can catch one room's failures, while
everything above the rooms handles them alike: the service maps the classes to gRPC status codes
in one table (:data:`covr.service.errors.STATUS_TABLE`) and reports ``field`` as the request field
that caused it; the CLI prints ``field: message``. It is a ``ValueError`` because every room's
error was one before the rooms shared it, and callers catch them as such.
"""

from __future__ import annotations


class CovrError(ValueError):
    """Bad input: ``field`` names the offending argument or path (``objects[2].name``; empty
    when the input as a whole is wrong) and ``message`` says what is wrong with it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message
