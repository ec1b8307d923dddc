"""Every shell example of README.md and docs/*.md runs as written (issue 20, item 2).

The ```bash, ```sh and ```console blocks of each file are run in order, as one reader would
type them, in a fresh working directory with a fresh ``COVR_DATA_DIR``, with the project's
``.venv`` on ``PATH`` (so ``covr`` is the venv's command; ``source .venv/bin/activate`` works
because the working directory links the venv). A broken example fails here instead of in a
newcomer's first hour.

Convention for a block that must not run here (a server that runs until Ctrl-C, Docker, the
whole test suite): an HTML comment right before the fence (blank lines between are allowed),

    <!-- not-run: starts a server that runs until stopped -->

The reason is required, and it is meant for a few blocks only: a block that merely takes long
should be made cheaper instead (fewer images), so the examples stay checked. In a ``console``
block only the lines starting with ``$ `` are commands (the rest is output).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOC_FILES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
SHELLS = ("bash", "sh", "shell", "console")
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(?P<reason>.*?)\s*-->$")
FILE_TIMEOUT_S = 600.0
"""Budget of one file's blocks together (they take well under a minute each on a quiet
machine; the margin is for a loaded 2-core machine)."""


@dataclass(frozen=True)
class Block:
    """One shell block: where it starts (1-based line of the fence), its script, and why it
    is not run (``None`` = it runs)."""

    line: int
    script: str
    skip: str | None


def shell_blocks(text: str) -> list[Block]:
    """The shell blocks of a Markdown text in order; raises ``ValueError`` for a ``not-run``
    marker without a reason or an unclosed fence (a doc error, named by line)."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"^```\s*([\w+-]*)", lines[i])
        if fence is None:
            i += 1
            continue
        start = i
        end = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("```")), None)
        if end is None:
            raise ValueError(f"line {start + 1}: the code block is never closed")
        i = end + 1
        if (fence.group(1) or "") not in SHELLS:
            continue
        body = lines[start + 1 : end]
        if fence.group(1) == "console":
            body = [ln[2:] for ln in body if ln.startswith("$ ")]
        blocks.append(Block(start + 1, "\n".join(body) + "\n", _marker(lines, start)))
    return blocks


def _marker(lines: list[str], fence: int) -> str | None:
    """The ``not-run`` reason of the block whose fence is at index ``fence``, if any."""
    k = fence - 1
    while k >= 0 and not lines[k].strip():
        k -= 1
    if k < 0:
        return None
    found = NOT_RUN.match(lines[k].strip())
    if found is None:
        return None
    if not found.group("reason"):
        raise ValueError(f"line {k + 1}: a not-run marker needs a reason")
    return found.group("reason")


def _documented() -> list[Path]:
    return [p for p in DOC_FILES if shell_blocks(p.read_text(encoding="utf-8"))]


def _environment(data: Path) -> dict[str, str]:
    """The environment of a new user: no ``COVR_*`` settings but a fresh data directory, the
    venv's commands first on ``PATH``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVR_")}
    env["COVR_DATA_DIR"] = str(data)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("VIRTUAL_ENV", None)
    return env


@pytest.mark.timeout(FILE_TIMEOUT_S + 60)
@pytest.mark.parametrize("doc", _documented(), ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_commands_run(doc: Path, tmp_path: Path) -> None:
    blocks = shell_blocks(doc.read_text(encoding="utf-8"))
    runnable = [b for b in blocks if b.skip is None]
    if not runnable:
        pytest.skip(f"every shell block of {doc.name} is marked not-run")
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir()
    data.mkdir()
    (work / ".venv").symlink_to(Path(sys.executable).parent.parent)
    env = _environment(data)
    deadline = time.monotonic() + FILE_TIMEOUT_S
    try:
        for block in runnable:
            code, out, err = _run_block(block.script, work, env, deadline - time.monotonic())
            assert code == 0, (
                f"{doc.name}:{block.line}: exit {code}\n{block.script}\n"
                f"--- stdout\n{out[-3000:]}\n--- stderr\n{err[-3000:]}"
            )
    finally:  # a block that started the shared store server and failed before stopping it
        covr = str(Path(sys.executable).parent / "covr")
        subprocess.run([covr, "db", "stop"], cwd=work, env=env, capture_output=True, timeout=120)


def _run_block(script: str, cwd: Path, env: dict[str, str], seconds: float) -> tuple[int, str, str]:
    """Run one block with ``bash -euo pipefail`` in its own process group, so a block that
    runs past what is left of the file's budget is stopped with everything it started
    (generation workers too)."""
    process = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=max(1.0, seconds))
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        return -1, out, f"{err}\n(stopped: the file's {FILE_TIMEOUT_S:.0f} s were used up)"
    finally:
        if process.poll() is None:  # the test itself was interrupted
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return process.returncode, out, err


def test_blocks_and_markers_are_read_as_documented() -> None:
    text = "\n".join(
        [
            "```bash",
            "covr doctor",
            "```",
            "<!-- not-run: runs until Ctrl-C -->",
            "",
            "```sh",
            "covr serve",
            "```",
            "```python",
            "print(1)",
            "```",
            "```console",
            "$ covr --help",
            "Usage: covr",
            "```",
        ]
    )
    blocks = shell_blocks(text)
    assert [(b.line, b.script, b.skip) for b in blocks] == [
        (1, "covr doctor\n", None),
        (6, "covr serve\n", "runs until Ctrl-C"),
        (12, "covr --help\n", None),
    ]
    with pytest.raises(ValueError, match="needs a reason"):
        shell_blocks("<!-- not-run: -->\n```bash\nls\n```\n")
    with pytest.raises(ValueError, match="never closed"):
        shell_blocks("```bash\nls\n")


def test_every_doc_file_parses_and_few_blocks_are_skipped() -> None:
    blocks = [b for p in DOC_FILES for b in shell_blocks(p.read_text(encoding="utf-8"))]
    skipped = [b for b in blocks if b.skip is not None]
    assert blocks
    assert len(skipped) <= len(blocks) // 2, "most documented commands must be checked"
