"""The objects of a set of images, prepared for program execution (DESIGN §1: the executor computes
answers over in-memory scene graphs of the chosen images, independently of the lookup that found
them).

Objects are numbered ``0..n-1`` in image order (the order the images were given) and then in each
scene graph's canonical object order, so an object set is a ``frozenset[int]`` and every result is
independent of hash seeds. Relations are indexed by subject.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

from covr.related.exclusivity import load_resource, normalize
from covr.scene.model import SceneGraph


@dataclass(frozen=True, slots=True)
class WorldObject:
    """One object of one image; ``attributes`` is the set of its attribute names."""

    image: str
    id: str
    name: str
    attributes: frozenset[str]


@dataclass(frozen=True, slots=True)
class WorldRelation:
    """``subject -name-> object`` with rel-mods ``(name, object)``; ends are world indices."""

    name: str
    subject: int
    object: int
    mods: tuple[tuple[str, int], ...] = ()


@dataclass
class World:
    """The objects and relations of the images a question is asked about.

    Object indices are integers unique within the world (with a :class:`PartsCache` they are
    assigned once per image and reused, so merging images copies no relation); answers never
    depend on their values.
    """

    images: tuple[str, ...]
    objects: dict[int, WorldObject] = field(default_factory=dict)
    by_name: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    out: dict[int, list[WorldRelation]] = field(default_factory=dict)

    @classmethod
    def of(cls, scenes: Iterable[SceneGraph], parts: PartsCache | None = None) -> World:
        """The world of ``scenes`` (in the given order); ``parts`` caches each image's share."""
        scenes = list(scenes)
        world = cls(images=tuple(s.image_id for s in scenes))
        if len(set(world.images)) != len(world.images):
            raise ValueError(f"an image is given twice: {world.images}")
        cache = parts if parts is not None else PartsCache()
        for scene in scenes:
            part = cache.get(scene)
            world.objects.update(part.objects)
            for name, indices in part.by_name.items():
                world.by_name[name].extend(indices)
            world.out.update(part.out)
        return world


@dataclass(frozen=True)
class _Parts:
    """One image's objects and relations, numbered from ``base``."""

    objects: dict[int, WorldObject]
    by_name: dict[str, list[int]]
    out: dict[int, list[WorldRelation]]


def _parts(scene: SceneGraph, base: int) -> _Parts:
    image_id = scene.image_id
    local: dict[str, int] = {}
    objects: dict[int, WorldObject] = {}
    by_name: dict[str, list[int]] = defaultdict(list)
    for obj in scene.objects:
        index = base + len(local)
        local[obj.id] = index
        by_name[obj.name].append(index)
        objects[index] = WorldObject(image_id, obj.id, obj.name, frozenset(obj.attributes))
    out: dict[int, list[WorldRelation]] = defaultdict(list)
    for rel in scene.relations:
        if rel.subject not in local or rel.object not in local:
            continue
        mods = tuple((m.name, local[m.object]) for m in rel.mods if m.object in local)
        out[local[rel.subject]].append(
            WorldRelation(rel.name, local[rel.subject], local[rel.object], mods)
        )
    return _Parts(objects, dict(by_name), dict(out))


class PartsCache:
    """A bounded cache of per-image world parts (generation reuses the same images a lot)."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._items: dict[str, _Parts] = {}
        self._next = 0

    def get(self, scene: SceneGraph) -> _Parts:
        key = scene.image_id
        part = self._items.get(key)
        if part is None:
            if len(self._items) >= self.size:
                self._items.pop(next(iter(self._items)))
            part = self._items[key] = _parts(scene, self._next)
            self._next += len(scene.objects)
        return part


@dataclass(frozen=True)
class AttributeTypes:
    """Attribute value -> attribute types (``color``, ``material``, ...), from a reviewed resource.

    Why a table: "What is the color of ..." needs to know which of an object's attributes are
    colors. The scales of ``covr/related/resources/attributes.json`` (the exclusivity model's) are
    the project's attribute categories; a value may belong to several (``silver``: color and
    material).
    """

    types_of: Mapping[str, tuple[str, ...]]

    def types(self, attribute: str) -> tuple[str, ...]:
        return self.types_of.get(normalize(attribute), ())

    def values(self, attributes: Iterable[str], attr_type: str) -> list[str]:
        """The attributes of the given type, sorted (for deterministic errors and answers)."""
        return sorted(a for a in attributes if attr_type in self.types(a))

    def all_types(self) -> tuple[str, ...]:
        return tuple(sorted({t for ts in self.types_of.values() for t in ts}))


@cache
def default_attribute_types() -> AttributeTypes:
    data = load_resource("attributes.json")
    out: dict[str, list[str]] = {}
    for scale in data.get("scales", []):
        category = str(scale["category"])
        for group in scale["groups"]:
            for value in group:
                kinds = out.setdefault(normalize(str(value)), [])
                if category not in kinds:
                    kinds.append(category)
    return AttributeTypes({k: tuple(v) for k, v in out.items()})
