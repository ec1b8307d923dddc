"""Balancing keeps texts with two answers (issue 16 acceptance: the two-answer share after
``covr balance``)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from covr.questions.balance import balance

pytestmark = pytest.mark.unit


def _ex(template: str, text: str, answer: Any, image: str) -> dict[str, Any]:
    return {
        "qid": f"{template}-{text}-{answer}-{image}",
        "template": template,
        "utterance": text,
        "answer": answer,
        "scenes": [image],
        "structure": [1, 0],
    }


def _two_answer_texts(examples: Sequence[Mapping[str, Any]]) -> int:
    answers: dict[str, set[str]] = defaultdict(set)
    for e in examples:
        answers[e["utterance"]].add(json.dumps(e["answer"]))
    return sum(len(a) >= 2 for a in answers.values())


def test_a_form_with_one_example_does_not_cut_every_form_to_one() -> None:
    examples = [
        _ex("a", "q1", True, "1"),
        _ex("a", "q1", False, "2"),
        _ex("a", "q2", True, "3"),
        _ex("b", "r1", 1, "4"),
    ]
    out = balance(examples)
    # S = max(2, smallest group 1): form a keeps its two-answer text whole
    assert sorted(e["qid"] for e in out if e["template"] == "a") == ["a-q1-False-2", "a-q1-True-1"]
    assert _two_answer_texts(out) == 1


def test_a_two_answer_text_that_does_not_fit_whole_keeps_two_answers() -> None:
    # q1 has three examples (answers 0, 0, 1) and S is 2: it does not fit whole; before, its
    # examples were drawn one by one with the single-answer ones and q1 kept one answer
    examples = [
        _ex("a", "q1", 0, "1"),
        _ex("a", "q1", 0, "2"),
        _ex("a", "q1", 1, "3"),
        _ex("a", "s0", 1, "4"),
        _ex("b", "r1", 0, "5"),
        _ex("b", "r2", 0, "6"),
    ]
    out = [e for e in balance(examples) if e["template"] == "a"]
    assert sorted((e["utterance"], e["answer"]) for e in out) == [("q1", 0), ("q1", 1)]
