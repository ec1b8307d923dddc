"""GQA ``{train,val}_sceneGraphs.json``: image id → {width, height, objects, location?, weather?}.

Each object is ``{name, x, y, w, h, attributes: [str], relations: [{name, object}]}``; a relation
is directed from the object that lists it (the owner) to ``object``. GQA has no relation ids, so a
relation's id is ``<owner id>.<index in the owner's list>``: deterministic, so re-loads produce the
same keys. ``to the left of`` / ``to the right of`` are stored unless the setting
``COVR_LOAD_GQA_LEFT_RIGHT`` is off (they are filtered later, at subgraph enumeration).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from covr.scene.model import Box, Object, Relation, SceneGraph, to_gqa_dict
from covr_loaders.errors import Problem, RecordError
from covr_loaders.fields import (
    as_id,
    as_list,
    as_mapping,
    as_name,
    as_number,
    name_list,
    optional_number,
    required,
)
from covr_loaders.jsonio import ByteCounter, read_records

SOURCE = "gqa"
LEFT_RIGHT = frozenset({"to the left of", "to the right of"})
_EXTRAS = ("location", "weather")


@dataclass(frozen=True)
class GqaOptions:
    """Conversion choices (from settings)."""

    keep_left_right: bool = True


def _clean_name(value: Any) -> str | None:
    """The trimmed name, or ``None`` when it needs the checked path (which names the error)."""
    if type(value) is not str:
        return None
    text = value.strip()
    return text if text and "\x00" not in text and "\x01" not in text else None


def _fast_object(object_id: str, obj: Any) -> Object | None:
    """The common, well-formed object without per-field helper calls; ``None`` if in doubt.

    GQA files hold millions of objects, and this path is about twice as fast as the checked one.
    Anything unusual (floats, missing fields, wrong types) goes through the checked path, which
    produces the error message, so both paths accept and reject exactly the same input.
    """
    if type(obj) is not dict:
        return None
    name = _clean_name(obj.get("name"))
    x, y, w, h = obj.get("x"), obj.get("y"), obj.get("w"), obj.get("h")
    if name is None or not (type(x) is type(y) is type(w) is type(h) is int):
        return None
    raw_attrs = obj.get("attributes")
    attributes: tuple[str, ...] = ()
    if raw_attrs is not None:
        if type(raw_attrs) is not list:
            return None
        cleaned = [_clean_name(a) for a in raw_attrs]
        if None in cleaned:
            return None
        attributes = tuple(dict.fromkeys(a for a in cleaned if a is not None))
    return Object(id=object_id, name=name, attributes=attributes, box=Box(x, y, w, h))


def _checked_object(object_id: str, raw: Any, where: str) -> Object:
    obj = as_mapping(raw, where)
    box = Box(*(as_number(required(obj, k, where), f"{where}.{k}") for k in "xywh"))
    return Object(
        id=object_id,
        name=as_name(required(obj, "name", where), f"{where}.name"),
        attributes=name_list(obj.get("attributes"), f"{where}.attributes"),
        box=box,
    )


def convert(
    image_id: str, record: Any, split: str, options: GqaOptions = GqaOptions()
) -> SceneGraph:
    """One GQA record as a scene graph; raises :class:`RecordError` naming the bad field."""
    image = as_mapping(record, "<record>")
    raw_objects = as_mapping(required(image, "objects", ""), "objects")
    objects: list[Object] = []
    relations: list[Relation] = []
    for raw_id, raw in raw_objects.items():
        where = f"objects[{raw_id!r}]"
        object_id = as_id(raw_id, where)
        obj = _fast_object(object_id, raw) or _checked_object(object_id, raw, where)
        objects.append(obj)
        raw_relations = raw.get("relations") or []
        for index, rel in enumerate(as_list(raw_relations, f"{where}.relations")):
            name = _clean_name(rel.get("name")) if type(rel) is dict else None
            target = rel.get("object") if type(rel) is dict else None
            if name is None or type(target) is not str or not target.strip():
                rwhere = f"{where}.relations[{index}]"
                rel_map = as_mapping(rel, rwhere)
                name = as_name(required(rel_map, "name", rwhere), f"{rwhere}.name")
                target = as_id(required(rel_map, "object", rwhere), f"{rwhere}.object")
            target = target.strip()
            if target not in raw_objects:
                raise RecordError(
                    f"{where}.relations[{index}].object", f"object id {target!r} does not exist"
                )
            if not options.keep_left_right and name in LEFT_RIGHT:
                continue
            relations.append(
                Relation(id=f"{object_id}.{index}", name=name, subject=object_id, object=target)
            )
    extras: dict[str, str] = {}
    for key in _EXTRAS:
        if image.get(key) is not None:
            extras[key] = as_name(image[key], key)
    # No separate validate() here: every invariant it checks is already enforced above (names
    # and numbers by the field helpers, unique ids by construction, relation ends explicitly),
    # and GQA files are large enough for the second pass to cost a third of the reading time.
    return SceneGraph.build(
        source=SOURCE,
        original_id=as_id(image_id, "<image id>"),
        split=split,
        objects=objects,
        relations=relations,
        width=optional_number(image, "width", ""),
        height=optional_number(image, "height", ""),
        extras=extras,
    )


def read(
    path: Path, *, split: str, counter: ByteCounter, options: GqaOptions = GqaOptions()
) -> Iterator[SceneGraph | Problem]:
    """Stream one GQA scene-graph file: a scene graph per valid record, a problem per bad one."""
    return read_records(
        path, "object", counter, lambda key, value: convert(key, value, split, options)
    )


def to_record(graph: SceneGraph) -> tuple[str, Mapping[str, Any]]:
    """A scene graph in GQA's file format, with its key (the synthetic generator and tests write
    with it): :func:`covr.scene.model.to_gqa_dict`'s file form, which :func:`convert` reads."""
    return graph.original_id, to_gqa_dict(graph, for_file=True)
