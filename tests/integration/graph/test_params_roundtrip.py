"""Values cross the FalkorDB parameter prefix unchanged, and nothing in them is executed."""

from __future__ import annotations

import math
import random
import struct
from typing import Any

import pytest

from covr.graph import GraphStore, ParameterError

TRICKY_STRINGS = [
    "",
    "plain",
    "x' CREATE (:Pwned) //",
    'x" CREATE (:Pwned) //',
    "x\\' CREATE (:Pwned) //",
    'x\\" CREATE (:Pwned) //',
    "\\",
    "ends with backslash\\",
    '\\"',
    "\\\\\\",
    "back\\nslash-n",
    "line\nbreak\r\n",
    "tab\there",
    "`backtick` $param {map} [list] ; // /* */",
    "}) RETURN 1 UNION MATCH (n) DETACH DELETE n //",
    "é日本😀\u200b\ufeff",
    "\x01\x1f\x7f",
    "CYPHER v=1 ",
]


def roundtrip(store: GraphStore, value: object) -> object:
    return store.read("RETURN $v AS v", {"v": value})[0]["v"]


@pytest.mark.parametrize("text", TRICKY_STRINGS)
def test_strings_roundtrip_and_inject_nothing(store: GraphStore, text: str) -> None:
    assert roundtrip(store, text) == text
    store.write("CREATE (:Probe {v: $v})", {"v": text})
    rows = store.read("MATCH (p:Probe) RETURN p.v AS v")
    assert rows == [{"v": text}]
    assert store.read("MATCH (n:Pwned) RETURN count(n) AS c") == [{"c": 0}]
    assert store.read("MATCH (n) RETURN count(n) AS c")[0]["c"] == 2  # Meta + Probe


def test_injection_in_map_values_and_lists(store: GraphStore) -> None:
    rows: list[dict[str, Any]] = [{"name": s, "tags": [s, s]} for s in TRICKY_STRINGS]
    store.write("UNWIND $rows AS r CREATE (:Probe {name: r.name, tags: r.tags})", {"rows": rows})
    got = store.read("MATCH (p:Probe) RETURN p.name AS name, p.tags AS tags")
    assert sorted(got, key=lambda r: r["name"]) == sorted(rows, key=lambda r: r["name"])
    assert store.read("MATCH (n:Pwned) RETURN count(n) AS c") == [{"c": 0}]


@pytest.mark.parametrize(
    "value",
    [0, 1, -1, 2**31, 2**53 + 1, 2**63 - 1, -(2**63), True, False, None, [], {}, [[1, [2]]]],
)
def test_exact_values(store: GraphStore, value: object) -> None:
    assert roundtrip(store, value) == value
    assert type(roundtrip(store, value)) is type(value)


def test_integers_beyond_int64_are_refused(store: GraphStore) -> None:
    with pytest.raises(ParameterError, match="64 bits"):
        store.read("RETURN $v AS v", {"v": 2**63})


def test_map_keys_that_are_not_identifiers(store: GraphStore) -> None:
    value = {"a b": 1, "@type": "x", "ünï": [1.5], "123": None, "new\nline": "v"}
    assert roundtrip(store, value) == value


def _floats() -> list[float]:
    rng = random.Random(7)
    special = [1e-9, 0.1, 0.30000000000000004, 1 / 3, 5e-324, 2.2250738585072014e-308, 1e308]
    randoms = [struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0] for _ in range(500)]
    return [f for f in special + randoms if math.isfinite(f)]


def test_floats_are_parsed_exactly_by_the_server(store: GraphStore) -> None:
    """The server compares each value with its neighbouring double: only an exact parse can tell
    them apart. (FalkorDB *prints* doubles with 15 significant digits in replies, so the returned
    value is checked to that precision; the stored value is exact.)"""
    values = _floats()
    pairs = [{"a": v, "b": math.nextafter(v, math.inf)} for v in values]
    rows = store.read(
        "UNWIND $pairs AS p RETURN p.a < p.b AS less, p.a = p.a AS same, p.a AS a", {"pairs": pairs}
    )
    assert len(rows) == len(values)
    for value, row in zip(values, rows, strict=True):
        assert row["less"] is True, value
        assert row["same"] is True, value
        assert math.isclose(row["a"], value, rel_tol=1e-14) or abs(value) > 1.79e308, value
    assert roundtrip(store, 1e-9) == 1e-9


def test_ten_thousand_row_batches_roundtrip(store: GraphStore) -> None:
    rows = [
        {"i": i, "s": TRICKY_STRINGS[i % len(TRICKY_STRINGS)] + str(i), "f": i / 7, "l": [i, -i]}
        for i in range(10_000)
    ]
    got = store.read(
        "UNWIND $rows AS r RETURN r.i AS i, r.s AS s, r.f AS f, r.l AS l", {"rows": rows}
    )
    assert [(g["i"], g["s"], g["l"]) for g in got] == [(r["i"], r["s"], r["l"]) for r in rows]
    summary = store.write_rows(
        "UNWIND $rows AS r CREATE (:Probe {i: r.i, s: r.s})", rows, batch_size=10_000
    )
    assert summary.nodes_created == 10_000
    assert summary.batches == 1
    stored = store.read("MATCH (p:Probe) RETURN p.i AS i, p.s AS s ORDER BY i")
    assert stored == [{"i": r["i"], "s": r["s"]} for r in rows]
