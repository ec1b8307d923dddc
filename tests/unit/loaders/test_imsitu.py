"""imSitu reader: templates, frame choice, rel-mods, the PLACE setting, unknown verbs and nouns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from covr.scene.model import SceneGraph
from covr_loaders import imsitu
from covr_loaders.errors import REST_OF_FILE, InputFileError, Problem, RecordError
from covr_loaders.jsonio import ByteCounter
from covr_loaders.samples import SAMPLES

pytestmark = pytest.mark.unit
DIR = SAMPLES / "imsitu"


@pytest.fixture(scope="module")
def space() -> imsitu.Space:
    return imsitu.load_space(DIR / "imsitu_space.json", DIR / "generation_templates.tab")


def read(
    path: Path, space: imsitu.Space, **options: Any
) -> tuple[dict[str, SceneGraph], list[Problem]]:
    graphs: dict[str, SceneGraph] = {}
    problems: list[Problem] = []
    opts = imsitu.ImsituOptions(**options)
    for item in imsitu.read(path, split="dev", counter=ByteCounter(), space=space, options=opts):
        if isinstance(item, Problem):
            problems.append(item)
        else:
            graphs[item.original_id] = item
    return graphs, problems


def test_template_gives_order_and_connectors() -> None:
    slots = imsitu.parse_template("AGENT staples ITEM onto SURFACE using TOOL at PLACE")
    assert [(s.role, s.connector) for s in slots] == [
        ("agent", ""),
        ("item", "staples"),
        ("surface", "onto"),
        ("tool", "using"),
        ("place", "at"),
    ]
    # The space file's abstracts have articles and multi-word connectors.
    slots = imsitu.parse_template("the AGENT puts the ITEM on top of a DESTINATION.")
    assert slots[-1] == imsitu.RoleSlot("destination", "on top of")


def test_sample_three_modifier_frame(space: imsitu.Space) -> None:
    graphs, problems = read(DIR / "dev.json", space)
    assert problems == []
    stapling = graphs["stapling_1.jpg"]
    assert stapling.image_id == "imsitu:stapling_1.jpg"
    names = {o.id: o.name for o in stapling.objects}
    assert names == {
        "agent": "man",
        "item": "paper",
        "surface": "wall",
        "tool": "stapler",
        "place": "office",
    }
    (relation,) = stapling.relations
    assert (relation.name, relation.subject, relation.object) == ("stapling", "agent", "item")
    assert {(m.name, m.object) for m in relation.mods} == {
        ("onto", "surface"),
        ("using", "tool"),
        ("at", "place"),
    }
    cooking = graphs["cooking_90.jpg"].relations[0]
    assert len(cooking.mods) == 4  # every later role, not just the first modifier


def test_zero_modifiers_and_empty_roles(space: imsitu.Space) -> None:
    graphs, _ = read(DIR / "dev.json", space)
    reading = graphs["reading_55.jpg"]
    assert reading.relations[0].mods == ()
    assert {o.id for o in reading.objects} == {"agent", "item"}  # empty PLACE not stored
    assert all(o.name for g in graphs.values() for o in g.objects)


def test_first_frame_with_leading_roles(space: imsitu.Space) -> None:
    graphs, _ = read(DIR / "dev.json", space)
    assert graphs["stapling_2.jpg"].extras["frame"] == 1  # frame 0 has no agent


def test_majority_frame(space: imsitu.Space) -> None:
    frames = [
        {"agent": "n10287213", "vehicle": "n02374451", "place": ""},
        {"agent": "n10787470", "vehicle": "n02374451", "place": "n08569998"},
        {"agent": "n10787470", "vehicle": "n02374451", "place": "n08569998"},
    ]
    record = {"verb": "riding", "frames": frames}
    first = imsitu.convert("r.jpg", record, "dev", space)
    majority = imsitu.convert(
        "r.jpg", record, "dev", space, imsitu.ImsituOptions(frame_choice="majority")
    )
    assert first.extras["frame"] == 0
    assert majority.extras["frame"] == 1
    assert majority.object_by_id()["agent"].name == "woman"


def test_place_setting(space: imsitu.Space) -> None:
    graphs, _ = read(DIR / "dev.json", space, place_as_relmod=False)
    relation = graphs["stapling_1.jpg"].relations[0]
    assert {m.name for m in relation.mods} == {"onto", "using"}
    assert "place" not in graphs["stapling_1.jpg"].object_by_id()


def test_verb_without_template_uses_the_abstract(space: imsitu.Space) -> None:
    graphs, _ = read(DIR / "dev.json", space)
    drinking = graphs["drinking_21.jpg"].relations[0]
    assert {(m.name, m.object) for m in drinking.mods} == {("from", "container"), ("at", "place")}


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("record", "field", "message"),
    [
        ({"verb": "flying", "frames": [{"agent": "n10287213"}]}, "verb", "unknown verb"),
        (
            {"verb": "reading", "frames": [{"agent": "n10287213", "item": "n99999999"}]},
            "frames[0].item",
            "unknown noun",
        ),
        ({"verb": "reading", "frames": "x"}, "frames", "must be a list"),
        ({"verb": "reading", "frames": [{"agent": 5}]}, "frames[0].agent", "noun id"),
        ({"frames": []}, "verb", "missing"),
    ],
)
def test_bad_records(
    tmp_path: Path, space: imsitu.Space, record: Any, field: str, message: str
) -> None:
    good = {"verb": "reading", "frames": [{"agent": "n10787470", "item": "n06410904"}]}
    path = write(tmp_path, {"a.jpg": good, "b.jpg": record, "c.jpg": good})
    graphs, problems = read(path, space)
    assert sorted(graphs) == ["a.jpg", "c.jpg"]
    assert [(p.record, p.field) for p in problems] == [("b.jpg", field)]
    assert message in problems[0].message


def test_extra_noun_table(tmp_path: Path) -> None:
    table = tmp_path / "nouns.tab"
    table.write_text("n99999999\tteapot, tea kettle\n")
    space = imsitu.load_space(DIR / "imsitu_space.json", DIR / "generation_templates.tab", table)
    record = {"verb": "reading", "frames": [{"agent": "n10787470", "item": "n99999999"}]}
    graph = imsitu.convert("t.jpg", record, "dev", space)
    assert graph.object_by_id()["item"].name == "teapot"


def test_cut_at_256_kib(tmp_path: Path, space: imsitu.Space) -> None:
    good = {"verb": "reading", "frames": [{"agent": "n10787470", "item": "n06410904"}] * 3}
    text = json.dumps({f"reading_{i}.jpg": good for i in range(3000)}).encode()
    path = tmp_path / "train.json"
    path.write_bytes(text[: 256 * 1024])
    graphs, problems = read(path, space)
    assert len(graphs) > 100
    assert problems[-1].record == REST_OF_FILE


def test_bad_space_and_templates(tmp_path: Path) -> None:
    bad = tmp_path / "space.json"
    bad.write_text(json.dumps({"verbs": []}))
    with pytest.raises(InputFileError, match="verbs"):
        imsitu.load_space(bad)
    tab = tmp_path / "t.tab"
    tab.write_text("stapling AGENT staples ITEM\n")
    with pytest.raises(InputFileError, match="line 1"):
        imsitu.load_templates(tab)


def test_the_verbs_preposition_is_kept(space: imsitu.Space) -> None:
    """Issue 16 item 8: ``AGENT surfs on TOOL at PLACE`` gives the relation ``surfing on`` (with
    its ``at`` rel-mod), so the text says "a man that is surfing on a surfboard at a beach"."""
    from covr.scene.enumerate import enumerate_subgraphs
    from covr.scene.text import describe

    graphs, _ = read(DIR / "dev.json", space)
    (surfing,) = graphs["surfing_12.jpg"].relations
    assert surfing.name == "surfing on"
    assert surfing.id == "surfing"
    assert [m.name for m in surfing.mods] == ["at"]
    assert graphs["surfing_12.jpg"].extras["verb"] == "surfing"
    assert graphs["stapling_1.jpg"].relations[0].name == "stapling"  # no particle, no change
    texts = {describe(g) for g in enumerate_subgraphs(graphs["surfing_12.jpg"])}
    assert any(" that is surfing on a" in t and " at a" in t for t in texts), texts
    assert not any("surfing a" in t for t in texts)


def test_competing_in_a_boxing_match(space: imsitu.Space) -> None:
    """The issue's example, on a template with rel-mods: "competing in", never "competing a"."""
    space.verbs["competing"] = imsitu.parse_template(
        "AGENT competes in COMPETITION against OPPONENT at PLACE"
    )
    frame = {"agent": "n10287213", "competition": "n10287213", "opponent": "n10787470"}
    graph = imsitu.convert("c.jpg", {"verb": "competing", "frames": [frame]}, "dev", space)
    (relation,) = graph.relations
    assert relation.name == "competing in"
    assert [(m.name, m.object) for m in relation.mods] == [("against", "opponent")]


@pytest.mark.parametrize(
    ("connector", "particle"),
    [
        ("competes in", "in"),
        ("picks up", "up"),
        ("staples", ""),
        ("carefully slices", ""),
        ("looks out at", "out at"),
        ("waits for", "for"),
    ],
)
def test_verb_particle(connector: str, particle: str) -> None:
    assert imsitu.verb_particle(connector) == particle


def _space_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "imsitu_space.json"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # issue 40 row 9: a RecursionError and a TypeError came out as tracebacks
        ('{"verbs": ' + "[" * 100_000 + "]" * 100_000 + ', "nouns": {}}', "nested too deeply"),
        ('{"verbs": {"stapling": {"order": 5}}, "nouns": {}}', "verbs.stapling.order: must be"),
        ('{"verbs": {"a": {"x": ' + "7" * 5000 + '}}, "nouns": {}}', "more than 4,300 digits"),
        ('{"verbs": {"a": {"roles": "agent"}}, "nouns": {}}', "verbs.a.roles: must be an object"),
        ('{"verbs": {"a": {"abstract": 3}}, "nouns": {}}', "verbs.a.abstract: must be a string"),
        # issue 40 row 12: a key twice in one object kept its last value silently
        (
            '{"verbs": {"stapling": {"order": ["agent"], "order": ["item"]}}, "nouns": {}}',
            "verbs.stapling.order: the key appears twice",
        ),
        ('{"verbs": {"a": {}, "b": {}, "b": {}}, "nouns": {}}', "verbs.b: the key appears twice"),
        (
            '{"verbs": {}, "nouns": {"n1": {"gloss": ["x"]}, "n1": {"gloss": ["y"]}}}',
            "nouns.n1: the key appears twice",
        ),
        ('{"verbs": {"a": {"order": ["agent", "AGENT"]}}, "nouns": {}}', "named twice"),
    ],
    ids=[
        "deep",
        "order-5",
        "digits",
        "roles-str",
        "abstract-int",
        "dup-order",
        "dup-verb",
        "dup-noun",
        "order-repeats",
    ],
)
def test_a_bad_space_file_is_one_error_naming_the_field(
    tmp_path: Path, text: str, words: str
) -> None:
    """Issue 40 rows 9 and 12: every fault of the space file is an :class:`InputFileError`
    (``covr load`` exits 2 with its one line) naming the field, never a traceback or a silent
    last-wins."""
    path = _space_file(tmp_path, text)
    with pytest.raises(InputFileError) as caught:
        imsitu.load_space(path)
    assert words in str(caught.value)
    assert str(caught.value).startswith(str(path))


def test_a_template_line_twice_is_an_error(tmp_path: Path) -> None:
    """Two template lines for one verb: the second no longer wins silently (issue 40 row 12)."""
    tab = tmp_path / "t.tab"
    tab.write_text("stapling\tAGENT staples ITEM\nreading\tAGENT reads ITEM\nstapling\tAGENT x\n")
    with pytest.raises(InputFileError, match="line 3: 'stapling' repeats line 1"):
        imsitu.load_templates(tab)


def test_a_role_twice_in_a_frame_is_a_problem(space: imsitu.Space) -> None:
    """Frame keys are read case-insensitively, so ``agent`` and ``AGENT`` are one role named
    twice: a problem naming it, not the last value silently (issue 40 row 12)."""
    record = {"verb": "reading", "frames": [{"agent": "n10787470", "AGENT": "n10287213"}]}
    with pytest.raises(RecordError) as caught:
        imsitu.convert("t.jpg", record, "dev", space)
    assert caught.value.field == "frames[0].AGENT"
    assert "twice" in caught.value.message


def test_possessive_and_repeated_roles_are_slots() -> None:
    """Issue 40 row 12: ``AGENT's`` was not a slot, so "agent's" became connector words and a
    later slot's connector ran over it ("brushes agent's"); a possessive role not named before
    was left out of the sentence's order."""
    roles = ["agent", "victim", "hair", "tool", "place"]
    slots = imsitu.parse_template("AGENT brushes AGENT's HAIR with TOOL at PLACE", roles)
    assert [(s.role, s.connector) for s in slots] == [
        ("agent", ""),
        ("hair", "brushes"),
        ("tool", "with"),
        ("place", "at"),
    ]
    slots = imsitu.parse_template("the AGENT combs the VICTIM\u2019s HAIR using a TOOL", roles)
    assert [(s.role, s.connector) for s in slots] == [
        ("agent", ""),
        ("hair", "combs"),
        ("victim", "of"),
        ("tool", "using"),
    ]
    # a role named twice: its second mention ends the words before it, the next slot's
    # connector is only what follows
    slots = imsitu.parse_template("AGENT hugs VICTIM. AGENT smiles at PLACE", roles)
    assert [(s.role, s.connector) for s in slots] == [
        ("agent", ""),
        ("victim", "hugs"),
        ("place", "smiles at"),
    ]


def test_a_possessive_abstract_becomes_a_relation_with_mods(tmp_path: Path) -> None:
    """The abstract of a verb the templates do not cover, through to the scene graph: the
    owned role is the verb's object and its owner an ``of`` rel-mod."""
    space_file = _space_file(
        tmp_path,
        json.dumps(
            {
                "verbs": {
                    "combing": {
                        "abstract": "the AGENT combs the VICTIM's HAIR using a TOOL",
                        "order": ["agent", "victim", "hair", "tool"],
                    }
                },
                "nouns": {n: {"gloss": [n]} for n in ("man", "girl", "hair", "comb")},
            }
        ),
    )
    space = imsitu.load_space(space_file)
    frame = {"agent": "man", "victim": "girl", "hair": "hair", "tool": "comb"}
    graph = imsitu.convert("c.jpg", {"verb": "combing", "frames": [frame]}, "dev", space)
    (relation,) = graph.relations
    assert (relation.subject, relation.object) == ("agent", "hair")
    assert {(m.name, m.object) for m in relation.mods} == {("of", "victim"), ("using", "tool")}
