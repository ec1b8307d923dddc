"""The question engine reaches the related room only through its public API (issue 19 item 1)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

SERVER = Path(__file__).resolve().parents[3] / "server" / "covr"
ALLOWED = {"covr.related.api", "covr.related.exclusivity"}
"""``api``: providers, results, errors; ``exclusivity``: the attribute tables it ships."""
KNOWN = {
    ("sources.py", "covr.related.store_provider"),
}
"""Doors still open, with their owner: the request sources name the store provider's type
(the service helper's module; :class:`~covr.related.api.RelatedProvider` would do)."""


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def test_questions_import_only_the_related_api() -> None:
    wrong = sorted(
        (path.name, name)
        for path in (SERVER / "questions").glob("*.py")
        for name in _imports(path)
        if name.startswith("covr.related") and name not in ALLOWED
    )
    assert [w for w in wrong if w not in KNOWN] == []


def test_no_production_module_imports_the_test_oracle_by_its_old_name() -> None:
    """The matcher moved to ``covr.related.matcher``; ``reference`` is gone."""
    users = sorted(
        path.relative_to(SERVER).as_posix()
        for path in SERVER.rglob("*.py")
        if "covr.related.reference" in _imports(path)
    )
    assert users == []
