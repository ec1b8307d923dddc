"""GenerateQuestions' quota fields (issue 36 item 2 over the RPC): ``per_template`` and
``max_image_share`` checked with a violation naming each bad field, the question room's quota
run equal to ``covr generate``'s driver for one source image, and its summary carried by the
stream's last message and read back by the SDK as ``OUT.dropped.json``'s record."""

from __future__ import annotations

import dataclasses
import math
import threading
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import pytest

from covr.questions.generate import iter_examples, spread_over
from covr.questions.options import GenerationOptions
from covr.questions.quota import FormQuota
from covr.questions.sources import QuotaRun
from covr.questions.templates import select_templates
from covr.related.memory import InMemoryRelated
from covr.service.example_stream import stream_examples
from covr.service.question_quota import quota_fields, summary_proto
from covr.v1 import questions_pb2
from covr_client import GenerationSummary
from covr_client._proto import questions_pb2 as client_pb2
from tests.support.question_data import bundled_samples

pytestmark = pytest.mark.unit

MAX = 1000


def _fields(**values: Any) -> Any:
    return quota_fields(questions_pb2.GenerateQuestionsRequest(image_id="x", **values), MAX)


def test_unset_fields_mean_no_quota_and_no_cap() -> None:
    checked = _fields()
    assert (checked.per_template, checked.max_image_share, checked.violations) == (None, None, ())


@pytest.mark.parametrize(("share", "expected"), [(0.0, None), (1.0, None), (0.05, 0.05)])
def test_a_share_of_0_or_1_is_no_cap_as_on_the_cli(share: float, expected: float | None) -> None:
    checked = _fields(per_template=7, max_image_share=share)
    assert (checked.per_template, checked.max_image_share, checked.violations) == (
        7,
        expected,
        (),
    )


@pytest.mark.parametrize(
    ("share", "says"),
    [
        (math.nan, "must be a number"),
        (-0.1, "must be >= 0"),
        (-math.inf, "must be >= 0"),
        (1.5, "must be at most 1"),
        (math.inf, "must be at most 1"),
    ],
)
def test_a_bad_share_is_a_violation_naming_the_field(share: float, says: str) -> None:
    checked = _fields(max_image_share=share)
    assert checked.max_image_share is None
    assert [v.field for v in checked.violations] == ["max_image_share"]
    assert says in checked.violations[0].description


def test_a_quota_above_the_largest_call_is_a_violation_naming_the_field() -> None:
    assert _fields(per_template=MAX).violations == ()
    checked = _fields(per_template=MAX + 1)
    assert checked.per_template is None
    assert [v.field for v in checked.violations] == ["per_template"]
    assert f"{MAX + 1} is larger than {MAX}" in checked.violations[0].description


def test_both_bad_fields_are_reported_together() -> None:
    checked = _fields(per_template=2**32 - 1, max_image_share=-1.0)
    assert [v.field for v in checked.violations] == ["per_template", "max_image_share"]


def test_a_negative_quota_is_refused_by_the_sdk_by_name() -> None:
    from covr_client import _requests

    with pytest.raises(ValueError, match="per_template must be >= 0"):
        _requests.questions(image_id="x", per_template=-1)
    request = _requests.questions(image_id="x", per_template=3, max_image_share=None)
    assert (request.per_template, request.max_image_share) == (3, 0.0)


# -- the room's quota run against covr generate's driver -----------------------------------------


@pytest.fixture(scope="module")
def memory() -> tuple[InMemoryRelated, str]:
    scenes = bundled_samples()["val"]
    provider = InMemoryRelated(scenes)
    best = max(scenes, key=lambda s: len(s.objects)).image_id
    return provider, best


def _cli_run(
    provider: InMemoryRelated, options: GenerationOptions, image_id: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """What ``covr generate --image IMAGE_ID`` keeps and reports (``_write_generated``)."""
    options = spread_over(options, 1)
    quota, dropped, shown = FormQuota.for_run(options), Counter[str](), Counter[str]()
    examples = list(iter_examples(provider, options, [image_id], dropped=dropped, quota=quota))
    for example in examples:
        shown.update(set(example["scenes"]))
    forms = [t.name for t in select_templates(options.templates)]
    return [dict(e) for e in examples], {
        "dropped": {k: n for k, n in sorted(dropped.items()) if "/" not in k},
        "forms": quota.report(forms, dropped),
        "image_spread": quota.spread(shown, len(examples)),
    }


@pytest.mark.parametrize(("per_template", "share"), [(2, None), (3, 0.05), (None, 0.5)])
def test_the_room_keeps_what_covr_generate_keeps_and_reports_the_same(
    memory: tuple[InMemoryRelated, str], per_template: int | None, share: float | None
) -> None:
    from covr.questions.generate import image_examples

    provider, image_id = memory
    base = GenerationOptions(split="val", seed=4)
    run = QuotaRun.start(base, per_template, share)
    assert run is not None
    got = list(run.kept(image_examples(provider, run.options, image_id, run.dropped, run.full)))
    options = dataclasses.replace(base, per_template=per_template, max_image_share=share)
    expected, report = _cli_run(provider, options, image_id)
    assert [e["qid"] for e in got] == [e["qid"] for e in expected]
    assert got
    summary = run.summary()
    assert summary.pop("examples") == len(got)
    assert summary == report
    if per_template is not None:
        made = Counter(e["template"] for e in got)
        assert all(n <= per_template + 1 for n in made.values())  # a pair may take N + 1
        assert {f: r["made"] for f, r in report["forms"].items() if r["made"]} == dict(made)


def test_no_quota_and_no_cap_is_no_run() -> None:
    assert QuotaRun.start(GenerationOptions(split="val"), None, None) is None


# -- the summary on the stream's last message ----------------------------------------------------


def _no_scope(before_read: Callable[[], None]) -> AbstractContextManager[None]:
    return nullcontext()


def _summary() -> dict[str, Any]:
    return {
        "dropped": {"degenerate": 3, "no-distractor": 1},
        "forms": {
            "count_all": {
                "wanted": 2,
                "made": 2,
                "over_quota": 4,
                "image_share": 0,
                "dropped": {"degenerate": 3},
            },
            "verify_attr": {
                "wanted": 2,
                "made": 0,
                "over_quota": 0,
                "image_share": 1,
                "dropped": {"no-distractor": 1},
            },
        },
        "image_spread": {
            "max_image_share": 0.05,
            "held": False,
            "applies": False,
            "most_shown": {"image": "gqa:1", "examples": 2, "share": 1.0},
        },
        "examples": 2,
    }


def _read(message: questions_pb2.GenerationSummary) -> GenerationSummary:
    """The server's message as the SDK receives it (its own copy of the stubs)."""
    return GenerationSummary.from_proto(
        client_pb2.GenerationSummary.FromString(message.SerializeToString())
    )


def test_the_sdk_reads_the_summary_back_as_the_dropped_json_record() -> None:
    record = _summary()
    read = _read(summary_proto(record))
    assert read.examples == record.pop("examples")
    assert read.to_dict() == record
    assert read.forms["count_all"].wanted == 2
    no_quota = dict(record, forms={"count_all": {**record["forms"]["count_all"], "wanted": None}})
    no_quota["examples"] = 0
    assert _read(summary_proto(no_quota)).forms["count_all"].wanted is None


@pytest.mark.parametrize(("examples", "pages"), [(3, [2, 1]), (4, [2, 2, 0]), (0, [0])])
def test_the_summary_goes_into_the_last_message(examples: int, pages: list[int]) -> None:
    records: list[dict[str, Any]] = [
        {
            "qid": f"q{k}",
            "utterance": "u",
            "scenes": ["a"],
            "answer": True,
            "pattern_name": "p",
            "program": [],
            "properties": [],
            "source_image": "a",
            "subgraphs": {"g": "x"},
            "signatures": {"a": []},
            "seed": 0,
            "generator_version": "v",
            "template": "t",
            "paper_template": "t",
            "answer_type": "bool",
            "split": "val",
            "structure": [1, 0],
        }
        for k in range(examples)
    ]
    called: list[int] = []

    def summary() -> questions_pb2.GenerationSummary:
        called.append(1)
        return summary_proto(_summary())

    out = list(
        stream_examples(
            iter(records),
            count=100,
            page_size=2,
            gone=threading.Event(),
            scope=_no_scope,
            summary=summary,
        )
    )
    assert [len(p.examples) for p in out] == pages
    assert [p.HasField("summary") for p in out] == [False] * (len(pages) - 1) + [True]
    assert called == [1]
