"""``covr distractors`` on the real embedded FalkorDB (issue 17 item 2): one row per image and
subgraph in input order, each row a correct lookup answer (positives contain the subgraph, the
source image first; distractors do not, and hold the concrete subgraph their edit signature
names), Parquet equal to JSONL, and bad input named by file, line and field. The same command
over Ray writes the same bytes (checked by hand, docs/scale.md; the Ray machinery itself is
tested with ``covr generate --ray`` in test_ray_generate.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from covr.cli.main import app
from covr.graph import GraphStore
from covr.related import matcher as reference
from covr.related.lookup import RelatedLookup
from covr.scene.subgraph import Subgraph
from covr.settings import Settings
from covr_loaders import synthetic
from tests.integration.related.helpers import put

pytestmark = [pytest.mark.integration, pytest.mark.backends("falkordb")]


def _invoke(settings: Settings, *args: str) -> tuple[int, str]:
    env = {"COVR_DATA_DIR": str(settings.data_dir), "COVR_GRAPH_URI": ""}
    done = CliRunner().invoke(app, ["distractors", *args, "--quiet"], env=env)
    return done.exit_code, done.output


def test_rows_are_lookup_answers_in_input_order(
    store: GraphStore, settings: Settings, tmp_path: Path
) -> None:
    scenes = list(synthetic.generate(40, seed=3, split="val"))
    put(store, scenes)
    by_id = {s.image_id: s for s in scenes}
    lookup = RelatedLookup(store, settings=settings.related)
    plain = [s.image_id for s in scenes[2:10]]
    first, second = scenes[0].image_id, scenes[1].image_id
    named = [g.key for g in lookup.subgraphs_of_image(second)][-2:]
    requests = tmp_path / "requests.txt"
    lines = [first, "", json.dumps({"image_id": second, "subgraphs": named}), *plain, first]
    requests.write_text("\n".join(lines) + "\n")
    out, parquet = tmp_path / "d.jsonl", tmp_path / "d.parquet"
    for path in (out, parquet):
        code, output = _invoke(
            settings, "--images", str(requests), "--split", "val", "--max-subgraphs", "2",
            "--out", str(path),
        )  # fmt: skip
        assert code == 0, output
    rows = [json.loads(line) for line in out.read_text().splitlines()]

    def own(image: str) -> list[tuple[str, str]]:
        return [(image, g.key) for g in lookup.subgraphs_of_image(image)][:2]

    expected = [*own(first), *((second, k) for k in named)]
    expected += [pair for image in plain for pair in own(image)] + own(first)
    assert [(r["image_id"], r["subgraph"]) for r in rows] == expected
    assert rows[:2] == rows[-2:]
    distractors = 0
    for row in rows:
        g = Subgraph.from_key(row["subgraph"])
        assert row["positives"][0] == row["image_id"]
        assert all(reference.contains(by_id[p], g) for p in row["positives"])
        for d in row["distractors"]:
            distractors += 1
            assert not reference.contains(by_id[d["image_id"]], g)
            assert reference.contains(by_id[d["image_id"]], Subgraph.from_key(d["subgraph"]))
            assert d["distance"] == d["signature"].count("+") + 1 in (1, 2)
    assert distractors > 0

    import pyarrow.parquet as pq

    assert pq.read_table(parquet).to_pylist() == rows
    assert not Path(f"{out}.parts").exists()


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["{not json"], "requests.txt:1: not JSON"),
        (['{"image_id": "gqa:2000000", "extra": 1}'], "requests.txt:1: extra: unknown field"),
        (['{"subgraphs": ["car"]}'], "requests.txt:1: image_id: must be a non-empty string"),
        (['{"image_id": "gqa:2000000", "subgraphs": "car"}'], "requests.txt:1: subgraphs: must"),
        (['{"image_id": "gqa:2000000", "subgraphs": ["car[["]}'], "requests.txt:1: subgraphs[0]"),
        (["gqa:2000000", "gqa:nope"], "request 2: unknown image 'gqa:nope'"),
        (['{"image_id": "gqa:2000000", "subgraphs": ["unicorn"]}'], "'unicorn' is not a subgraph"),
        ([""], "holds no image id"),
    ],
)
def test_bad_requests_are_named_and_exit_2(
    store: GraphStore, settings: Settings, tmp_path: Path, lines: list[str], message: str
) -> None:
    put(store, list(synthetic.generate(3, seed=8, split="val")))
    requests = tmp_path / "requests.txt"
    requests.write_text("\n".join(lines) + "\n")
    out = tmp_path / "d.jsonl"
    code, output = _invoke(settings, "--images", str(requests), "--out", str(out))
    assert code == 2, output
    assert message in output
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give --images FILE or --split S"),
        (["--split", "val", "--out-x"], "No such option"),
        (["--split", "val", "--resume"], "--resume goes with --ray"),
        (["--images", "/nonexistent/requests.txt"], "cannot be read"),
        (["--split", "nosuch"], "no scene graph of split 'nosuch'"),
    ],
)
def test_bad_arguments_exit_2(
    store: GraphStore, settings: Settings, tmp_path: Path, args: list[str], message: str
) -> None:
    put(store, list(synthetic.generate(3, seed=8, split="val")))
    code, output = _invoke(settings, *args, "--out", str(tmp_path / "d.jsonl"))
    assert code == 2, output
    assert message in output
    code, output = _invoke(settings, "--split", "val", "--out", str(tmp_path / "d.csv"))
    assert code == 2
    assert "--out must end in .jsonl or .parquet" in output
