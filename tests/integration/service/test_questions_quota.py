"""GenerateQuestions with ``per_template`` and ``max_image_share`` (issue 36 item 2 over the RPC),
on real servers on loopback over the bundled samples:

* ``per_template`` N caps each form at N (a text's two answers stay together: N + 1 at most),
  for an image and for a subgraph source, and the last message's summary says per form what was
  wanted and made (what the stream holds);
* for one source image the output is ``covr generate --image IMAGE --per-template N
  --single-answers`` on the same store and seed, byte for byte, and the summary is that run's
  ``OUT.dropped.json``. Why ``--image`` and ``--single-answers``: an RPC asks about one source
  image (``covr generate`` without ``--image`` spreads the quota over every image of the split,
  with ``per_source`` set from their number), and GenerateQuestions keeps single-answer texts as
  it always has (``covr generate`` keeps only pairs unless told);
* a bad value of either field is ``INVALID_ARGUMENT`` naming it, from the raw stub and the SDK;
* the async client gives the same examples and summary.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
import pytest

from covr_client import AsyncClient, Client, Example, InvalidArgumentError, write_jsonl
from covr_client._proto import questions_pb2, service_pb2_grpc
from covr_client.testing import serve_command
from tests.support.service_server import TestServer, running_server

pytestmark = pytest.mark.integration

IMAGE = "gqa:2370799"
"""The val image of the samples with the most examples (also the SDK output test's)."""
N = 2


def _made(examples: list[Example]) -> Counter[str]:
    return Counter(e.template for e in examples)


def test_per_template_caps_each_form_and_the_summary_says_so(client: Client) -> None:
    unbounded = list(client.generate_questions(image_id=IMAGE, seed=5, count=1000))
    stream = client.generate_questions(image_id=IMAGE, seed=5, count=1000, per_template=N)
    capped = list(stream)
    assert capped
    made = _made(capped)
    assert max(made.values()) <= N + 1  # a pair may take a form one past N
    assert any(n > N + 1 for n in _made(unbounded).values())  # so the cap did cut something
    assert set(made) == set(_made(unbounded))  # every form the image gives is still there
    summary = stream.summary
    assert summary is not None
    assert summary.examples == len(capped)
    assert {f for f, row in summary.forms.items() if row.made} == set(made)
    for form, row in summary.forms.items():
        assert row.wanted == N
        assert row.made == made.get(form, 0)
    assert summary.image_spread.max_image_share is None
    assert summary.image_spread.held
    # without a quota there is no summary (the stream is what it always was)
    plain = client.generate_questions(image_id=IMAGE, seed=5, count=1000)
    assert [e.qid for e in plain] == [e.qid for e in unbounded]
    assert plain.summary is None


def test_per_template_on_a_subgraph_keeps_its_one_text_per_form(client: Client) -> None:
    """About one subgraph the engine makes one text per form (two examples with two answers),
    which a quota of 1 admits whole: the same examples, with a summary of them."""
    key = "man[young]-(riding)->skateboard"
    unbounded = list(client.generate_questions(subgraph=key, seed=3, split="val", count=1000))
    stream = client.generate_questions(
        subgraph=key, seed=3, split="val", count=1000, per_template=1
    )
    capped = list(stream)
    assert capped
    assert max(_made(capped).values()) <= 2
    assert [e.qid for e in capped] == [e.qid for e in unbounded]
    assert stream.summary is not None
    assert stream.summary.examples == len(capped)
    made = _made(capped)
    assert {f: row.made for f, row in stream.summary.forms.items() if row.made} == dict(made)
    assert {row.wanted for row in stream.summary.forms.values()} == {1}


def test_an_image_share_on_one_source_image_says_it_does_not_apply(client: Client) -> None:
    stream = client.generate_questions(image_id=IMAGE, seed=5, per_template=N, max_image_share=0.05)
    examples = list(stream)
    assert examples
    assert max(_made(examples).values()) <= N + 1
    spread = stream.summary.image_spread if stream.summary else None
    assert spread is not None
    assert spread.max_image_share == 0.05
    assert not spread.applies  # the source image is in every example of its own
    assert spread.most_shown_image == IMAGE
    shown = sum(IMAGE in e.scenes for e in examples)
    assert spread.most_shown_examples == shown
    assert spread.most_shown_share == shown / len(examples)


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        ({"max_image_share": -0.5}, "max_image_share", "must be >= 0"),
        ({"max_image_share": math.nan}, "max_image_share", "must be a number"),
        ({"max_image_share": 1.01}, "max_image_share", "must be at most 1"),
        ({"max_image_share": math.inf}, "max_image_share", "must be at most 1"),
        ({"per_template": 2**32 - 1}, "per_template", "is larger than"),
    ],
)
def test_bad_quota_fields_are_invalid_arguments_naming_them(
    client: Client,
    stub: service_pb2_grpc.CovrServiceStub,
    fields: dict[str, Any],
    field: str,
    says: str,
) -> None:
    request = questions_pb2.GenerateQuestionsRequest(image_id=IMAGE, **fields)
    with pytest.raises(grpc.RpcError) as raw:
        list(stub.GenerateQuestions(request, timeout=30))
    assert raw.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in (raw.value.details() or "")
    with pytest.raises(InvalidArgumentError) as err:
        list(client.generate_questions(image_id=IMAGE, **fields))
    assert [v.field for v in err.value.field_violations] == [field]
    assert says in err.value.field_violations[0].description
    with pytest.raises(InvalidArgumentError):  # the same for a subgraph source
        list(client.generate_questions(subgraph="tree", **fields))


def test_the_async_client_takes_the_same_options(server: TestServer, client: Client) -> None:
    sync = client.generate_questions(image_id=IMAGE, seed=6, per_template=N)
    expected = [e.qid for e in sync]

    async def run() -> tuple[list[str], dict[str, object] | None]:
        async with AsyncClient(server.target, timeout=120) as aclient:
            stream = aclient.generate_questions(image_id=IMAGE, seed=6, per_template=N)
            got = [e.qid async for e in stream]
            return got, stream.summary.to_dict() if stream.summary else None

    got, summary = asyncio.run(run())
    assert got == expected
    assert sync.summary is not None
    assert summary == sync.summary.to_dict()


def _covr() -> str:
    return str(Path(serve_command()[0]))


@pytest.mark.timeout(400)
def test_per_template_equals_covr_generate_on_the_same_store(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    cli_file = tmp_path / "cli.jsonl"
    env = {**os.environ, "COVR_DATA_DIR": str(data), "COVR_GRAPH_URI": ""}
    subprocess.run(
        [_covr(), "load", "samples"], env=env, check=True, capture_output=True, timeout=300
    )
    done = subprocess.run(
        [
            *(_covr(), "generate", "--split", "val", "--image", IMAGE, "--seed", "5"),
            # --max-image-share is left at the CLI's default (0.05), sent over the RPC as such
            *("--per-template", str(N), "--single-answers", "--quiet", "--out", str(cli_file)),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    expected = cli_file.read_bytes()
    report = json.loads(Path(f"{cli_file}.dropped.json").read_text())
    assert expected.count(b"\n") > 0
    with running_server(data_dir=data, samples=False) as server, server.client(timeout=300) as c:
        stream = c.generate_questions(
            image_id=IMAGE, seed=5, count=1000, per_template=N, max_image_share=0.05
        )
        examples = list(stream)
    sdk_file = tmp_path / "sdk.jsonl"
    write_jsonl(examples, sdk_file)
    assert sdk_file.read_bytes() == expected
    assert stream.summary is not None
    assert stream.summary.to_dict() == report
