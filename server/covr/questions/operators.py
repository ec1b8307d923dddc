"""Program operators (paper Table 10, DESIGN §7) and the executor.

A program is a list of steps ``{"operation", "arguments", "dependencies"}`` (see
``docs/questions.md`` for the exact contract). Each operator is registered with the types of its
dependency inputs, the kinds of its literal arguments and its output type, so a malformed program
fails with a :class:`~covr.questions.errors.ProgramError` naming the step, while a well-formed
program without an answer over the given images fails with a typed
:class:`~covr.questions.errors.ExecutionFailure`.

Value types:

==========  =====================================================================
``objects``  ``frozenset[int]`` of world object indices (see :mod:`covr.questions.world`)
``object``   :class:`One` — exactly one object (output of ``unique``)
``bool``     ``bool``
``number``   ``int``
``name``     ``str`` (a noun, attribute or relation name)
``images``   ``frozenset[str]`` of image ids
``groups``   ``tuple[tuple[str, frozenset[int]], ...]`` sorted by image id
==========  =====================================================================

An ``object`` is accepted where ``objects`` is expected (as a one-element set). Inside a nested
condition program (the argument of ``all``/``some``/``none``) dependency ``-1`` is the element being
tested, an ``object``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from covr.questions.errors import (
    ExecutionFailure,
    NeitherOption,
    NoCommonValue,
    NothingFound,
    NoUniqueReferent,
    ProgramError,
    SeveralValues,
)
from covr.questions.world import AttributeTypes, World, default_attribute_types

Value: TypeAlias = Any
Step = Mapping[str, Any]
CURRENT = -1
"""Dependency index of the tested element inside a nested condition program."""


@dataclass(frozen=True, slots=True)
class One:
    """Exactly one object (a world index)."""

    index: int


@dataclass(frozen=True)
class Context:
    world: World
    attribute_types: AttributeTypes
    current: One | None = None
    check: bool = True


Handler = Callable[[Context, int, list[Value], list[Any]], Value]


@dataclass(frozen=True)
class Operator:
    """One registered operator.

    ``inputs``: types of the dependency values in order; a trailing ``"objects*"`` accepts any
    number of further object sets. ``arguments``: kinds of the literal arguments (``name``,
    ``attribute``, ``relation``, ``attr_type``, ``number``, ``program``); a trailing ``*`` kind
    repeats. ``inputs_alt`` lists alternative input signatures (``eq`` takes two dependencies, or one
    dependency and a number argument).
    """

    name: str
    inputs: tuple[str, ...]
    arguments: tuple[str, ...]
    output: str
    handler: Handler
    alternatives: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()
    doc: str = ""

    def signatures(self) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
        return ((self.inputs, self.arguments), *self.alternatives)


REGISTRY: dict[str, Operator] = {}


def register(
    name: str,
    inputs: tuple[str, ...],
    arguments: tuple[str, ...],
    output: str,
    *,
    alternatives: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (),
    doc: str = "",
) -> Callable[[Handler], Handler]:
    def wrap(handler: Handler) -> Handler:
        REGISTRY[name] = Operator(name, inputs, arguments, output, handler, alternatives, doc)
        return handler

    return wrap


# -- helpers -----------------------------------------------------------------------------------


def _objects(value: Value) -> frozenset[int]:
    return frozenset((value.index,)) if isinstance(value, One) else value


def _one(step: int, objects: frozenset[int]) -> One:
    if not objects:
        raise NothingFound(step, "no object matches the reference")
    if len(objects) > 1:
        raise NoUniqueReferent(step, f"{len(objects)} objects match the reference")
    return One(next(iter(objects)))


def _value_of_type(ctx: Context, step: int, obj: One, attr_type: str) -> str:
    o = ctx.world.objects[obj.index]
    values = ctx.attribute_types.values(o.attributes, attr_type)
    if not values:
        raise NoCommonValue(step, f"{o.name} {o.image}/{o.id} has no {attr_type}")
    if len(values) > 1:
        raise SeveralValues(step, f"{o.name} {o.image}/{o.id} has several {attr_type}s {values}")
    return values[0]


def _choose(step: int, options: Sequence[str], holds: Sequence[bool]) -> str:
    true = [o for o, h in zip(options, holds, strict=True) if h]
    if len(true) != 1:
        what = "neither option holds" if not true else f"both options hold: {true}"
        raise NeitherOption(step, what)
    return true[0]


# -- objects -----------------------------------------------------------------------------------


@register("find", (), ("name",), "objects", doc="all objects named `name` in all images")
def _find(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    return frozenset(ctx.world.by_name.get(args[0], ()))


@register("filter", ("objects",), ("attribute",), "objects", doc="objects that have the attribute")
def _filter(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    objs = ctx.world.objects
    return frozenset(i for i in _objects(deps[0]) if args[0] in objs[i].attributes)


def _relations_from(
    ctx: Context, subjects: frozenset[int], name: str, mod_names: Sequence[str]
) -> list[tuple[int, int, tuple[tuple[str, int], ...]]]:
    out = []
    for s in sorted(subjects):
        for rel in ctx.world.out.get(s, ()):
            if rel.name == name:
                out.append((s, rel.object, rel.mods))
    return out


def _mods_ok(
    mods: tuple[tuple[str, int], ...], mod_names: Sequence[str], mod_sets: Sequence[frozenset[int]]
) -> bool:
    return all(
        any(name == m and target in allowed for m, target in mods)
        for name, allowed in zip(mod_names, mod_sets, strict=True)
    )


@register(
    "with_relation",
    ("objects", "objects", "objects*"),
    ("relation", "relmod*"),
    "objects",
    doc="subjects with the relation to any of the objects (and each rel-mod to its objects)",
)
def _with_relation(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    subjects, targets = _objects(deps[0]), _objects(deps[1])
    mod_sets = [_objects(d) for d in deps[2:]]
    mod_names = args[1:]
    if len(mod_names) != len(mod_sets):
        raise ProgramError(str(step), "with_relation needs one dependency per rel-mod argument")
    return frozenset(
        s
        for s, o, mods in _relations_from(ctx, subjects, args[0], mod_names)
        if o in targets and _mods_ok(mods, mod_names, mod_sets)
    )


@register(
    "with_relation_object",
    ("objects", "objects"),
    ("relation",),
    "objects",
    alternatives=((("objects",), ("relation",)),),
    doc="objects (of the second set, or any) that a subject has the relation to",
)
def _with_relation_object(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    subjects = _objects(deps[0])
    targets = _objects(deps[1]) if len(deps) > 1 else None
    return frozenset(
        o
        for _, o, _mods in _relations_from(ctx, subjects, args[0], ())
        if targets is None or o in targets
    )


@register("unique", ("objects",), (), "object", doc="the single object; fails on 0 or > 1")
def _unique(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    return _one(step, _objects(deps[0]))


@register("assert_unique", ("objects",), (), "objects", doc="the set, if it has exactly one object")
def _assert_unique(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    objects = _objects(deps[0])
    _one(step, objects)
    return objects


@register("exists", ("objects",), (), "bool")
def _exists(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    return bool(_objects(deps[0]))


@register(
    "count",
    ("objects",),
    (),
    "number",
    alternatives=((("images",), ()), (("groups",), ())),
    doc="size of an object set, image set or group list",
)
def _count(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    value = deps[0]
    return 1 if isinstance(value, One) else len(value)


@register("unique_images", ("objects",), (), "images", doc="the images of the objects")
def _unique_images(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    objs = ctx.world.objects
    return frozenset(objs[i].image for i in _objects(deps[0]))


@register("group_by_images", ("objects",), (), "groups", doc="(image, objects in it) pairs")
def _group_by_images(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    groups: dict[str, set[int]] = {}
    for i in _objects(deps[0]):
        groups.setdefault(ctx.world.objects[i].image, set()).add(i)
    return tuple((image, frozenset(groups[image])) for image in sorted(groups))


def _every_group(ctx: Context, groups: Sequence[tuple[str, frozenset[int]]]) -> list[Any]:
    """The groups plus an empty group for every image of the world without one. Why: "How many
    images contain at most 1 dog?" is, as a reader takes it, also true of an image without dogs
    (issue 16 item 2), so the keep operators judge every image, not just the grouped ones."""
    present = {image for image, _ in groups}
    empty = [(image, frozenset[int]()) for image in ctx.world.images if image not in present]
    return sorted([*groups, *empty], key=lambda group: group[0])


def _keep(predicate: Callable[[int, int], bool]) -> Handler:
    def keep(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
        groups = _every_group(ctx, deps[0])
        return tuple((k, v) for k, v in groups if predicate(len(v), int(args[0])))

    return keep


register("keep_if_values_count_eq", ("groups",), ("number",), "groups")(_keep(lambda n, k: n == k))
register("keep_if_values_count_geq", ("groups",), ("number",), "groups")(_keep(lambda n, k: n >= k))
register("keep_if_values_count_leq", ("groups",), ("number",), "groups")(_keep(lambda n, k: n <= k))


@register("keys", ("groups",), (), "images", doc="the images of the groups")
def _keys(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    return frozenset(k for k, _ in deps[0])


# -- queries and choices -----------------------------------------------------------------------


@register("query_name", ("object",), (), "name")
def _query_name(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    return ctx.world.objects[deps[0].index].name


@register("query_attr", ("object",), ("attr_type",), "name", doc="the object's value of the type")
def _query_attr(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    return _value_of_type(ctx, step, deps[0], args[0])


@register("verify_attr", ("object",), ("attribute",), "bool")
def _verify_attr(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    return args[0] in ctx.world.objects[deps[0].index].attributes


@register("choose_attr", ("object",), ("attribute", "attribute"), "name")
def _choose_attr(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    attributes = ctx.world.objects[deps[0].index].attributes
    return _choose(step, args, [a in attributes for a in args])


@register("choose_name", ("objects",), ("name", "name"), "name", doc="which name the objects carry")
def _choose_name(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    names = {ctx.world.objects[i].name for i in _objects(deps[0])}
    return _choose(step, args, [a in names for a in args])


def _relation_names(ctx: Context, subject: One, targets: frozenset[int]) -> set[str]:
    return {r.name for r in ctx.world.out.get(subject.index, ()) if r.object in targets}


@register(
    "choose_relation",
    ("object", "objects"),
    ("relation", "relation"),
    "name",
    doc="which relation the subject has to any of the objects",
)
def _choose_relation(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    names = _relation_names(ctx, deps[0], _objects(deps[1]))
    return _choose(step, args, [a in names for a in args])


@register(
    "relation_between_nouns",
    ("object", "objects"),
    (),
    "name",
    doc="the single relation name from the subject to any of the objects",
)
def _relation_between_nouns(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    names = sorted(_relation_names(ctx, deps[0], _objects(deps[1])))
    if not names:
        raise NothingFound(step, "no relation between the objects")
    if len(names) > 1:
        raise SeveralValues(step, f"several relations {names}")
    return names[0]


# -- quantifiers -------------------------------------------------------------------------------


def _quantify(mode: str) -> Handler:
    def quantify(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
        domain = sorted(_objects(deps[0]))
        if not domain:
            raise NothingFound(step, f"{mode}: the quantified set is empty")
        results = [
            _condition(ctx, step, args[0], One(i)) for i in domain
        ]  # evaluate every element: a failing condition anywhere fails the question
        if mode == "all":
            return all(results)
        if mode == "some":
            return any(results)
        return not any(results)

    return quantify


for _mode in ("all", "some", "none"):
    register(
        _mode,
        ("objects",),
        ("program",),
        "bool",
        doc=f"`{_mode}` of the objects satisfy the nested condition program",
    )(_quantify(_mode))


def _condition(ctx: Context, step: int, program: Any, element: One) -> bool:
    inner = Context(ctx.world, ctx.attribute_types, element, ctx.check)
    try:
        result = run(program, inner, check=ctx.check)[-1]
    except ProgramError as exc:
        raise ProgramError(f"{step}.{exc.step}", exc.message) from None
    if not isinstance(result, bool):
        raise ProgramError(str(step), "a nested condition program must end with a bool")
    return result


@register(
    "all_same",
    ("objects",),
    ("attr_type",),
    "bool",
    doc="whether all (>= 2) objects have the same value of the type",
)
def _all_same(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    domain = sorted(_objects(deps[0]))
    if len(domain) < 2:
        raise NothingFound(step, f"all_same needs at least 2 objects, got {len(domain)}")
    values = {_value_of_type(ctx, step, One(i), args[0]) for i in domain}
    return len(values) == 1


@register(
    "same_attr",
    ("object",),
    ("attr_type",),
    "objects",
    doc="the other objects of the referent's image with the same single value of the type",
)
def _same_attr(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    # CLOSURE (seed 003, §3 "similarity-based references"): "the thing that has the same color
    # as X" ranges over X's own scene, excluding X. A referent without exactly one value of the
    # type fails like query_attr; other objects without exactly one value are simply not "the
    # same" (a black-and-white cat has no single color to share).
    referent = ctx.world.objects[deps[0].index]
    value = _value_of_type(ctx, step, deps[0], args[0])
    out = []
    for i, o in ctx.world.objects.items():
        if i == deps[0].index or o.image != referent.image:
            continue
        if ctx.attribute_types.values(o.attributes, args[0]) == [value]:
            out.append(i)
    return frozenset(out)


# -- logic and numbers -------------------------------------------------------------------------


@register("logic_and", ("bool", "bool"), (), "bool")
def _and(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    return bool(deps[0] and deps[1])


@register("logic_or", ("bool", "bool"), (), "bool")
def _or(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
    return bool(deps[0] or deps[1])


def _compare(op: Callable[[Any, Any], bool]) -> Handler:
    def compare(ctx: Context, step: int, deps: list[Value], args: list[Any]) -> Value:
        left, right = (deps[0], deps[1]) if len(deps) == 2 else (deps[0], args[0])
        return op(left, right)

    return compare


_NUMBER_ALT = ((("number",), ("number",)),)
register(
    "eq", ("number", "number"), (), "bool", alternatives=(*_NUMBER_ALT, (("name", "name"), ()))
)(_compare(lambda a, b: bool(a == b)))
register("gt", ("number", "number"), (), "bool", alternatives=_NUMBER_ALT)(
    _compare(lambda a, b: bool(a > b))
)
register("lt", ("number", "number"), (), "bool", alternatives=_NUMBER_ALT)(
    _compare(lambda a, b: bool(a < b))
)
register("geq", ("number", "number"), (), "bool", alternatives=_NUMBER_ALT)(
    _compare(lambda a, b: bool(a >= b))
)
register("leq", ("number", "number"), (), "bool", alternatives=_NUMBER_ALT)(
    _compare(lambda a, b: bool(a <= b))
)


# -- executor ----------------------------------------------------------------------------------


def _type_of(value: Value) -> str:
    if isinstance(value, One):
        return "object"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "number"
    if isinstance(value, str):
        return "name"
    if isinstance(value, tuple):
        return "groups"
    if isinstance(value, frozenset):
        if any(isinstance(v, str) for v in value):
            return "images"
        return "objects"  # an empty set counts as either; see _accepts
    raise TypeError(f"unexpected value {value!r}")


def _accepts(expected: str, value: Value) -> bool:
    actual = _type_of(value)
    base = expected.rstrip("*")
    if actual == base:
        return True
    if base == "objects" and actual == "object":
        return True
    return base == "images" and isinstance(value, frozenset) and not value


def _check_argument(kind: str, value: Any) -> bool:
    base = kind.rstrip("*")
    if base == "number":
        return isinstance(value, int) and not isinstance(value, bool)
    if base == "program":
        return isinstance(value, list)
    return isinstance(value, str) and bool(value)


def _matches(
    signature: tuple[tuple[str, ...], tuple[str, ...]], deps: list[Value], args: list[Any]
) -> bool:
    inputs, kinds = signature
    return _fits(inputs, deps, _accepts) and _fits(kinds, args, _check_argument)


def _fits(kinds: tuple[str, ...], values: Sequence[Any], check: Callable[[str, Any], bool]) -> bool:
    fixed = [k for k in kinds if not k.endswith("*")]
    rest = kinds[len(fixed)] if len(fixed) < len(kinds) else None
    if len(values) < len(fixed) or (rest is None and len(values) != len(fixed)):
        return False
    for i, value in enumerate(values):
        if not check(fixed[i] if i < len(fixed) else str(rest), value):
            return False
    return True


def validate_step(step: Any, index: int, where: str = "") -> tuple[Operator, list[int], list[Any]]:
    """The operator, dependencies and arguments of a step, or a :class:`ProgramError`."""
    label = f"{where}{index}"
    if not isinstance(step, Mapping):
        raise ProgramError(label, f"must be an object, got {type(step).__name__}")
    unknown = set(step) - {"operation", "arguments", "dependencies"}
    if unknown:
        raise ProgramError(label, f"unknown keys {sorted(unknown)}")
    name = step.get("operation")
    if name not in REGISTRY:
        raise ProgramError(label, f"unknown operation {name!r}")
    deps = step.get("dependencies", [])
    args = step.get("arguments", [])
    if not isinstance(deps, list) or not isinstance(args, list):
        raise ProgramError(label, "dependencies and arguments must be lists")
    for d in deps:
        if not isinstance(d, int) or isinstance(d, bool) or not (-1 <= d < index):
            raise ProgramError(label, f"dependency {d!r} is not an earlier step")
    return REGISTRY[name], deps, args


def run(program: Sequence[Step], ctx: Context, *, check: bool = True) -> list[Value]:
    """Execute ``program`` in order; return every step's output (the answer is the last).

    ``check=False`` skips the per-step type checks: only for a program that already ran once
    with checks (the generator executes one program over several image sets)."""
    if not isinstance(program, Sequence) or not program:
        raise ProgramError("-", "a program is a non-empty list of steps")
    if not check:
        return _run_trusted(program, ctx)
    outputs: list[Value] = []
    for index, step in enumerate(program):
        op, deps, args = validate_step(step, index)
        values: list[Value] = []
        for d in deps:
            if d == CURRENT:
                if ctx.current is None:
                    raise ProgramError(str(index), "dependency -1 outside a nested condition")
                values.append(ctx.current)
            else:
                values.append(outputs[d])
        if not any(_matches(sig, values, args) for sig in op.signatures()):
            got = [_type_of(v) for v in values]
            raise ProgramError(
                str(index),
                f"{op.name} expects inputs {list(op.inputs)} and arguments "
                f"{list(op.arguments)}, got inputs {got} and arguments {args!r}",
            )
        outputs.append(op.handler(ctx, index, values, args))
    return outputs


def _run_trusted(program: Sequence[Step], ctx: Context) -> list[Value]:
    outputs: list[Value] = []
    for index, step in enumerate(program):
        values = [ctx.current if d == CURRENT else outputs[d] for d in step["dependencies"]]
        op = REGISTRY[step["operation"]]
        outputs.append(op.handler(ctx, index, values, step["arguments"]))
    return outputs


def execute(
    program: Sequence[Step],
    world: World,
    attribute_types: AttributeTypes | None = None,
    *,
    check: bool = True,
) -> Value:
    """The answer of ``program`` over ``world``; raises :class:`ExecutionFailure` or
    :class:`ProgramError` (see :func:`run` for ``check``)."""
    ctx = Context(world, attribute_types or default_attribute_types(), check=check)
    return run(program, ctx, check=check)[-1]


__all__ = ["CURRENT", "REGISTRY", "Context", "ExecutionFailure", "One", "Operator"]
__all__ += ["execute", "run"]
