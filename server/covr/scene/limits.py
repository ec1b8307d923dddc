"""How big a scene graph may be before it reaches the store: one check for every door.

The loaders, the ImportSceneGraphs RPC and any other writer call :meth:`SceneLimits.violation`
on each converted scene graph, so a file and a request meet the same rules (issue 21). Why
each limit exists:

- ids become unique-constrained keys (``source:image:r:relation:relmod``); FalkorDB 4.16.3
  crashes (SIGSEGV in ``EnforceUniqueEntity``) on a unique value of roughly 5,000 bytes (an
  Image.id of 4,995 ASCII bytes is stored, 5,003 crashes the server). With every id at most 256
  characters a key stays below 3,300 bytes even in 4-byte UTF-8;
- names, attributes and relation names are indexed and repeated in every question text;
- the counts bound one record's memory and the size of one write statement;
- a lone surrogate (``"\\ud800"`` in JSON) cannot be stored as UTF-8: the store would keep a
  ``?`` instead, silently changing the name;
- what the store's unique keys would reject must be rejected here, before anything is written
  (issue 40: three kinds passed ``--dry-run --strict`` and then failed the write): two objects,
  relations or rel-mods of one image with one id (the readers trim ids, so ``"1"`` and ``" 1"``
  are one); an object, relation or rel-mod id holding the key separator ``:``, since
  ``image:object`` keys are unambiguous only when the last ``:`` starts the object id (image
  ``k:x`` with object ``c`` and image ``k`` with object ``x:c`` would share a key); an integer
  outside 64 bits, which neither store can hold (``"width": 1e19``);
- NUL and U+0001 in any stored text: FalkorDB's indexes cannot find a string holding U+0001.

The values come from the settings (``COVR_LIMIT_*``: this is their section, built by
``covr.settings.Settings.limits``); the defaults are far above anything in GQA, Visual Genome or
imSitu.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from covr.scene.model import SceneGraph
from covr.scene.records import KEY_SEP

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
"""The integers both stores hold (FalkorDB and Neo4j store 64-bit signed integers)."""

_CONTROL = ("\x00", "\x01")
"""Characters no stored text may hold (see the module text)."""


@dataclass(frozen=True)
class SceneLimits:
    """The largest ids, names and counts a stored scene graph may have."""

    id_chars: int = 256
    name_chars: int = 256
    objects: int = 10_000
    attributes: int = 256
    relations: int = 50_000
    relmods: int = 64
    split_chars: int = 64

    def violation(self, graph: SceneGraph) -> tuple[str, str] | None:
        """``(field, message)`` of the first rule ``graph`` breaks, else ``None``.

        Every record of every load passes here, and nearly all pass: :meth:`_passes` checks the
        rules in plain loops first (the generators that name the field cost 2.6x as much, 0.84
        against 0.33 s per 8,500 synthetic images), and only a record that fails one is walked
        again to say which field."""
        if self._passes(graph):
            return None
        return next(iter(self._violations(graph)), None)

    def _passes(self, graph: SceneGraph) -> bool:
        """Whether ``graph`` keeps every rule of :meth:`_violations` (the same rules, no names)."""
        ids, names = self.id_chars, self.name_chars
        if not (_text_ok(graph.original_id, ids) and len(graph.split) <= self.split_chars):
            return False
        if not graph.split.isprintable() or not _text_ok(graph.source, ids):
            return False
        if len(graph.objects) > self.objects or len(graph.relations) > self.relations:
            return False
        if not (_int_ok(graph.width) and _int_ok(graph.height)):
            return False
        seen: set[str] = set()
        for obj in graph.objects:
            if KEY_SEP in obj.id or obj.id in seen or not _text_ok(obj.id, ids):
                return False
            seen.add(obj.id)
            if not _text_ok(obj.name, names) or len(obj.attributes) > self.attributes:
                return False
            for text in (*obj.attributes, *obj.names, *obj.synsets):
                if not _text_ok(text, names):
                    return False
            box = obj.box
            if box is not None and not (
                _int_ok(box.x) and _int_ok(box.y) and _int_ok(box.w) and _int_ok(box.h)
            ):
                return False
        seen.clear()
        for rel in graph.relations:
            if KEY_SEP in rel.id or rel.id in seen or not _text_ok(rel.id, ids):
                return False
            seen.add(rel.id)
            if not _text_ok(rel.name, names) or len(rel.mods) > self.relmods:
                return False
            for text in rel.synsets:
                if not _text_ok(text, names):
                    return False
            mods: set[str] = set()
            for mod in rel.mods:
                if KEY_SEP in mod.id or mod.id in mods or not _text_ok(mod.id, ids):
                    return False
                mods.add(mod.id)
                if not _text_ok(mod.name, names):
                    return False
        for key, value in graph.extras.items():
            if not _text_ok(key, names):
                return False
            if isinstance(value, str):
                if not _text_ok(value, names):
                    return False
            elif not _int_ok(value):
                return False
        return True

    def _violations(self, graph: SceneGraph) -> Iterator[tuple[str, str]]:
        yield from self._text("source", graph.source, self.id_chars)
        yield from self._text("original_id", graph.original_id, self.id_chars)
        yield from self._split(graph.split)
        yield from self._count("objects", len(graph.objects), self.objects)
        yield from self._count("relations", len(graph.relations), self.relations)
        for part in ("width", "height"):
            yield from self._integer(part, getattr(graph, part))
        object_ids: set[str] = set()
        for obj in graph.objects:
            where = f"objects[{obj.id[:40]!r}]"
            yield from self._text(f"{where}.id", obj.id, self.id_chars)
            yield from self._key_part(f"{where}.id", obj.id, object_ids, "object")
            if obj.box is not None:
                for part in ("x", "y", "w", "h"):
                    yield from self._integer(f"{where}.{part}", getattr(obj.box, part))
            yield from self._text(f"{where}.name", obj.name, self.name_chars)
            yield from self._count(f"{where}.attributes", len(obj.attributes), self.attributes)
            for part in ("attributes", "names", "synsets"):
                for i, text in enumerate(getattr(obj, part)):
                    yield from self._text(f"{where}.{part}[{i}]", text, self.name_chars)
        relation_ids: set[str] = set()
        for rel in graph.relations:
            where = f"relations[{rel.id[:40]!r}]"
            yield from self._text(f"{where}.id", rel.id, self.id_chars)
            yield from self._key_part(f"{where}.id", rel.id, relation_ids, "relation")
            yield from self._text(f"{where}.name", rel.name, self.name_chars)
            yield from self._count(f"{where}.mods", len(rel.mods), self.relmods)
            # a relation's synsets (Visual Genome) are stored too: a lone surrogate or a
            # 5,000-character synset passed every check (found by tests/unit/loaders fuzzing)
            for i, text in enumerate(rel.synsets):
                yield from self._text(f"{where}.synsets[{i}]", text, self.name_chars)
            mod_ids: set[str] = set()
            for mod in rel.mods:
                yield from self._text(f"{where}.mods.id", mod.id, self.id_chars)
                yield from self._key_part(f"{where}.mods.id", mod.id, mod_ids, "rel-mod")
                yield from self._text(f"{where}.mods.name", mod.name, self.name_chars)
        for key, value in graph.extras.items():
            # a key is a stored property name and part of every problem's field path: a 9 MiB
            # key made one import's answer larger than any message (issue 40 item 3)
            where = f"extras[{key[:40]!r}]"
            yield from self._text(where, key, self.name_chars)
            if isinstance(value, str):
                yield from self._text(where, value, self.name_chars)
            else:
                yield from self._integer(where, value)

    def _split(self, split: str) -> Iterator[tuple[str, str]]:
        """A split name is listed in every statistics reply: two imports with 9 MiB split
        names made GetStatistics fail for every client, and ANSI escapes in one reached every
        terminal that printed ``covr db stats`` (issue 40 item 3)."""
        if len(split) > self.split_chars:
            yield "split", f"is {len(split):,} characters long; the limit is {self.split_chars:,}"
        elif not split.isprintable():
            yield "split", "may hold only printable characters (no control characters or escapes)"

    @staticmethod
    def _key_part(field: str, value: str, seen: set[str], kind: str) -> Iterator[tuple[str, str]]:
        """An id that becomes part of a unique key: no separator, no repeat within its image."""
        if KEY_SEP in value:
            yield (
                field,
                (
                    f"may not contain {KEY_SEP!r}: stored keys are image id{KEY_SEP}{kind} id, and a "
                    f"{KEY_SEP!r} here could make two images' keys equal"
                ),
            )
        elif value in seen:
            yield field, f"duplicate {kind} id {value!r} (ids are trimmed, so ' 1' and '1' are one)"
        seen.add(value)

    @staticmethod
    def _integer(field: str, value: object) -> Iterator[tuple[str, str]]:
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and not INT64_MIN <= value <= INT64_MAX
        ):
            yield field, f"is {value:.3g}, outside the 64-bit integers both stores hold"

    @staticmethod
    def _text(field: str, value: str, limit: int) -> Iterator[tuple[str, str]]:
        if len(value) > limit:
            yield field, f"is {len(value):,} characters long; the limit is {limit:,}"
        elif not value.isascii() and not _is_utf8(value):
            yield field, "holds a lone surrogate (\\ud800-\\udfff), which is not valid Unicode"
        elif any(c in value for c in _CONTROL):
            yield field, "holds NUL or U+0001, which the store's indexes cannot find"

    @staticmethod
    def _count(field: str, count: int, limit: int) -> Iterator[tuple[str, str]]:
        if count > limit:
            yield field, f"has {count:,} entries; the limit is {limit:,}"


def _text_ok(value: str, limit: int) -> bool:
    """:meth:`SceneLimits._text` without the message: short enough, valid Unicode, no NUL or
    U+0001."""
    return (
        len(value) <= limit
        and (value.isascii() or _is_utf8(value))
        and "\x00" not in value
        and "\x01" not in value
    )


def _int_ok(value: object) -> bool:
    """Not an integer outside 64 bits (anything else is another rule's business)."""
    return type(value) is not int or INT64_MIN <= value <= INT64_MAX


def _is_utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
