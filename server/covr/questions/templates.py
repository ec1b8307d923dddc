"""Question templates as data: loading, validation and program compilation.

The resource ``resources/templates.json`` holds the 19 forms of DESIGN §7 (syntax in
``docs/questions.md``). This module checks it thoroughly at load time — every slot, placeholder,
operator, label and rule — so a broken edit fails with a :class:`TemplateError` naming the
template and field instead of producing bad questions later.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from covr.questions.errors import TemplateError
from covr.questions.example import Step
from covr.questions.operators import REGISTRY
from covr.scene.program import program as subgraph_program
from covr.scene.subgraph import Subgraph

ANSWER_TYPES = frozenset({"bool", "number", "noun", "attribute", "relation"})
SUBGRAPH_PRECONDITIONS = frozenset(
    {
        "root_attribute",
        "root_attribute_typed",
        "root_edge",
        "root_edge_leaf",
        "edge_not_finite_verb",
        "edge_one_answer",
    }
)
VIEWS = frozenset({"full", "no_root_attribute", "no_edge", "edge_target"})
FORMS = frozenset({"a", "the", "plural", "bare"})
VALUE_SLOTS = frozenset(
    {
        "root_attribute",
        "root_attribute_type",
        "edge_relation",
        "edge_clause_plural",
        "edge_wh_clause",
        "edge_pronoun",
        "object_options",
        "relation_options",
        "attribute_options",
        "other_attribute_type",
    }
)
DECOY_POSITIONS = frozenset({"edge_object", "edge_relation", "root_attribute"})
FLIP_MODES = frozenset({"positives", "anchor", "second", "drop_source"})
MAX_IMAGES = 5
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_AGREEMENT = frozenset({"is", "images", "contain"})
_SIGNATURE_RULE = re.compile(
    r"^(in_edge|(only|has):((object|attribute|relation|relmod)@\d+|edge_object|edge_relation))$"
)


@dataclass(frozen=True)
class ImageRule:
    """How images are picked (see docs/questions.md#image-selection)."""

    source: bool
    positives: tuple[int, int]
    distractors: tuple[int, int]
    flip: str
    min_distractors: int = 1
    """Distractor images every image set of the form must show, flips included (issue 16
    item 1, paper §3: an example without a distractor tests nothing compositional)."""
    shown: tuple[int, int] = (2, MAX_IMAGES)
    """How many images an example of the form shows (the paper: up to 5, 4.4 on average)."""


@dataclass(frozen=True)
class Template:
    name: str
    pattern_name: str
    paper_template: str
    answer_type: str
    question: bool
    subgraph: tuple[str, ...]
    slots: Mapping[str, Mapping[str, Any]]
    text: tuple[str, ...]
    program: tuple[Mapping[str, Any], ...]
    avoid: tuple[str, ...]
    prefer: tuple[str, ...]
    images: ImageRule
    second_subgraph: Mapping[str, Any] | None
    decoy: Mapping[str, Any] | None

    @property
    def uses_edge(self) -> bool:
        return any(p.startswith(("root_edge", "edge_")) for p in self.subgraph)


def _need(raw: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in raw:
        raise TemplateError(f"{where}.{key}", "is missing")
    value = raw[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise TemplateError(f"{where}.{key}", f"has the wrong type {type(value).__name__}")
    return value


def _range(value: Any, where: str, top: int) -> tuple[int, int]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        or not 0 <= value[0] <= value[1] <= top
    ):
        raise TemplateError(where, f"must be [low, high] with 0 <= low <= high <= {top}")
    return value[0], value[1]


def _minimum(images: Mapping[str, Any], where: str) -> int:
    """The declared minimum number of distractors (a small non-negative integer)."""
    value = images.get("min_distractors")
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_IMAGES:
        raise TemplateError(where, f"must be an integer 0..{MAX_IMAGES}")
    return value


def _check_slot(name: str, slot: Any, where: str) -> None:
    if not re.match(r"^[A-Z][A-Z0-9_]*$", name):
        raise TemplateError(where, "slot names are upper-case identifiers")
    if not isinstance(slot, Mapping):
        raise TemplateError(where, "must be an object")
    kinds = {"subgraph", "value", "choice", "number"} & set(slot)
    if len(kinds) != 1:
        raise TemplateError(where, "needs exactly one of subgraph, value, choice, number")
    kind = next(iter(kinds))
    if kind == "subgraph":
        if slot["subgraph"] not in ("g", "g2"):
            raise TemplateError(f"{where}.subgraph", "must be 'g' or 'g2'")
        if slot.get("view") not in VIEWS:
            raise TemplateError(f"{where}.view", f"must be one of {sorted(VIEWS)}")
        form = slot.get("form")
        if not (form in FORMS or (isinstance(form, str) and form.startswith("count:"))):
            raise TemplateError(f"{where}.form", f"must be one of {sorted(FORMS)} or count:SLOT")
    elif kind == "value":
        if slot["value"] not in VALUE_SLOTS:
            raise TemplateError(f"{where}.value", f"must be one of {sorted(VALUE_SLOTS)}")
    elif kind == "choice":
        options = slot["choice"]
        if not isinstance(options, list) or not options:
            raise TemplateError(f"{where}.choice", "must be a non-empty list")
        for i, option in enumerate(options):
            if not isinstance(option, Mapping) or not isinstance(option.get("text"), str):
                raise TemplateError(f"{where}.choice[{i}]", "needs a text")
            if "op" in option and option["op"] not in REGISTRY:
                raise TemplateError(f"{where}.choice[{i}].op", f"unknown operator {option['op']!r}")
    else:
        _range(slot["number"], f"{where}.number", MAX_IMAGES)


def _check_text(text: str, slots: Mapping[str, Any], where: str) -> None:
    for match in _PLACEHOLDER.finditer(text):
        inner = match.group(1)
        agreement, _, target = inner.rpartition(":")
        if agreement and agreement not in _AGREEMENT:
            raise TemplateError(where, f"unknown agreement {agreement!r} in {{{inner}}}")
        slot = target.split(".", 1)[0]
        if slot not in slots:
            raise TemplateError(where, f"placeholder {{{inner}}} names no slot")
    if "(" in text or ")" in text:
        raise TemplateError(where, "literal parentheses are not allowed in question text")


def _check_program(
    steps: Any, slots: Mapping[str, Any], where: str, labels: set[str], nested: bool
) -> None:
    if not isinstance(steps, list) or not steps:
        raise TemplateError(where, "must be a non-empty list")
    for i, step in enumerate(steps):
        at = f"{where}[{i}]"
        if not isinstance(step, Mapping):
            raise TemplateError(at, "must be an object")
        if "ref" in step:
            ref = step["ref"]
            if ref not in slots or "subgraph" not in slots[ref]:
                raise TemplateError(f"{at}.ref", f"{ref!r} is not a subgraph slot")
            labels.add(ref)
            continue
        op = step.get("op")
        ops: list[str] = []
        if isinstance(op, str) and op.startswith("$"):
            slot = op[1:].split(".", 1)[0]
            if slot not in slots or "choice" not in slots[slot]:
                raise TemplateError(f"{at}.op", f"{op!r} must name a choice slot")
            ops = [o.get("op", "") for o in slots[slot]["choice"]]
        else:
            ops = [str(op)]
        for name in ops:
            if name not in REGISTRY:
                raise TemplateError(f"{at}.op", f"unknown operator {name!r}")
        for dep in step.get("deps", []):
            if not (dep in labels or (nested and dep == "@item")):
                raise TemplateError(f"{at}.deps", f"{dep!r} is not an earlier label")
        for j, arg in enumerate(step.get("args", [])):
            if isinstance(arg, Mapping):
                _check_program(arg.get("program"), slots, f"{at}.args[{j}].program", set(), True)
            elif (
                isinstance(arg, str)
                and arg.startswith("$")
                and arg[1:].split(".", 1)[0] not in slots
            ):
                raise TemplateError(f"{at}.args[{j}]", f"{arg!r} names no slot")
        if "as" in step:
            labels.add(str(step["as"]))


def parse_template(raw: Any, where: str) -> Template:
    if not isinstance(raw, Mapping):
        raise TemplateError(where, "must be an object")
    name = _need(raw, "name", str, where)
    where = f"templates[{name}]"
    answer_type = _need(raw, "answer_type", str, where)
    if answer_type not in ANSWER_TYPES:
        raise TemplateError(f"{where}.answer_type", f"must be one of {sorted(ANSWER_TYPES)}")
    preconditions = _need(raw, "subgraph", list, where)
    for p in preconditions:
        if p not in SUBGRAPH_PRECONDITIONS:
            raise TemplateError(f"{where}.subgraph", f"unknown precondition {p!r}")
    slots = _need(raw, "slots", dict, where)
    for slot_name, slot in slots.items():
        _check_slot(slot_name, slot, f"{where}.slots.{slot_name}")
        form = slot.get("form", "")
        if (
            isinstance(form, str)
            and form.startswith("count:")
            and (form[6:] not in slots or "number" not in slots[form[6:]])
        ):
            raise TemplateError(f"{where}.slots.{slot_name}.form", "count: needs a number slot")
        if slot.get("subgraph") == "g2" and "second_subgraph" not in raw:
            raise TemplateError(f"{where}.slots.{slot_name}", "g2 needs second_subgraph")
        if slot.get("view") in ("no_edge", "edge_target") and not any(
            p.startswith("root_edge") for p in preconditions
        ):
            raise TemplateError(f"{where}.slots.{slot_name}.view", "edge views need root_edge")
        if (
            slot.get("value") in ("object_options", "relation_options", "attribute_options")
            and "decoy" not in raw
        ):
            raise TemplateError(f"{where}.slots.{slot_name}", "options need a decoy")
    texts = _need(raw, "text", list, where)
    if not texts or not all(isinstance(t, str) and t for t in texts):
        raise TemplateError(f"{where}.text", "must be a non-empty list of strings")
    for i, text in enumerate(texts):
        _check_text(text, slots, f"{where}.text[{i}]")
    program = _need(raw, "program", list, where)
    _check_program(program, slots, f"{where}.program", set(), False)
    rules = _need(raw, "distractors", dict, where)
    for key in ("avoid", "prefer"):
        for rule in rules.get(key, []):
            if not isinstance(rule, str) or not _SIGNATURE_RULE.match(rule):
                raise TemplateError(f"{where}.distractors.{key}", f"bad rule {rule!r}")
    images = _need(raw, "images", dict, where)
    rule = ImageRule(
        source=bool(images.get("source", True)),
        positives=_range(images.get("positives"), f"{where}.images.positives", MAX_IMAGES - 1),
        distractors=_range(images.get("distractors"), f"{where}.images.distractors", MAX_IMAGES),
        flip=str(images.get("flip", "positives")),
        min_distractors=_minimum(images, f"{where}.images.min_distractors"),
        shown=_range(images.get("shown"), f"{where}.images.shown", MAX_IMAGES),
    )
    if rule.min_distractors > rule.distractors[1] or rule.shown[0] < 1:
        raise TemplateError(f"{where}.images", "min_distractors above distractors, or shown < 1")
    if rule.flip not in FLIP_MODES:
        raise TemplateError(f"{where}.images.flip", f"must be one of {sorted(FLIP_MODES)}")
    decoy = raw.get("decoy")
    if decoy is not None and decoy.get("position") not in DECOY_POSITIONS:
        raise TemplateError(f"{where}.decoy.position", f"must be one of {sorted(DECOY_POSITIONS)}")
    second = raw.get("second_subgraph")
    if second is not None and second.get("view") not in VIEWS:
        raise TemplateError(f"{where}.second_subgraph.view", f"must be one of {sorted(VIEWS)}")
    return Template(
        name=name,
        pattern_name=_need(raw, "pattern_name", str, where),
        paper_template=_need(raw, "paper_template", str, where),
        answer_type=answer_type,
        question=bool(_need(raw, "question", bool, where)),
        subgraph=tuple(preconditions),
        slots=slots,
        text=tuple(texts),
        program=tuple(program),
        avoid=tuple(rules.get("avoid", [])),
        prefer=tuple(rules.get("prefer", [])),
        images=rule,
        second_subgraph=second,
        decoy=decoy,
    )


def parse_templates(data: Any, source: str = "templates.json") -> dict[str, Template]:
    """Validate a whole resource; raise :class:`TemplateError` naming the first problem."""
    if not isinstance(data, Mapping) or not isinstance(data.get("templates"), list):
        raise TemplateError(source, "must be an object with a 'templates' list")
    out: dict[str, Template] = {}
    for i, raw in enumerate(data["templates"]):
        template = parse_template(raw, f"{source}: templates[{i}]")
        if template.name in out:
            raise TemplateError(f"{source}: templates[{i}].name", f"duplicate {template.name!r}")
        out[template.name] = template
    return out


def _load(resource: str) -> dict[str, Template]:
    text = resources.files("covr.questions").joinpath("resources", resource).read_text()
    return parse_templates(json.loads(text), resource)


@cache
def default_templates() -> dict[str, Template]:
    """The 19 base forms: what generation uses when no template is named."""
    return _load("templates.json")


TEMPLATE_GROUPS = {"closure": "closure_templates.json"}
"""Opt-in template families by group name (``--templates closure``). They stay out of the default
set so the base forms' output (and every count measured on it) does not change."""


@cache
def group_templates(group: str) -> dict[str, Template]:
    return _load(TEMPLATE_GROUPS[group])


@cache
def all_templates() -> dict[str, Template]:
    """Base forms then every group's forms, in resource order; names are unique across files."""
    out = dict(default_templates())
    for group in TEMPLATE_GROUPS:
        for name, template in group_templates(group).items():
            if name in out or name in TEMPLATE_GROUPS:
                raise TemplateError(f"{TEMPLATE_GROUPS[group]}: {name}", "duplicate template name")
            out[name] = template
    return out


def select_templates(names: Sequence[str] | None) -> list[Template]:
    """The named templates in resource order (the base forms when ``names`` is empty); a group
    name (``closure``) stands for all of its forms; unknown names raise :class:`TemplateError`
    listing the valid ones."""
    if not names:
        return list(default_templates().values())
    templates = all_templates()
    unknown = [n for n in names if n not in templates and n not in TEMPLATE_GROUPS]
    if unknown:
        raise TemplateError(
            "templates",
            f"unknown template(s) {unknown}; known: {', '.join(templates)}; "
            f"groups: {', '.join(TEMPLATE_GROUPS)}",
        )
    wanted = {n for n in names if n in templates}
    for group in TEMPLATE_GROUPS:
        if group in names:
            wanted |= set(group_templates(group))
    return [t for t in templates.values() if t.name in wanted]


# -- program compilation -----------------------------------------------------------------------


def _resolve(value: Any, slot_values: Mapping[str, Any]) -> Any:
    if not (isinstance(value, str) and value.startswith("$")):
        return value
    slot, _, field = value[1:].partition(".")
    resolved = slot_values[slot]
    if field:
        return resolved[field]
    return resolved


def compile_program(
    skeleton: Sequence[Mapping[str, Any]],
    slot_values: Mapping[str, Any],
    subgraphs: Mapping[str, Subgraph],
) -> list[Step]:
    """The concrete program: ``ref`` steps spliced with the subgraph's reference program
    (:func:`covr.scene.program.program`), labels turned into step indices, ``$SLOT`` values and
    ``$SLOT.op`` operators filled in; nested programs compiled the same way (``@item`` -> -1)."""
    out: list[Step] = []
    labels: dict[str, int] = {"@item": -1}
    for step in skeleton:
        if "ref" in step:
            rows = subgraph_program(subgraphs[step["ref"]])
            offset = len(out)
            for row in rows:
                out.append(
                    {
                        "operation": row["operation"],
                        "arguments": list(row["arguments"]),
                        "dependencies": [d + offset for d in row["dependencies"]],
                    }
                )
            labels[step["ref"]] = len(out) - 1
            continue
        arguments: list[Any] = []
        for arg in step.get("args", []):
            if isinstance(arg, Mapping):
                arguments.append(compile_program(arg["program"], slot_values, subgraphs))
            else:
                arguments.append(_resolve(arg, slot_values))
        out.append(
            {
                "operation": _resolve(step["op"], slot_values),
                "arguments": arguments,
                "dependencies": [labels[d] for d in step.get("deps", [])],
            }
        )
        if "as" in step:
            labels[step["as"]] = len(out) - 1
    return out
