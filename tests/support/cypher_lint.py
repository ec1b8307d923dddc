"""Runs Neo4j's own Cypher 5 front-end (npm @neo4j-cypher/language-support) over statements."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

TOOL_DIR = Path(__file__).resolve().parents[2] / "tools" / "cypher-lint"


def lint(statements: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """``[(name, text)]`` → ``[{name, errors, warnings}]``; raises when the tool is not installed."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not installed; run `make setup`")
    if not (TOOL_DIR / "node_modules" / "@neo4j-cypher" / "language-support").is_dir():
        raise RuntimeError(f"{TOOL_DIR}/node_modules is missing; run `make setup`")
    payload = json.dumps([{"name": n, "text": t} for n, t in statements])
    done = subprocess.run(
        [node, str(TOOL_DIR / "lint.cjs")],
        input=payload,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cypher lint failed ({done.returncode}): {done.stderr[-2000:]}")
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result
