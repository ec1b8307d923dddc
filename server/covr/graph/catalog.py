"""Loads ``.cypher`` files by name (cached) and reads their header comments.

A file starts with ``//`` header lines of the form ``// key: value``:

- ``backend: any`` (default), ``falkordb`` or ``neo4j``: which store may run it;
- ``params: {...}``: representative parameters (JSON) that the test suite executes it with;
- ``setup: <name>``: another statement (with its own ``params``) run before the check, for
  statements that need data to exist;
- ``summary: ...``: one line saying what it is for.

Schema files may hold several statements separated by a ``;`` at the end of a line; every other
file holds exactly one statement, which the loader checks.

Folders whose name starts with ``_`` hold *fragments*, not statements: pieces the related-image
builders (``covr.related.cypher_path``) glue into a text. :func:`render` is the one way a fragment
is filled, and so the security boundary of built text: a placeholder takes an identifier the
builder made, a label, type or property from an allowlist, or a fragment rendered here; never a
value (values are ``$parameters``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

_SUFFIX = ".cypher"
_BACKENDS = {"any", "falkordb", "neo4j"}


class CatalogError(LookupError):
    """A statement name is unknown or its file is malformed."""


@dataclass(frozen=True)
class Statement:
    """A named Cypher statement; ``text`` never contains a value, only ``$parameters``."""

    name: str
    text: str
    backend: str = "any"
    summary: str = ""
    example_params: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    setup: str = ""

    def parts(self) -> list[str]:
        """The individual statements (schema files may hold several)."""
        pieces = [p.strip() for p in _split_statements(self.text)]
        return [p for p in pieces if p]

    def runs_on(self, backend: str) -> bool:
        """Whether this statement is meant for ``backend`` (``falkordb`` or ``neo4j``)."""
        return self.backend in ("any", backend)


def _split_statements(text: str) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        stripped = line.rstrip()
        if stripped.endswith(";"):
            current.append(stripped[:-1])
            out.append("\n".join(current))
            current = []
        else:
            current.append(line)
    out.append("\n".join(current))
    return out


def _parse(name: str, raw: str) -> Statement:
    header: dict[str, str] = {}
    body: list[str] = []
    in_header = True
    for line in raw.splitlines():
        stripped = line.strip()
        if in_header and stripped.startswith("//"):
            key, sep, value = stripped[2:].partition(":")
            if sep and key.strip().isidentifier():
                header[key.strip()] = value.strip()
            continue
        if in_header and not stripped:
            continue
        in_header = False
        body.append(line.rstrip())
    text = "\n".join(body).strip()
    if not text:
        raise CatalogError(f"{name}{_SUFFIX}: no statement after the header")
    backend = header.get("backend", "any")
    if backend not in _BACKENDS:
        raise CatalogError(f"{name}{_SUFFIX}: backend must be one of {sorted(_BACKENDS)}")
    try:
        params = json.loads(header.get("params", "{}"))
    except json.JSONDecodeError as exc:
        raise CatalogError(f"{name}{_SUFFIX}: header 'params' is not JSON: {exc}") from exc
    if not isinstance(params, dict):
        raise CatalogError(f"{name}{_SUFFIX}: header 'params' must be a JSON object")
    statement = Statement(
        name=name,
        text=text,
        backend=backend,
        summary=header.get("summary", ""),
        example_params=params,
        setup=header.get("setup", ""),
    )
    if not name.startswith("schema/") and len(statement.parts()) != 1:
        raise CatalogError(f"{name}{_SUFFIX}: only schema files may hold several statements")
    return statement


def _root() -> Any:
    return resources.files("covr_cypher")  # the cypher/ folder, installed as a resource package


@cache
def names() -> tuple[str, ...]:
    """Every statement name in the catalog, sorted (``folder/file`` without the suffix)."""
    found: list[str] = []

    def walk(node: Any, prefix: str) -> None:
        for child in node.iterdir():
            if child.is_dir() and not child.name.startswith(("_", ".")):
                walk(child, f"{prefix}{child.name}/")
            elif child.name.endswith(_SUFFIX):
                found.append(prefix + child.name[: -len(_SUFFIX)])

    walk(_root(), "")
    return tuple(sorted(found))


@cache
def get(name: str) -> Statement:
    """The statement stored under ``name``; raises :class:`CatalogError` for unknown names."""
    if name not in names():
        raise CatalogError(f"no Cypher statement named {name!r} in cypher/")
    raw = _root().joinpath(*f"{name}{_SUFFIX}".split("/")).read_text(encoding="utf-8")
    return _parse(name, raw)


def all_statements() -> list[Statement]:
    """Every statement of the catalog (used by the checks that cover each file)."""
    return [get(n) for n in names()]


# -- builder fragments (cypher/match/_related) ------------------------------------------------

_FRAGMENTS = ("match", "_related")
_PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")
IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")
_COMPOSITE = frozenset({"condition", "bound", "total", "items"})
"""Placeholders that take text the builder rendered from other fragments (never a value)."""
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
