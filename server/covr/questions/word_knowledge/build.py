"""The derivation of the word-knowledge files (what each holds and the rules:
:mod:`covr.questions.word_knowledge`) and the command that rewrites them::

    .venv/bin/python -m covr.questions.word_knowledge [--real DIR] [--out DIR]

It reads the real GQA and VG samples, the bundled samples and WordNet 3.0, and writes
``noun_attributes.json``, ``implied_attributes.json`` and ``uncountable_nouns.json`` with the
mass-noun list (:func:`covr.questions.mass_nouns.build`) and the part-whole table
(:func:`covr.questions.part_whole.build`) under ``covr/questions/resources/``. The reviewed lists
below are its hand-written input. This module imports the readers it builds for; no reader
imports it (issue 38).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from covr.questions import mass_nouns, part_whole
from covr.questions.word_knowledge import (
    CATEGORIES_RESOURCE,
    IMPLIED_RESOURCE,
    RELATIVE_SCALES,
    UNCOUNTABLE_RESOURCE,
    canonical_value,
    noun_key,
)
from covr.questions.word_knowledge.senses import CONCRETE_LEXNAMES, concrete_sense

QUESTIONS = Path(__file__).resolve().parents[1]
"""``covr/questions``: the committed files are in its ``resources/``."""

NOT_EVIDENCE: dict[str, str] = {
    "clear": "a clear glass, bottle or window is transparent, not a weather",
    "bright": "a bright shirt or sky is a light color, not a lamp that is on",
    "cool": "cool as in stylish",
    "straight": "a straight road or line, not a hair style",
    "on": "VG writes prepositions as attributes ('on street')",
    "off": "VG writes prepositions as attributes",
    "plain": "plain bread or a plain field, not a pattern",
    "high": "high in the sky: a position, not a height",
    "hot": "hot sauce or a hot dog",
}
"""Values of one category that do not show the category: reviewed on the samples' objects."""

CLASS_HOPS = 2
CLASS_MAX = 300
"""A hypernym is a class when it holds at most this many hyponym synsets: garment.n.01 (271),
edible_fruit.n.01 (196), male.n.02 (115), furniture.n.01 (198), building.n.01 (297) are;
vehicle.n.01 (527), container.n.01 (748), covering.n.02 (1,013) and person.n.01 are too wide to
say that what one member takes, every member takes."""
CLASS_GIVERS = 2
"""A category spreads through a class only when at least this many other data nouns of the class
show it (one noun's annotation is too thin a base to say it of the whole class)."""
DEFAULT_SHARE = 0.5

IMPLIED: dict[str, tuple[str, ...]] = {
    # a child is young and little ("little boy" is the age sense); "baby" narrows a child
    "boy": ("young", "little"),
    "girl": ("young", "little"),
    "child": ("young", "little"),
    "kid": ("young", "little"),
    "schoolboy": ("young", "little"),
    "schoolgirl": ("young", "little"),
    "toddler": ("young", "little", "baby"),
    "baby": ("young", "little", "baby"),
    "infant": ("young", "little", "baby"),
    "newborn": ("young", "little", "baby"),
    "young man": ("young",),
    "young woman": ("young",),
    "teenager": ("young",),
    "teen": ("young",),
    "youth": ("young",),
    # the young of an animal is a baby animal
    "puppy": ("young", "little", "baby"),
    "kitten": ("young", "little", "baby"),
    "kitty": ("young", "little", "baby"),
    "pup": ("young", "little", "baby"),
    "calf": ("young", "little", "baby"),
    "foal": ("young", "little", "baby"),
    "colt": ("young", "baby"),
    "filly": ("young", "baby"),
    "lamb": ("young", "little", "baby"),
    "cub": ("young", "little", "baby"),
    "chick": ("young", "little", "baby"),
    "duckling": ("young", "little", "baby"),
    "piglet": ("young", "little", "baby"),
    "fawn": ("young", "little", "baby"),
    "gosling": ("young", "little", "baby"),
    "cygnet": ("young", "little", "baby"),
    "joey": ("young", "little", "baby"),
    "tadpole": ("young", "little", "baby"),
    # adults
    "adult": ("adult",),
    "grownup": ("adult",),
    "elder": ("old",),
    "senior citizen": ("old", "elderly"),
}
"""Reviewed implications (hand list, issue 37); each is written with the noun's WordNet gloss as
its source. "man"/"woman" imply nothing: the samples show young and old men."""
YOUNG_GLOSS = ("young", "youthful", "baby", "infant", "offspring", "child")
"""Words of a gloss that make a vocabulary noun a candidate for :data:`IMPLIED` (the command
lists candidates that are not in it, for review)."""

EVENT_LEXNAMES = frozenset({"noun.event", "noun.act", "noun.time", "noun.process"})
GROUP_LEXNAMES = frozenset({"noun.group"})
COUNTABLE: dict[str, str] = {
    # the rule's hits over the vocabulary that name things in scene graphs (reviewed on the
    # samples' objects): WordNet's first senses are events or groups, GQA's and VG's are not
    "bang": "bangs: a fringe of hair",
    "calendar": "a wall calendar",
    "case": "a phone case, a suitcase",
    "club": "a golf club",
    "couple": "two people as one unit, counted as couples",
    "design": "a printed design",
    "drainage": "a drain",
    "extension": "an extension cord",
    "fire": "a visible fire",
    "flame": "visible flames",
    "line": "a painted line",
    "packet": "a packet",
    "pile": "a pile is one heap, counted as piles",
    "racket": "a tennis racket",
    "ripple": "ripples on water",
    "roll": "a bread roll, a roll of paper",
    "set": "a tv set",
    "stack": "a stack is one heap, counted as stacks",
    "step": "a step of stairs",
    "tap": "a water tap",
    "throw": "a throw blanket",
    "van": "a vehicle",
    "wave": "waves on water",
}
"""Nouns the WordNet rule would call events or groups but that name things in scene graphs."""
EVENTS: dict[str, str] = {
    "game": "a contest, not an object (issue 37: 'exactly 1 game')",
    "match": "a sports match (WordNet's first sense is the lighter)",
    "race": "a contest",
    "party": "a social event (WordNet's first senses are groups)",
    "event": "an occurrence",
    "competition": "a contest",
    "tournament": "a contest",
    "contest": "a contest",
    "wedding": "a ceremony",
    "ceremony": "a ceremony",
    "concert": "a performance",
    "parade": "a procession",
    "festival": "a celebration",
    "celebration": "an occasion",
    "performance": "an act",
    "practice": "an activity",
    "training": "an activity",
    "lesson": "an activity",
    "meeting": "a gathering",
    "picnic": "an outing",
    "vacation": "a time",
    "holiday": "a time",
    "trip": "a journey",
    "rally": "a gathering",
    "marathon": "a race",
    "daytime": "a time",
    "nighttime": "a time",
    "morning": "a time",
    "afternoon": "a time",
    "evening": "a time",
    "night": "a time",
    "day": "a time",
    "sunset": "a time of day",
    "sunrise": "a time of day",
    "dusk": "a time of day",
    "dawn": "a time of day",
    "winter": "a season",
    "summer": "a season",
}
"""Reviewed events and times: counted as objects they read as nonsense ("2 games")."""
GROUPS: dict[str, str] = {
    "audience": "a group of people (issue 37: counted 8 times)",
    "crowd": "a group of people",
    "team": "a group of players",
    "herd": "a group of animals",
    "flock": "a group of birds or sheep",
    "family": "a group of people",
    "group": "a group",
    "traffic": "vehicles as one mass",
    "fleet": "a group of vehicles",
    "forest": "trees as one area",
    "woods": "trees as one area",
    "bleachers": "rows of seats as one stand",
    "orchestra": "a group of musicians",
    "choir": "a group of singers",
    "army": "a group of soldiers",
    "staff": "a group of workers",
    "public": "people",
    "gang": "a group of people",
    "clutter": "a confused multitude of things",
    "collection": "several things as one",
    "assortment": "several things as one",
    "variety": "several things as one",
    "array": "several things as one",
}
"""Reviewed group nouns: one object of the scene graph stands for many things."""


@dataclass(frozen=True)
class Observation:
    """One annotated object: its dataset, name and attribute values (all lower case)."""

    dataset: str
    noun: str
    attributes: tuple[str, ...]


def _norm(text: str) -> str:
    return " ".join(str(text).lower().split())


def gqa_observations(data: Mapping[str, Any], dataset: str) -> Iterator[Observation]:
    for scene in data.values():
        for obj in scene.get("objects", {}).values():
            attrs = tuple(_norm(a) for a in obj.get("attributes", []) if _norm(a))
            yield Observation(dataset, _norm(obj.get("name", "")), attrs)


def vg_observations(data: Sequence[Mapping[str, Any]], dataset: str) -> Iterator[Observation]:
    for scene in data:
        for obj in scene.get("objects", []):
            attrs = tuple(_norm(a) for a in obj.get("attributes", []) or [] if _norm(a))
            for name in obj.get("names", []):
                yield Observation(dataset, _norm(name), attrs)


@dataclass(frozen=True)
class Source:
    """One input file: its label, path (as given) and digest, recorded in the files."""

    dataset: str
    path: str
    sha256: str
    images: int


def default_real_dir() -> Path:
    """``../shared/data/real`` beside the repository (the shared copy of the real samples)."""
    return QUESTIONS.parents[3] / "shared" / "data" / "real"


def read_samples(real_dir: Path | None) -> tuple[list[Observation], list[Source]]:
    """The objects of the bundled GQA and VG samples and, when ``real_dir`` holds them, of the
    real GQA and VG samples (``gqa/train_sceneGraphs.first100.json``,
    ``vg/scene_graphs.first100.json``)."""
    obs: list[Observation] = []
    sources: list[Source] = []
    samples = resources.files("covr_loaders").joinpath("samples")
    inputs: list[tuple[str, str, Any]] = [
        ("gqa-bundled", "covr_loaders/samples/gqa/val_sceneGraphs.json",
         samples.joinpath("gqa", "val_sceneGraphs.json")),
        ("vg-bundled", "covr_loaders/samples/vg/scene_graphs.json",
         samples.joinpath("vg", "scene_graphs.json")),
    ]  # fmt: skip
    if real_dir is not None:
        inputs += [
            ("gqa-real", "gqa/train_sceneGraphs.first100.json",
             real_dir / "gqa" / "train_sceneGraphs.first100.json"),
            ("vg-real", "vg/scene_graphs.first100.json",
             real_dir / "vg" / "scene_graphs.first100.json"),
        ]  # fmt: skip
    for dataset, label, path in inputs:
        raw = path.read_bytes()
        data = json.loads(raw)
        found = (
            gqa_observations(data, dataset)
            if dataset.startswith("gqa")
            else (vg_observations(data, dataset))
        )
        obs += found
        sources.append(Source(dataset, label, hashlib.sha256(raw).hexdigest(), len(data)))
    return obs, sources


def evidence_values(types_of: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Value -> the one category it shows (see the module docstring)."""
    return {
        v: kinds[0]
        for v, kinds in types_of.items()
        if len(set(kinds)) == 1 and v not in NOT_EVIDENCE
    }


class Classes:
    """WordNet classes of nouns (see :data:`CLASS_HOPS`, :data:`CLASS_MAX`), memoized."""

    def __init__(self, wordnet: Any) -> None:
        self.wordnet = wordnet
        self._sizes: dict[str, int] = {}

    def size(self, synset: Any) -> int:
        name = synset.name()
        if name not in self._sizes:
            below = synset.closure(lambda s: s.hyponyms() + s.instance_hyponyms())
            self._sizes[name] = sum(1 for _ in below)
        return self._sizes[name]

    def of(self, noun: str) -> tuple[str, ...]:
        sense = concrete_sense(self.wordnet, noun)
        if sense is None:
            return ()
        found = [sense]
        level = [sense]
        for _ in range(CLASS_HOPS):
            # instances are named entities; sorted: nltk gives hypernyms in no fixed order
            level = sorted({h for s in level for h in s.hypernyms()}, key=lambda h: h.name())
            found += level
        keep = [s.name() for s in found if s is sense or self.size(s) <= CLASS_MAX]
        return tuple(dict.fromkeys(keep))


def _count_text(counter: Counter[str]) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(counter.items()))


def build_categories(
    observations: Iterable[Observation],
    types_of: Mapping[str, Sequence[str]],
    classes: Classes,
    vocabulary: Iterable[str],
    sources: Sequence[Source],
) -> dict[str, Any]:
    """The ``noun_attributes.json`` document."""
    evidence = evidence_values(types_of)
    direct: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    values: dict[str, set[str]] = defaultdict(set)
    for o in observations:
        if not o.noun:
            continue
        key = noun_key(o.noun)
        values[key]  # a data noun, even without attributes
        for a in o.attributes:
            values[key].add(canonical_value(a))
            if a in evidence:
                direct[key][evidence[a]][o.dataset] += 1
    nouns = sorted(set(values) | {noun_key(v) for v in vocabulary if v.strip()})
    noun_classes = {n: classes.of(n) for n in nouns}
    members: dict[str, list[str]] = defaultdict(list)
    for n in values:
        for k in noun_classes[n]:
            members[k].append(n)
    with_evidence = [n for n in values if direct[n]]
    shares = Counter(c for n in with_evidence for c in direct[n])
    defaults = {
        c: f"data: {k} of the {len(with_evidence)} data nouns with an evidence value"
        for c, k in sorted(shares.items())
        if k >= DEFAULT_SHARE * len(with_evidence)
    }
    out: dict[str, Any] = {}
    for n in nouns:
        cats: dict[str, str] = {}
        for c, counts in sorted(direct[n].items()):
            cats[c] = f"data: {_count_text(counts)}"
        for k in noun_classes[n]:
            givers: dict[str, list[str]] = defaultdict(list)
            for m in sorted(members[k]):
                for c in direct[m] if m != n else ():
                    givers[c].append(m)
            for c, who in sorted(givers.items()):
                if c not in cats and c not in defaults and len(who) >= CLASS_GIVERS:
                    more = f" (+{len(who) - 4})" if len(who) > 4 else ""
                    cats[c] = f"class {k}: {', '.join(who[:4])}{more}"
        entry: dict[str, Any] = {}
        if noun_classes[n]:
            entry["classes"] = list(noun_classes[n])
        if cats:
            entry["categories"] = cats
        if n in values:
            entry["values"] = sorted(values[n])
        if n in values or cats:
            out[n] = entry
    return {
        "about": (
            "Attribute categories and values each noun takes (issue 37). Generated by `python -m "
            "covr.questions.word_knowledge` from the samples below and WordNet 3.0; rules in that "
            "module's docstring; do not edit by hand (review the lists in the module)."
        ),
        "sources": [vars(s) for s in sources]
        + [{"dataset": "wordnet", "path": "WordNet 3.0 (Debian wordnet-base)"}],
        "rule": {
            "evidence": "a value of exactly one category of covr/related/resources/attributes.json, "
            "not in not_evidence",
            "class_hops": CLASS_HOPS,
            "class_max_hyponyms": CLASS_MAX,
            "class_givers": CLASS_GIVERS,
            "default_share": DEFAULT_SHARE,
        },
        "not_evidence": dict(sorted(NOT_EVIDENCE.items())),
        "relative_scales": RELATIVE_SCALES,
        "default_categories": defaults,
        "nouns": out,
    }


def build_implied(wordnet: Any, vocabulary: Iterable[str]) -> tuple[dict[str, Any], list[str]]:
    """The ``implied_attributes.json`` document, and the vocabulary nouns whose gloss says young
    but that :data:`IMPLIED` does not list (printed for review)."""
    nouns: dict[str, Any] = {}
    for noun, attrs in sorted(IMPLIED.items()):
        sense = concrete_sense(wordnet, noun)
        gloss = f"{sense.name()}: {sense.definition()}" if sense is not None else "not in WordNet"
        nouns[noun] = {"attributes": list(attrs), "source": f"reviewed; WordNet {gloss}"}
    review = []
    for noun in sorted({noun_key(v) for v in vocabulary} - set(IMPLIED)):
        sense = concrete_sense(wordnet, noun)
        if sense is None or sense.lexname() not in ("noun.person", "noun.animal"):
            continue
        words = set(sense.definition().replace(",", " ").replace(";", " ").split())
        if words & set(YOUNG_GLOSS):
            review.append(f"{noun}: {sense.name()} {sense.definition()}")
    doc = {
        "about": (
            "Attributes a noun implies (issue 37): a question never uses them, since a plain 'boy' "
            "is young too. Generated by `python -m covr.questions.word_knowledge` from the "
            "reviewed list covr.questions.word_knowledge.IMPLIED; each source is the WordNet 3.0 "
            "gloss it was checked against."
        ),
        "nouns": nouns,
    }
    return doc, review


def _lexname_rule(wordnet: Any, noun: str, lexnames: frozenset[str]) -> Any:
    """The noun's first sense if it and the second sense (when there is one) are in ``lexnames``
    or at least not things (:data:`CONCRETE_LEXNAMES`); else None."""
    senses = wordnet.synsets(noun.replace(" ", "_"), "n")
    if not senses or senses[0].lexname() not in lexnames:
        return None
    if any(s.lexname() in CONCRETE_LEXNAMES for s in senses[:2]):
        return None
    return senses[0]


def build_uncountable(wordnet: Any, vocabulary: Iterable[str]) -> dict[str, Any]:
    """The ``uncountable_nouns.json`` document: groups and events of the vocabulary by the
    WordNet rule, minus :data:`COUNTABLE`, plus the reviewed :data:`GROUPS` and :data:`EVENTS`
    (a reviewed entry keeps the rule's reading as well when the rule found it too)."""
    found: dict[str, dict[str, str]] = {"groups": {}, "events": {}}
    for noun in sorted({noun_key(v) for v in vocabulary}):
        if noun in COUNTABLE or " " in noun:
            continue
        for kind, lexnames in (("groups", GROUP_LEXNAMES), ("events", EVENT_LEXNAMES)):
            if (s := _lexname_rule(wordnet, noun, lexnames)) is not None:
                found[kind][noun] = f"wordnet {s.name()} ({s.lexname()}): {s.definition()}"
                break
    rule = {**found["groups"], **found["events"]}
    sections: dict[str, dict[str, str]] = {"groups": {}, "events": {}}
    for kind, reviewed in (("groups", GROUPS), ("events", EVENTS)):
        for noun, why in reviewed.items():
            also = f"; {rule[noun]}" if noun in rule else ""
            sections[kind][noun] = f"reviewed: {why}{also}"
    for kind in ("groups", "events"):
        for noun, why in found[kind].items():
            if noun not in GROUPS and noun not in EVENTS:
                sections[kind][noun] = why
    return {
        "about": (
            "Nouns that are not countable objects in a picture (issue 37): groups and events or "
            "times. Generated by `python -m covr.questions.word_knowledge`: the first WordNet 3.0 "
            "sense of a vocabulary noun is a group (an event, act, time or process) and neither of "
            "its first two senses is a thing; minus the reviewed COUNTABLE list, plus the "
            "reviewed GROUPS and EVENTS (covr.questions.word_knowledge)."
        ),
        "countable": {k: f"reviewed: {v}" for k, v in sorted(COUNTABLE.items())},
        "groups": dict(sorted(sections["groups"].items())),
        "events": dict(sorted(sections["events"].items())),
    }


def vocabulary(observations: Iterable[Observation]) -> set[str]:
    """Nouns the files describe: the samples' object names, the related-image noun groups and
    the synthetic generator's real words (multi-word names included)."""
    words = {o.noun for o in observations if o.noun}
    groups = json.loads(
        resources.files("covr.related").joinpath("resources", "nouns.json").read_text()
    )
    words |= {w for group in groups["synonyms"] for w in group}
    words |= {w for key, more in groups["hyponyms"].items() for w in (key, *more)}
    from covr_loaders.synthetic_words import CORE_NOUNS  # the samples come from covr_loaders too

    words |= {w for nouns in CORE_NOUNS.values() for w in nouns}
    words |= set(IMPLIED) | set(EVENTS) | set(GROUPS)
    return {_norm(w) for w in words if _norm(w)}


def render(document: Mapping[str, Any], entries: str) -> str:
    """JSON with one entry of the ``entries`` section a line, so diffs stay readable."""
    head = {k: v for k, v in document.items() if k != entries}
    text = json.dumps(head, indent=1, ensure_ascii=False)[:-2]
    lines = [
        f"  {json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}"
        for k, v in document[entries].items()
    ]
    return f'{text},\n "{entries}": {{\n' + ",\n".join(lines) + "\n }\n}\n"


def build_all(wordnet: Any, real_dir: Path | None) -> dict[str, str]:
    """File name -> text of every word-knowledge file (mass_nouns.json included)."""
    from covr.questions.world import default_attribute_types

    observations, sources = read_samples(real_dir)
    vocab = vocabulary(observations)
    types_of = default_attribute_types().types_of
    cats = build_categories(observations, types_of, Classes(wordnet), vocab, sources)
    implied_doc, review = build_implied(wordnet, vocab)
    for line in review:
        print(f"review (gloss says young, not in IMPLIED): {line}", file=sys.stderr)
    uncountable = build_uncountable(wordnet, vocab)
    mass = mass_nouns.build(wordnet, mass_nouns.dataset_vocabulary(cats["nouns"]))
    return {
        CATEGORIES_RESOURCE: render(cats, "nouns"),
        IMPLIED_RESOURCE: render(implied_doc, "nouns"),
        UNCOUNTABLE_RESOURCE: json.dumps(uncountable, indent=1, ensure_ascii=False) + "\n",
        mass_nouns.RESOURCE: mass_nouns.render(mass),
        part_whole.RESOURCE: render(part_whole.build(wordnet, vocab), "wholes"),
    }


def main(argv: list[str] | None = None) -> int:
    """Regenerate the word-knowledge files under ``resources/`` (``--real DIR``: the folder with
    the real samples, default ``../shared/data/real``; ``--out DIR``: write elsewhere)."""
    from covr.models import open_configured_wordnet
    from covr.settings import get_settings  # a command: it reads the settings (the models')

    args = list(sys.argv[1:] if argv is None else argv)
    real = default_real_dir()
    out = QUESTIONS / "resources"
    while args:
        flag = args.pop(0)
        if flag == "--real" and args:
            real = Path(args.pop(0))
        elif flag == "--out" and args:
            out = Path(args.pop(0))
        else:
            print("usage: python -m covr.questions.word_knowledge [--real DIR] [--out DIR]")
            return 2
    if not (real / "gqa" / "train_sceneGraphs.first100.json").is_file():
        print(f"the real samples are not in {real} (give --real DIR)", file=sys.stderr)
        return 2
    files = build_all(open_configured_wordnet(get_settings().models), real)
    for name, text in files.items():
        out.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
        print(f"{name}: {len(text):,} bytes -> {out / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
