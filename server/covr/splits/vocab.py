"""Word classes the splits need: attribute types and which program arguments are names.

Attribute *types* (color, material ...) are structure, not lexical content: "What is the color
of X?" and "Do all X have the same color?" keep ``color`` when programs are anonymized, and
HAS-SAMEATTR-COLOR is named after it. The value → type table is this room's own resource
(``resources/attribute_types.json``), derived from the project's attribute scales.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any, TypeGuard


@lru_cache(maxsize=1)
def attribute_types() -> dict[str, str]:
    """Attribute value → attribute type (the first type that lists the value)."""
    text = resources.files("covr.splits").joinpath("resources/attribute_types.json").read_text()
    data = json.loads(text)
    table: dict[str, str] = {}
    for type_name, values in data["types"].items():
        for value in values:
            table.setdefault(value, type_name)
    return table


@lru_cache(maxsize=1)
def attribute_type_names() -> frozenset[str]:
    """The attribute types themselves (``color``, ``material`` ...)."""
    return frozenset(attribute_types().values())


def as_number(value: Any) -> int | float | None:
    """A literal number argument (``2``, ``2.0`` or ``"2"``), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, str) and value.isdecimal():
        return int(value)
    return None


def is_name(value: object) -> TypeGuard[str]:
    """Whether a program argument is a lexical name (noun, attribute value, relation, rel-mod)."""
    return (
        isinstance(value, str)
        and bool(value)
        and as_number(value) is None
        and value not in attribute_type_names()
    )
