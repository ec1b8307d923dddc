"""The in-memory scene graph: what loaders produce, the writer stores and readers get back.

A scene graph is kept in one *canonical* form (objects sorted by id, relations sorted by id,
rel-mods sorted by id) so that two graphs with the same content compare equal with ``==``
whatever order a file or a database returned them in. That equality is what the idempotence
and round-trip tests of the loaders rely on.

This module is the bottom room of the service (DESIGN.md §1): it imports nothing from the
graph store or the loaders.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from covr.errors import CovrError

Number = int | float
ExtraValue = str | int | float | bool

CORE_IMAGE_FIELDS = frozenset({"id", "source", "split", "original_id", "width", "height"})
"""Image properties owned by the model; ``extras`` may not reuse these names."""

_EXTRA_KEY = re.compile(r"^[a-z][a-z0-9_]{0,62}$")
_SOURCE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


def _number_key(digits: str) -> tuple[int, int, str]:
    """Digits ordered by value without ``int()``: Python refuses to convert more than 4,300
    digits, and an all-digit id that long made loads crash with a traceback (issue 21)."""
    significant = digits.lstrip("0") or "0"
    return (1, len(significant), significant)


def natural_key(value: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key that orders ``"2" < "10"`` and mixes digits and text without type errors."""
    if value.isdecimal():
        return (_number_key(value),)
    head, dot, tail = value.partition(".")
    if dot and head.isdecimal() and tail.isdecimal():  # GQA relation ids "<object>.<index>"
        return (_number_key(head), (0, 0, "."), _number_key(tail))
    parts = re.split(r"(\d+)", value)
    return tuple(_number_key(p) if p.isdecimal() else (0, 0, p) for p in parts if p)


def image_key(source: str, original_id: str) -> str:
    """The globally unique image id: GQA ids are Visual Genome ids, so the source is part of it."""
    return f"{source}:{original_id}"


@dataclass(frozen=True, slots=True)
class Box:
    """An axis-aligned bounding box in pixels (``x``, ``y`` = top-left corner)."""

    x: Number
    y: Number
    w: Number
    h: Number

    @property
    def area(self) -> float:
        return float(self.w) * float(self.h)

    def intersection(self, other: Box) -> float:
        """The area this box shares with ``other`` (0 when they do not overlap)."""
        w = min(self.x + self.w, other.x + other.w) - max(self.x, other.x)
        h = min(self.y + self.h, other.y + other.h) - max(self.y, other.y)
        return float(w) * float(h) if w > 0 and h > 0 else 0.0

    def overlaps(self, other: Box) -> bool:
        """Whether the two boxes share any area."""
        return self.intersection(other) > 0


@dataclass(frozen=True, slots=True)
class Object:
    """One annotated object of an image.

    ``id`` is the object's id in its source file (unique within the image); ``names`` keeps the
    alternative names Visual Genome lists after the first; ``synsets`` are WordNet/imSitu noun ids.
    """

    id: str
    name: str
    attributes: tuple[str, ...] = ()
    box: Box | None = None
    synsets: tuple[str, ...] = ()
    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RelMod:
    """A role modifier hanging off a relation (imSitu: ``onto`` SURFACE, ``using`` TOOL).

    ``id`` is unique within its relation (imSitu uses the role name); ``object`` is an object id.
    """

    id: str
    name: str
    object: str


@dataclass(frozen=True, slots=True)
class Relation:
    """A directed relation ``subject -name-> object`` between two objects of one image."""

    id: str
    name: str
    subject: str
    object: str
    mods: tuple[RelMod, ...] = ()
    synsets: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SceneGraph:
    """One image with its objects and relations, plus where it came from.

    Build instances with :meth:`build` (or :func:`canonical`) so the canonical ordering holds;
    ``extras`` carries optional per-source image properties (GQA ``location``/``weather``,
    imSitu ``verb``).
    """

    source: str
    original_id: str
    split: str
    objects: tuple[Object, ...] = ()
    relations: tuple[Relation, ...] = ()
    width: Number | None = None
    height: Number | None = None
    extras: Mapping[str, ExtraValue] = field(default_factory=dict)

    @property
    def image_id(self) -> str:
        """The globally unique id stored as ``Image.id``."""
        return image_key(self.source, self.original_id)

    @classmethod
    def build(
        cls,
        *,
        source: str,
        original_id: str,
        split: str,
        objects: Iterable[Object] = (),
        relations: Iterable[Relation] = (),
        width: Number | None = None,
        height: Number | None = None,
        extras: Mapping[str, ExtraValue] | None = None,
    ) -> SceneGraph:
        """A scene graph in canonical order (see the module docstring)."""
        return canonical(
            cls(
                source=source,
                original_id=original_id,
                split=split,
                objects=tuple(objects),
                relations=tuple(relations),
                width=width,
                height=height,
                extras=dict(extras or {}),
            )
        )

    def object_by_id(self) -> dict[str, Object]:
        """Objects indexed by their id."""
        return {o.id: o for o in self.objects}

    def counts(self) -> dict[str, int]:
        """Sizes used by load summaries."""
        return {
            "objects": len(self.objects),
            "attributes": sum(len(o.attributes) for o in self.objects),
            "relations": len(self.relations),
            "relmods": sum(len(r.mods) for r in self.relations),
        }


def canonical(graph: SceneGraph) -> SceneGraph:
    """The same graph with objects, relations and rel-mods sorted by id."""
    relations = tuple(
        r
        if len(r.mods) < 2
        else Relation(
            id=r.id,
            name=r.name,
            subject=r.subject,
            object=r.object,
            mods=tuple(sorted(r.mods, key=lambda m: natural_key(m.id))),
            synsets=r.synsets,
        )
        for r in sorted(graph.relations, key=lambda r: natural_key(r.id))
    )
    return SceneGraph(
        source=graph.source,
        original_id=graph.original_id,
        split=graph.split,
        objects=tuple(sorted(graph.objects, key=lambda o: natural_key(o.id))),
        relations=relations,
        width=graph.width,
        height=graph.height,
        extras=dict(sorted(graph.extras.items())),
    )


class SceneGraphError(CovrError):
    """A scene graph breaks an invariant; ``field`` names the offending part (a path)."""


def _check_name(value: object, where: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise SceneGraphError(where, f"must be a non-empty string, got {value!r:.60}")
    if "\x00" in value:
        raise SceneGraphError(where, "may not contain a NUL character")
    # FalkorDB 4.16's indexes cannot find a string that starts or ends with whitespace or holds
    # U+0001, and its unique-constraint check crashes the server on one (measured; the readers
    # trim names, so only scene graphs built elsewhere, such as imports, can have them)
    if value != value.strip():
        raise SceneGraphError(where, f"may not start or end with whitespace: {value!r:.60}")
    if "\x01" in value:
        raise SceneGraphError(where, "may not contain the control character U+0001")


def _check_number(value: object, where: str, *, optional: bool = True) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SceneGraphError(where, f"must be a number, got {value!r:.60}")
    if value != value or value in (float("inf"), float("-inf")):
        raise SceneGraphError(where, f"must be finite, got {value!r}")


def validate(graph: SceneGraph) -> None:
    """Raise :class:`SceneGraphError` for the first broken invariant.

    Invariants: non-empty names everywhere, unique object ids, unique relation ids, unique
    rel-mod ids per relation, every relation / rel-mod end is an object of this image, numbers
    finite, ``extras`` keys are lower-case identifiers that do not shadow core image fields.
    """
    if not isinstance(graph.source, str) or not _SOURCE.match(graph.source):
        raise SceneGraphError(
            "source", f"must be a short lower-case identifier: {graph.source!r:.60}"
        )
    _check_name(graph.original_id, "id")
    _check_name(graph.split, "split")
    _check_number(graph.width, "width")
    _check_number(graph.height, "height")
    for key, value in graph.extras.items():
        # field paths and messages quote input clipped: they travel in problem lists and error
        # details, and a 9 MiB key or name must not make the answer itself too large (issue 40)
        where = f"extras.{key[:40]}"
        if not _EXTRA_KEY.match(key) or key in CORE_IMAGE_FIELDS:
            raise SceneGraphError(where, "is not an allowed image property name")
        if not isinstance(value, str | int | float | bool):
            raise SceneGraphError(where, f"must be a scalar, got {value!r:.60}")
        if isinstance(value, float):
            _check_number(value, where)
    seen: set[str] = set()
    for obj in graph.objects:
        where = f"objects[{obj.id[:40]!r}]"
        _check_name(obj.id, f"{where}.id")
        if obj.id in seen:
            raise SceneGraphError(where, "duplicate object id")
        seen.add(obj.id)
        _check_name(obj.name, f"{where}.name")
        for i, attr in enumerate(obj.attributes):
            _check_name(attr, f"{where}.attributes[{i}]")
        for i, extra in enumerate((*obj.synsets, *obj.names)):
            _check_name(extra, f"{where}.synsets/names[{i}]")
        if obj.box is not None:
            for part in ("x", "y", "w", "h"):
                _check_number(getattr(obj.box, part), f"{where}.{part}", optional=False)
    relation_ids: set[str] = set()
    for rel in graph.relations:
        where = f"relations[{rel.id[:40]!r}]"
        _check_name(rel.id, f"{where}.id")
        if rel.id in relation_ids:
            raise SceneGraphError(where, "duplicate relation id")
        relation_ids.add(rel.id)
        _check_name(rel.name, f"{where}.name")
        for end, value in (("subject", rel.subject), ("object", rel.object)):
            if value not in seen:
                raise SceneGraphError(f"{where}.{end}", f"object id {value!r:.60} does not exist")
        mod_ids: set[str] = set()
        for mod in rel.mods:
            mwhere = f"{where}.mods[{mod.id[:40]!r}]"
            _check_name(mod.id, f"{mwhere}.id")
            if mod.id in mod_ids:
                raise SceneGraphError(mwhere, "duplicate rel-mod id")
            mod_ids.add(mod.id)
            _check_name(mod.name, f"{mwhere}.name")
            if mod.object not in seen:
                raise SceneGraphError(
                    f"{mwhere}.object", f"object id {mod.object!r:.60} does not exist"
                )


def to_gqa_dict(graph: SceneGraph, *, for_file: bool = False) -> dict[str, Any]:
    """The graph in the shape of one GQA ``sceneGraphs.json`` record: the one GQA serializer.

    By default (``covr show --json``) with everything the graph holds: its ids first, each
    object's box where it has one, synsets and alternative names, and rel-mods, which GQA has no
    place for, under each relation as ``mods``. With ``for_file`` exactly what a GQA file holds
    and :func:`covr_loaders.gqa.convert` reads back (:func:`covr_loaders.gqa.to_record`: the
    synthetic generator and tests write with it): no ids (the file's key is the original id), a
    box on every object (zeros where the graph has none: GQA requires one), no other fields.
    """
    objects: dict[str, Any] = {}
    for obj in graph.objects:
        entry: dict[str, Any] = {"name": obj.name}
        box = obj.box or (Box(0, 0, 0, 0) if for_file else None)
        if box is not None:
            entry.update(x=box.x, y=box.y, w=box.w, h=box.h)
        entry["attributes"] = list(obj.attributes)
        entry["relations"] = []
        if obj.synsets and not for_file:
            entry["synsets"] = list(obj.synsets)
        if obj.names and not for_file:
            entry["names"] = list(obj.names)
        objects[obj.id] = entry
    for rel in graph.relations:
        item: dict[str, Any] = {"name": rel.name, "object": rel.object}
        if rel.mods and not for_file:
            item["mods"] = [{"name": m.name, "object": m.object, "id": m.id} for m in rel.mods]
        objects[rel.subject]["relations"].append(item)
    record: dict[str, Any] = {}
    if not for_file:
        record.update(
            id=graph.image_id,
            source=graph.source,
            split=graph.split,
            original_id=graph.original_id,
        )
    if graph.width is not None:
        record["width"] = graph.width
    if graph.height is not None:
        record["height"] = graph.height
    record.update(graph.extras)
    record["objects"] = objects
    return record
