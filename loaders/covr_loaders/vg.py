"""Visual Genome: ``scene_graphs.json``, or ``objects.json`` + ``attributes.json`` +
``relationships.json`` given together.

``scene_graphs.json`` is a list of ``{image_id, objects: [{object_id, names: [..], synsets,
x, y, w, h, attributes?}], relationships: [{relationship_id, predicate, subject_id, object_id,
synsets}]}``. The split files list the same images in the same order; they are merged image by
image while streaming (an image missing from ``attributes.json`` or ``relationships.json`` simply
has none). Relationships in ``relationships.json`` embed their subject and object; objects that
``objects.json`` does not list are added from there.

Names, attributes and predicates are normalized (lower case, trimmed, single spaces); an object's
name is ``names[0]``, the other names and the synsets are kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from covr.scene.model import Box, Object, Relation, SceneGraph, SceneGraphError, validate
from covr_loaders.errors import REST_OF_FILE, Problem, RecordError
from covr_loaders.fields import (
    as_id,
    as_list,
    as_mapping,
    as_number,
    name_list,
    normalize,
    optional_number,
    required,
)
from covr_loaders.jsonio import ByteCounter, iter_entries, read_records

SOURCE = "vg"
SPLIT_FILES = ("objects.json", "attributes.json", "relationships.json")


def _names(obj: Mapping[str, Any], where: str) -> tuple[str, ...]:
    raw = obj.get("names")
    if raw is None and "name" in obj:
        raw = [obj["name"]]
    names = name_list(required({"names": raw}, "names", where), f"{where}.names", lower=True)
    if not names:
        raise RecordError(f"{where}.names", "must hold at least one name")
    return names


def _object(obj_raw: Any, where: str, attributes: tuple[str, ...] = ()) -> Object:
    obj = as_mapping(obj_raw, where)
    object_id = as_id(required(obj, "object_id", where), f"{where}.object_id")
    names = _names(obj, where)
    box = None
    if obj.get("x") is not None:
        box = Box(*(as_number(required(obj, k, where), f"{where}.{k}") for k in "xywh"))
    own = name_list(obj.get("attributes"), f"{where}.attributes", lower=True)
    merged = tuple(dict.fromkeys((*own, *attributes)))
    return Object(
        id=object_id,
        name=names[0],
        attributes=merged,
        box=box,
        synsets=name_list(obj.get("synsets"), f"{where}.synsets"),
        names=names[1:],
    )


def _end(rel: Mapping[str, Any], end: str, where: str) -> tuple[str, Any]:
    """Object id of a relationship end, and the embedded object when there is one."""
    if rel.get(f"{end}_id") is not None:
        return as_id(rel[f"{end}_id"], f"{where}.{end}_id"), None
    embedded = as_mapping(required(rel, end, where), f"{where}.{end}")
    return as_id(required(embedded, "object_id", f"{where}.{end}"), f"{where}.{end}.object_id"), (
        embedded
    )


def convert(
    record: Any,
    split: str,
    *,
    attributes: Any = None,
    relationships: Any = None,
) -> SceneGraph:
    """One image as a scene graph; ``attributes``/``relationships`` come from the split files."""
    data = as_mapping(record, "<record>")
    image_id = as_id(required(data, "image_id", ""), "image_id")
    objects: dict[str, Object] = {}
    extra_attrs: dict[str, tuple[str, ...]] = {}
    if attributes is not None:
        for i, item in enumerate(as_list(attributes, "attributes")):
            where = f"attributes[{i}]"
            entry = as_mapping(item, where)
            oid = as_id(required(entry, "object_id", where), f"{where}.object_id")
            attrs = name_list(entry.get("attributes"), f"{where}.attributes", lower=True)
            extra_attrs[oid] = tuple(dict.fromkeys((*extra_attrs.get(oid, ()), *attrs)))
    for i, item in enumerate(as_list(required(data, "objects", ""), "objects")):
        where = f"objects[{i}]"
        obj = _object(item, where)
        if obj.id in objects:
            raise RecordError(f"{where}.object_id", f"duplicate object id {obj.id!r}")
        objects[obj.id] = obj
    raw_relations = relationships if relationships is not None else data.get("relationships")
    relations: list[Relation] = []
    for i, item in enumerate(as_list(raw_relations or [], "relationships")):
        where = f"relationships[{i}]"
        rel = as_mapping(item, where)
        ends: list[str] = []
        for end in ("subject", "object"):
            oid, embedded = _end(rel, end, where)
            if oid not in objects and embedded is not None:
                objects[oid] = _object(embedded, f"{where}.{end}")
            if oid not in objects:
                raise RecordError(f"{where}.{end}_id", f"object id {oid!r} does not exist")
            ends.append(oid)
        raw_predicate = required(rel, "predicate", where)
        if not isinstance(raw_predicate, str) or not normalize(raw_predicate):
            raise RecordError(
                f"{where}.predicate", f"must be a non-empty string: {raw_predicate!r}"
            )
        predicate = normalize(raw_predicate)
        rid = rel.get("relationship_id")
        relations.append(
            Relation(
                id=as_id(rid, f"{where}.relationship_id") if rid is not None else f"i{i}",
                name=predicate,
                subject=ends[0],
                object=ends[1],
                synsets=name_list(rel.get("synsets"), f"{where}.synsets"),
            )
        )
    for oid, attrs in extra_attrs.items():
        if oid not in objects:
            raise RecordError("attributes", f"object id {oid!r} does not exist")
        obj = objects[oid]
        merged = tuple(dict.fromkeys((*obj.attributes, *attrs)))
        objects[oid] = Object(obj.id, obj.name, merged, obj.box, obj.synsets, obj.names)
    graph = SceneGraph.build(
        source=SOURCE,
        original_id=image_id,
        split=split,
        objects=objects.values(),
        relations=relations,
        width=optional_number(data, "width", ""),
        height=optional_number(data, "height", ""),
    )
    try:
        validate(graph)
    except SceneGraphError as exc:
        raise RecordError(exc.field, exc.message) from exc
    return graph


def _record_name(value: Any, index: str) -> str:
    if isinstance(value, Mapping) and isinstance(value.get("image_id"), int | str):
        return str(value["image_id"])
    return f"#{index}"


def read(path: Path, *, split: str, counter: ByteCounter) -> Iterator[SceneGraph | Problem]:
    """Stream a ``scene_graphs.json`` file."""
    return read_records(
        path,
        "array",
        counter,
        lambda index, value: convert(value, split),
        lambda index, value: _record_name(value, index),
    )


@dataclass
class _Side:
    """A split file read in step with ``objects.json`` (one entry of look-ahead)."""

    path: Path
    key: str
    entries: Iterator[tuple[str, Any, int] | Problem]
    pending: tuple[str, Any, int] | None = None
    broken: Problem | None = None

    def take(self, image_id: str) -> Any:
        """This image's list from the side file, or ``None`` when the file has no entry for it."""
        if self.pending is None and self.broken is None:
            nxt = next(self.entries, None)
            if isinstance(nxt, Problem):
                self.broken = nxt
            else:
                self.pending = nxt
        if self.pending is None:
            return None
        _, value, _ = self.pending
        if isinstance(value, Mapping) and str(value.get("image_id")) == image_id:
            self.pending = None
            return value.get(self.key) or []
        return None


def read_split_files(
    paths: Mapping[str, Path], *, split: str, counter: ByteCounter
) -> Iterator[SceneGraph | Problem]:
    """Merge ``objects.json`` with ``attributes.json`` / ``relationships.json`` image by image."""
    objects_path = paths["objects.json"]
    sides = [
        _Side(paths[name], key, iter_entries(paths[name], "array", counter))
        for name, key in (
            ("attributes.json", "attributes"),
            ("relationships.json", "relationships"),
        )
        if name in paths
    ]
    attrs_side = next((s for s in sides if s.key == "attributes"), None)
    rels_side = next((s for s in sides if s.key == "relationships"), None)
    for entry in iter_entries(objects_path, "array", counter):
        if isinstance(entry, Problem):
            yield entry
            break
        index, value, offset = entry
        name = _record_name(value, index)
        try:
            attributes = attrs_side.take(name) if attrs_side else None
            relationships = rels_side.take(name) if rels_side else None
            yield convert(value, split, attributes=attributes, relationships=relationships)
        except RecordError as exc:
            yield Problem(str(objects_path), name, exc.field, exc.message, offset)
    for side in sides:
        if side.broken is not None:
            yield side.broken
        elif side.pending is not None:
            yield Problem(
                str(side.path),
                _record_name(side.pending[1], side.pending[0]),
                "image_id",
                "unmatched image: the split files must list images in the same order as "
                "objects.json; this and later entries were not used",
                side.pending[2],
            )
        else:
            leftover = next(side.entries, None)
            if leftover is not None:
                record = (
                    REST_OF_FILE
                    if isinstance(leftover, Problem)
                    else _record_name(leftover[1], leftover[0])
                )
                yield Problem(
                    str(side.path),
                    record,
                    "image_id",
                    "entries after the last image of objects.json were not used",
                )
