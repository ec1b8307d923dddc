"""The house rules that keep the code easy to live in (issue 19, DESIGN.md §1), checked on the
source text: the import doors between the server and the SDK, no import circle and no private
name imported across files in ``server/covr`` and ``loaders`` (tools/import_graph.py), and a
size table that does not go stale.

Sizes are review triggers, not gates (issue 38): ``make lint`` prints every module over 600
lines and function over 80 with the reason recorded for it in the one table,
:data:`tools.size_report.REVIEWED`. Nothing here fails because code is large; it fails when a
recorded reason names something that no longer exists or is no longer over a limit.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools import import_graph, size_report

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def test_the_size_table_names_what_is_over_a_limit() -> None:
    """Every reason in ``REVIEWED`` names an existing module or function that is still over a
    limit (a reason for code that was split, renamed or deleted must leave the table)."""
    over, known = size_report.measure(ROOT)
    missing = sorted(k for k in size_report.REVIEWED if k not in known)
    assert not missing, f"tools/size_report.py REVIEWED names what does not exist: {missing}"
    small = sorted(k for k in size_report.REVIEWED if k not in over)
    assert not small, f"no longer over a limit, delete from REVIEWED: {small}"


def test_no_import_circle() -> None:
    """No circle in the import graph of ``server/covr`` and ``loaders`` (module- or
    function-level or type-only imports alike). The last two, in ``questions/``, closed with
    issue 38: the options of a request in ``questions/options.py`` (the engine and the quotas
    had imported the driver for the type), the word-knowledge reader apart from its builder
    (``questions/word_knowledge/``: the builder imports ``mass_nouns`` and ``part_whole``, which
    import only the reader and ``word_knowledge.senses``)."""
    circles = import_graph.build(ROOT).circles()
    assert not circles, f"import circles: {circles} (tools/import_graph.py prints their edges)"


def test_no_private_name_is_imported_across_files() -> None:
    """``from covr.x import _name`` (or ``module._name``) outside ``related/`` (issue 38 item 1
    resolves its own): a name another file needs is public, or the code moves to its user."""
    private = [
        p
        for p in import_graph.build(ROOT).private
        if not (p[0].startswith("covr.related.") and p[1].startswith("covr.related"))
    ]
    assert not private, f"private names imported across files: {sorted(set(private))}"


def _sources() -> Iterator[Path]:
    return size_report.sources(ROOT)


def _imports(path: Path) -> Iterator[str]:
    """Every module name ``path`` imports (absolute imports; relative ones stay in a package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def _importers(top: str, package: str) -> list[str]:
    return sorted(
        path.relative_to(ROOT).as_posix()
        for path in _sources()
        if path.relative_to(ROOT).parts[0] == top
        for name in _imports(path)
        if name == package or name.startswith(package + ".")
    )


def test_the_server_does_not_import_the_sdk() -> None:
    """The server has its own stubs (``covr.v1``); the SDK is a client, not a library of it."""
    assert _importers("server", "covr_client") == []
    assert _importers("loaders", "covr_client") == []


def test_the_sdk_does_not_import_the_server() -> None:
    """The SDK installs on its own (grpcio + protobuf); its test helper runs ``covr serve``."""
    assert _importers("clients", "covr") == []
    assert _importers("clients", "covr_loaders") == []
