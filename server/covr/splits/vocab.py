"""Word classes the splits need: the attribute value → type table.

Attribute *types* (color, material ...) name the HAS-SAMEATTR-<TYPE> properties and the value
types of held-out attribute pairs. Which program arguments are lexical names is *not* decided
here from a value: that is the argument's position, :func:`covr.scene.program.name_positions`
(``find hair`` has a name even though ``hair`` is also an attribute type, issue 37 item 4). The
value → type table is this room's own resource (``resources/attribute_types.json``), derived
from the project's attribute scales.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources


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
