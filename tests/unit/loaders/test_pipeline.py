"""The load pipeline without a database: dedup, limit, strict, dry run, checkpoints, CLI exits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from covr.cli import data
from covr.graph.backends import Backend
from covr.graph.store import GraphStore, Health, IndexState, WriteSummary
from covr.settings import Settings
from covr_loaders import synthetic, synthetic_words
from covr_loaders.checkpoint import Checkpoint
from covr_loaders.errors import LoadFailed
from covr_loaders.jobs import gqa_job
from covr_loaders.samples import SAMPLES, sample_jobs
from covr_loaders.writer import run_load, validate_only

pytestmark = pytest.mark.unit


class RecordingStore(GraphStore):
    """Counts statements; never touches a socket."""

    backend = Backend.EMBEDDED
    location = "memory"

    def __init__(self) -> None:
        self.writes: list[str] = []
        self.snapshots = 0

    def read(self, query: Any, params: Any = None, *, timeout: float | None = None) -> list[Any]:
        return []

    def write(
        self, query: Any, params: Any = None, *, timeout: float | None = None
    ) -> WriteSummary:
        self.writes.append(query.name)
        return WriteSummary()

    def index_states(self) -> list[IndexState]:
        return []

    def apply_schema(self) -> list[IndexState]:
        return []

    def health(self) -> Health:
        return Health(ok=True, backend=self.backend, location="memory")

    def snapshot(self) -> None:
        self.snapshots += 1

    def clear(self) -> None:
        return None

    def close(self) -> None:
        return None


def settings(tmp_path: Path) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "data")  # type: ignore[call-arg]


def test_samples_validate_cleanly(tmp_path: Path) -> None:
    for job in sample_jobs(settings(tmp_path).load):
        summary = validate_only(job)
        assert summary.skipped == 0, job.source
        assert summary.images > 0, job.source


def test_duplicates_across_files_are_skipped(tmp_path: Path) -> None:
    sample = SAMPLES / "gqa" / "val_sceneGraphs.json"
    job = gqa_job([sample, sample], "val", settings(tmp_path).load)
    summary = validate_only(job)
    assert summary.images == 8
    assert summary.skipped == 8
    assert "duplicate image id" in summary.problems[0].message
    assert summary.problems[0].file == str(sample)


def test_limit(tmp_path: Path) -> None:
    job = gqa_job([SAMPLES / "gqa" / "val_sceneGraphs.json"], "val", settings(tmp_path).load)
    assert validate_only(job, limit=3).images == 3


def bad_file(tmp_path: Path) -> Path:
    path = tmp_path / "val_sceneGraphs.json"
    good = json.loads((SAMPLES / "gqa" / "val_sceneGraphs.json").read_text())
    good["2370799"]["objects"]["1058498"]["attributes"] = "red"
    path.write_text(json.dumps(good))
    return path


def test_strict_writes_nothing(tmp_path: Path) -> None:
    store = RecordingStore()
    job = gqa_job([bad_file(tmp_path)], "val", settings(tmp_path).load)
    with pytest.raises(LoadFailed) as err:
        run_load(store, job, data_dir=tmp_path, batch_images=2, strict=True)
    assert store.writes == []
    assert err.value.problems[0].field == "objects['1058498'].attributes"


def test_non_strict_writes_valid_batches_and_checkpoints(tmp_path: Path) -> None:
    store = RecordingStore()
    job = gqa_job([bad_file(tmp_path)], "val", settings(tmp_path).load)
    summary = run_load(store, job, data_dir=tmp_path, batch_images=3)
    assert summary.images == 7
    assert summary.skipped == 1
    loads = [w for w in store.writes if w.startswith("load/")]
    assert loads == ["load/create_images"] * 3  # the store reports no image present: no delete
    assert store.snapshots == 1
    saved = json.loads(Path(summary.checkpoint).read_text())
    assert saved["batches_done"] == 3
    assert saved["completed"] is True


def test_checkpoint_ignores_other_fingerprints(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    Checkpoint(path=path, fingerprint="a", batches_done=4).save()
    assert Checkpoint.open(path, "b") is None
    loaded = Checkpoint.open(path, "a")
    assert loaded is not None
    assert loaded.batches_done == 4


def test_synthetic_is_deterministic_and_sized() -> None:
    assert list(synthetic.generate(20, seed=4)) == list(synthetic.generate(20, seed=4))
    assert list(synthetic.generate(5, seed=4)) != list(synthetic.generate(5, seed=5))
    sizes = synthetic.Generator(0).vocab.sizes
    assert sizes == {"nouns": 1700, "attributes": 600, "predicates": 300, "verbs": 500}
    graphs = list(synthetic.generate(300, seed=1))
    mean_objects = sum(len(g.objects) for g in graphs) / len(graphs)
    assert 13 < mean_objects < 19
    # predicates depend on the pair: nothing but people wear things among the core nouns
    people = set(synthetic_words.CORE_NOUNS["person"]) | set(synthetic_words.CORE_NOUNS["animal"])
    core = {n for ns in synthetic_words.CORE_NOUNS.values() for n in ns}
    for graph in graphs:
        names = {o.id: o.name for o in graph.objects}
        for rel in graph.relations:
            if rel.name == "wearing" and names[rel.subject] in core:
                assert names[rel.subject] in people


@pytest.mark.parametrize("fmt", synthetic.FORMATS)
def test_synthetic_files_load_with_the_real_readers(tmp_path: Path, fmt: str) -> None:
    from covr_loaders.jobs import imsitu_job, vg_job

    files = synthetic.write(fmt, tmp_path / fmt / "train.json", images=40, seed=2)
    s = settings(tmp_path)
    if fmt == "gqa":
        job = gqa_job(files, "train", s.load)
    elif fmt == "vg":
        job = vg_job(files, "train", s.load)
    else:
        job = imsitu_job(files[:1], "train", s.load, space=files[1], templates=files[2])
    summary = validate_only(job)
    assert summary.images == 40
    assert summary.skipped == 0


def cli() -> typer.Typer:
    app = typer.Typer()
    app.add_typer(data.load_app, name="load")
    app.command("synth")(data.synth)
    return app


def test_cli_dry_run_and_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COVR_DATA_DIR", str(tmp_path / "data"))
    runner = CliRunner()
    sample = str(SAMPLES / "gqa" / "val_sceneGraphs.json")
    ok = runner.invoke(cli(), ["load", "gqa", sample, "--dry-run", "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["images"] == 8
    missing = runner.invoke(cli(), ["load", "gqa", str(tmp_path / "x.json"), "--split", "val"])
    assert missing.exit_code == 2
    assert "no such file" in missing.output
    folder = runner.invoke(cli(), ["load", "vg", str(tmp_path), "--dry-run"])
    assert folder.exit_code == 2
    assert "is a directory" in folder.output
    strict = runner.invoke(cli(), ["load", "gqa", str(bad_file(tmp_path)), "--dry-run", "--strict"])
    assert strict.exit_code == 2
    assert "objects['1058498'].attributes" in strict.output
    nosplit = runner.invoke(cli(), ["load", "gqa", str(tmp_path / "scenes.json")])
    assert nosplit.exit_code == 2
    assert "--split" in nosplit.output
    for command in (["load", "--help"], ["load", "imsitu", "--help"], ["synth", "--help"]):
        assert runner.invoke(cli(), command).exit_code == 0


def test_cli_synth(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    result = CliRunner().invoke(
        cli(), ["synth", "--images", "5", "--format", "vg", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert len(json.loads(out.read_text())) == 5


def test_reading_in_a_child_process_gives_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from covr_loaders import writer

    job = gqa_job([bad_file(tmp_path)], "val", settings(tmp_path).load)
    inline = run_load(RecordingStore(), job, data_dir=tmp_path, batch_images=3, parallel=False)
    monkeypatch.setattr(writer, "PARALLEL_MIN_BYTES", 0)
    store = RecordingStore()
    forked = run_load(store, job, data_dir=tmp_path / "2", batch_images=3)
    assert len([w for w in store.writes if w.startswith("load/")]) == 3
    for name in ("images", "objects", "attributes", "relations", "skipped", "images_written"):
        assert getattr(forked, name) == getattr(inline, name), name
    assert forked.problems == inline.problems


def test_a_failing_reader_process_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from covr_loaders import writer
    from covr_loaders.writer import ReaderFailed

    path = tmp_path / "val_sceneGraphs.json"
    path.write_text((SAMPLES / "gqa" / "val_sceneGraphs.json").read_text())
    job = gqa_job([path], "val", settings(tmp_path).load)
    path.write_text("")  # emptied after the up-front check: the reader fails in the child
    monkeypatch.setattr(writer, "PARALLEL_MIN_BYTES", 0)
    store = RecordingStore()
    with pytest.raises(ReaderFailed, match="is empty"):
        run_load(store, job, data_dir=tmp_path, batch_images=3)
    assert store.writes == []


def test_prerendered_parameters_render_like_late_ones() -> None:
    import pickle

    from covr.graph.errors import ParameterError
    from covr.graph.params import Rendered, prerender, render_prefix
    from covr_loaders.writer import Batch

    graphs = list(synthetic.generate(5, seed=8))
    late, early = Batch.of(0, graphs), Batch.of(0, graphs, prepare=prerender)
    assert isinstance(early.objects, Rendered)
    travelled = pickle.loads(pickle.dumps(early))  # how batches leave the reader process
    assert render_prefix(travelled.create_params()) == render_prefix(late.create_params())
    hostile = ['a"b', "c\\", "x') DETACH DELETE n //"]
    assert render_prefix({"v": prerender(hostile)}) == render_prefix({"v": hostile})
    with pytest.raises(ParameterError):
        Rendered('"anything"')  # only prerender() makes them: the text is always escaped
    with pytest.raises(ParameterError, match="rows"):
        prerender([{"bad": float("nan")}], "rows")


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=12)
    | st.sampled_from(['"', "\\", '\\"', "{}", '{"', "[", "]", "\n", "x\x00", "1" * 25, "é€"])
)
_nested = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from("ab"), inner),
    max_leaves=30,
)


@hyp_settings(max_examples=400, deadline=None)
@given(value=st.lists(_nested, max_size=5))
def test_prerender_agrees_with_the_careful_renderer(value: list[Any]) -> None:
    from covr.graph.errors import ParameterError
    from covr.graph.params import prerender, render_value

    try:
        expected = render_value(value)
    except ParameterError:
        with pytest.raises(ParameterError):
            prerender(value)
        return
    assert prerender(value).text == expected


def test_prerender_refuses_deep_nesting_like_the_renderer() -> None:
    from covr.graph.errors import ParameterError
    from covr.graph.params import prerender

    deep: list[Any] = []
    for _ in range(40):
        deep = [deep]
    with pytest.raises(ParameterError, match="nested deeper"):
        prerender(deep)


def test_duplicate_image_id_in_a_second_file_names_both_files(tmp_path: Path) -> None:
    sample = json.loads((SAMPLES / "gqa" / "val_sceneGraphs.json").read_text())
    first_id = next(iter(sample))
    other = tmp_path / "train_sceneGraphs.json"
    other.write_text(json.dumps({first_id: sample[first_id], "new-1": sample[first_id]}))
    job = gqa_job([SAMPLES / "gqa" / "val_sceneGraphs.json", other], "val", settings(tmp_path).load)
    summary = validate_only(job)
    assert summary.images == len(sample) + 1  # "new-1" is loaded, the repeated id is not
    (problem,) = summary.problems
    assert (problem.file, problem.record, problem.field) == (str(other), first_id, "image id")
    assert str(SAMPLES / "gqa" / "val_sceneGraphs.json") in problem.message


def test_batches_grow_with_the_graph_up_to_the_setting(tmp_path: Path) -> None:
    from itertools import islice

    from covr_loaders.writer import batch_sizes

    assert list(islice(batch_sizes(5000), 7)) == [500, 500, 1000, 2000, 4000, 5000, 5000]
    assert list(islice(batch_sizes(40), 3)) == [40, 40, 40]
    path = tmp_path / "train_sceneGraphs.json"
    from covr_loaders import gqa

    with path.open("w") as handle:
        json.dump(dict(gqa.to_record(g) for g in synthetic.generate(1700, seed=2)), handle)
    store = RecordingStore()
    job = gqa_job([path], "train", settings(tmp_path).load)
    summary = run_load(store, job, data_dir=tmp_path, batch_images=5000, parallel=False)
    assert summary.batches_written == 3  # 500 + 500 + 700 (of 1,000)
    assert summary.images_written == 1700
