"""Every command's ``--help`` reads well for a user: conventional metavars, no internal
references, no sentences broken by hard wraps, no doubled negative flags (issue 20, item 8)."""

from __future__ import annotations

import itertools
import re

import pytest
import typer
from typer.testing import CliRunner

from covr.cli.main import app

pytestmark = pytest.mark.unit

TYPE_METAVAR = re.compile(r"<(str|int|float|bool|path|int range|float range|list\[[^\]]*\])>")
INTERNAL = re.compile(
    r"§|DESIGN|CONVENTIONS|\bApp\. [A-Z]\b|\bTable \d|\bFigures? \d|\bissue \d+|\bseed \d{3}\b"
)


def _paths() -> list[list[str]]:
    out: list[list[str]] = []

    def walk(command: object, path: list[str]) -> None:
        out.append(path)
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return out


PATHS = _paths()


def test_the_tree_has_every_area() -> None:
    names = {" ".join(p) for p in PATHS}
    assert {"models score", "related", "db start", "split zero-shot", "load gqa"} <= names


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "covr")
def test_help_reads_well(path: list[str]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=1000)
    assert result.exit_code == 0, result.output
    text = result.output
    usage = next(line for line in text.splitlines() if line.startswith("Usage:"))
    assert "{" not in usage, usage
    assert "}" not in usage, usage
    assert not TYPE_METAVAR.search(text), TYPE_METAVAR.search(text)
    assert "--no-no-" not in text
    assert not INTERNAL.search(text), INTERNAL.search(text)
    lines = text.splitlines()
    for line, following in itertools.pairwise(lines):
        # At a width of 1000 columns the only line breaks left inside a paragraph are ones
        # the source forced: a line ending mid-sentence followed by a continuation line.
        broken = re.search(r"[a-z,]$", line) and re.match(r"\s+[a-z]", following)
        same_indent = len(line) - len(line.lstrip()) == len(following) - len(following.lstrip())
        assert not (broken and same_indent), f"hard-wrapped: {line!r} / {following!r}"
    in_commands = False
    for line in lines:
        if line.startswith("Commands:"):
            in_commands = True
        elif in_commands and line.strip():
            summary = line.strip()
            assert summary.count("(") == summary.count(")"), f"cut summary: {summary!r}"
