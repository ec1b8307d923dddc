"""One JSON value from a piece of text (a JSONL line, a small file read whole), strictly.

``json.loads`` lets three things through that a reader of user files must not: a key repeated in
one object silently keeps its last value; a value nested deeper than the interpreter's recursion
limit raises ``RecursionError`` (a traceback, not a message); an integer of more than
``sys.get_int_max_str_digits()`` digits raises a bare ``ValueError``. :func:`loads` turns each into
a :class:`JsonTextError` whose message says what is wrong, so every reader can report it naming
its file and line (issue 40 rows 9 and 12). A syntax error stays a ``json.JSONDecodeError``: each
reader already words that one in its own way.

The loaders' streaming reader (``covr_loaders.json_entries``) decodes records with
:data:`DECODER` too, so a repeated key means the same thing in every file the project reads.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from covr.errors import CovrError

TOO_MANY_DIGITS = (
    f"a number has more than {sys.get_int_max_str_digits():,} digits (Python's limit for "
    "reading an integer)"
)
TOO_DEEP = "nested too deeply (JSON nesting is limited)"
REPEATED_KEY = "the key appears twice in one JSON object"


class DuplicateKey(ValueError):
    """A JSON object names the same key twice (raised by :data:`DECODER`)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` that refuses a repeated key instead of keeping its last value."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return out


DECODER = json.JSONDecoder(object_pairs_hook=unique_keys)
"""The standard decoder, refusing repeated keys."""


class JsonTextError(CovrError):
    """Text that is JSON but cannot be used: ``field`` is the repeated key (else empty)."""


def loads(text: str | bytes) -> Any:
    """The JSON value of ``text``. Raises ``json.JSONDecodeError`` on a syntax error,
    ``UnicodeDecodeError`` on bytes that are not text, and :class:`JsonTextError` on a repeated
    key, a nesting too deep or an integer too long (see the module docstring)."""
    if isinstance(text, bytes):  # as json.loads does: UTF-8/16/32 with or without a BOM
        text = text.decode(json.detect_encoding(text), "surrogatepass")
    elif text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    try:
        return DECODER.decode(text)
    except json.JSONDecodeError:
        raise
    except DuplicateKey as exc:
        raise JsonTextError(
            exc.key, f"the key {exc.key!r} appears twice in one JSON object"
        ) from None
    except RecursionError:
        raise JsonTextError("", TOO_DEEP) from None
    except ValueError:  # not a syntax error: an integer past Python's digit limit
        raise JsonTextError("", TOO_MANY_DIGITS) from None
