"""GenerateQuestions' stream: pages while the engine runs, the engine stops at ``count``, errors
of the engine reach the handler, and the messages equal the field-by-field conversion."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import pytest

from covr.questions.example import Example, ExampleRecord
from covr.questions.generate import GenerationOptions, generate_for_image, iter_for_image
from covr.related.memory import InMemoryRelated
from covr.service import convert
from covr.service.convert import example_to_proto
from covr.service.example_stream import stream_examples
from covr_client._proto import questions_pb2
from tests.support.question_data import bundled_samples

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def engine_run() -> tuple[InMemoryRelated, GenerationOptions, str, list[Example]]:
    scenes = bundled_samples()["val"]
    provider = InMemoryRelated(scenes)
    options = GenerationOptions(split="val", seed=7)
    for scene in scenes:
        examples = generate_for_image(provider, options, scene.image_id)
        if len(examples) >= 12:
            return provider, options, scene.image_id, examples
    raise AssertionError("no bundled image gives 12 examples")


def _counted(examples: Iterator[ExampleRecord], taken: list[int]) -> Iterator[ExampleRecord]:
    for example in examples:
        taken[0] += 1
        yield example


def _no_scope(before_read: Callable[[], None]) -> AbstractContextManager[None]:
    return nullcontext()


def _stream(examples: Iterator[ExampleRecord], **kwargs: Any) -> list[Any]:
    kwargs.setdefault("gone", threading.Event())
    kwargs.setdefault("scope", _no_scope)
    return list(stream_examples(examples, **kwargs))


def test_iter_for_image_is_generate_for_image_one_by_one(engine_run: Any) -> None:
    provider, options, image_id, examples = engine_run
    assert list(iter_for_image(provider, options, image_id)) == examples


def test_pages_hold_every_example_in_order_as_the_old_conversion_did(engine_run: Any) -> None:
    provider, options, image_id, examples = engine_run
    pages = _stream(iter_for_image(provider, options, image_id), count=10_000, page_size=5)
    assert [len(p.examples) for p in pages[:-1]] == [5] * (len(pages) - 1)
    received = [e for p in pages for e in p.examples]
    assert received == [example_to_proto(e) for e in examples]
    # the same bytes as setting each field by hand (the conversion before the stream)
    assert [m.SerializeToString(deterministic=True) for m in received] == [
        _by_hand(e).SerializeToString(deterministic=True) for e in examples
    ]


def _program(steps: list[dict[str, Any]]) -> questions_pb2.Program:
    out = questions_pb2.Program()
    for step in steps:
        row = out.steps.add(operation=step["operation"], dependencies=step["dependencies"])
        for argument in step["arguments"]:
            if isinstance(argument, list):
                row.arguments.add(program=_program(argument))
            elif isinstance(argument, int) and not isinstance(argument, bool):
                row.arguments.add(number=argument)
            else:
                row.arguments.add(text=argument)
    return out


def _by_hand(example: dict[str, Any]) -> questions_pb2.Example:
    out = questions_pb2.Example(
        qid=example["qid"],
        utterance=example["utterance"],
        scenes=example["scenes"],
        pattern_name=example["pattern_name"],
        program=_program(example["program"]),
        properties=example["properties"],
    )
    answer = example["answer"]
    if isinstance(answer, bool):
        out.answer.bool_value = answer
    elif isinstance(answer, int):
        out.answer.number_value = answer
    else:
        out.answer.text_value = answer
    p = out.provenance
    p.source_image = example["source_image"]
    p.subgraphs.update(example["subgraphs"])
    for image_id in example["scenes"]:
        p.signatures.add(image_id=image_id, signatures=example["signatures"][image_id])
    p.seed = example["seed"]
    p.generator_version = example["generator_version"]
    p.template = example["template"]
    p.paper_template = example["paper_template"]
    p.answer_type = example["answer_type"]
    p.split = example["split"]
    p.structure.extend(example["structure"])
    return out


def test_the_engine_stops_at_count(engine_run: Any) -> None:
    provider, options, image_id, examples = engine_run
    taken = [0]
    pages = _stream(
        _counted(iter_for_image(provider, options, image_id), taken), count=3, page_size=100
    )
    assert [e.qid for p in pages for e in p.examples] == [e["qid"] for e in examples[:3]]
    assert taken[0] == 3  # not one example more was generated


def test_an_engine_error_is_raised_in_the_handler_thread() -> None:
    def failing() -> Iterator[dict[str, Any]]:
        yield from ()
        raise KeyError("no such image")

    with pytest.raises(KeyError, match="no such image"):
        _stream(failing(), count=10, page_size=10)


def test_on_empty_runs_only_when_nothing_was_generated(engine_run: Any) -> None:
    provider, options, image_id, _ = engine_run
    calls: list[int] = []
    assert _stream(iter([]), count=5, page_size=5, on_empty=lambda: calls.append(1)) == []
    assert calls == [1]
    _stream(
        iter_for_image(provider, options, image_id),
        count=5,
        page_size=5,
        on_empty=lambda: calls.append(2),
    )
    assert calls == [1]


def test_a_gone_client_stops_the_engine(engine_run: Any) -> None:
    provider, options, image_id, examples = engine_run
    gone = threading.Event()
    taken = [0]
    stream = stream_examples(
        _counted(iter_for_image(provider, options, image_id), taken),
        count=10_000,
        page_size=2,
        gone=gone,
        scope=_no_scope,
    )
    first = next(stream)
    assert len(first.examples) == 2
    gone.set()
    assert list(stream) == []  # the handler stops after the page in flight
    assert taken[0] < len(examples)


def test_the_engine_runs_inside_the_rpc_scope(engine_run: Any) -> None:
    provider, options, image_id, _ = engine_run
    threads: list[str] = []

    class Scope:
        def __init__(self, before_read: Callable[[], None]) -> None:
            pass

        def __enter__(self) -> None:
            threads.append(threading.current_thread().name)

        def __exit__(self, *exc: object) -> None:
            return None

    _stream(iter_for_image(provider, options, image_id), count=2, page_size=2, scope=Scope)
    assert threads == ["covr-questions"]


def test_collected_examples_are_handed_over_before_a_store_read(
    engine_run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine hands its examples to the handler's thread when it is about to wait for the
    store (the store calls the scope's hook), so they are converted during that wait."""
    import covr.service.example_stream as stream_module

    _, _, _, examples = engine_run
    converted = threading.Event()
    real_fields = convert.example_fields

    def fields(example: dict[str, Any]) -> dict[str, Any]:
        converted.set()
        return real_fields(example)

    monkeypatch.setattr(stream_module, "example_fields", fields)
    hooks: list[Callable[[], None]] = []

    def scope(before_read: Callable[[], None]) -> AbstractContextManager[None]:
        hooks.append(before_read)
        return nullcontext()

    seen_during_read: list[bool] = []

    def engine() -> Iterator[dict[str, Any]]:
        yield examples[0]
        yield examples[1]
        hooks[0]()  # what DeadlineStore.read does before waiting for the store
        seen_during_read.append(converted.wait(5))
        yield from examples[2:5]

    pages = _stream(engine(), count=100, page_size=100, scope=scope)
    assert seen_during_read == [True]
    assert [e.qid for p in pages for e in p.examples] == [e["qid"] for e in examples[:5]]
