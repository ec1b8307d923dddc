"""The house rules that keep the code easy to live in (issue 19, DESIGN.md §1), checked on the
source text: no module over 600 lines and no function over 80 lines in ``server/``, ``loaders/``
and ``clients/`` (generated stubs excluded), and the import doors between the server and the SDK.

Two tables list what may break the size rules today. :data:`EXCEPTIONS` holds what is justified
to stay large (with the reason). :data:`PENDING` holds today's offenders that their owners are
splitting; an entry that is no longer over the limit fails the test, so the table only shrinks
(delete the line when you split the code).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ("server", "loaders", "clients")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80

GENERATED_DIRS = {"v1", "_proto"}
"""``server/covr/v1`` and ``clients/python/covr_client/_proto``: protoc's output (make proto)."""
SKIPPED_DIRS = {"build", "node_modules", "__pycache__", ".venv", "target"}
"""Build output (``clients/python/build/lib`` is a copy made by ``pip wheel``), not sources."""

EXCEPTIONS: dict[str, str] = {
    "server/covr/cli/questions.py::generate": "a typer command: its length is one declaration "
    "with help text per flag (16 of them); the body only checks flag combinations and hands off "
    "to generation_options and the provider it names",
    "server/covr/questions/word_knowledge.py": "the three reviewed word-knowledge files' reader "
    "(the rules generation applies, ~340 lines) and the command that derives them from the real "
    "samples and WordNet (~540 lines): one rule, its data source and its review lists read in "
    "one place, as mass_nouns.py does for its list",
    "server/covr/cli/splits.py": "the splits room's commands (properties, the split builders, "
    "easiness, evaluate, baselines) with the one bad-input handler they share; the baselines "
    "command had been put in a module of its own only for the size limit (issue 38)",
    "server/covr/models/presence.py": "one model file's whole contract: its feature layout "
    "(graph, co-occurrence and class features, versioned together), hiding, the ONNX runner "
    "and the serving API; splitting the layout from the runner would let them drift",
    "server/covr/cli/model_jobs.py::presence_data": "the presence recipe's data stage: read, "
    "split by id hash, mine the real, synthetic and held-out parts and summarise them, in the "
    "order its progress stages report",
    "server/covr/cli/models.py::train_presence_cmd": "a typer command: eight flags with help "
    "text, then train, compare and export in the order the docs describe",
}
"""``path`` or ``path::function`` → why it may stay over the limit."""

PENDING: dict[str, str] = {}
"""Today's offenders owned by others (``path`` or ``path::function`` → owner)."""


def _sources() -> Iterator[Path]:
    for top in CHECKED:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = set(path.relative_to(ROOT).parts[:-1])
            if parts & SKIPPED_DIRS or parts & GENERATED_DIRS:
                continue
            if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
                continue
            yield path


def _functions(tree: ast.AST) -> Iterator[tuple[str, int]]:
    """Every function and method with its length in lines (decorators and docstring included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            assert node.end_lineno is not None
            yield node.name, node.end_lineno - first + 1


def offenders() -> dict[str, int]:
    """``path`` (module) or ``path::function`` → its length, for everything over a limit."""
    found: dict[str, int] = {}
    for path in _sources():
        name = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            found[name] = lines
        for function, length in _functions(ast.parse(text, filename=name)):
            if length > MAX_FUNCTION_LINES:
                found[f"{name}::{function}"] = max(length, found.get(f"{name}::{function}", 0))
    return found


def test_no_module_or_function_over_the_limits() -> None:
    unexpected = {k: v for k, v in offenders().items() if k not in EXCEPTIONS and k not in PENDING}
    assert not unexpected, (
        f"over {MAX_MODULE_LINES} lines per module / {MAX_FUNCTION_LINES} per function "
        f"(split it, or justify it in EXCEPTIONS): {unexpected}"
    )


def test_pending_entries_are_still_over_the_limit() -> None:
    """A pending entry that was split (or removed) must leave the table: it only shrinks."""
    found = offenders()
    done = sorted(k for k in PENDING if k not in found)
    assert not done, f"no longer over the limit, delete from PENDING: {done}"


def test_exceptions_are_still_needed() -> None:
    found = offenders()
    assert not [k for k in EXCEPTIONS if k not in found]


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
