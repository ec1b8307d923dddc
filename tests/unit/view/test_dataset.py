"""The browser's file index: built once beside the file, paging, filters, search, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from covr.scene.model import SceneGraph
from covr.view.app import ViewApp, ViewConfig, write_static
from covr.view.dataset import (
    INDEX_SUFFIX,
    Dataset,
    DatasetError,
    Filters,
    SplitLists,
    UnknownExample,
)
from covr.view.sources import SceneSource
from tests.support.view_data import sample_examples, sample_scenes, write_examples

pytestmark = pytest.mark.unit


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    return write_examples(tmp_path / "examples.jsonl")


def test_index_is_built_once_and_kept_beside_the_file(jsonl: Path) -> None:
    first = Dataset(jsonl)
    assert first.built
    assert first.index_path == jsonl.with_name(jsonl.name + INDEX_SUFFIX)
    assert first.count == len(sample_examples())
    first.close()
    again = Dataset(jsonl)
    assert not again.built
    again.close()
    with jsonl.open("a") as handle:  # a changed file is indexed again
        handle.write(json.dumps({**sample_examples()[0], "qid": "extra"}) + "\n")
    changed = Dataset(jsonl)
    assert changed.built
    assert changed.count == len(sample_examples()) + 1
    assert changed.example("extra")["qid"] == "extra"


def test_a_page_past_the_end_is_empty_however_far(jsonl: Path) -> None:
    """Issue 40 item 11: ``/?offset=10^30`` made SQLite overflow and the viewer answer 500."""
    data = Dataset(jsonl)
    for offset in (10**30, 2**63, 2**62):
        page = data.page(Filters(), offset, 5)
        assert page.rows == []
        assert page.total == len(sample_examples())


def test_pages_follow_file_order_and_read_the_examples_back(jsonl: Path) -> None:
    data = Dataset(jsonl)
    examples = sample_examples()
    page = data.page(Filters(), 10, 5)
    assert page.total == len(examples)
    assert [r.qid for r in page.rows] == [e["qid"] for e in examples[10:15]]
    assert data.example(examples[12]["qid"]) == examples[12]
    with pytest.raises(UnknownExample, match="no example with qid 'nope'"):
        data.example("nope")


def test_filters_match_a_scan_of_the_examples(jsonl: Path) -> None:
    data = Dataset(jsonl)
    examples = sample_examples()
    template = examples[0]["template"]
    image = examples[0]["scenes"][0]

    def expect(pred: Any) -> list[str]:
        return [e["qid"] for e in examples if pred(e)]

    def got(filters: Filters) -> list[str]:
        return [r.qid for r in data.page(filters, 0, 10_000).rows]

    assert got(Filters(template=template)) == expect(lambda e: e["template"] == template)
    paper = examples[0]["paper_template"]
    assert got(Filters(paper_template=paper)) == expect(lambda e: e["paper_template"] == paper)
    assert got(Filters(answer="true")) == expect(lambda e: e["answer"] is True)
    assert got(Filters(image=image)) == expect(lambda e: image in e["scenes"])
    word, word2 = re.findall(r"\w+", examples[0]["utterance"].lower())[-2:]
    words = {e["qid"]: re.findall(r"\w+", e["utterance"].lower()) for e in examples}
    # every word must occur, the last one as a prefix ("blue blank" finds "blue blanket")
    found = got(Filters(text=f"{word} {word2[:3]}"))
    assert found
    assert found == expect(
        lambda e: word in words[e["qid"]] and any(w.startswith(word2[:3]) for w in words[e["qid"]])
    )
    both = got(Filters(template=template, image=image))
    assert both == expect(lambda e: e["template"] == template and image in e["scenes"])
    assert dict(data.facets("template"))[template] == len(
        expect(lambda e: e["template"] == template)
    )


def test_property_and_split_list_filters(tmp_path: Path) -> None:
    examples = [dict(e) for e in sample_examples()[:40]]
    for i, e in enumerate(examples):
        e["properties"] = ["has_count"] if i % 3 == 0 else []
    path = write_examples(tmp_path / "p.jsonl", tuple(examples))
    split_dir = tmp_path / "zero-shot"
    split_dir.mkdir()
    (split_dir / "test.txt").write_text("\n".join(e["qid"] for e in examples[5:9]) + "\n")
    (split_dir / "manifest.json").write_text(json.dumps({"files": {"test": "test.txt"}}))
    data = Dataset(path, splits=SplitLists({"zero-shot": split_dir}))
    rows = data.page(Filters(property="has_count"), 0, 100).rows
    assert [r.qid for r in rows] == [e["qid"] for i, e in enumerate(examples) if i % 3 == 0]
    assert data.splits.names() == ["zero-shot/test"]
    rows = data.page(Filters(split="zero-shot/test"), 0, 100).rows
    assert [r.qid for r in rows] == [e["qid"] for e in examples[5:9]]
    with pytest.raises(DatasetError, match="unknown split list"):
        data.page(Filters(split="nope/test"), 0, 10)


def test_malformed_files_name_file_and_line(tmp_path: Path) -> None:
    good = json.dumps(sample_examples()[0])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good + "\n\n{not json\n")
    with pytest.raises(DatasetError, match=r"bad\.jsonl:3: not JSON"):
        Dataset(bad)
    assert not list(tmp_path.glob("*.sqlite*"))  # nothing half-built stays
    missing = tmp_path / "missing.jsonl"
    missing.write_text(json.dumps({"qid": "a", "utterance": "x", "scenes": []}) + "\n")
    with pytest.raises(DatasetError, match=r"missing\.jsonl:1: field 'answer' is missing"):
        Dataset(missing)
    twice = tmp_path / "twice.jsonl"
    twice.write_text(good + "\n" + good + "\n")
    with pytest.raises(DatasetError, match=r"twice\.jsonl:2: qid .* repeats line 1"):
        Dataset(twice)
    with pytest.raises(DatasetError, match="no such file"):
        Dataset(tmp_path / "none.jsonl")


def test_parquet_export_is_browsed_like_jsonl(tmp_path: Path) -> None:
    from covr.questions.parquet import write_parquet

    examples = sample_examples()[:30]
    [path] = write_parquet(list(examples), tmp_path / "hub", split="val")
    data = Dataset(path)
    assert data.kind == "parquet"
    assert data.count == 30
    back = data.example(examples[7]["qid"])
    assert back["program"] == examples[7]["program"]
    assert back["signatures"] == examples[7]["signatures"]
    assert back["answer"] == examples[7]["answer"]
    assert [r.qid for r in data.page(Filters(), 0, 5).rows] == [e["qid"] for e in examples[:5]]


def _app(jsonl: Path, scenes: tuple[SceneGraph, ...]) -> ViewApp:
    return ViewApp(ViewConfig([Dataset(jsonl)], SceneSource.from_graphs(scenes)))


def test_pages_and_errors_without_a_socket(jsonl: Path) -> None:
    app = _app(jsonl, sample_scenes())
    example = sample_examples()[3]
    status, kind, body = app.handle("/", {"template": example["template"]})
    assert status == 200
    assert kind.startswith("text/html")
    assert example["qid"].encode() in body
    assert b"http://" not in body.replace(b'xmlns="http://www.w3.org/2000/svg"', b"")
    status, _, body = app.handle("/example", {"qid": example["qid"]})
    assert status == 200
    assert body.count(b'class="covr-scene') == len(example["scenes"])
    status, _, body = app.handle("/example", {"qid": "nope"})
    assert status == 404
    assert b"no example with qid" in body
    status, _, body = app.handle("/image", {"id": "gqa:0"})
    assert status == 404
    assert b"no image" in body
    status, _, body = app.handle("/image", {"id": example["scenes"][0], "subgraph": "x-(y)->z"})
    assert status == 400
    status, kind, _ = app.handle("/example.svg", {"qid": example["qid"]})
    assert status == 200
    assert kind == "image/svg+xml"
    assert app.handle("/nowhere", {})[0] == 404
    assert app.handle("/", {"ds": "7"})[0] == 404


def test_static_copy_links_only_local_files(jsonl: Path, tmp_path: Path) -> None:
    data = Dataset(jsonl)
    out = tmp_path / "site"
    written = write_static(
        data, SceneSource.from_graphs(sample_scenes()), out, filters=Filters(), limit=4, plots=False
    )
    assert out / "index.html" in written
    pages = sorted((out / "examples").glob("*.html"))
    assert len(pages) == 4
    index = (out / "index.html").read_text()
    for page in pages:
        assert f"examples/{page.name}" in index
        assert 'href="../style.css"' in page.read_text()


def test_plots_page_shows_stats_and_evaluation_charts(jsonl: Path, tmp_path: Path) -> None:
    from covr.view.app import Evaluation

    predictions = tmp_path / "predictions.json"
    predictions.write_text(json.dumps({e["qid"]: e["answer"] for e in sample_examples()}))
    extra = tmp_path / "mine"
    extra.mkdir()
    (extra / "hand-made.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    config = ViewConfig(
        [Dataset(jsonl)],
        SceneSource.from_graphs(sample_scenes()),
        plot_dirs=[extra],
        evaluation=Evaluation(predictions),
    )
    app = ViewApp(config)
    status, _, body = app.handle("/plots", {})
    assert status == 200
    page = body.decode()
    for heading in ("covr stats --plots", "covr evaluate --plots", str(extra)):
        assert f"<h2>{heading}</h2>" in page
    assert "all.per_template" in page
    urls = re.findall(r'src="(/plot\?n=\d+)"', page)
    assert len(urls) >= 4
    for url in urls:
        status, kind, png = app.handle("/plot", {"n": url.split("=")[1]})
        assert status == 200
        assert kind == "image/png"
        assert png.startswith(b"\x89PNG")
    assert app.handle("/plot", {"n": "999"})[0] == 404


def test_photos_from_the_images_dir(jsonl: Path, tmp_path: Path) -> None:
    from covr.view.scene_svg import scene_svg
    from covr.view.sources import data_uri, find_photo

    scene = sample_scenes()[0]
    folder = tmp_path / "images" / scene.source
    folder.mkdir(parents=True)
    photo = folder / f"{scene.original_id}.jpg"
    photo.write_bytes(b"\xff\xd8\xff fake jpeg")
    assert find_photo(tmp_path / "images", scene.image_id) == photo.resolve()
    assert find_photo(tmp_path / "images", f"{scene.source}:../../etc/passwd") is None
    assert find_photo(None, scene.image_id) is None
    uri = data_uri(photo)
    assert uri.startswith("data:image/jpeg;base64,")
    assert f'href="{uri}"' in scene_svg(scene, photo_href=uri)
    config = ViewConfig([Dataset(jsonl)], SceneSource.from_graphs(sample_scenes()))
    config.images_dir = tmp_path / "images"
    app = ViewApp(config)
    status, kind, body = app.handle("/photo", {"id": scene.image_id})
    assert (status, kind, body) == (200, "image/jpeg", photo.read_bytes())
    assert app.handle("/photo", {"id": "gqa:0"})[0] == 404


def test_streamed_examples_reread_the_file_on_every_pass(jsonl: Path) -> None:
    from covr.view.app import StreamedExamples

    streamed = StreamedExamples(Dataset(jsonl))
    examples = list(sample_examples())
    assert len(streamed) == len(examples)
    assert list(streamed) == examples
    assert list(streamed) == examples  # a second pass streams again
    assert streamed[5] == examples[5]
    assert streamed[-1] == examples[-1]
    assert list(streamed[2:4]) == examples[2:4]
    with pytest.raises(IndexError):
        streamed[len(examples)]


def test_a_folder_of_files_and_split_manifests(tmp_path: Path) -> None:
    from covr.view.dataset import find_datasets, find_split_manifests

    examples = sample_examples()
    write_examples(tmp_path / "a.jsonl", examples[:10])
    (tmp_path / "more").mkdir()
    write_examples(tmp_path / "more" / "b.jsonl", examples[10:30])
    split = tmp_path / "splits" / "zero-shot"
    split.mkdir(parents=True)
    (split / "test.txt").write_text(examples[12]["qid"] + "\n")
    (split / "manifest.json").write_text(json.dumps({"files": {"test": "test.txt"}}))
    files = find_datasets(tmp_path)
    assert files == [tmp_path / "a.jsonl", tmp_path / "more" / "b.jsonl"]
    lists = SplitLists(find_split_manifests(tmp_path))
    datasets = [Dataset(f, splits=lists) for f in files]
    assert find_datasets(tmp_path) == files  # the indexes beside the files are not datasets
    app = ViewApp(ViewConfig(datasets, SceneSource.from_graphs(sample_scenes())))
    status, _, body = app.handle("/", {"ds": "1", "split": "splits/zero-shot/test"})
    page = body.decode()
    assert status == 200
    assert 'id="f-ds"' in page
    assert re.findall(r'tr class="example-row" data-qid="([^"]+)"', page) == [examples[12]["qid"]]
