"""Word knowledge on the real GQA and VG samples (issue 37 item 3, acceptance).

Questions are generated from the real samples (``../shared/data/real``: 100 GQA images, 100 VG
images) through the in-memory path, and every example is checked, by code written apart from
the engine's rules, against the shipped tables of :mod:`covr.questions.word_knowledge`:

- no attribute category, and no decoy value, is used with a noun that never takes it;
- no relative scale ("the same size") compares objects of two different nouns;
- no counted mass, collective, group or event noun;
- no attribute a noun implies ("young boy"), so a plain "boy" is never the only difference;
- no plural of a plural-only noun ("vertical blindses").

:func:`word_errors` is also what the before/after counts of docs/questions.md ("Word
knowledge") were measured with.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from covr.questions import word_knowledge as wk
from covr.questions.generate import GenerationOptions, generate
from covr.questions.mass_nouns import is_collective, is_mass
from covr.questions.word_knowledge import build as wk_build
from covr.questions.world import default_attribute_types
from covr.related.memory import InMemoryRelated
from covr.scene.model import SceneGraph
from covr.scene.text import PLURAL_ONLY
from covr_loaders import gqa, vg
from covr_loaders.jsonio import ByteCounter

REAL = wk_build.default_real_dir()
GQA_FILE = REAL / "gqa" / "train_sceneGraphs.first100.json"
VG_FILE = REAL / "vg" / "scene_graphs.first100.json"

needs_real = pytest.mark.skipif(
    not GQA_FILE.is_file() or not VG_FILE.is_file(),
    reason=f"the real GQA/VG samples are not in {REAL} (the shared data folder beside the repo)",
)

TYPES = default_attribute_types()
OBJECT_FOLLOW = {"filter", "with_relation", "unique", "assert_unique"}


def _nouns(program: Sequence[Mapping[str, Any]], outer: str | None) -> list[str | None]:
    """Per step, the noun of the objects it yields (None for anything else)."""
    out: list[str | None] = []
    for step in program:
        op, deps, args = step["operation"], step["dependencies"], step["arguments"]
        if op == "find":
            out.append(args[0])
        elif op in OBJECT_FOLLOW:
            out.append(outer if deps[0] == -1 else out[deps[0]])
        elif op == "with_relation_object" and len(deps) == 2:
            out.append(outer if deps[1] == -1 else out[deps[1]])
        else:
            out.append(None)
    return out


def _walk(
    program: Sequence[Mapping[str, Any]], outer: str | None = None
) -> Iterator[tuple[Mapping[str, Any], list[str | None], str | None]]:
    """(step, nouns of the program's steps, noun of the step's first input), nested too."""
    nouns = _nouns(program, outer)
    for step in program:
        deps = step["dependencies"]
        first = (outer if deps[0] == -1 else nouns[deps[0]]) if deps else None
        yield step, nouns, first
        for arg in step["arguments"]:
            if isinstance(arg, list):
                yield from _walk(arg, first)


def _other_noun_takes(noun: str, truth: str, decoy: str) -> bool:
    """The data-level reading of a decoy (module docstring): the category the two share is the
    noun's, and the decoy is either an end of a two-pole scale, a default category's value, or
    a value the data shows on the noun or its class."""
    shared = set(TYPES.types(truth)) & set(TYPES.types(decoy))
    if TYPES.types(truth):
        if not shared & wk.categories(noun):
            return False
        free = wk.knowledge().default_categories | wk.two_pole_categories()
        if shared & wk.categories(noun) & free:
            return True
    return wk.takes_value(noun, decoy)


def word_errors(example: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The word-knowledge errors of one example: ``(kind, detail)`` pairs."""
    errors: list[tuple[str, str]] = []
    program = example["program"]
    for step, nouns, noun in _walk(program):
        op, args, deps = step["operation"], step["arguments"], step["dependencies"]
        if noun is not None:
            implied = wk.implied(noun)
            for a in args if op in ("filter", "verify_attr", "choose_attr") else ():
                if " ".join(a.lower().split()) in implied:
                    errors.append(("implied", f"{a} {noun}"))
            if op in ("query_attr", "all_same", "same_attr"):
                if args[0] not in wk.categories(noun):
                    errors.append(("category", f"{args[0]} of {noun}"))
                if any(args[0] in TYPES.types(v) for v in implied):
                    errors.append(("implied", f"{args[0]} of {noun}"))
            if op == "choose_attr":
                truth = str(example["answer"])
                decoy = args[1] if args[0] == truth else args[0]
                if not _other_noun_takes(noun, truth, decoy):
                    errors.append(("category", f"{noun} {truth} or {decoy}"))
            if op in ("count", "group_by_images") and deps[0] >= 0 and nouns[deps[0]]:
                counted = str(nouns[deps[0]])
                if (
                    is_mass(counted)
                    or is_collective(counted)
                    or wk.is_event(counted)
                    or wk.is_group(counted)
                ):
                    errors.append(("uncountable", counted))
        if op == "same_attr" and args[0] in wk.RELATIVE_SCALES:
            errors.append(("relative", f"objects of any noun with the same {args[0]}"))
        if op == "eq" and len(deps) == 2:
            a, b = program[deps[0]], program[deps[1]]
            if a["operation"] == b["operation"] == "query_attr":
                kind = a["arguments"][0]
                na = _nouns(program, None)[a["dependencies"][0]]
                nb = _nouns(program, None)[b["dependencies"][0]]
                if kind in wk.RELATIVE_SCALES and wk.noun_key(str(na)) != wk.noun_key(str(nb)):
                    errors.append(("relative", f"{na} and {nb}: same {kind}"))
    for word in re.findall(r"\b\w+ses\b", example["utterance"].lower()):
        if word[:-2] in PLURAL_ONLY:
            errors.append(("plural", word))
    return errors


def plain_referents(example: Mapping[str, Any], scenes: Mapping[str, SceneGraph]) -> int:
    """How many shown objects carry an implied-attribute noun without the attribute (the
    "plain boy" a reader counts as a young boy); 0 for examples without an implied use."""
    found = 0
    for kind, detail in word_errors(example):
        if kind != "implied" or " of " in detail:
            continue
        attribute, _, noun = detail.partition(" ")
        for image in example["scenes"]:
            for o in scenes[image].objects:
                if o.name == noun and attribute not in o.attributes:
                    found += 1
    return found


def count_errors(examples: Sequence[Mapping[str, Any]]) -> Counter[str]:
    """Examples per error kind (an example with two kinds counts in both)."""
    out: Counter[str] = Counter()
    for ex in examples:
        out.update({kind for kind, _ in word_errors(ex)})
    return out


def read_real(which: str) -> list[SceneGraph]:
    if which == "gqa":
        items = gqa.read(GQA_FILE, split="val", counter=ByteCounter())
    else:
        items = vg.read(VG_FILE, split="val", counter=ByteCounter())
    return [s for s in items if isinstance(s, SceneGraph)]


def _generate(scenes: list[SceneGraph], templates: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    provider = InMemoryRelated(scenes, presort=True)
    options = GenerationOptions(split="val", seed=1, templates=templates)
    return list(generate(provider, options, provider.images("val")))


@needs_real
@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("which", ["gqa", "vg"])
def test_real_sample_questions_respect_the_word_knowledge(which: str) -> None:
    scenes = read_real(which)
    examples = _generate(scenes)
    assert len(examples) > 1_000
    bad = [(ex["utterance"], word_errors(ex)) for ex in examples if word_errors(ex)]
    assert bad == []
    by_id = {s.image_id: s for s in scenes}
    assert sum(plain_referents(ex, by_id) for ex in examples) == 0
    # the forms the rules touch still occur
    forms = Counter(ex["template"] for ex in examples)
    for form in ("query_attr", "choose_attr", "specific_same_attr", "count_ref_objects"):
        assert forms[form] > 0, forms


@needs_real
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_real_sample_similarity_forms_compare_no_relative_scale() -> None:
    """The CLOSURE forms compare the referent with objects of any noun (``same_attr``)."""
    examples = _generate(read_real("gqa"), ("closure",))
    assert examples
    assert [ex["utterance"] for ex in examples if word_errors(ex)] == []


def test_the_checker_finds_each_error_kind() -> None:
    """The issue's examples, as programs, are each caught (so a clean run means something)."""

    def s(op: str, deps: list[int], *args: Any) -> dict[str, Any]:
        return {"operation": op, "arguments": list(args), "dependencies": deps}

    def ex(program: list[dict[str, Any]], answer: Any = True, text: str = "") -> dict[str, Any]:
        return {"program": program, "answer": answer, "utterance": text}

    young_boy = [s("find", [], "boy"), s("filter", [0], "young"), s("unique_images", [1])]
    assert ("implied", "young boy") in word_errors(ex([*young_boy, s("count", [2])], 1))
    ripeness = [s("find", [], "jacket"), s("unique", [0]), s("query_attr", [1], "ripeness")]
    assert ("category", "ripeness of jacket") in word_errors(ex(ripeness, "green"))
    parked = [s("find", [], "dog"), s("unique", [0]), s("choose_attr", [1], "lying", "parked")]
    assert word_errors(ex(parked, "lying"))[0][0] == "category"
    same = [
        s("find", [], "bus"), s("unique", [0]), s("query_attr", [1], "size"),
        s("find", [], "crab"), s("unique", [3]), s("query_attr", [4], "size"), s("eq", [2, 5]),
    ]  # fmt: skip
    assert ("relative", "bus and crab: same size") in word_errors(ex(same))
    for noun in ("mustard", "basil", "toilet paper", "produce", "audience", "game"):
        counted = [s("find", [], noun), s("group_by_images", [0])]
        assert ("uncountable", noun) in word_errors(ex(counted, 1)), noun
    assert ("plural", "blindses") in word_errors(ex([s("find", [], "x")], text="2 blindses"))


def _main() -> None:  # pragma: no cover - the measurement of docs/questions.md
    import sys

    for path in sys.argv[1:]:
        examples = [json.loads(line) for line in Path(path).read_text().splitlines()]
        by_id = {s.image_id: s for s in read_real("gqa")}
        counts = count_errors(examples)
        plain = sum(plain_referents(ex, by_id) for ex in examples)
        print(path, len(examples), dict(sorted(counts.items())), "plain referents", plain)


if __name__ == "__main__":  # pragma: no cover
    _main()
