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


IMAGE_LISTS = frozenset({"unique_images"})
"""A ``count`` over one of these counts images: at most the number of images shown."""
IMAGE_GROUPS = frozenset(
    {"keep_if_values_count_eq", "keep_if_values_count_geq", "keep_if_values_count_leq"}
)
"""A ``count`` over one of these (images kept by how many objects they hold) counts images too."""
_COMPARE = {
    "eq": lambda k, n: k == n,
    "geq": lambda k, n: k >= n,
    "leq": lambda k, n: k <= n,
    "gt": lambda k, n: k > n,
    "lt": lambda k, n: k < n,
}


def _image_count(program: Sequence[Mapping[str, Any]], i: int) -> str | None:
    """``"images"`` when step ``i`` counts the images holding a referent (``unique_images``),
    ``"groups"`` when it counts images kept by their object count, else ``None``."""
    if str(program[i]["operation"]) != "count":
        return None
    deps = _deps(program, i)
    if len(deps) != 1:
        return None
    below = str(program[deps[0]]["operation"])
    if below in IMAGE_LISTS:
        return "images"
    return "groups" if below in IMAGE_GROUPS else None


def follows_from_image_count(
    program: Sequence[Mapping[str, Any]], images: int, answer: Any
) -> bool:
    """Whether the answer follows from how many images are shown (issue 36 item 4).

    A model that counts the images, and reads nothing in them, would answer these:

    - a count of images whose answer is every image shown ("How many images contain at most 1
      X?" -> the number of images: 90 % of that form's examples on real GQA before the rule);
    - a comparison of a count of images with a number whose result is the same for every count
      the images allow. A count of the images holding the referent is at most ``images - 1``:
      every example shows a distractor, an image without the subgraph (paper §3), so "There are
      exactly N images with X" with N the number shown is always false. A count of images kept
      by their number of objects can reach ``images`` (an image without X holds "at most K").

    The rule per form is in docs/questions.md ("Answers that follow from the image count").
    """
    if not program:
        return False
    last = len(program) - 1
    kind = _image_count(program, last)
    if kind is not None:
        return isinstance(answer, int) and not isinstance(answer, bool) and answer == images
    compare = _COMPARE.get(str(program[last]["operation"]))
    deps = _deps(program, last)
    arguments = program[last].get("arguments") or []
    if compare is None or len(deps) != 1 or len(arguments) != 1:
        return False
    number = arguments[0]
    kind = _image_count(program, deps[0])
    if kind is None or isinstance(number, bool) or not isinstance(number, int):
        return False
    top = images - 1 if kind == "images" else images
    return len({compare(k, number) for k in range(top + 1)}) == 1
