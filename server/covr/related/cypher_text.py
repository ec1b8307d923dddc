"""The fragments the related-image match builders glue together, and the one way to fill them.

Why a module of its own: every builder (image walks, counting walks, direct branches) renders
the same ``cypher/match/_related`` files through :func:`render`, which is the security boundary
of the text: a placeholder takes an identifier the builder made, a property or label from an
allowlist, or a fragment rendered here; never a value (values are ``$parameters``).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_FRAGMENTS = ("match", "_related")
_PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")
IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")
_COMPOSITE = frozenset(
    {
        "condition",
        "names",
        "attributes",
        "relation_names",
        "relmod_names",
        "bound",
        "total",
        "items",
    }
)
_PROPERTIES = frozenset({"name", "attributes"})
_LABELS = frozenset({"Object", "Relation", "RelMod"})
_TYPES = frozenset({"SUBJ", "OBJ", "MOD"})


class BuilderError(ValueError):
    """A builder was asked for something it cannot express (a programming error, not user input)."""


@cache
def fragment(name: str) -> str:
    """The text of ``cypher/match/_related/<name>.cypher`` without its header comments."""
    if not IDENTIFIER.match(name):
        raise BuilderError(f"bad fragment name {name!r}")
    path = resources.files("covr_cypher").joinpath(*_FRAGMENTS, f"{name}.cypher")
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BuilderError(f"no fragment cypher/match/_related/{name}.cypher") from None
    lines = [line.rstrip() for line in raw.splitlines() if not line.lstrip().startswith("//")]
    text = "\n".join(lines).strip("\n")
    if not text.strip():
        raise BuilderError(f"fragment {name} is empty")
    return text


def render(name: str, **values: str) -> str:
    """Fill a fragment's placeholders; identifiers are checked, composite parts are built text."""
    text = fragment(name)
    wanted = set(_PLACEHOLDER.findall(text))
    if wanted != set(values):
        raise BuilderError(f"fragment {name} needs {sorted(wanted)}, got {sorted(values)}")
    for key, value in values.items():
        if (key == "label" and value in _LABELS) or (key == "type" and value in _TYPES):
            continue
        if key not in _COMPOSITE and not IDENTIFIER.match(value):
            raise BuilderError(f"fragment {name}: {key}={value!r} is not an identifier")
        if key == "prop" and value not in _PROPERTIES:
            raise BuilderError(f"fragment {name}: property {value!r} is not allowed")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)
