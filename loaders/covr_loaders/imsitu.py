"""imSitu ``{train,dev,test}.json`` + ``imsitu_space.json`` + verb sentence templates.

A record is ``image file name → {verb, frames: [3 annotator frames {role: noun id or ""}]}``.
Conversion (DESIGN.md §3, issue 3):

- role order and connector words come from the verb's sentence template
  (``stapling<TAB>AGENT staples ITEM onto SURFACE using TOOL at PLACE``), or, for verbs the
  templates file does not cover, from the ``abstract`` sentence of the space file;
- the first role becomes the subject object, the verb a Relation from it to the second role's
  object (named with the verb's preposition when the template has one: ``surfing on`` from
  ``AGENT surfs on TOOL``), and **every** later filled role with a connector a RelMod named by the connector
  (``onto``, ``using``, ``at``) off that Relation; PLACE only when ``COVR_LOAD_IMSITU_PLACE`` is on;
- frame choice: the first frame with both leading roles filled (``first``), or the frame most
  annotators agree on among those (``majority``);
- an object's name is ``gloss[0]`` of its noun in the space file, or of the optional extra noun
  table (``id<TAB>gloss``); empty roles are skipped, unknown verbs and nouns skip the record.

Object ids are role names (``agent``, ``tool``), the Relation id is the verb, RelMod ids are role
names: all deterministic.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from covr.jsontext import REPEATED_KEY, JsonTextError, loads
from covr.scene.model import Object, Relation, RelMod, SceneGraph, SceneGraphError, validate
from covr_loaders.errors import InputFileError, Problem, RecordError
from covr_loaders.fields import as_list, as_mapping, as_name, required
from covr_loaders.jsonio import ByteCounter, check_file, read_records

SOURCE = "imsitu"
PLACE = "place"
FrameChoice = Literal["first", "majority"]
_ARTICLES = frozenset({"a", "an", "the"})
_SLOT = re.compile(r"^[A-Z][A-Z_]*[A-Z]$|^[A-Z]$")
_POSSESSIVE = re.compile(r"^(?P<slot>[A-Z][A-Z_]*)(?:['\u2019][sS]|(?<=S)['\u2019])$")
"""``AGENT's``, ``AGENT\u2019s``, ``VICTIMS'``: a slot in the possessive (the suffix is not a word)."""


PARTICLES = frozenset(
    [
        "about",
        "across",
        "after",
        "against",
        "along",
        "around",
        "at",
        "away",
        "back",
        "behind",
        "beneath",
        "beside",
        "between",
        "by",
        "down",
        "for",
        "from",
        "in",
        "inside",
        "into",
        "of",
        "off",
        "on",
        "onto",
        "out",
        "outside",
        "over",
        "past",
        "through",
        "to",
        "toward",
        "towards",
        "under",
        "up",
        "upon",
        "with",
        "within",
    ]
)
"""Words that may end a verb phrase before its object ("competes in", "picks up", "waits for")."""


def verb_particle(connector: str) -> str:
    """The preposition or particle that ends the second slot's connector: ``"competes in"`` ->
    ``"in"``, ``"staples"`` -> ``""``, ``"carefully slices"`` -> ``""``.

    Why: the second slot's connector is the finite verb plus whatever links it to its object;
    the verb itself is the record's gerund, but the preposition is needed to say the relation
    ("a boxer that is competing in a boxing match", not "competing a boxing match")."""
    words = connector.split()[1:]  # the first word is the verb
    tail: list[str] = []
    for word in reversed(words):
        if word not in PARTICLES:
            break
        tail.insert(0, word)
    return " ".join(tail)


def relation_name(verb: str, slots: list[RoleSlot]) -> str:
    """The verb with its particle (``"competing in"``, ``"surfing on"``), like GQA's
    ``"sitting on"``: see docs/questions.md (imSitu text) for why the name carries it."""
    particle = verb_particle(slots[1].connector) if len(slots) > 1 else ""
    return f"{verb} {particle}" if particle else verb


@dataclass(frozen=True)
class RoleSlot:
    """A role of a verb in sentence order, with the words that introduce it (may be empty)."""

    role: str
    connector: str


@dataclass
class Space:
    """Verbs (with their role order) and noun glosses: the vocabulary records are checked against."""

    verbs: dict[str, list[RoleSlot]] = field(default_factory=dict)
    nouns: dict[str, str] = field(default_factory=dict)


def parse_template(sentence: str, roles: list[str] | None = None) -> list[RoleSlot]:
    """Role slots of a template sentence, in order, each with its connector words.

    Slots are the upper-case words (``AGENT``), of the given ``roles`` when there are any. A
    connector is the lower-case words between the previous slot and this one, articles
    dropped; the second slot's words are the verb and its particle, of which only the particle
    is used (:func:`relation_name`).

    A role named twice keeps its first place; the words before its second mention belong to no
    slot. A role in the possessive (``AGENT's``, ``VICTIM's HAIR``) is a determiner of the next
    slot: the words before it stay that slot's connector (``AGENT brushes AGENT's HAIR`` ->
    hair "brushes"), and a role not placed yet comes right after the slot it owns, with the
    connector ``of`` (``AGENT combs VICTIM's HAIR`` -> hair "combs", victim "of").
    """
    known = {r.lower() for r in roles or []}
    slots: list[RoleSlot] = []
    words: list[str] = []
    owner = ""  # a role named in the possessive, placed after the slot it owns

    def place(role: str, connector: str) -> None:
        slots.append(RoleSlot(role, connector if slots else ""))

    for raw in sentence.split():
        token = raw.strip(".,;:!?")
        possessive = _POSSESSIVE.match(token)
        name = possessive["slot"] if possessive else token
        if not (_SLOT.match(name) and (not known or name.lower() in known)):
            if token:
                words.append(token.lower())
            continue
        role = name.lower()
        placed = role == owner or any(s.role == role for s in slots)
        if possessive:
            if not placed and not owner:
                owner = role
        elif placed:
            # a description that names a role twice ("AGENT calms VICTIM ... AGENT"): the
            # first mention places the role; a second slot would be a duplicate object id
            words = []
        else:
            place(role, " ".join(w for w in words if w not in _ARTICLES))
            words = []
            if owner:
                place(owner, "of")
                owner = ""
    if owner:  # no slot follows the possessive: it ends the sentence's slots
        place(owner, " ".join(w for w in words if w not in _ARTICLES))
    return slots


def _read_tab_pairs(path: Path, expected: str) -> dict[str, str]:
    """``key<TAB>value`` lines (blank lines and ``#`` comments ignored), both sides stripped."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError(str(path), f"cannot be read: {exc}") from exc
    out: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition("\t")
        if not sep or not key.strip() or not value.strip():
            raise InputFileError(str(path), f"line {number}: expected '{expected}'")
        if key.strip() in out:  # the last line would win silently
            raise InputFileError(
                str(path), f"line {number}: {key.strip()!r} repeats line {lines[key.strip()]}"
            )
        out[key.strip()] = value.strip()
        lines[key.strip()] = number
    return out


def load_templates(path: Path) -> dict[str, str]:
    """``verb<TAB>sentence`` lines."""
    return _read_tab_pairs(path, "verb<TAB>sentence")


def load_noun_table(path: Path) -> dict[str, str]:
    """Extra nouns for ids missing from the space file: ``id<TAB>gloss`` (first gloss kept)."""
    table = _read_tab_pairs(path, "noun_id<TAB>gloss")
    return {noun: gloss.split(",")[0].strip() for noun, gloss in table.items()}


def load_space(
    space_path: Path, templates_path: Path | None = None, nouns_path: Path | None = None
) -> Space:
    """Read the space file (a few MB: read whole), the templates and the optional noun table.

    A space file that cannot be used raises :class:`InputFileError` naming the field: not JSON,
    a key twice in one object (``verbs.stapling.order``: JSON readers keep the last silently),
    nesting too deep, an integer too long, or a verb whose ``order``, ``roles`` or ``abstract``
    has the wrong type or names a role twice (issue 40 rows 9 and 12)."""
    name = str(space_path)
    check_file(space_path, "object")
    try:
        text = space_path.read_text(encoding="utf-8")
        raw = loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputFileError(name, f"is not a readable imSitu space file: {exc}") from exc
    except JsonTextError as exc:
        if exc.field:  # a repeated key: say where, so that it can be found in a large file
            raise InputFileError(
                name, f"{_repeated_key(text, exc.field)}: {REPEATED_KEY}"
            ) from None
        raise InputFileError(name, exc.message) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("verbs"), dict):
        raise InputFileError(name, "has no 'verbs' object")
    if not isinstance(raw.get("nouns"), dict):
        raise InputFileError(name, "has no 'nouns' object")
    templates = load_templates(templates_path) if templates_path else {}
    space = Space()
    for verb, info in raw["verbs"].items():
        order = _role_order(name, verb, info)
        sentence = templates.get(verb) or str(info.get("abstract") or "")
        slots = parse_template(sentence, order) if sentence else []
        placed = {s.role for s in slots}
        # Roles the sentence does not mention keep the space file's order, without a connector.
        slots.extend(RoleSlot(r, "") for r in order if r not in placed)
        space.verbs[verb] = slots
    for noun, info in raw["nouns"].items():
        gloss = info.get("gloss") if isinstance(info, dict) else None
        if isinstance(gloss, list) and gloss and isinstance(gloss[0], str) and gloss[0].strip():
            space.nouns[noun] = gloss[0].strip()
    if nouns_path:
        for noun, gloss in load_noun_table(nouns_path).items():
            space.nouns.setdefault(noun, gloss)
    return space


def _role_order(file: str, verb: str, info: Any) -> list[str]:
    """A verb's roles in the space file's order (``order``, else the keys of ``roles``),
    lower case; a wrong type or a role named twice raises :class:`InputFileError`."""
    where = f"verbs.{verb}"
    if not isinstance(info, dict):
        raise InputFileError(file, f"{where}: must be an object")
    abstract = info.get("abstract")
    if abstract is not None and not isinstance(abstract, str):
        raise InputFileError(file, f"{where}.abstract: must be a string, got {abstract!r:.60}")
    roles = info.get("roles")
    if roles is not None and not isinstance(roles, dict):
        raise InputFileError(file, f"{where}.roles: must be an object, got {roles!r:.60}")
    order = info.get("order")
    if order is None:
        order, field = list(roles or {}), f"{where}.roles"
    else:
        field = f"{where}.order"
        if not isinstance(order, list) or not all(isinstance(r, str) and r for r in order):
            raise InputFileError(file, f"{field}: must be a list of role names, got {order!r:.60}")
    out: list[str] = []
    for role in order:
        if role.lower() in out:
            raise InputFileError(file, f"{field}: the role {role!r} is named twice")
        out.append(role.lower())
    return out


class _Repeats(dict[str, Any]):
    """A decoded JSON object that named ``key`` twice (:func:`_repeated_key`)."""

    key = ""


def _keep_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    marked = _Repeats(out)
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            marked.key = key
            break
        seen.add(key)
    return marked


def _repeated_key(text: str, key: str) -> str:
    """The path (``verbs.stapling.order``) of the first key named twice in one object of
    ``text``, which the strict decoder refused on ``key`` (error path only: decodes the text
    again; ``key`` alone when the rest of the text cannot be decoded)."""
    try:
        decoded = json.loads(text, object_pairs_hook=_keep_repeats)
    except (RecursionError, ValueError):
        return key
    stack: list[tuple[str, Any]] = [("", decoded)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _Repeats):
            return f"{path}.{value.key}" if path else value.key
        if isinstance(value, dict):
            items = [(f"{path}.{k}" if path else str(k), v) for k, v in value.items()]
        elif isinstance(value, list):
            items = [(f"{path}[{i}]", v) for i, v in enumerate(value)]
        else:
            continue
        stack.extend(reversed(items))
    return key


@dataclass(frozen=True)
class ImsituOptions:
    """Conversion choices (from settings)."""

    place_as_relmod: bool = True
    frame_choice: FrameChoice = "first"


def _frames(record: Mapping[str, Any]) -> list[dict[str, str]]:
    frames = as_list(required(record, "frames", ""), "frames")
    if not frames:
        raise RecordError("frames", "must hold at least one frame")
    out: list[dict[str, str]] = []
    for i, frame in enumerate(frames):
        mapping = as_mapping(frame, f"frames[{i}]")
        roles: dict[str, str] = {}
        for role, noun in mapping.items():
            if noun is None:
                noun = ""
            if not isinstance(noun, str):
                raise RecordError(f"frames[{i}].{role}", f"must be a noun id string, got {noun!r}")
            if str(role).lower() in roles:  # "agent" and "AGENT": one would win silently
                raise RecordError(f"frames[{i}].{role}", "names a role twice (case ignored)")
            roles[str(role).lower()] = noun.strip()
        out.append(roles)
    return out


def choose_frame(
    frames: list[dict[str, str]], leading: list[str], choice: FrameChoice
) -> tuple[int, dict[str, str]]:
    """The frame to use and its index (see the module docstring for the rule)."""
    full = [i for i, f in enumerate(frames) if all(f.get(r) for r in leading)]
    if not full:
        return 0, frames[0]
    if choice == "majority":
        votes = Counter(tuple(sorted(frames[i].items())) for i in full)
        best = max(votes.values())
        for i in full:
            if votes[tuple(sorted(frames[i].items()))] == best:
                return i, frames[i]
    return full[0], frames[full[0]]


def convert(
    image_name: str,
    record: Any,
    split: str,
    space: Space,
    options: ImsituOptions = ImsituOptions(),
) -> SceneGraph:
    """One imSitu record as a scene graph; raises :class:`RecordError` naming the bad field."""
    data = as_mapping(record, "<record>")
    verb = as_name(required(data, "verb", ""), "verb")
    if verb not in space.verbs:
        raise RecordError("verb", f"unknown verb {verb!r}: not in the space file")
    slots = [s for s in space.verbs[verb] if options.place_as_relmod or s.role != PLACE]
    frames = _frames(data)
    leading = [s.role for s in slots[:2]]
    index, frame = choose_frame(frames, leading, options.frame_choice)
    objects: list[Object] = []
    for slot in slots:
        noun = frame.get(slot.role, "")
        if not noun:
            continue
        name = space.nouns.get(noun)
        if name is None:
            raise RecordError(f"frames[{index}].{slot.role}", f"unknown noun {noun!r}")
        objects.append(Object(id=slot.role, name=name, synsets=(noun,)))
    present = {o.id for o in objects}
    relations: list[Relation] = []
    if len(leading) == 2 and all(r in present for r in leading):
        mods = tuple(
            RelMod(id=s.role, name=s.connector, object=s.role)
            for s in slots[2:]
            if s.role in present and s.connector
        )
        relations.append(
            Relation(
                id=verb,
                name=relation_name(verb, slots),
                subject=leading[0],
                object=leading[1],
                mods=mods,
            )
        )
    graph = SceneGraph.build(
        source=SOURCE,
        original_id=as_name(image_name, "<image name>"),
        split=split,
        objects=objects,
        relations=relations,
        extras={"verb": verb, "frame": index},
    )
    try:
        validate(graph)
    except SceneGraphError as exc:
        raise RecordError(exc.field, exc.message) from exc
    return graph


def read(
    path: Path,
    *,
    split: str,
    counter: ByteCounter,
    space: Space,
    options: ImsituOptions = ImsituOptions(),
) -> Iterator[SceneGraph | Problem]:
    """Stream one imSitu file: a scene graph per valid record, a problem per bad one."""
    return read_records(
        path, "object", counter, lambda key, value: convert(key, value, split, space, options)
    )
