"""Bad input is one line and exit 2, never a traceback, and leaves nothing half-written (issue 40
row 9; row 12 for the repeated keys). Real ``covr`` processes, as a user runs them; nothing here
needs the store running except where the command opens it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from covr_loaders.samples import SAMPLES
from tests.integration.cli.test_db_commands import covr

pytestmark = pytest.mark.integration

DEEP = "[" * 100_000 + "]" * 100_000
EXAMPLE = {
    "qid": "q1",
    "utterance": "Is there a dog?",
    "scenes": ["gqa:1"],
    "answer": True,
    "pattern_name": "verify",
    "program": [],
    "properties": [],
}
BAD_LINES = {
    "deep": (DEEP, "nested too deeply"),
    "digits": ('{"qid": "q2", "answer": ' + "7" * 5000 + "}", "more than 4,300 digits"),
    "repeated-key": ('{"qid": "q2", "qid": "q3"}', "the key 'qid' appears twice"),
}


def refused(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """The one error line of a command that exited 2 without a traceback."""
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, done.stderr
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


def files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.mark.parametrize("bad", sorted(BAD_LINES))
def test_example_files_with_a_bad_line(tmp_path: Path, bad: str) -> None:
    """``covr stats/evaluate/properties/view`` on a line nested 100,000 deep or holding a
    5,000-digit number printed a traceback; a repeated key was read as its last value."""
    line, words = BAD_LINES[bad]
    work = tmp_path / "work"
    work.mkdir()
    examples = work / "examples.jsonl"
    text = json.dumps(EXAMPLE) + "\n" + line + "\n"
    examples.write_text(text)
    gold = work / "gold.jsonl"
    gold.write_text(json.dumps(EXAMPLE) + "\n")
    where = f"{examples}:2:"
    data_dir = tmp_path / "d"
    runs = {
        "stats": ["stats", str(examples), "--plots", str(work / "plots")],
        "properties": ["properties", str(examples)],
        "properties --output": ["properties", str(examples), "--output", str(work / "o.jsonl")],
        "evaluate (gold)": ["evaluate", str(gold), "--gold", str(examples), "--no-measure-text"],
        "evaluate (predictions)": ["evaluate", str(examples), "--gold", str(gold)],
        "view --static": ["view", str(examples), "--static", str(work / "static")],
    }
    for name, args in runs.items():
        done = covr(*args, data_dir=data_dir)
        refused(done, where, words)
        assert examples.read_text() == text, name  # properties did not rewrite it
        assert files(work) == ["examples.jsonl", "gold.jsonl"], (name, files(work))


def test_generate_refuses_a_directory_as_out_before_generating(tmp_path: Path) -> None:
    """``covr generate --out <directory>`` generated everything, then failed to rename and left
    ``<dir>.tmp``; now it is refused first, naming the option."""
    out = tmp_path / "out"
    out.mkdir()
    gqa = SAMPLES / "gqa" / "val_sceneGraphs.json"
    for target, words in ((out, "is a directory"), (tmp_path / "no" / "x.jsonl", "does not exist")):
        done = covr(
            "generate", "--split", "val", "--out", str(target), "--lookup", "memory",
            "--gqa", str(gqa), "--images", "1", "--quiet", data_dir=tmp_path / "d",
        )  # fmt: skip
        refused(done, "--out", str(target), words)
        assert "examples from" not in done.stderr  # nothing was generated
    assert files(tmp_path) == ["out"]


@pytest.mark.parametrize("inside", [False, True])
def test_a_data_dir_that_is_a_file(tmp_path: Path, inside: bool) -> None:
    """``COVR_DATA_DIR`` naming a file (or a path under one) failed at the first mkdir."""
    plain = tmp_path / "plain"
    plain.write_text("not a folder")
    data_dir = plain / "sub" if inside else plain
    for args in (["db", "stats"], ["load", "samples"]):
        refused(covr(*args, data_dir=data_dir), "COVR_DATA_DIR", str(data_dir), "not a directory")
    assert plain.read_text() == "not a folder"


SPACES = {
    "deep": ('{"verbs": ' + DEEP + ', "nouns": {}}', "nested too deeply"),
    "order-5": ('{"verbs": {"stapling": {"order": 5}}, "nouns": {}}', "verbs.stapling.order"),
    "repeated-key": (
        '{"verbs": {"stapling": {"order": ["agent"], "order": ["item"]}}, "nouns": {}}',
        "verbs.stapling.order: the key appears twice",
    ),
}


@pytest.mark.parametrize("bad", sorted(SPACES))
def test_load_imsitu_with_a_bad_space_file(tmp_path: Path, bad: str) -> None:
    """An imSitu space file nested 100,000 deep (RecursionError) or with ``"order": 5``
    (TypeError) was a traceback; one naming a key twice kept the last silently."""
    text, words = SPACES[bad]
    space = tmp_path / "imsitu_space.json"
    space.write_text(text)
    dev = SAMPLES / "imsitu" / "dev.json"
    data_dir = tmp_path / "d"
    for extra in (["--dry-run"], []):
        done = covr("load", "imsitu", str(dev), "--space", str(space), *extra, data_dir=data_dir)
        refused(done, str(space), words)
    stats = covr("db", "stats", "--json", data_dir=data_dir)
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["totals"]["images"] == 0
