"""The degeneracy check rejects programs whose answer cannot depend on the images."""

from __future__ import annotations

from typing import Any

import pytest

from covr.questions.degeneracy import is_degenerate

pytestmark = pytest.mark.unit


def step(operation: str, arguments: list[Any] | None = None, deps: list[int] | None = None) -> Any:
    return {"operation": operation, "arguments": arguments or [], "dependencies": deps or []}


COUNT_DOGS = [step("find", ["dog"]), step("count", [], [0])]


def test_a_count_compared_with_itself_is_degenerate() -> None:
    program = [*COUNT_DOGS, step("find", ["dog"]), step("count", [], [2]), step("eq", [], [1, 3])]
    assert is_degenerate(program)
    other = [*COUNT_DOGS, step("find", ["cat"]), step("count", [], [2]), step("eq", [], [1, 3])]
    assert not is_degenerate(other)
    strict = [*COUNT_DOGS, step("find", ["dog"]), step("count", [], [2]), step("gt", [], [1, 3])]
    assert is_degenerate(strict)


def test_a_choice_between_equal_options_is_degenerate() -> None:
    unique = [step("find", ["cup"]), step("unique", [], [0])]
    assert is_degenerate([*unique, step("choose_attr", ["red", "red"], [1])])
    assert not is_degenerate([*unique, step("choose_attr", ["red", "blue"], [1])])


def test_a_program_that_reads_no_image_is_degenerate() -> None:
    assert is_degenerate([step("eq", [], [])])
    assert not is_degenerate(COUNT_DOGS)
    assert not is_degenerate([*COUNT_DOGS, step("eq", [3], [1])])
