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

Term = tuple[str, str, tuple["Term", ...]]
"""A step as a tree: (operation, its literal arguments as JSON, the terms it depends on)."""


def _terms(program: Sequence[Mapping[str, Any]]) -> list[Term]:
    terms: list[Term] = []
    for step in program:
        deps = tuple(terms[d] for d in step.get("dependencies", ()) if 0 <= d < len(terms))
        args = json.dumps(step.get("arguments", []), sort_keys=True, default=str)
        terms.append((str(step["operation"]), args, deps))
    return terms


def _reads_images(term: Term) -> bool:
    operation, _, deps = term
    return operation in WORLD_READERS or any(_reads_images(d) for d in deps)


def is_degenerate(program: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the program's answer is the same for every image set (see the module doc)."""
    terms = _terms(program)
    if not terms:
        return False
    operation, args, deps = terms[-1]
    if not _reads_images(terms[-1]):
        return True
    if operation in SELF_COMPARISONS and len(deps) == 2 and deps[0] == deps[1]:
        return True
    if operation in CHOICES:
        options = [a for a in json.loads(args) if isinstance(a, str)]
        return len(options) == 2 and options[0] == options[1]
    return False
