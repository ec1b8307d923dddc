"""Binary properties of an example (paper Table 5, arXiv Table 5), computed from its data only.

Names follow the paper, upper case with hyphens:

- ``HAS-QUANT`` (+ ``-ALL``/``-SOME``/``-NONE``): a quantifier. ``all_same`` ("Do all REF have the
  same color?", form quantifier_same_attr of template VerifyQuantAttr) counts as ``HAS-QUANT-ALL``:
  the paper's HAS-QUANT filtered exactly the two quantifier templates (33.3k = 2 × 16.7k) and
  HAS-QUANT-ALL (21.1k) is more than a third of them, which only holds if that form is included.
- ``HAS-QUANT-COMPSCOPE``: the set a quantifier ranges over is complex, i.e. built with an
  attribute filter or a relation (arXiv Table 4: "No man that is next to a horse is standing"
  trains it, "All computer mice that are on a mouse pad are black" tests it).
- ``HAS-COMPAR`` (+ ``-MORE``/``-LESS``/``-SAME``, ``-GEQ``/``-LEQ``): a comparison of two computed
  numbers (CompareCount); a comparison with a literal number is counting, not comparative.
- ``HAS-GROUPBY``, ``HAS-COUNT``, ``HAS-LOGIC`` (+ ``-AND``/``-OR``).
- ``HAS-NUM`` / ``HAS-NUM-N``: a literal number in the program ("at least 3", "exactly 2 books").
- ``HAS-ATTR``: an attribute operator (filter by a value, query/verify/choose an attribute).
- ``HAS-SAMEATTR`` / ``HAS-SAMEATTR-<TYPE>``: a same-attribute comparison (``all_same``, ``same_*``
  operators, or ``eq`` of two ``query_attr`` results), typed by the attribute type.
- ``RM``, ``V``, ``C`` and the paper's unions ``RM/V`` (EMNLP) and ``RM/V/C`` (arXiv): the subgraph
  has a rel-mod, a V-shape (one object with two relations) or a chain of two relations.
- ``TPL-<TEMPLATE>`` (upper case, e.g. ``TPL-VERIFYATTR``), ``ANS-NUM``/``ANS-ATTR``/``ANS-NOUN``
  (plus ``ANS-BOOL``, ``ANS-REL`` and ``ANS-<n>`` for numeric answers, so the paper's
  HAS-NUM-3-ANS-3 split is ``HAS-NUM-3|ANS-3``), ``LEXICAL-<name>`` for every name in the program:
  an argument in a name position (:func:`covr.scene.program.program_names`, the project's one
  anonymization rule), so ``find hair`` gives ``LEXICAL-hair`` and ``query_attr color`` none.

Nested condition programs (quantifier scopes, logic operands) are inspected like the main one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from covr.scene.program import as_number, program_names
from covr.scene.subgraph import Subgraph
from covr.splits.examples import (
    ExampleRecord,
    RecordT,
    Step,
    field_of,
    iter_programs,
    template_of,
)
from covr.splits.vocab import attribute_type_names, attribute_types

QUANTIFIERS = {"all": "ALL", "some": "SOME", "none": "NONE"}
COMPARISONS = {"gt": "MORE", "lt": "LESS", "eq": "SAME", "geq": "GEQ", "leq": "LEQ"}
LOGIC = {"logic_and": "AND", "logic_or": "OR", "and": "AND", "or": "OR"}
GROUP_BY = frozenset(
    {
        "group_by_images",
        "keep_if_values_count_eq",
        "keep_if_values_count_geq",
        "keep_if_values_count_leq",
        "keep_if_values_count_gt",
        "keep_if_values_count_lt",
    }
)
ATTRIBUTE_OPS = frozenset({"filter", "verify_attr", "query_attr", "choose_attr"})
RELATION_OPS = frozenset({"with_relation", "with_relation_object"})
SCOPE_BUILDERS = frozenset({"filter", *RELATION_OPS})
PASS_THROUGH = frozenset({"filter", "unique", "assert_unique"})
ATTR_ANSWER_OPS = frozenset({"query_attr", "choose_attr"})
NOUN_ANSWER_OPS = frozenset({"query_name", "choose_name"})
REL_ANSWER_OPS = frozenset({"choose_relation", "relation_between_nouns"})
ATTR_TEMPLATES = frozenset({"QueryAttr", "ChooseAttr"})
NOUN_TEMPLATES = frozenset({"QueryObject", "ChooseObject"})
REL_TEMPLATES = frozenset({"ChooseRel"})


def _is_same_attr_op(operation: str) -> bool:
    return operation == "all_same" or operation.startswith("same_") or operation == "same"


def _same_attr_type(step: Step) -> str | None:
    types = attribute_type_names()
    for arg in step.get("arguments", ()):
        if isinstance(arg, str) and arg in types:
            return arg
    operation = str(step["operation"])
    suffix = operation.removeprefix("same_")
    if suffix != operation and suffix in types:
        return suffix
    return None


def _closure(program: Sequence[Step], roots: Iterable[int]) -> set[int]:
    """Indices of the steps the given steps depend on, transitively (themselves included)."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        index = stack.pop()
        if index in seen or not 0 <= index < len(program):
            continue
        seen.add(index)
        stack.extend(program[index].get("dependencies", ()))
    return seen


def _resolve(program: Sequence[Step], index: int) -> int:
    """Follow filters/unique back to the step that produced the object set."""
    while 0 <= index < len(program) and program[index]["operation"] in PASS_THROUGH:
        deps = program[index].get("dependencies", ())
        if not deps:
            break
        index = deps[0]
    return index


def _numbers(step: Step) -> list[int | float]:
    return [n for a in step.get("arguments", ()) if (n := as_number(a)) is not None]


def structure_properties(program: Sequence[Step]) -> set[str]:
    """RM, V, C and their unions, read off the relation steps of the program."""
    out: set[str] = set()
    for prog in iter_programs(program):
        for step in prog:
            if step["operation"] not in RELATION_OPS:
                continue
            names = [a for a in step.get("arguments", ()) if isinstance(a, str)]
            deps = list(step.get("dependencies", ()))
            if len(names) > 1 or len(deps) > 2:
                out.add("RM")
            subject = _resolve(prog, deps[0]) if deps else -1
            if subject >= 0 and prog[subject]["operation"] in RELATION_OPS:
                out.add("V")
            if any(
                prog[i]["operation"] in RELATION_OPS for d in deps[1:] for i in _closure(prog, [d])
            ):
                out.add("C")
    for prog in iter_programs(program):
        for step in prog:
            if step["operation"] not in QUANTIFIERS:
                continue
            restrictor = _closure(prog, step.get("dependencies", ()))
            if not any(prog[i]["operation"] in RELATION_OPS for i in restrictor):
                continue
            for arg in step.get("arguments", ()):
                if isinstance(arg, list) and any(
                    inner["operation"] in RELATION_OPS
                    and list(inner.get("dependencies", ()))[:1] == [-1]
                    for inner in arg
                ):
                    out.add("V")  # the quantified objects carry a second relation
    if out & {"RM", "V"}:
        out.add("RM/V")
    if out:
        out.add("RM/V/C")
    return out


ANSWER_TYPES = {
    "bool": "ANS-BOOL",
    "number": "ANS-NUM",
    "attribute": "ANS-ATTR",
    "noun": "ANS-NOUN",
    "relation": "ANS-REL",
}


def subgraph_properties(example: ExampleRecord) -> set[str]:
    """RM, V, C read off the subgraph keys the example carries (when it carries any)."""
    raw = field_of(example, "subgraphs")
    keys = raw.values() if isinstance(raw, dict) else raw if isinstance(raw, list) else ()
    out: set[str] = set()
    for key in keys:
        if not isinstance(key, str):
            continue
        try:
            g = Subgraph.from_key(key)
        except ValueError:
            continue
        if g.relmods:
            out.add("RM")
        if any(len(g.children(i)) >= 2 for i in range(len(g.objects))):
            out.add("V")
        if g.depth() >= 2:
            out.add("C")
    return out


def _answer_properties(example: ExampleRecord, program: Sequence[Step]) -> set[str]:
    answer = example.get("answer")
    if isinstance(answer, bool):
        return {"ANS-BOOL"}
    if isinstance(answer, int):
        return {"ANS-NUM", f"ANS-{answer}"}
    declared = ANSWER_TYPES.get(str(field_of(example, "answer_type")))
    if declared is not None:
        return {declared}
    last = str(program[-1]["operation"]) if program else ""
    template = template_of(example)
    if last in ATTR_ANSWER_OPS or template in ATTR_TEMPLATES:
        return {"ANS-ATTR"}
    if last in NOUN_ANSWER_OPS or template in NOUN_TEMPLATES:
        return {"ANS-NOUN"}
    if last in REL_ANSWER_OPS or template in REL_TEMPLATES:
        return {"ANS-REL"}
    return {"ANS-ATTR"} if str(answer) in attribute_types() else {"ANS-NOUN"}


def compute_properties(example: ExampleRecord) -> list[str]:
    """All properties of one example, sorted (see the module docstring for the names)."""
    program: Sequence[Step] = example.get("program") or []
    out: set[str] = set()
    for prog in iter_programs(program):
        for step in prog:
            op = str(step["operation"])
            deps = list(step.get("dependencies", ()))
            numbers = _numbers(step)
            if op in QUANTIFIERS or op == "all_same":
                out.add("HAS-QUANT")
                out.add(f"HAS-QUANT-{QUANTIFIERS.get(op, 'ALL')}")
                restrictor = _closure(prog, deps)
                if any(prog[i]["operation"] in SCOPE_BUILDERS for i in restrictor):
                    out.add("HAS-QUANT-COMPSCOPE")
            if _is_same_attr_op(op):
                out.add("HAS-SAMEATTR")
                if (kind := _same_attr_type(step)) is not None:
                    out.add(f"HAS-SAMEATTR-{kind.upper()}")
            if op in COMPARISONS:
                operands = [prog[d] for d in deps if 0 <= d < len(prog)]
                if numbers:
                    pass  # a literal count: counting, recorded as HAS-NUM below
                elif len(operands) >= 2 and all(o["operation"] == "query_attr" for o in operands):
                    out.add("HAS-SAMEATTR")
                    for o in operands[:1]:
                        if (kind := _same_attr_type(o)) is not None:
                            out.add(f"HAS-SAMEATTR-{kind.upper()}")
                elif len(operands) >= 2:
                    out.add("HAS-COMPAR")
                    out.add(f"HAS-COMPAR-{COMPARISONS[op]}")
            if op in GROUP_BY:
                out.add("HAS-GROUPBY")
            if op == "count":
                out.add("HAS-COUNT")
            if op in LOGIC:
                out.add("HAS-LOGIC")
                out.add(f"HAS-LOGIC-{LOGIC[op]}")
            if op in ATTRIBUTE_OPS:
                out.add("HAS-ATTR")
            for number in numbers:
                out.add("HAS-NUM")
                out.add(f"HAS-NUM-{int(number) if float(number).is_integer() else number}")
    shapes = structure_properties(program) | subgraph_properties(example)
    if shapes & {"RM", "V"}:
        shapes.add("RM/V")
    if shapes:
        shapes.add("RM/V/C")
    out |= shapes
    out |= _answer_properties(example, program)
    template = template_of(example)
    if template:
        out.add(f"TPL-{template.upper()}")
    out |= {f"LEXICAL-{name}" for name in program_names(program)}
    return sorted(out)


def with_properties(example: RecordT) -> RecordT:
    """The example with its ``properties`` field (re)computed (the same dict, typed as it came)."""
    example["properties"] = compute_properties(example)
    return example
