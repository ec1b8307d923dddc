"""Renders query parameters for FalkorDB's ``CYPHER name=value ...`` prefix.

FalkorDB's native protocol has no separate parameter channel: the client prepends the values to the
query text and the server's parser reads them back as literals. That prefix is the one place where a
value becomes text, so this module renders it itself instead of trusting a client library: every
string is double-quoted with ``\\`` and ``"`` escaped (the server reads those two escapes and keeps
every other character, newlines included, as it is), floats use ``repr`` (shortest exact form),
map keys are backticked, and anything the server could misread is refused with a clear error.
Tests in ``tests/integration/graph/test_params_roundtrip.py`` prove values come back unchanged.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from covr.graph.errors import ParameterError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
# FalkorDB reads the prefix with its own Cypher parser; deep nesting would exhaust it.
_MAX_DEPTH = 32


def _render_string(value: str, where: str) -> str:
    if "\x00" in value:
        raise ParameterError(f"parameter {where}: strings may not contain a NUL character")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _render_key(key: object, where: str) -> str:
    if not isinstance(key, str) or not key:
        raise ParameterError(f"parameter {where}: map keys must be non-empty strings")
    if "`" in key or "\x00" in key:
        raise ParameterError(f"parameter {where}: map key {key!r} may not contain '`' or NUL")
    return f"`{key}`"


def _checked(value: Any, where: str, depth: int) -> str:
    """The careful renderer: names the exact path of a bad value (used to explain errors)."""
    if depth > _MAX_DEPTH:
        raise ParameterError(f"parameter {where}: nested deeper than {_MAX_DEPTH} levels")
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "true" if value else "false"
    if isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise ParameterError(f"parameter {where}: integer {value} does not fit in 64 bits")
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ParameterError(f"parameter {where}: {value!r} is not a finite number")
        return repr(value)
    if isinstance(value, str):
        return _render_string(value, where)
    if isinstance(value, Rendered):
        return value.text
    if isinstance(value, Mapping):
        items = [
            f"{_render_key(k, where)}:{_checked(v, f'{where}.{k}', depth + 1)}"
            for k, v in value.items()
        ]
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        items = [_checked(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
        return "[" + ",".join(items) + "]"
    raise ParameterError(
        f"parameter {where}: values of type {type(value).__name__} cannot be sent; "
        "use str, int, float, bool, None, list or dict"
    )


class Rendered:
    """A parameter value already rendered by :func:`prerender`; inserted into the prefix as is.

    Why: the loader converts records in a child process while the parent talks to the server.
    Rendering there and handing over one string instead of thousands of small lists saves the
    parent both the rendering and the unpickling (measured: unpickling a 500-image batch cost
    more than rendering it). Only :func:`prerender` makes instances, so the text is always the
    output of the escaping renderer; FalkorDB backends only (Neo4j takes values, not text).
    """

    __slots__ = ("text",)

    def __init__(self, text: str, _token: object = None) -> None:
        if _token is not _PRERENDER_TOKEN:
            raise ParameterError("Rendered values are made by prerender() only")
        self.text = text

    def __reduce__(self) -> tuple[Any, ...]:  # crosses process boundaries as its text
        return (_rebuild, (self.text,))

    def __repr__(self) -> str:
        return f"Rendered({len(self.text)} chars)"


_PRERENDER_TOKEN = object()


def _rebuild(text: str) -> Rendered:
    return Rendered(text, _PRERENDER_TOKEN)


class _Refused(Exception):
    """Raised by the fast renderer; the careful one then says where and why."""


@lru_cache(maxsize=4096)
def _key(key: str) -> str:
    if not key or "`" in key or "\x00" in key:
        raise _Refused
    return f"`{key}`"


def _scalar(value: Any) -> str | None:
    """Render a scalar on the hot path; None for containers and anything needing the slow path."""
    kind = type(value)
    if kind is str:
        if "\x00" in value:
            raise _Refused
        text: str = value
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if kind is int:
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise _Refused
        return str(value)
    if kind is float:
        if value - value != 0.0:  # NaN or an infinity
            raise _Refused
        return repr(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    return None


def _fast(value: Any, depth: int) -> str:
    """Hot path for 10k-row batches: exact type dispatch, scalars inline, no error paths built."""
    text = _scalar(value)
    if text is not None:
        return text
    if depth > _MAX_DEPTH:
        raise _Refused
    kind = type(value)
    if kind is dict:
        parts = []
        for k, v in value.items():
            if type(k) is not str:
                raise _Refused
            rendered = _scalar(v)
            parts.append(
                _key(k) + ":" + (rendered if rendered is not None else _fast(v, depth + 1))
            )
        return "{" + ",".join(parts) + "}"
    if kind is list or kind is tuple:
        return "[" + ",".join([_fast(v, depth + 1) for v in value]) + "]"
    if kind is Rendered:
        ready: str = value.text
        return ready
    raise _Refused  # subclasses and other types take the careful path


def render_value(value: Any, where: str = "value", depth: int = 0) -> str:
    """One parameter value as a Cypher literal the server reads back exactly."""
    try:
        return _fast(value, depth)
    except _Refused:
        return _checked(value, where, depth)


def prerender(value: Any, where: str = "value") -> Rendered:
    """Render ``value`` now (see :class:`Rendered`); errors name ``where`` like a late render."""
    return Rendered(render_value(value, where), _PRERENDER_TOKEN)


def check_name(name: str) -> str:
    """Parameter names are identifiers chosen by the code, never by users; refuse anything else."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ParameterError(f"parameter name {name!r} is not a plain identifier")
    return name


def render_prefix(params: Mapping[str, Any] | None) -> str:
    """The ``CYPHER a=1 b="x" `` prefix (empty when there are no parameters)."""
    if not params:
        return ""
    parts = [f"{check_name(k)}={render_value(v, k)}" for k, v in params.items()]
    return "CYPHER " + " ".join(parts) + " "
