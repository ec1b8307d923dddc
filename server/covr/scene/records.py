"""Scene graphs as the plain maps the graph store holds, and back.

The writer sends one map per image (:func:`to_store_row`) through ``cypher/load/create_images``;
``cypher/match/scene_graph`` returns the stored properties, which :func:`from_store_record` turns
back into the same :class:`SceneGraph`. Both directions live here, with no store in sight, so that
every room that reads scene graphs (related images, questions) uses one conversion and the
round-trip can be tested without a database.

Keys (DESIGN.md §2): ``Image.id = source:original_id``, ``Object.key = Image.id:object_id``,
``Relation.key = Image.id:r:relation_id``, ``RelMod.key = Relation.key:relmod_id``. They are
deterministic, so re-loading a file produces the same keys.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from covr.scene.model import (
    CORE_IMAGE_FIELDS,
    Box,
    ExtraValue,
    Number,
    Object,
    Relation,
    RelMod,
    SceneGraph,
)

KEY_SEP = ":"
RELATION_SEP = ":r:"
"""Separators of the derived keys; ``cypher/load/create_images`` receives them as parameters."""


def object_key(image_id: str, object_id: str) -> str:
    """``Object.key`` of an object."""
    return f"{image_id}{KEY_SEP}{object_id}"


def relation_key(image_id: str, relation_id: str) -> str:
    """``Relation.key`` of a relation (the ``r`` keeps it apart from object keys)."""
    return f"{image_id}{RELATION_SEP}{relation_id}"


def relmod_key(image_id: str, relation_id: str, relmod_id: str) -> str:
    """``RelMod.key`` of a rel-mod."""
    return f"{relation_key(image_id, relation_id)}{KEY_SEP}{relmod_id}"


MAX_STORED_FLOAT = 1.79769313486231e308
"""The largest double with 15 significant digits: larger ones print as infinity on FalkorDB."""


def stored_number(value: Number) -> Number:
    """A number as both stores return it: integers exact, floats to 15 significant digits.

    FalkorDB prints every double of a reply with 15 significant digits (``%.15g``), Neo4j returns
    it exactly, so a double with 16 or 17 digits came back different from each store (and
    changed on FalkorDB). A double rounded to 15 digits survives both (any 15-digit decimal
    round-trips through a double), so this is applied on the way in; values that already have at
    most 15 digits (every integer, 0.5, 12.25, ...) are unchanged. The few doubles beyond
    :data:`MAX_STORED_FLOAT` would print as infinity and are clamped to it.
    """
    if type(value) is not float:
        return value
    rounded = float(f"{value:.15g}")
    if math.isinf(rounded):
        return math.copysign(MAX_STORED_FLOAT, value)
    return rounded


def _stored_extra(value: ExtraValue) -> ExtraValue:
    return stored_number(value) if type(value) is float else value


def image_properties(graph: SceneGraph) -> dict[str, Any]:
    """Properties of the ``(:Image)`` node: core fields plus extras, ``None`` left out."""
    props: dict[str, Any] = {
        "id": graph.image_id,
        "source": graph.source,
        "split": graph.split,
        "original_id": graph.original_id,
    }
    if graph.width is not None:
        props["width"] = stored_number(graph.width)
    if graph.height is not None:
        props["height"] = stored_number(graph.height)
    props.update({k: _stored_extra(v) for k, v in graph.extras.items()})
    return props


OBJECT_FIELDS = ("id", "name", "attributes", "x", "y", "w", "h", "synsets", "names")
"""Positions in an object row of :func:`to_store_row` (``cypher/load/create_images`` reads them)."""


def to_store_row(graph: SceneGraph) -> dict[str, Any]:
    """One image as ``{id, image, objects, relations}`` for ``cypher/load/create_images``.

    Objects and relations are *lists* in fixed positions rather than maps, and keys are derived
    from ids in the statement: the parameters of a 500-image batch are rendered into query text
    on every write, and this halves that text and the time spent rendering it. Relations and
    rel-mods refer to objects by their position in ``objects``, so the statement connects nodes
    it has just created without an index lookup per edge (the measured bottleneck of
    relationship creation, cypher-portable.md).

    - object: ``[id, name, attributes, x, y, w, h, synsets or null, names or null]``
    - relation: ``[subject position, object position, id, name, synsets or null, mods]``
    - rel-mod: ``[object position, id, name]``
    """
    position: dict[str, int] = {}
    objects: list[list[Any]] = []
    for index, obj in enumerate(graph.objects):
        position[obj.id] = index
        box = obj.box
        objects.append(
            [
                obj.id,
                obj.name,
                list(obj.attributes),
                stored_number(box.x) if box else None,
                stored_number(box.y) if box else None,
                stored_number(box.w) if box else None,
                stored_number(box.h) if box else None,
                list(obj.synsets) if obj.synsets else None,
                list(obj.names) if obj.names else None,
            ]
        )
    relations = [
        [
            position[rel.subject],
            position[rel.object],
            rel.id,
            rel.name,
            list(rel.synsets) if rel.synsets else None,
            [[position[m.object], m.id, m.name] for m in rel.mods],
        ]
        for rel in graph.relations
    ]
    return {
        "id": graph.image_id,
        "image": image_properties(graph),
        "objects": objects,
        "relations": relations,
    }


def view_from_store_record(record: Mapping[str, Any]) -> SceneGraph:
    """The partial scene graph of one row of ``cypher/match/scene_views``: objects with their
    ids, names and attributes, relations as (subject, name, object) with no id or rel-mods,
    and no image size or extras. Only for readers of exactly those fields (the presence
    model's features); it is never cached or returned as an image's scene graph."""
    source, _, original_id = str(record["id"]).partition(":")
    objects = [
        Object(id=str(o["id"]), name=str(o["name"]), attributes=_strings(o.get("attributes")))
        for o in record.get("objects") or []
        if o and o.get("id") is not None
    ]
    relations = [
        Relation(id="", name=str(r["name"]), subject=str(r["subject"]), object=str(r["object"]))
        for r in record.get("relations") or []
        if r and r.get("name") is not None
    ]
    return SceneGraph(
        source=source,
        original_id=original_id,
        split=str(record.get("split") or ""),
        objects=tuple(objects),
        relations=tuple(relations),
    )


def _strings(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    return tuple(str(v) for v in value)


def _number(value: Any) -> Number | None:
    if value is None or isinstance(value, int | float):
        return value
    raise ValueError(f"expected a number, got {value!r}")


def _object(props: Mapping[str, Any]) -> Object:
    box = None
    if props.get("x") is not None:
        coords = [_number(props.get(k)) for k in ("x", "y", "w", "h")]
        if any(c is None for c in coords):
            raise ValueError(f"object {props.get('key')!r} has an incomplete box")
        box = Box(*(c for c in coords if c is not None))
    return Object(
        id=str(props["id"]),
        name=str(props["name"]),
        attributes=_strings(props.get("attributes")),
        box=box,
        synsets=_strings(props.get("synsets")),
        names=_strings(props.get("names")),
    )


def from_store_record(record: Mapping[str, Any]) -> SceneGraph:
    """The scene graph from one row of ``cypher/match/scene_graph``.

    ``record`` holds ``image`` (the Image properties), ``objects`` (a list of Object property
    maps) and ``relations`` (maps with ``props``, ``subject`` and ``object`` object ids, and
    ``mods``: maps with ``props`` and ``object``).
    """
    image = dict(record["image"])
    extras: dict[str, ExtraValue] = {k: v for k, v in image.items() if k not in CORE_IMAGE_FIELDS}
    objects = [_object(o) for o in record.get("objects") or [] if o]
    relations = []
    for rel in record.get("relations") or []:
        if not rel or not rel.get("props"):
            continue
        props = rel["props"]
        mods = [
            RelMod(id=str(m["props"]["id"]), name=str(m["props"]["name"]), object=str(m["object"]))
            for m in rel.get("mods") or []
            if m and m.get("props")
        ]
        relations.append(
            Relation(
                id=str(props["id"]),
                name=str(props["name"]),
                subject=str(rel["subject"]),
                object=str(rel["object"]),
                mods=tuple(mods),
                synsets=_strings(props.get("synsets")),
            )
        )
    return SceneGraph.build(
        source=str(image["source"]),
        original_id=str(image["original_id"]),
        split=str(image["split"]),
        objects=objects,
        relations=relations,
        width=_number(image.get("width")),
        height=_number(image.get("height")),
        extras=extras,
    )
