"""GenerateQuestions' stream: examples are converted and sent while the engine still generates.

The engine spends much of a call waiting for the graph store (related-image lookups), and the
service's own cost is turning each example into a message (~30 µs each, a few hundred per call).
Done after the engine had finished, that conversion was added in full to every call's latency
(47 ms at 8,500 images, ``benchmarks/bench_service.py``). Here the engine runs in its own thread
and collects its examples; right before each of its store reads (the moment it is going to wait
and the store client releases the GIL) it hands what it has to the handler's thread, which
converts them while the engine waits, and sends a page as soon as one is full. Handing over
each example on its own was measured slower: every hand-over woke the other thread in the middle
of the engine's CPU work.

The engine thread runs inside the RPC's deadline scope (its reads are bounded by the caller's
deadline and stop when the client has left) and stops at its next example when the handler
stops: the client cancelled, the stream was closed, or ``count`` examples were taken.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

from covr.questions.example import ExampleRecord
from covr.service.convert import example_fields
from covr.v1 import questions_pb2

_DONE = object()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def stream_examples(
    examples: Iterator[ExampleRecord],
    *,
    count: int,
    page_size: int,
    gone: threading.Event,
    scope: Callable[[Callable[[], None]], AbstractContextManager[None]],
    on_empty: Callable[[], None] | None = None,
    summary: Callable[[], questions_pb2.GenerationSummary] | None = None,
) -> Iterator[questions_pb2.GenerateQuestionsResponse]:
    """Pages of at most ``page_size`` of the first ``count`` examples of ``examples``.

    ``scope(before_read)`` enters the RPC's deadline scope in the engine's thread, with a hook
    the store runs before each read. ``on_empty`` runs (in the caller's thread, inside
    ``scope``) when the engine produced nothing, to tell "nothing to ask about" apart with a
    proper error. An exception of the engine is raised here, in the handler's thread, so the
    error interceptor maps it like any other. ``summary`` (a quota or an image share: see
    :mod:`covr.service.question_quota`) is called once the engine has stopped and goes into the
    last message (a message of its own when the examples ended on a full page).
    """
    handover: queue.SimpleQueue[object] = queue.SimpleQueue()
    stop = threading.Event()
    pending: list[ExampleRecord] = []

    def flush() -> None:
        if pending:
            handover.put(pending.copy())
            pending.clear()

    def produce() -> None:
        taken = 0
        try:
            with scope(flush):
                for example in examples:
                    if stop.is_set() or gone.is_set():
                        break
                    pending.append(example)
                    taken += 1
                    if taken >= count:
                        break
                    if len(pending) >= page_size:
                        flush()
                flush()
        except BaseException as exc:  # handed to the handler's thread, raised there
            handover.put(_Failed(exc))
        finally:
            handover.put(_DONE)

    engine = threading.Thread(target=produce, name="covr-questions", daemon=True)
    engine.start()
    sent = 0
    try:
        page = questions_pb2.GenerateQuestionsResponse()
        while True:
            item = handover.get()
            if item is _DONE:
                break
            if isinstance(item, _Failed):
                raise item.error
            assert isinstance(item, list)
            for example in item:
                page.examples.add(**example_fields(example))
                if len(page.examples) >= page_size:
                    sent += len(page.examples)
                    yield page
                    page = questions_pb2.GenerateQuestionsResponse()
                    if gone.is_set():
                        return
        if not sent and not page.examples and on_empty is not None and not gone.is_set():
            with scope(flush):
                on_empty()
        if summary is not None and not gone.is_set():
            page.summary.CopyFrom(summary())
        if page.examples or page.HasField("summary"):
            yield page
    finally:
        stop.set()
        # The engine stops at its next example (or its next store read, when the client left);
        # waiting for it keeps the call's admission slot until its work has really ended.
        engine.join()
