"""The split, properties, easiness and evaluate commands, and their bad-input exits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from covr.cli.main import app
from covr_loaders.gqa import to_record
from tests.support.splits_corpus import generate_corpus

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("splits-cli")
    examples, scenes = generate_corpus(1500, images=250, seed=5)
    path = base / "examples.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in examples))
    gqa = base / "scenes.json"
    gqa.write_text(json.dumps(dict(to_record(g) for g in scenes.values())))
    return {"base": base, "examples": path, "gqa": gqa}


def run(*args: object) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def output(result: Any) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_properties_written_into_the_file(files: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "with_props.jsonl"
    summary = output(run("properties", files["examples"], "--output", target))
    assert summary["examples"] == 1500
    assert summary["properties"]["TPL-VERIFYATTR"] > 0
    first = json.loads(target.read_text().splitlines()[0])
    assert "TPL-VERIFYATTR" in first["properties"]
    copy = tmp_path / "inplace.jsonl"
    copy.write_text(files["examples"].read_text())
    output(run("properties", copy))
    assert json.loads(copy.read_text().splitlines()[0])["properties"] == first["properties"]


def test_zero_and_few_shot(files: dict[str, Path], tmp_path: Path) -> None:
    out = output(
        run(
            "split",
            "zero-shot",
            "-e",
            files["examples"],
            "-p",
            "HAS-COUNT&HAS-ATTR",
            "-o",
            tmp_path,
        )
    )
    (split,) = out["splits"]
    folder = Path(split["path"])
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["counts"]["test"] == len((folder / "test.txt").read_text().split())
    assert manifest["inputs"]["examples_sha256"]
    again = run(
        "split", "zero-shot", "-e", files["examples"], "-p", "HAS-COUNT&HAS-ATTR", "-o", tmp_path
    )
    assert again.exit_code == 2
    assert "exists" in again.stderr
    out = output(
        run(
            "split", "few-shot", "-e", files["examples"], "-p", "HAS-LOGIC", "-m", 5, "-o", tmp_path
        )
    )
    assert out["splits"][0]["name"] == "few-shot-has-logic-5"


def test_program_lexical_adversarial_budget(files: dict[str, Path], tmp_path: Path) -> None:
    out = output(run("split", "program", "-e", files["examples"], "--seeds", "0,1", "-o", tmp_path))
    assert [s["name"] for s in out["splits"]] == ["program-seed0", "program-seed1"]
    out = output(
        run(
            "split",
            "lexical",
            "-e",
            files["examples"],
            "--pairs",
            5,
            "--min-train",
            20,
            "--min-eval",
            5,
            "--seeds",
            "0",
            "-o",
            tmp_path,
        )
    )
    assert out["splits"][0]["counts"]["pairs"] == 5
    out = output(
        run(
            "split",
            "adversarial",
            "-e",
            files["examples"],
            "--max-splits",
            2,
            "--tau",
            1.0,
            "-o",
            tmp_path,
        )
    )
    assert 1 <= len(out["splits"]) <= 2
    out = output(run("split", "budget", "-e", files["examples"], "-b", 50, "-o", tmp_path))
    assert out["splits"][0]["counts"]["train"] == 50


def test_hop_from_gqa_file(files: dict[str, Path], tmp_path: Path) -> None:
    listed = output(
        run("split", "hop", "-e", files["examples"], "--gqa", files["gqa"], "--list-pairs")
    )
    assert listed["pairs"]
    out = output(
        run(
            "split",
            "hop",
            "-e",
            files["examples"],
            "--gqa",
            files["gqa"],
            "--pair",
            "wooden,table",
            "-o",
            tmp_path,
        )
    )
    folder = Path(out["splits"][0]["path"])
    assert (folder / "minimal_ood.jsonl").exists()
    assert out["splits"][0]["diversity"]["types"] == ["material", "noun"]
    picked = output(
        run(
            "split",
            "hop",
            "-e",
            files["examples"],
            "--gqa",
            files["gqa"],
            "--pick",
            2,
            "-o",
            tmp_path / "p",
        )
    )
    assert len(picked["splits"]) == 2


def test_easiness_and_evaluate(files: dict[str, Path], tmp_path: Path) -> None:
    lines = files["examples"].read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    train = tmp_path / "train.jsonl"
    test = tmp_path / "test.jsonl"
    train.write_text("".join(json.dumps(r) + "\n" for r in rows if r["split"] == "train"))
    test.write_text("".join(json.dumps(r) + "\n" for r in rows if r["split"] == "val"))
    scores = tmp_path / "easiness.jsonl"
    summary = output(run("easiness", "--train", train, "--test", test, "--output", scores))
    assert 0 <= summary["mean_easiness"] <= 1
    assert "compound_divergence" in summary
    assert len(scores.read_text().splitlines()) == len(test.read_text().splitlines())
    split = output(
        run("split", "zero-shot", "-e", files["examples"], "-p", "HAS-GROUPBY", "-o", tmp_path)
    )
    folder = split["splits"][0]["path"]
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(
        "".join(json.dumps({"qid": r["qid"], "prediction": r["answer"]}) + "\n" for r in rows)
    )
    report = output(
        run(
            "evaluate",
            predictions,
            "--gold",
            files["examples"],
            "--split",
            folder,
            "--easiness",
            scores,
            "--text-accuracy",
            0.5,
            "--iid-size-accuracy",
            0.8,
        )
    )
    assert report["accuracy"] == 1.0
    assert report["generalization_score"] == pytest.approx(0.5 / 0.3)
    assert report["systematicity_gap"]["gap"] == 0.0
    assert report["baselines"]["source"] == "train"


@pytest.mark.slow
def test_every_split_kind_feeds_easiness_and_evaluate(
    files: dict[str, Path], tmp_path: Path
) -> None:
    """What each split command writes (qid lists and a manifest) is read by ``covr easiness``
    (``--examples`` with ``--split``) and ``covr evaluate`` (``--split``), as the README's flow
    runs them; the id list given where examples are expected gets a pointer to the right form."""
    examples = files["examples"]
    commands: list[list[Any]] = [
        ["zero-shot", "-p", "HAS-COUNT"],
        ["few-shot", "-p", "HAS-COUNT", "-m", 5],
        ["program", "--seeds", "0"],
        ["lexical", "--pairs", 5, "--min-train", 20, "--min-eval", 5, "--seeds", "0"],
        ["adversarial", "--max-splits", 1, "--tau", 1.0],
        ["budget", "-b", 50],
        ["hop", "--gqa", files["gqa"], "--pair", "wooden,table"],
    ]
    checked: list[str] = []
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"qid": json.loads(line)["qid"], "prediction": True}) + "\n"
            for line in examples.read_text().splitlines()
        )
    )
    for command in commands:
        made = output(run("split", command[0], "-e", examples, *command[1:], "-o", tmp_path))
        folder = Path(made["splits"][0]["path"])
        scores = folder.parent / f"{folder.name}.easiness.jsonl"
        easiness = run("easiness", "--examples", examples, "--split", folder, "--output", scores)
        if not (folder / "test.txt").read_text():  # this corpus has no complex-OOD hop example
            assert easiness.exit_code == 2
            assert f"the test list of {folder} names none of" in easiness.stderr
            continue
        summary = output(easiness)
        assert summary["test_examples"] == len((folder / "test.txt").read_text().split())
        report = output(
            run("evaluate", predictions, "--gold", examples, "--split", folder,
                "--easiness", scores)
        )  # fmt: skip
        assert report["examples"] == summary["test_examples"], command[0]
        checked.append(command[0])
    assert len(checked) >= 6
    wrong = run("easiness", "--train", folder / "train.txt", "--test", folder / "test.txt")
    assert wrong.exit_code == 2
    assert f"--split {folder}" in wrong.stderr
    assert run("easiness", "--examples", examples).exit_code == 2  # --split missing
    assert run("easiness", "--train", examples, "--split", folder).exit_code == 2  # mixed


def test_a_file_without_training_examples_says_how_to_get_them(
    files: dict[str, Path], tmp_path: Path
) -> None:
    val_only = tmp_path / "val.jsonl"
    val_only.write_text(
        "".join(
            line + "\n"
            for line in files["examples"].read_text().splitlines()
            if json.loads(line)["split"] != "train"
        )
    )
    done = run("split", "program", "-e", val_only, "--seeds", "0", "-o", tmp_path / "s")
    assert done.exit_code == 2
    assert "no example's split is 'train'" in done.stderr
    assert "--split train" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["split", "zero-shot", "-e", "{missing}", "-p", "HAS-QUANT", "-o", "{tmp}"], "cannot be read"),
        (["split", "zero-shot", "-e", "{bad}", "-p", "HAS-QUANT", "-o", "{tmp}"], "bad.jsonl:2: scenes"),
        (["split", "zero-shot", "-e", "{examples}", "-p", "HAS-NOPE", "-o", "{tmp}"], "no example has"),
        (["split", "few-shot", "-e", "{examples}", "-p", "HAS-LOGIC", "-m", "99999", "-o", "{tmp}"], "keep=99999"),
        (["split", "program", "-e", "{examples}", "--seeds", "a,b", "-o", "{tmp}"], "--seeds"),
        (["split", "hop", "-e", "{examples}", "--pair", "wooden,table", "-o", "{tmp}"], "--gqa FILE or --from-store"),
        (["split", "hop", "-e", "{examples}", "--gqa", "{gqa}", "--pair", "dog,cat", "-o", "{tmp}"], "neither value"),
        (["easiness", "--train", "{examples}", "--test", "{examples}", "--n", "7"], "--n must be"),
        (["evaluate", "{missing}", "--gold", "{examples}"], "cannot be read"),
        (["evaluate", "{examples}", "--gold", "{examples}", "--text-accuracy", "0.4"], "give both"),
        (["evaluate", "{examples}", "--gold", "{examples}", "--split", "{tmp}"], "manifest.json"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_with_a_message(
    files: dict[str, Path], tmp_path: Path, args: list[str], message: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    good = files["examples"].read_text().splitlines()[0]
    broken = json.loads(good)
    broken["scenes"] = "not-a-list"
    bad.write_text(good + "\n" + json.dumps(broken) + "\n")
    values = {
        "missing": str(tmp_path / "missing.jsonl"),
        "bad": str(bad),
        "examples": str(files["examples"]),
        "gqa": str(files["gqa"]),
        "tmp": str(tmp_path),
    }
    result = run(*[a.format(**values) for a in args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert not list(tmp_path.glob("*/manifest.json"))  # nothing half-written
