"""The SDK's output helpers and default retry against a real server (issue 20, item 6).

* ``Example.to_dict`` / ``covr_client.write_jsonl`` write exactly what ``covr generate`` writes:
  the CLI and the SDK generate for the same image, store and seed, and the files are compared
  byte for byte (so SDK output is a drop-in input of every ``covr`` command).
* ``RelatedPage.positives()`` / ``distractors()`` split a page by kind.
* The default retry policy waits out a busy server: three concurrent generations against one
  generation slot all succeed, and the server did refuse some of them on the way.
"""

from __future__ import annotations

import io
import os
import subprocess
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from covr_client import Client, Example, RelatedPage, write_jsonl
from covr_client.testing import serve_command
from tests.support.service_server import TestServer, running_server

IMAGE = "gqa:2370799"


def _covr() -> str:
    """The ``covr`` command of the environment that runs the tests."""
    return str(Path(serve_command()[0]))


@pytest.mark.timeout(400)
def test_write_jsonl_is_byte_identical_to_covr_generate(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    cli_file = tmp_path / "cli.jsonl"
    env = {**os.environ, "COVR_DATA_DIR": str(data), "COVR_GRAPH_URI": ""}
    subprocess.run(
        [_covr(), "load", "samples"], env=env, check=True, capture_output=True, timeout=300
    )
    done = subprocess.run(
        [
            # the default path: the service's lookup with the classifiers (issue 16 item 4),
            # so the bytes also show that covr generate asks exactly what the service asks
            *(_covr(), "generate", "--split", "val", "--image", IMAGE, "--seed", "5"),
            # single answers too, as GenerateQuestions keeps them (a dataset run keeps pairs)
            *("--workers", "2", "--quiet", "--single-answers", "--out", str(cli_file)),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    expected = cli_file.read_bytes()
    lines = expected.count(b"\n")
    assert lines > 0
    with running_server(data_dir=data, samples=False) as server, server.client(timeout=300) as c:
        examples = list(c.generate_questions(image_id=IMAGE, seed=5, count=lines + 10))
    sdk_file = tmp_path / "sdk.jsonl"
    assert write_jsonl(examples, sdk_file) == len(examples)
    assert sdk_file.read_bytes() == expected
    buffer = io.StringIO()  # an open file gets the same text
    write_jsonl(examples, buffer)
    assert buffer.getvalue().encode("utf-8") == expected
    check = subprocess.run(  # and the CLI reads the SDK's file
        [_covr(), "stats", str(sdk_file), "--json"], env=env, capture_output=True, timeout=120
    )
    assert check.returncode == 0, check.stderr


def test_to_dict_refuses_a_partial_example_and_write_jsonl_leaves_no_file(
    server: TestServer, tmp_path: Path
) -> None:
    with server.client(timeout=120) as c:
        example = next(iter(c.generate_questions(image_id=IMAGE, seed=1, count=1)))
    record = example.to_dict()
    assert list(record)[:7] == [
        "qid",
        "utterance",
        "scenes",
        "answer",
        "pattern_name",
        "program",
        "properties",
    ]
    assert set(record["signatures"]) == set(record["scenes"])
    partial = replace(example, split="", template="")
    with pytest.raises(ValueError, match="partial: empty template, split"):
        partial.to_dict()
    out = tmp_path / "out.jsonl"
    with pytest.raises(ValueError, match="partial"):
        write_jsonl([example, partial], out)
    assert not out.exists()
    assert not list(tmp_path.iterdir())  # no temporary file left either


def test_write_jsonl_to_an_unwritable_path_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "out.jsonl"
    with pytest.raises(FileNotFoundError, match=r"cannot write examples to .*no-such-dir"):
        write_jsonl([], missing)
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(PermissionError, match="cannot write examples to"):
            write_jsonl([], locked / "out.jsonl")


def test_pages_split_into_positives_and_distractors(client: Client) -> None:
    pages = list(client.find_related_images("man-(wearing)->hat", seed=1, max_results=20))
    assert pages
    for page in pages:
        assert isinstance(page, RelatedPage)
        assert all(i.kind == "positive" for i in page.positives())
        assert all(i.kind == "distractor" for i in page.distractors())
        assert len(page.positives()) + len(page.distractors()) == len(page.images)
    assert any(page.distractors() for page in pages)


@pytest.mark.timeout(400)
def test_concurrent_generations_beyond_the_limit_succeed_with_the_default_retry() -> None:
    with running_server(service_max_generations=1) as own:
        results: list[list[Example] | BaseException] = []

        def call(seed: int) -> None:
            with own.client(timeout=180) as c:  # the default retry policy
                try:
                    results.append(list(c.generate_questions(image_id=IMAGE, seed=seed)))
                except BaseException as exc:  # reported by the assertion
                    results.append(exc)

        threads = [threading.Thread(target=call, args=(seed,)) for seed in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(isinstance(r, list) and r for r in results), results
        assert len(results) == 3
        assert own.service.admission.refused("GenerateQuestions") >= 1, "never saturated"
