"""Plots per split for evaluation (issue 8 item 6): PNG bar charts written by ``write_plots`` and
``covr evaluate --plots DIR``, and their bad input."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from covr.cli.main import app
from covr.splits.evaluate import PlotError, evaluate, write_plots
from tests.support.splits_corpus import generate_corpus
from tests.unit.splits.test_evaluate import GOLD, PREDICTIONS, TRAIN

pytestmark = pytest.mark.unit

PNG = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the IHDR chunk (checks the file is a real PNG, not just bytes)."""
    data = path.read_bytes()
    assert data[:8] == PNG, path
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def test_write_plots_per_template_and_property(tmp_path: Path) -> None:
    report = evaluate(GOLD, PREDICTIONS, train=TRAIN)
    out = tmp_path / "plots" / "nested"
    written = write_plots(report, out, name="zero-shot HAS-COUNT")
    assert [p.name for p in written] == [
        "zero-shot-HAS-COUNT.per_template.png",
        "zero-shot-HAS-COUNT.per_property.png",
    ]
    for path in written:
        assert path.stat().st_size > 1000
    assert png_size(written[0])[0] == 800
    many = {f"P{i}": {"examples": i + 1, "accuracy": i / 40} for i in range(50)}
    tall = write_plots({**report, "per_property": many}, tmp_path / "tall")
    width, height = png_size(tall[1])
    assert width == 800  # one row per group: a taller chart, never a wider one
    assert height > png_size(tall[0])[1]
    assert height / 50 >= 25  # at least 25 pixels per label row
    # plots of another split share the folder without overwriting
    other = write_plots(report, out, name="program-seed-1")
    assert {p.name for p in out.iterdir()} == {p.name for p in written + other}
    assert not list(out.glob(".*partial"))


def test_write_plots_refuses_a_file_in_the_way(tmp_path: Path) -> None:
    report = evaluate(GOLD, PREDICTIONS, train=TRAIN)
    blocker = tmp_path / "plots"
    blocker.write_text("not a folder")
    with pytest.raises(PlotError, match="not a directory"):
        write_plots(report, blocker)
    with pytest.raises(PlotError, match="cannot create"):
        write_plots(report, blocker / "below")
    assert blocker.read_text() == "not a folder"


runner = CliRunner()


def run(*args: object) -> Any:
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def gold(tmp_path_factory: pytest.TempPathFactory) -> Path:
    examples, _ = generate_corpus(600, images=120, seed=2)
    path = tmp_path_factory.mktemp("plots") / "gold.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in examples))
    return path


def test_evaluate_cli_writes_plots_per_split(gold: Path, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in gold.read_text().splitlines()]
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(
        "".join(json.dumps({"qid": r["qid"], "prediction": r["answer"]}) + "\n" for r in rows[::2])
    )
    made = run("split", "zero-shot", "-e", gold, "-p", "HAS-COUNT", "-o", tmp_path / "splits")
    assert made.exit_code == 0, made.output
    folder = Path(json.loads(made.stdout)["splits"][0]["path"])
    plots = tmp_path / "plots"
    result = run("evaluate", predictions, "--gold", gold, "--split", folder, "--plots", plots)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    names = sorted(Path(p).name for p in report["plots"])
    assert names == [f"{folder.name}.per_property.png", f"{folder.name}.per_template.png"]
    for name in names:
        assert png_size(plots / name)[0] > 0
        assert (plots / name).stat().st_size > 1000
    plain = run("evaluate", predictions, "--gold", gold, "--plots", plots)
    assert plain.exit_code == 0, plain.output
    assert (plots / "all.per_template.png").stat().st_size > 1000


def test_evaluate_cli_plots_bad_directory_exits_2(gold: Path, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in gold.read_text().splitlines()]
    predictions = tmp_path / "pred.json"
    predictions.write_text(json.dumps({r["qid"]: r["answer"] for r in rows}))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = run("evaluate", predictions, "--gold", gold, "--plots", blocker)
    assert result.exit_code == 2
    assert "--plots" in result.output
    assert "not a directory" in result.output
