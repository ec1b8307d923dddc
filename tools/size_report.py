"""Modules over 600 lines and functions over 80, each with the reason it is that large (issue 38:
size limits are review triggers, not gates).

``make lint`` prints the report; nothing fails on size. A reviewer reads a new line without a
reason as a question: split it by responsibility, or record here why it stays whole.
:data:`REVIEWED` is the one table of reasons; tests/unit/test_architecture.py checks that every
entry still names an existing module or function over a limit, so the table does not go stale.

    .venv/bin/python tools/size_report.py
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("server", "loaders", "clients")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80

GENERATED_DIRS = {"v1", "_proto"}
"""``server/covr/v1`` and ``clients/python/covr_client/_proto``: protoc's output (make proto)."""
SKIPPED_DIRS = {"build", "node_modules", "__pycache__", ".venv", "target"}
"""Build output (``clients/python/build/lib`` is a copy made by ``pip wheel``), not sources."""

REVIEWED: dict[str, str] = {
    "server/covr/cli/questions.py": "the question engine's batch commands (generate, balance, "
    "export, stats) with the reports they share; generate's Ray path is here too, beside the "
    "checks, options and reports it shares with the single-process run (it had been a wrapper "
    "in cli/scale.py that rewrote the command's signature, for the size limit: issue 38)",
    "server/covr/cli/view.py::view": "a typer command: 11 flags with their help text are half "
    "of it; the body checks exposure before indexing anything, opens the inputs and hands off "
    "to the static writer or the server",
    "server/covr/cli/questions.py::generate": "a typer command: its length is one declaration "
    "with help text per flag (19 of them, --ray/--shards/--resume included); the body only "
    "checks flag combinations and hands off to the Ray run, the store run or the memory run",
    "server/covr/cli/splits.py": "the splits room's commands (properties, the split builders, "
    "correlate, easiness, evaluate, baselines) with the one bad-input handler and example "
    "reader they share; baselines and correlate had been put in modules of their own only for "
    "the size limit (issue 38)",
    "server/covr/models/presence.py": "one model file's whole contract: its feature layout "
    "(graph, co-occurrence and class features, versioned together), hiding, the ONNX runner "
    "and the serving API; splitting the layout from the runner would let them drift",
    "server/covr/cli/model_jobs.py::presence_data": "the presence recipe's data stage: read, "
    "split by id hash, mine the real, synthetic and held-out parts and summarise them, in the "
    "order its progress stages report",
    "server/covr/cli/models.py::train_presence_cmd": "a typer command: eight flags with help "
    "text, then train, compare and export in the order the docs describe",
    "loaders/covr_loaders/writer.py": "the load pipeline whole: the job and its summary, the "
    "read side (inline or a forked reader process) and the write loop that consumes its "
    "batches; the read side had been a module of its own only for the size limit, importing "
    "the writer's private reader back (issue 38)",
    "server/covr/splits/baselines.py": "the shortcut baselines of a split, one per baseline of "
    "the paper (MAJ, MAJTEMPL, text-only, image-identity), fitted and reported together; "
    "MAJ/MAJTEMPL moved here from evaluate.py, which had imported this module back (issue 38)",
    "server/covr/settings.py": "the one settings object: every COVR_* field with its "
    "description and validation in one class; the cache sizes, the Ray and the batch-stream "
    "fields had been base classes of their own only for the size limit (issue 38); the "
    "properties that build each room's section from them sit beside them (issue 38 item 3)",
}
"""``path`` or ``path::function`` -> why it is over the limit (the one table of reasons)."""


def sources(root: Path = ROOT) -> Iterator[Path]:
    for top in CHECKED:
        for path in sorted((root / top).rglob("*.py")):
            parts = set(path.relative_to(root).parts[:-1])
            if parts & SKIPPED_DIRS or parts & GENERATED_DIRS:
                continue
            if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
                continue
            yield path


def functions(tree: ast.AST) -> Iterator[tuple[str, int]]:
    """Every function and method with its length in lines (decorators and docstring included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            assert node.end_lineno is not None
            yield node.name, node.end_lineno - first + 1


def measure(root: Path = ROOT) -> tuple[dict[str, int], set[str]]:
    """Everything over a limit (``path`` or ``path::function`` -> its length in lines), and
    every module and function that exists (to check the table's entries against)."""
    over: dict[str, int] = {}
    known: set[str] = set()
    for path in sources(root):
        name = path.relative_to(root).as_posix()
        known.add(name)
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            over[name] = lines
        for function, length in functions(ast.parse(text, filename=name)):
            known.add(f"{name}::{function}")
            if length > MAX_FUNCTION_LINES:
                over[f"{name}::{function}"] = max(length, over.get(f"{name}::{function}", 0))
    return over, known


def report(root: Path = ROOT) -> str:
    over, _ = measure(root)
    lines = [
        f"size review: modules over {MAX_MODULE_LINES} lines, functions over "
        f"{MAX_FUNCTION_LINES} (tools/size_report.py; reasons in REVIEWED)"
    ]
    for name in sorted(over):
        reason = REVIEWED.get(name, "NO REASON RECORDED: split it or add a reason to REVIEWED")
        lines.append(f"  {over[name]:5d}  {name}\n         {reason}")
    stale = sorted(set(REVIEWED) - set(over))
    if stale:
        lines.append(
            "  reasons for what is no longer over a limit (delete them): " + ", ".join(stale)
        )
    return "\n".join(lines)


def main() -> int:
    print(report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
