"""Hand-written programs for the splits tests: nested tuples → program steps.

``("filter", ("find", "cat"), "black")`` is the step ``filter`` with argument ``black`` whose
dependency is the step ``find cat``; a list among the children is a nested condition program.
"""

from __future__ import annotations

from typing import Any


def build(expr: Any) -> list[dict[str, Any]]:
    """Steps of an expression, dependencies before their consumers (the last step is the root)."""
    steps: list[dict[str, Any]] = []

    def emit(node: Any) -> int:
        op, *children = node
        deps: list[int] = []
        args: list[Any] = []
        for child in children:
            if isinstance(child, tuple):
                deps.append(emit(child))
            elif isinstance(child, list):
                args.append(build(child[0]))
            else:
                args.append(child)
        steps.append({"operation": op, "arguments": args, "dependencies": deps})
        return len(steps) - 1

    emit(expr)
    return steps


def example(
    expr: Any,
    *,
    qid: str = "q",
    answer: Any = True,
    template: str = "VerifyAttr",
    split: str = "train",
    scenes: list[str] | None = None,
    utterance: str = "",
) -> dict[str, Any]:
    return {
        "qid": qid,
        "utterance": utterance,
        "scenes": scenes or [f"img-{qid}"],
        "answer": answer,
        "pattern_name": "x",
        "program": build(expr),
        "properties": [],
        "provenance": {"template": template, "split": split},
    }
