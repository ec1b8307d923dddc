"""Issue 16 item 7: adversarial splits with distinct test sets, and the ULS Table 5-style
comparison of split easiness with TMCD compound divergence (``covr split correlate``)."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from covr.cli.main import app
from covr.questions.generate import GenerationOptions, generate
from covr.related.memory import InMemoryRelated
from covr.splits.builders import program_split
from covr.splits.correlation import (
    SplitPlan,
    build_splits,
    correlations,
    pearson,
    score_split,
    spearman,
)
from covr.splits.local_structures import EasinessModel, compound_divergence
from covr.splits.properties import with_properties
from covr.splits.structure_splits import adversarial_splits
from tests.support.question_data import bundled_samples
from tests.support.splits_corpus import generate_corpus

pytestmark = pytest.mark.unit

runner = CliRunner()


@pytest.fixture(scope="module")
def engine_corpus() -> list[dict[str, Any]]:
    """The question engine's output on the bundled VG (train) and GQA (val) samples."""
    samples = bundled_samples()
    out: list[dict[str, Any]] = []
    for split in ("train", "val"):
        scenes = samples[split]
        options = GenerationOptions(split=split, seed=1)
        ids = [s.image_id for s in scenes]
        out += [with_properties(e) for e in generate(InMemoryRelated(scenes), options, ids)]
    return out


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], Path]:
    examples, _ = generate_corpus(1200, images=200, seed=11)
    examples = [with_properties(e) for e in examples]
    path = tmp_path_factory.mktemp("correlate") / "examples.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in examples))
    return examples, path


def test_adversarial_splits_have_distinct_test_sets(engine_corpus: list[dict[str, Any]]) -> None:
    """With 3-LS on the bundled samples two candidates used to differ only in programs without
    an evaluation example (measured: 99 splits, 98 distinct test sets)."""
    for n in (2, 3):
        splits = adversarial_splits(engine_corpus, n=n, tau=None, max_splits=200, seed=0)
        assert len(splits) > 10
        for a, b in combinations(splits, 2):
            assert set(a.test) != set(b.test), (n, a.name, b.name)


def test_pearson_and_spearman_on_hand_computed_values() -> None:
    xs, ys = [1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 5.0, 9.0]
    # mean 2.5 and 5; deviations (-1.5,-.5,.5,1.5) and (-3,-1,0,4): r = 11 / sqrt(5 * 26)
    assert pearson(xs, ys) == pytest.approx(11 / (5 * 26) ** 0.5)
    assert spearman(xs, ys) == pytest.approx(1.0)  # monotone
    # ties share their mean rank: (1, 2.5, 2.5, 4) against (4, 3, 2, 1)
    ranks_x, ranks_y = [1, 2.5, 2.5, 4], [4, 3, 2, 1]
    assert spearman([0.1, 0.5, 0.5, 0.9], [9.0, 7.0, 3.0, 1.0]) == pytest.approx(
        pearson(ranks_x, ranks_y)
    )
    assert pearson([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) is None  # constant: undefined
    assert pearson([1.0], [2.0]) is None


def test_split_scores_are_what_covr_easiness_computes(small: tuple[list[Any], Path]) -> None:
    examples, _ = small
    split = program_split(examples, seed=3)
    row = score_split(examples, split, orders=(2, 3))
    by_id = {e["qid"]: e for e in examples}
    train = [by_id[q]["program"] for q in split.train]
    test = [by_id[q]["program"] for q in split.test]
    for n in (2, 3):
        model = EasinessModel(train, n=n)
        expected = sum(model.easiness(p).score for p in test) / len(test)
        assert row[f"easiness_{n}ls"] == pytest.approx(expected)
    assert row["compound_divergence"] == pytest.approx(
        compound_divergence(train, test)["compound_divergence"]
    )
    assert row["test"] == len(split.test)


def test_many_splits_and_their_correlation(small: tuple[list[Any], Path]) -> None:
    examples, _ = small
    built = build_splits(
        examples, SplitPlan(program_seeds=4, lexical_seeds=0, adversarial=4, zero_shot=())
    )
    assert len(built.splits) >= 6
    rows = [score_split(examples, s, orders=(2,)) for s in built.splits]
    (row,) = correlations(rows)
    assert (row["x"], row["y"], row["splits"]) == ("easiness_2ls", "compound_divergence", len(rows))
    xs = [r["easiness_2ls"] for r in rows]
    ys = [r["compound_divergence"] for r in rows]
    assert row["pearson"] == pytest.approx(pearson(xs, ys))
    assert -1.0 <= row["pearson"] <= 1.0
    accuracy = {r["name"]: 0.5 + r["easiness_2ls"] / 2 for r in rows}  # a perfectly linear model
    table = correlations(rows, accuracy)
    against = {(t["x"], t["y"]): t for t in table}
    assert against[("easiness_2ls", "accuracy")]["pearson"] == pytest.approx(1.0)
    assert against[("compound_divergence", "accuracy")]["pearson"] == pytest.approx(row["pearson"])


def run(*args: object) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def test_correlate_command(small: tuple[list[Any], Path], tmp_path: Path) -> None:
    _, path = small
    base = ["split", "correlate", "-e", path, "--program-seeds", 4, "--lexical-seeds", 0]
    result = run(*base, "--adversarial", 3, "--orders", "2,3", "--output", tmp_path / "r.json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report == json.loads((tmp_path / "r.json").read_text())
    names = [r["name"] for r in report["splits"]]
    assert len(names) == len(set(names)) >= 7
    assert {r["x"] for r in report["correlations"]} == {"easiness_2ls", "easiness_3ls"}
    table = run(*base, "--adversarial", 0, "--orders", "2", "--markdown")
    assert table.exit_code == 0, table.output
    assert table.stdout.startswith("| predictor | against | splits | Pearson | Spearman |")
    assert "| easiness_2ls | compound_divergence |" in table.stdout


def test_correlate_bad_input(small: tuple[list[Any], Path], tmp_path: Path) -> None:
    _, path = small
    base = ["split", "correlate", "-e", path, "--lexical-seeds", 0, "--adversarial", 0]
    bad = run(*base, "--orders", "2,5")
    assert bad.exit_code == 2
    assert "--orders" in bad.stderr
    bad = run(*base, "--orders", "two")
    assert bad.exit_code == 2
    assert "--orders" in bad.stderr
    accuracy = tmp_path / "acc.json"
    accuracy.write_text('{"program-seed0": "high"}')
    bad = run(*base, "--accuracy", accuracy)
    assert bad.exit_code == 2
    assert "program-seed0" in bad.stderr
    assert "--accuracy" in bad.stderr
    accuracy.write_text("[1, 2]")
    bad = run(*base, "--accuracy", accuracy)
    assert bad.exit_code == 2
    assert "--accuracy" in bad.stderr
    bad = run(*base, "--program-seeds", 1, "--no-table4")
    assert bad.exit_code == 2
    assert "need 3" in bad.stderr
    bad = run(*base, "--split", tmp_path / "missing")
    assert bad.exit_code == 2
    assert "missing" in bad.stderr
