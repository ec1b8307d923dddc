"""Typed field access for raw JSON records: every wrong type becomes a :class:`RecordError`.

Each helper takes the path of the field (``objects["12"].attributes``) so that the error names
exactly what is wrong; the readers add file and record.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from covr.scene.model import Number
from covr_loaders.errors import RecordError

_SPACES = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Lower case, trimmed, inner whitespace collapsed (Visual Genome predicates and names)."""
    return _SPACES.sub(" ", text.strip().lower())


def as_mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise RecordError(where, f"must be an object, got {type(value).__name__} {value!r:.60}")
    return value


def as_list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise RecordError(where, f"must be a list, got {type(value).__name__} {value!r:.60}")
    return value


def required(record: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in record or record[key] is None:
        raise RecordError(f"{where}.{key}" if where else key, "missing required field")
    return record[key]


def as_name(value: Any, where: str) -> str:
    """A non-empty string, trimmed."""
    if not isinstance(value, str):
        raise RecordError(where, f"must be a string, got {type(value).__name__} {value!r:.60}")
    text = value.strip()
    if not text:
        raise RecordError(where, "must not be empty")
    if "\x00" in text:
        raise RecordError(where, "contains a NUL character")
    if "\x01" in text:  # FalkorDB's indexes cannot find such a string (covr.scene.model)
        raise RecordError(where, "contains the control character U+0001")
    return text


def as_id(value: Any, where: str) -> str:
    """An identifier given as a string or an integer (VG uses integers, GQA strings)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise RecordError(where, f"must be an id (string or integer), got {value!r:.60}")
    return as_name(str(value), where)


def as_number(value: Any, where: str) -> Number:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RecordError(where, f"must be a number, got {type(value).__name__} {value!r:.60}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RecordError(where, f"must be finite, got {value!r}")
        if value.is_integer():
            return int(value)
    return value


def optional_number(record: Mapping[str, Any], key: str, where: str) -> Number | None:
    value = record.get(key)
    if value is None:
        return None
    return as_number(value, f"{where}.{key}" if where else key)


def name_list(value: Any, where: str, *, lower: bool = False) -> tuple[str, ...]:
    """A list of names (attributes, synsets); duplicates dropped, order kept."""
    if value is None:
        return ()
    items = as_list(value, where)
    out: list[str] = []
    for i, item in enumerate(items):
        name = as_name(item, f"{where}[{i}]")
        if lower:
            name = normalize(name)
        if name not in out:
            out.append(name)
    return tuple(out)
