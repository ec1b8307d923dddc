"""Where a load's batches come from: read and converted in this thread, or in a forked child.

Split from :mod:`covr_loaders.writer`, which consumes them: reading overlaps writing because the
child process has a core of its own (see :class:`ProcessRead`).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import traceback
from collections.abc import Iterator
from queue import Empty, Full
from typing import Any, Protocol

from covr_loaders.writer import (
    GC_THRESHOLD,
    Batch,
    LoadJob,
    LoadSummary,
    _batches,
    _Reader,
    peak_rss_mb,
)


class ReadSide(Protocol):
    """Where batches come from; :meth:`summary` is complete once iteration has ended."""

    def __iter__(self) -> Iterator[Batch]: ...

    def summary(self) -> LoadSummary: ...

    def close(self) -> None: ...


class InlineRead:
    """Reads and converts in the calling thread (small inputs, tests)."""

    def __init__(
        self, job: LoadJob, limit: int | None, size: int, *, rendered: bool = False
    ) -> None:
        self._summary = LoadSummary(job.source, job.split)
        self._reader = _Reader(job, self._summary, limit)
        self._size = size
        self._rendered = rendered

    def __iter__(self) -> Iterator[Batch]:
        for index, graphs in enumerate(_batches(self._reader.records(), self._size)):
            batch = Batch.of(index, graphs, rendered=self._rendered)
            batch.bytes_read = self._reader.counter.bytes
            batch.images_read = self._summary.images
            yield batch

    def summary(self) -> LoadSummary:
        return self._summary

    def close(self) -> None:
        return None


def _child_put(queue: Any, item: object, parent: int) -> None:
    """Put with a timeout, giving up when the parent is gone (it was killed: do not linger)."""
    while True:
        try:
            queue.put(item, timeout=1.0)
            return
        except Full:
            if os.getppid() != parent:
                os._exit(0)


_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this child when the parent dies.

    A forked child shares the parent's open files, among them the embedded server's data
    directory lock: if the child outlived a killed loader, the next ``covr load --resume`` would
    find the directory locked.
    """
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the getppid() checks below still apply
        pass
    if os.getppid() != parent:  # the parent died before the request was in place
        os._exit(0)


def _child_main(
    job: LoadJob, limit: int | None, size: int, rendered: bool, queue: Any, parent: int
) -> None:
    _die_with_parent(parent)
    gc.freeze()  # what the fork inherited is never garbage: keep the collector off it
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    try:
        side = InlineRead(job, limit, size, rendered=rendered)
        for batch in side:
            _child_put(queue, ("batch", batch), parent)
        summary = side.summary()
        summary.peak_rss_mb = peak_rss_mb()
        _child_put(queue, ("done", summary), parent)
    except BaseException as exc:  # reported to the parent, which raises it there
        text = "".join(traceback.format_exception(exc))
        _child_put(queue, ("error", f"{type(exc).__name__}: {exc}\n{text}"), parent)


class ReaderFailed(RuntimeError):
    """The reader process failed or died; the message carries its traceback."""


class ProcessRead:
    """Reads and converts in a forked child process while this process writes.

    Measured on 20,000 synthetic GQA images: reading + converting and rendering + writing take
    about the same time, and a reader *thread* gained nothing (the GIL serializes the Python
    parts). A process gets its own core. Batches come back through a short queue (two batches),
    so memory stays bounded; the child exits by itself when this process dies.
    """

    def __init__(
        self, job: LoadJob, limit: int | None, size: int, *, rendered: bool = False
    ) -> None:
        context = multiprocessing.get_context("fork")
        self._queue = context.Queue(maxsize=2)
        self._process = context.Process(
            target=_child_main,
            args=(job, limit, size, rendered, self._queue, os.getpid()),
            name="covr-load-reader",
            daemon=True,
        )
        self._process.start()
        self._summary: LoadSummary | None = None

    def __iter__(self) -> Iterator[Batch]:
        while True:
            try:
                kind, payload = self._queue.get(timeout=1.0)
            except Empty:
                if not self._process.is_alive():
                    raise ReaderFailed(
                        f"the reader process exited with code {self._process.exitcode}"
                    ) from None
                continue
            if kind == "batch":
                yield payload
            elif kind == "done":
                self._summary = payload
                return
            else:
                raise ReaderFailed(str(payload))

    def summary(self) -> LoadSummary:
        if self._summary is None:
            raise ReaderFailed("the reader process did not finish")
        return self._summary

    def close(self) -> None:
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(timeout=5)
        self._queue.close()
