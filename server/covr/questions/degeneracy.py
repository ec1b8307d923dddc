"""The degeneracy check: reject a question whose answer does not depend on the images.

Why static: an answer that is the same for *every* image set (``is the number of dogs equal to
the number of dogs?``, ``is the cup a cup or a cup?``, a program that never looks at the images)
teaches a model nothing about them, and no choice of images can fix it. Such a question is
recognised from its program alone, before any image is picked: the final step either reads no
image (no ``find`` below it), compares a value with itself, or chooses between two equal options.
Answers that merely *happen* to agree on the image sets tried are not degenerate (another set
could change them) and are left alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

WORLD_READERS = frozenset({"find"})
"""Operators that read the images; every other operator computes from its dependencies."""
SELF_COMPARISONS = {"eq": True, "geq": True, "leq": True, "gt": False, "lt": False}
"""Comparisons of a value with itself and their constant answer."""
CHOICES = frozenset({"choose_attr", "choose_name", "choose_relation"})
"""Operators that pick one of two literal options."""


def _deps(program: Sequence[Mapping[str, Any]], i: int) -> list[int]:
    """The steps step ``i`` depends on (indices that do not point back are ignored)."""
    return [d for d in program[i].get("dependencies", ()) if 0 <= d < i]


def _arguments(step: Mapping[str, Any]) -> str:
    """A step's literal arguments in one canonical text (key order and value types settled)."""
    return json.dumps(step.get("arguments", []), sort_keys=True, default=str)


def _reads_images(program: Sequence[Mapping[str, Any]], i: int) -> bool:
    if program[i]["operation"] in WORLD_READERS:
        return True
    return any(_reads_images(program, d) for d in _deps(program, i))


def _same(program: Sequence[Mapping[str, Any]], i: int, j: int) -> bool:
    """Whether steps ``i`` and ``j`` compute the same thing: same operation, same arguments and
    the same steps below them (a step is the same as itself)."""
    if i == j:
        return True
    a, b = program[i], program[j]
    if str(a["operation"]) != str(b["operation"]) or _arguments(a) != _arguments(b):
        return False
    left, right = _deps(program, i), _deps(program, j)
    return len(left) == len(right) and all(
        _same(program, x, y) for x, y in zip(left, right, strict=True)
    )


def is_degenerate(program: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the program's answer is the same for every image set (see the module doc).

    Only the last step and what it depends on are looked at, and arguments are rendered only
    where they are compared: the check runs on every candidate question (it cost ~10 % of
    generation when it rendered every step first).
    """
    if not program:
        return False
    last = len(program) - 1
    operation = str(program[last]["operation"])
    if not _reads_images(program, last):
        return True
    deps = _deps(program, last)
    if operation in SELF_COMPARISONS and len(deps) == 2 and _same(program, deps[0], deps[1]):
        return True
    if operation in CHOICES:
        options = [a for a in json.loads(_arguments(program[last])) if isinstance(a, str)]
        return len(options) == 2 and options[0] == options[1]
    return False
