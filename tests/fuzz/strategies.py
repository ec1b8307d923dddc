"""Hypothesis strategies for the loaders' dataset formats: GQA, Visual Genome and imSitu records
as raw JSON-like values, valid (taken from the bundled samples) and mutated.

Why mutate real records rather than only draw random JSON: a random value is rejected at its
first field ("objects" missing), so the converters' deeper paths (relations, boxes, frames,
role nouns) are never reached; one or two mutations of a valid record reach each of them with
the rest of the record intact. Random whole values are drawn too, for the outer checks.

The values are what ``json.dumps`` can write (lone surrogates included: it escapes them as
``\\ud800``, which is how issue 21's silent ``?x`` arrived). A file is then written from them,
sometimes cut short or with a byte changed, so the reader's file-level faults are drawn too.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from hypothesis import strategies as st

from covr_loaders.samples import SAMPLES

FORMATS = ("gqa", "vg", "imsitu")
"""Every dataset format a load job reads."""

HOSTILE_TEXT = [
    "",
    " ",
    "\x00",
    "\ud800x",  # a lone surrogate
    "x\udfff",
    "a" * 300,  # over the tests' small name and id limits
    "1" * 4_500,  # an all-digit id past int()'s digit limit (issue 21, natural_key)
    "é" * 70,
    "man",
    "1",
    "NaN",
]
"""Strings that once broke a loader or the store, and a few ordinary ones."""

text = st.one_of(
    st.sampled_from(HOSTILE_TEXT),
    st.text(max_size=12),
    st.text(st.characters(codec="utf-8"), max_size=40),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(),  # NaN and infinities too: the decoder accepts them
    text,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(text, inner, max_size=4)),
    max_leaves=12,
)
"""Any JSON-like value (as the C decoder would hand one over)."""


@cache
def sample_records(fmt: str) -> tuple[tuple[str, Any], ...]:
    """``(key, record)`` pairs of the bundled sample file of a format (read once)."""
    data = json.loads((SAMPLES / fmt / _SAMPLE_FILES[fmt]).read_text(encoding="utf-8"))
    if isinstance(data, list):
        return tuple((str(i), record) for i, record in enumerate(data))
    return tuple(data.items())


_SAMPLE_FILES = {"gqa": "val_sceneGraphs.json", "vg": "scene_graphs.json", "imsitu": "dev.json"}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside ``value`` (a path of keys and indexes), the value itself first; not
    below a depth of 12 (a record nested thousands deep by an earlier mutation is not walked)."""
    out = [prefix]
    if len(prefix) >= 12:
        return out
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_paths(item, (*prefix, index)))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A copy of ``value`` with the place at ``path`` replaced (``_DELETE`` removes it)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
        inner = _replace(copy[head], rest, new)
        if inner is _DELETE:
            del copy[head]
        else:
            copy[head] = inner
        return copy
    items = list(value)
    inner = _replace(items[head], rest, new)
    if inner is _DELETE:
        del items[head]
    else:
        items[head] = inner
    return items


_DELETE = object()


@st.composite
def mutated(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with one to three places replaced, deleted, stretched, nested or emptied."""
    for _ in range(draw(st.integers(1, 3))):
        places = _paths(value)
        path = draw(st.sampled_from(places))
        here: Any = value
        for step in path:
            here = here[step]
        action = draw(st.integers(0, 6))
        if action == 0:
            new: Any = draw(json_values)
        elif action == 1 and path:
            new = _DELETE
        elif action == 2:
            new = draw(st.sampled_from(HOSTILE_TEXT))
        elif action == 3:  # the same value many times over: counts past the limits
            new = [here] * draw(st.integers(2, 40))
        elif action == 4:  # nested, past the decoder's depth now and then
            depth = draw(st.sampled_from([2, 30, 1_500]))
            new = here
            for _ in range(depth):
                new = [new]
        elif action == 5 and isinstance(here, dict):  # a key renamed to a hostile one
            if here:
                key = draw(st.sampled_from(sorted(here)))
                new = {k: v for k, v in here.items() if k != key}
                new[draw(text)] = here[key]
            else:
                new = {draw(text): draw(json_values)}
        else:
            new = type(here)() if isinstance(here, dict | list | str) else None
        value = _replace(value, path, new)
    return value


@st.composite
def dataset_files(draw: st.DrawFn, fmt: str) -> bytes:
    """The bytes of one dataset file of ``fmt``: sample records, some mutated, some random."""
    pool = sample_records(fmt)
    entries: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(0, 4))):
        key, record = draw(st.sampled_from(pool))
        choice = draw(st.integers(0, 5))
        if choice == 0:
            record = draw(json_values)
        elif choice <= 3:
            record = draw(mutated(record))
        if draw(st.integers(0, 5)) == 0:
            key = draw(text)
        entries.append((key, record))
    if fmt == "vg":
        document: Any = [record for _, record in entries]
    else:
        document = dict(entries)
    if draw(st.integers(0, 15)) == 0:
        document = draw(json_values)  # not even the container the format needs
    try:
        raw = json.dumps(document).encode("utf-8")
    except RecursionError:  # a nesting json.dumps itself refuses to write
        raw = b"[" * 5_000
    cut = draw(st.integers(0, 8))
    if cut == 0 and raw:  # cut short
        raw = raw[: draw(st.integers(0, len(raw) - 1))]
    elif cut == 1 and raw:  # one byte changed (bad UTF-8 or broken syntax)
        at = draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + bytes([draw(st.integers(0, 255))]) + raw[at + 1 :]
    return raw
