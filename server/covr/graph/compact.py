"""Read FalkorDB's compact reply format straight into plain Python rows.

Why this exists: for the result sizes of related-image lookups and question generation (a few
hundred rows of names and name lists), the server's own execution is about 1 ms, while the
driver's generic reply parser plus a second pass that turns its objects into plain values took
2-5 times as long (measured on a 229-row lookup batch: 1.15 ms on the server, 6.8 ms end to end;
docs/related.md §4). The compact format is a small typed tree, ``[type, value]`` per cell; the
types the service's queries return (null, string, integer, boolean, double, list, map) decode in
one recursive function. Anything else (nodes, edges, paths, points, vectors, temporal values)
raises :class:`Unsupported` and the caller falls back to the driver's parser, so no value type
is ever decoded differently from before.

Type codes are FalkorDB's documented compact result-set types (``GRAPH.QUERY --compact``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["Unsupported", "decode_rows", "decode_value"]

NULL = 1
STRING = 2
INTEGER = 3
BOOLEAN = 4
DOUBLE = 5
ARRAY = 6
MAP = 10


class Unsupported(Exception):
    """A cell of a type this reader leaves to the driver (graph entities, spatial, temporal)."""

    def __init__(self, kind: object) -> None:
        super().__init__(f"compact value type {kind!r} is not decoded here")
        self.kind = kind


def _text(raw: Any) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes | bytearray) else str(raw)


def decode_value(cell: Sequence[Any]) -> Any:
    """One ``[type, value]`` cell as a plain value (lists and dicts for arrays and maps)."""
    kind, raw = cell
    if kind == STRING:
        return _text(raw)
    if kind == INTEGER:
        return int(raw)
    if kind == ARRAY:  # lists of names are most arrays: strings taken without a call
        return [
            item[1] if item[0] == STRING and type(item[1]) is str else decode_value(item)
            for item in raw
        ]
    if kind == NULL:
        return None
    if kind == BOOLEAN:
        return _text(raw) == "true"
    if kind == DOUBLE:
        return float(_text(raw))
    if kind == MAP:
        items = iter(raw)
        return {_text(key): decode_value(item) for key, item in zip(items, items, strict=True)}
    raise Unsupported(kind)


def decode_rows(reply: Sequence[Any]) -> list[dict[str, Any]]:
    """A whole ``GRAPH.RO_QUERY ... --compact`` reply as ``column -> value`` rows.

    A reply is ``[header, rows, statistics]``, or ``[statistics]`` for a query that returns
    nothing; a run-time error may arrive as an error element of the reply and is raised here.
    """
    for part in reply:
        if isinstance(part, Exception):
            raise part
    if len(reply) < 3:
        return []
    header, data = reply[0], reply[1]
    columns = [_text(column[1]) for column in header]
    if data and len(data[0]) != len(columns):
        raise ValueError(f"reply rows have {len(data[0])} cells for {len(columns)} columns")
    # most cells are decoded strings or integers: take those without a call (hot path)
    return [
        dict(
            zip(
                columns,
                [
                    cell[1]
                    if (cell[0] == STRING and type(cell[1]) is str) or cell[0] == INTEGER
                    else decode_value(cell)
                    for cell in row
                ],
                strict=True,
            )
        )
        for row in data
    ]
