"""Messages of ``covr.v1`` ↔ domain objects of the scene room, with field paths for every error.

Only translation lives here: the rules themselves (what makes a scene graph or a subgraph valid)
are the scene room's (:func:`covr.scene.validate`, :class:`covr.scene.subgraph.Subgraph`), so an
RPC accepts exactly what the batch loaders accept. Errors become :class:`InvalidArgument` with the
request path of the offending field (``scene_graph.objects[2].name``). Page tokens (the position of
a stream plus the request fields it is only valid for) are converted here too, and request sizes
are checked against the settings' limits (:class:`RequestLimits`).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from covr.questions.example import ExampleRecord
from covr.scene.limits import SceneLimits
from covr.scene.model import (
    Box,
    ExtraValue,
    Number,
    Object,
    Relation,
    RelMod,
    SceneGraph,
    SceneGraphError,
    validate,
)
from covr.scene.subgraph import (
    Subgraph,
    SubgraphError,
    SubgraphObject,
    SubgraphRelation,
    SubgraphRelMod,
)
from covr.scene.text import describe
from covr.service.config import ServiceSettings
from covr.service.errors import FieldViolation, InvalidArgument
from covr.v1 import questions_pb2, scene_pb2

MAX_SUBGRAPH_PARTS = 32
"""More parts than any valid subgraph can have (DESIGN §4); refused before the rules run."""

MAX_VIOLATIONS = 100
"""Bad fields listed in one answer (a batch request can hold thousands of entries)."""

MAX_TEXT = 4096
"""Longest name, id or key accepted in a request field (characters)."""


def _number(value: float) -> Number:
    """Whole-number doubles become ints, as the loaders store them ("640", not "640.0")."""
    if value == value and value not in (float("inf"), float("-inf")) and value.is_integer():
        return int(value)
    return value


def check_text(value: str, field: str, *, required: bool = True) -> list[FieldViolation]:
    """Violations of one request string: empty (when required), too long, NUL characters."""
    if not value.strip():
        return [FieldViolation(field, "must not be empty")] if required else []
    if len(value) > MAX_TEXT:
        return [FieldViolation(field, f"is longer than {MAX_TEXT} characters")]
    if "\x00" in value:
        return [FieldViolation(field, "may not contain a NUL character")]
    return []


def require_text(value: str, field: str) -> str:
    """``value`` when it is a usable request string, else :class:`InvalidArgument`."""
    problems = check_text(value, field)
    if problems:
        raise InvalidArgument(problems)
    return value


def _extra(value: scene_pb2.Scalar, field: str) -> ExtraValue:
    kind = value.WhichOneof("kind")
    if kind == "string_value":  # its length and characters are the scene limits' (one check)
        return value.string_value
    if kind == "int_value":
        return value.int_value
    if kind == "double_value":
        if not math.isfinite(value.double_value):  # the store would keep inf as ±1.8e308
            raise InvalidArgument.field(
                field, f"must be a finite number, got {value.double_value!r}"
            )
        return value.double_value
    if kind == "bool_value":
        return value.bool_value
    raise InvalidArgument.field(field, "a scalar needs one of its values set")


def _box(box: scene_pb2.Box) -> Box:
    return Box(_number(box.x), _number(box.y), _number(box.w), _number(box.h))


def scene_graph_from_proto(
    msg: scene_pb2.SceneGraph, field: str = "scene_graph", limits: SceneLimits | None = None
) -> SceneGraph:
    """The domain scene graph of a request message, checked like a loader record: first by the
    scene limits every door shares (:class:`~covr.scene.limits.SceneLimits`, ``COVR_LIMIT_*``:
    text lengths and characters, counts, the store's keys and integers), so no other check
    quotes or walks an oversized field, then by :func:`covr.scene.validate`."""
    try:
        extras = {k: _extra(v, f"{field}.extras[{k[:40]!r}]") for k, v in msg.extras.items()}
        graph = SceneGraph.build(
            source=msg.source,
            original_id=msg.original_id,
            split=msg.split,
            objects=[
                Object(
                    id=o.id,
                    name=o.name,
                    attributes=tuple(o.attributes),
                    box=_box(o.box) if o.HasField("box") else None,
                    synsets=tuple(o.synsets),
                    names=tuple(o.names),
                )
                for o in msg.objects
            ],
            relations=[
                Relation(
                    id=r.id,
                    name=r.name,
                    subject=r.subject,
                    object=r.object,
                    mods=tuple(RelMod(id=m.id, name=m.name, object=m.object) for m in r.mods),
                    synsets=tuple(r.synsets),
                )
                for r in msg.relations
            ],
            width=_number(msg.width) if msg.HasField("width") else None,
            height=_number(msg.height) if msg.HasField("height") else None,
            extras=extras,
        )
        over = (limits or SceneLimits()).violation(graph)
        if over is not None:
            raise InvalidArgument.field(f"{field}.{over[0]}", over[1])
        validate(graph)
    except SceneGraphError as exc:
        where = "original_id" if exc.field == "id" else exc.field
        raise InvalidArgument.field(f"{field}.{where}", exc.message) from exc
    if msg.image_id and msg.image_id != graph.image_id:
        raise InvalidArgument.field(
            f"{field}.image_id",
            f"is output only; if given it must equal source:original_id ({graph.image_id!r:.80})",
        )
    return graph


def scene_graph_to_proto(graph: SceneGraph) -> scene_pb2.SceneGraph:
    """The response message of a stored scene graph."""
    msg = scene_pb2.SceneGraph(
        image_id=graph.image_id,
        source=graph.source,
        original_id=graph.original_id,
        split=graph.split,
    )
    if graph.width is not None:
        msg.width = float(graph.width)
    if graph.height is not None:
        msg.height = float(graph.height)
    for obj in graph.objects:
        out = msg.objects.add(
            id=obj.id,
            name=obj.name,
            attributes=list(obj.attributes),
            synsets=list(obj.synsets),
            names=list(obj.names),
        )
        if obj.box is not None:
            out.box.CopyFrom(
                scene_pb2.Box(
                    x=float(obj.box.x), y=float(obj.box.y), w=float(obj.box.w), h=float(obj.box.h)
                )
            )
    for rel in graph.relations:
        msg.relations.add(
            id=rel.id,
            name=rel.name,
            subject=rel.subject,
            object=rel.object,
            mods=[scene_pb2.RelMod(id=m.id, name=m.name, object=m.object) for m in rel.mods],
            synsets=list(rel.synsets),
        )
    for key, value in graph.extras.items():
        scalar = msg.extras[key]
        if isinstance(value, bool):
            scalar.bool_value = value
        elif isinstance(value, int):
            scalar.int_value = value
        elif isinstance(value, float):
            scalar.double_value = value
        else:
            scalar.string_value = str(value)
    return msg


def subgraph_from_proto(ref: scene_pb2.SubgraphRef, field: str = "subgraph") -> Subgraph:
    """The subgraph a request names, by key or by parts; rule violations name the field."""
    kind = ref.WhichOneof("kind")
    try:
        if kind == "key":
            require_text(ref.key, f"{field}.key")
            return Subgraph.from_key(ref.key)
        if kind == "subgraph":
            return _subgraph_from_parts(ref.subgraph, f"{field}.subgraph")
    except SubgraphError as exc:
        raise InvalidArgument.field(f"{field}.{kind}", str(exc)) from exc
    raise InvalidArgument.field(field, "set either a key or the subgraph's parts")


def _subgraph_from_parts(msg: scene_pb2.Subgraph, field: str) -> Subgraph:
    for name, parts in (
        ("objects", msg.objects),
        ("relations", msg.relations),
        ("relmods", msg.relmods),
    ):
        if len(parts) > MAX_SUBGRAPH_PARTS:
            raise InvalidArgument.field(
                f"{field}.{name}", f"has {len(parts)} entries (at most {MAX_SUBGRAPH_PARTS})"
            )
    violations: list[FieldViolation] = []
    for i, o in enumerate(msg.objects):
        violations += check_text(o.name, f"{field}.objects[{i}].name")
        if o.HasField("attribute"):
            violations += check_text(o.attribute, f"{field}.objects[{i}].attribute")
    for j, r in enumerate(msg.relations):
        violations += check_text(r.name, f"{field}.relations[{j}].name")
    for k, m in enumerate(msg.relmods):
        violations += check_text(m.name, f"{field}.relmods[{k}].name")
    if violations:
        raise InvalidArgument(violations)
    return Subgraph.build(
        objects=[
            SubgraphObject(o.name, o.attribute if o.HasField("attribute") else None)
            for o in msg.objects
        ],
        relations=[SubgraphRelation(r.name, r.subject, r.object) for r in msg.relations],
        relmods=[SubgraphRelMod(m.name, m.relation, m.object) for m in msg.relmods],
    )


def subgraph_to_proto(g: Subgraph) -> scene_pb2.Subgraph:
    """A subgraph in canonical order with its key, shape and text."""
    msg = scene_pb2.Subgraph(key=g.key, shape=g.shape, text=describe(g))
    for obj in g.objects:
        out = msg.objects.add(name=obj.name)
        if obj.attribute is not None:
            out.attribute = obj.attribute
    msg.relations.extend(
        scene_pb2.SubgraphRelation(name=r.name, subject=r.subject, object=r.object)
        for r in g.relations
    )
    msg.relmods.extend(
        scene_pb2.SubgraphRelMod(name=m.name, relation=m.relation, object=m.object)
        for m in g.relmods
    )
    return msg


def subgraphs_to_proto(subgraphs: Iterable[Subgraph]) -> list[scene_pb2.Subgraph]:
    return [subgraph_to_proto(g) for g in subgraphs]


def _argument(argument: Any) -> dict[str, Any]:
    if isinstance(argument, list):
        return {"program": {"steps": [_step(s) for s in argument]}}
    if isinstance(argument, int) and not isinstance(argument, bool):
        return {"number": argument}
    return {"text": str(argument)}


def _step(step: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "operation": str(step["operation"]),
        "arguments": [_argument(a) for a in step.get("arguments", ())],
        "dependencies": step.get("dependencies", ()),
    }


def _answer(answer: Any) -> dict[str, Any]:
    if isinstance(answer, bool):
        return {"bool_value": answer}
    if isinstance(answer, int):
        return {"number_value": answer}
    return {"text_value": str(answer)}


def example_fields(example: ExampleRecord) -> dict[str, Any]:
    """One example of the question engine (docs/questions.md §4) as the keyword arguments of an
    ``Example`` message: nested dicts and lists, which protobuf turns into sub-messages in one
    constructor call. Setting each field from Python instead cost ~40 µs per example, most of a
    GenerateQuestions call's service overhead (``benchmarks/bench_service.py``)."""
    signatures = example.get("signatures", {})
    scenes = example["scenes"]
    return {
        "qid": example["qid"],
        "utterance": example["utterance"],
        "scenes": scenes,
        "answer": _answer(example["answer"]),
        "pattern_name": example["pattern_name"],
        "program": {"steps": [_step(s) for s in example["program"]]},
        "properties": [str(p) for p in example.get("properties", ())],
        "provenance": {
            "source_image": example["source_image"],
            "subgraphs": {str(k): str(v) for k, v in example.get("subgraphs", {}).items()},
            "signatures": [
                {"image_id": image_id, "signatures": signatures.get(image_id, ())}
                for image_id in scenes
            ],
            "seed": int(example["seed"]),
            "generator_version": example["generator_version"],
            "template": example.get("template", ""),
            "paper_template": example.get("paper_template", ""),
            "answer_type": example.get("answer_type", ""),
            "split": example.get("split", ""),
            "structure": example.get("structure", ()),
        },
    }


def example_to_proto(example: ExampleRecord) -> questions_pb2.Example:
    """One example of the question engine as a message (see :func:`example_fields`)."""
    return questions_pb2.Example(**example_fields(example))


# ---------------------------------------------------------------------- page tokens

MAX_TOKEN = 8192


def encode_page_token(state: dict[str, Any]) -> str:
    """An opaque page token of ``state`` (see :func:`decode_page_token`)."""
    raw = json.dumps(state, sort_keys=True, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_page_token(
    token: str, bound: dict[str, Any], field: str = "page_token"
) -> dict[str, Any]:
    """The state in ``token``; it must have been issued for the same ``bound`` request fields.

    A token is URL-safe base64 of a small JSON object. It is not a secret and not signed: a
    forged token can only ask for another page of data the caller may read anyway; what matters
    is that a token from one query is refused for another (``INVALID_ARGUMENT`` naming
    ``page_token``)."""
    if not token:
        return {}
    if len(token) > MAX_TOKEN:
        raise InvalidArgument.field(field, "is too long to be a page token")
    try:
        padded = token + "=" * (-len(token) % 4)
        state = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error) as exc:
        raise InvalidArgument.field(field, "is not a page token issued by this service") from exc
    if not isinstance(state, dict):
        raise InvalidArgument.field(field, "is not a page token issued by this service")
    for key, value in bound.items():
        if state.get(key) != value:
            raise InvalidArgument.field(
                field, f"was issued for a different {key}; page tokens only continue their query"
            )
    return state


# -- request sizes -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RequestLimits:
    """The size checks of one server (its settings): page sizes, batch sizes, subgraph caps.

    Every RPC checks request sizes the same way, beside the other field checks: the limits come
    from the ``COVR_SERVICE_*`` settings; a value over a limit is a bad field
    (``INVALID_ARGUMENT`` naming it) rather than a silently shortened answer, and 0 means "the
    server's default", as the proto comments promise.
    """

    settings: ServiceSettings

    def page_size(self, requested: int, field: str = "page_size") -> int:
        """The page size to use: the default for 0, the request's value up to the maximum."""
        if requested == 0:
            return self.settings.service_page_size
        if requested > self.settings.service_max_page_size:
            raise InvalidArgument.field(
                field, f"{requested} is larger than {self.settings.service_max_page_size}"
            )
        return requested

    def batch(self, count: int, field: str) -> None:
        """A batch request (pairs, queries) holds at least one and at most a page of entries."""
        if count == 0:
            raise InvalidArgument.field(field, "must not be empty")
        if count > self.settings.service_max_page_size:
            raise InvalidArgument.field(
                field, f"has {count} entries (at most {self.settings.service_max_page_size})"
            )

    def max_subgraphs(self, requested: int) -> int:
        """How many subgraphs of an image a request may use: the cap for 0, else up to it."""
        cap = self.settings.service_max_subgraphs
        if requested > cap:
            raise InvalidArgument.field("max_subgraphs", f"{requested} is larger than {cap}")
        return requested or cap
