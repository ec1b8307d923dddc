"""Settings per room (issue 38 item 3): one reader of the ``COVR_*`` variables
(:class:`covr.settings.Settings`), one frozen section per room built from it, and only entry
points reading the whole object.

What is checked: every field of ``Settings`` is in a section (a new field cannot be forgotten)
and in exactly one, except the few :data:`covr.settings.SHARED_FIELDS` that name their readers;
each section holds only settings fields or other sections; the sections carry the values read,
cannot be changed, and pickle (a Ray task gets them as plain data); and no module outside the
entry points below imports ``Settings`` or ``get_settings``.
"""

from __future__ import annotations

import ast
import dataclasses
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from covr.models import terms
from covr.related import exclusivity
from covr.settings import SECTIONS, SHARED_FIELDS, Settings

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]

ENTRY_POINTS = {
    # every `covr` command reads the settings through load_settings(), afresh per command, and
    # passes each room its section
    "server/covr/cli/common.py",
    # `covr build`: its stage fingerprints name every setting that shapes a release, by name
    # prefix across sections (load_, limit_, subgraph_, related_, questions_, models_dir)
    "server/covr/cli/build.py",
    # the container's HEALTHCHECK (`python -m covr.service.healthcheck`), a process of its own
    "server/covr/service/healthcheck.py",
    # developer commands (`python -m covr.questions.mass_nouns`, `... .word_knowledge`): their
    # main() reads the models' section to open WordNet
    "server/covr/questions/mass_nouns.py",
    "server/covr/questions/word_knowledge/build.py",
}
"""The modules besides ``covr/settings.py`` that may import ``Settings`` or ``get_settings``."""

WHOLE = {"Settings", "get_settings"}


def _make(**values: Any) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def _is_section(value: Any) -> bool:
    return any(isinstance(value, cls) for cls, _ in SECTIONS.values())


def _reads(name: str) -> set[str]:
    """The ``Settings`` fields section ``name`` holds."""
    cls, prefix = SECTIONS[name]
    return {prefix + f.name for f in dataclasses.fields(cls)} & set(Settings.model_fields)


def test_every_field_is_in_exactly_one_section() -> None:
    readers: dict[str, list[str]] = {name: [] for name in Settings.model_fields}
    for section in SECTIONS:
        for name in _reads(section):
            readers[name].append(section)
    forgotten = sorted(name for name, found in readers.items() if not found)
    assert not forgotten, f"fields in no section (add each to its room's section): {forgotten}"
    twice = {
        name: sorted(found)
        for name, found in readers.items()
        if len(found) > 1 and name not in SHARED_FIELDS
    }
    assert not twice, f"fields in more than one section (or list them in SHARED_FIELDS): {twice}"
    for name, sections in SHARED_FIELDS.items():
        assert sorted(readers[name]) == sorted(sections), name


def test_a_section_holds_settings_fields_or_sections_only() -> None:
    """A section's other fields would be values nobody can set: each field is a ``Settings``
    field (with the section's prefix) or another section (the loaders' scene limits)."""
    settings = _make()
    for name, (cls, prefix) in SECTIONS.items():
        built = getattr(settings, name)
        assert type(built) is cls
        for f in dataclasses.fields(cls):
            value = getattr(built, f.name)
            if prefix + f.name in Settings.model_fields:
                assert value == getattr(settings, prefix + f.name), (name, f.name)
            else:
                assert _is_section(value), f"{cls.__name__}.{f.name} is no setting"


def test_sections_carry_the_values_read_and_are_frozen() -> None:
    settings = _make(
        graph_uri="bolt://db:7687",
        limit_split_chars=8,
        load_writers=3,
        related_positives=7,
        questions_workers=2,
        view_port=9000,
        ray_shards=4,
        service_page_size=10,
        model_threads=2,
    )
    assert settings.graph.graph_uri == "bolt://db:7687"
    assert settings.graph.graph_user == "neo4j"
    assert settings.limits.split_chars == 8
    assert settings.load.limits == settings.limits
    assert settings.load.load_writers == 3
    assert settings.load.load_batch_images == 500  # the Neo4j default, applied before the section
    assert settings.related.related_positives == 7
    assert settings.questions.questions_workers == 2
    assert settings.view.view_port == 9000
    assert settings.scale.ray_shards == 4
    assert settings.service.service_page_size == 10
    assert settings.models.model_threads == 2
    server = settings.server
    assert (server.service, server.graph, server.load) == (
        settings.service,
        settings.graph,
        settings.load,
    )
    assert (server.related, server.models, server.questions) == (
        settings.related,
        settings.models,
        settings.questions,
    )
    assert settings.tasks.scale == settings.scale
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.graph.graph_uri = ""  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.server.service = settings.service  # type: ignore[misc]


def test_a_copy_with_changes_gives_changed_sections() -> None:
    """``covr serve --port`` applies its flags with ``model_copy``: the sections are built from
    the copy, never remembered from the original."""
    settings = _make()
    assert settings.service.service_port == 50051
    changed = settings.model_copy(update={"service_port": 0})
    assert changed.service.service_port == 0
    assert changed.server.service.service_port == 0


def test_a_task_gets_its_sections_as_plain_data() -> None:
    """What a Ray task receives (``covr.scale.tasks.Job``): the sections pickle whole, the
    secrets included, so a worker reads no environment of its own."""
    settings = _make(graph_password="pw", ray_cpus=2)
    tasks = pickle.loads(pickle.dumps(settings.tasks))
    assert tasks == settings.tasks
    assert tasks.graph.graph_password is not None
    assert tasks.graph.graph_password.get_secret_value() == "pw"
    assert tasks.scale.ray_cpus == 2


def test_the_memo_defaults_are_the_settings_defaults() -> None:
    """The two process-wide memos sized before any settings section reaches them use the same
    default as their setting."""
    assert Settings.model_fields["model_cache_terms"].default == terms.TERM_CACHE
    assert Settings.model_fields["related_cache_names"].default == exclusivity.NAMES_CACHE


def _sources() -> Iterator[Path]:
    for top in ("server/covr", "loaders/covr_loaders", "cypher"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if "/v1/" not in path.as_posix():
                yield path


def _whole_object_imports(path: Path) -> set[str]:
    """``Settings`` / ``get_settings`` imported from ``covr.settings`` (anywhere in the file:
    module level, in a function, for type checking) or ``covr.settings`` imported whole."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "covr.settings":
            found |= {alias.name for alias in node.names} & WHOLE
        elif isinstance(node, ast.ImportFrom) and node.module == "covr" and node.level == 0:
            found |= {f"covr.{a.name}" for a in node.names if a.name == "settings"}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name == "covr.settings"}
    return found


def test_only_entry_points_read_the_whole_settings() -> None:
    """Rooms take their section; only the entry points (:data:`ENTRY_POINTS`) read the
    settings and pass sections down."""
    readers = {
        path.relative_to(ROOT).as_posix(): sorted(found)
        for path in _sources()
        if (found := _whole_object_imports(path))
    }
    readers.pop("server/covr/settings.py", None)
    outside = {k: v for k, v in readers.items() if k not in ENTRY_POINTS}
    assert not outside, f"modules that take the whole settings (give them a section): {outside}"
    stale = sorted(ENTRY_POINTS - set(readers))
    assert not stale, f"ENTRY_POINTS names modules that no longer read the settings: {stale}"


def test_load_settings_is_the_commands_door() -> None:
    """``covr.cli.common.load_settings`` returns the whole object: only command modules call it."""
    users = sorted(
        path.relative_to(ROOT).as_posix()
        for path in _sources()
        if "load_settings" in path.read_text(encoding="utf-8")
        and not path.relative_to(ROOT).as_posix().startswith("server/covr/cli/")
    )
    assert users == []
