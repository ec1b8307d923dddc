"""The load pipeline: stream records, keep the valid ones, write them in batches, resumably.

Why it is built this way (DESIGN.md §2, cypher-portable.md):

- **One batch = one statement** when its images are new: ``load/create_images`` creates them
  whole (image, objects, relations, rel-mods). A failing statement applies not at all, so an
  image is either fully in the store or absent, never half-written. Images already stored are
  *replaced atomically* (:meth:`covr.graph.store.GraphStore.replace_images`: one transaction on
  Neo4j, stage-then-switch on FalkorDB), so a re-load is idempotent, a changed file replaces
  what an earlier load wrote, and no failure or kill in between loses a stored image.
- **Relations are created with their end nodes.** Rows refer to objects by position, so no edge
  needs an index lookup (the measured bottleneck).
- **Resumable.** After each batch a checkpoint records how many batches are done. ``--resume``
  re-reads the input (parsing is cheap, batches are deterministic), checks with one indexed query
  per batch that the checkpointed images really are in the store (a server that died before its
  snapshot loses them) and writes only the batches that are not.
- **Bad records never stop a load** unless ``strict``: they are reported with file, record and
  field. ``strict`` validates the whole input first and writes nothing if anything is wrong.
- **Reading overlaps writing.** Large inputs are parsed and converted in a forked child process
  (:class:`ProcessRead`) while this process renders and sends statements.
- A snapshot is taken after a completed load, so it survives a restart of the embedded server.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import resource
import signal
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty, Full
from typing import Any, Protocol

from covr.graph import catalog, name_stats
from covr.graph.store import GraphStore, ValuePreparer
from covr.scene.limits import SceneLimits
from covr.scene.model import SceneGraph
from covr.scene.records import KEY_SEP, RELATION_SEP, to_store_row
from covr_loaders.checkpoint import Checkpoint, fingerprint
from covr_loaders.errors import LoadFailed, Problem, reasons
from covr_loaders.jsonio import DEFAULT_MAX_RECORD_BYTES, ByteCounter
from covr_loaders.progress import NullReporter, Reporter

MAX_KEPT_PROBLEMS = 1000
"""Problems kept verbatim in a summary (all are counted); keeps memory flat on a broken file."""

Records = Iterator[SceneGraph | Problem]


@dataclass
class LoadInput:
    """One readable unit: a file (or VG's split files) and how to stream its records."""

    label: str
    paths: list[Path]
    records: Callable[[ByteCounter], Records]


@dataclass
class LoadJob:
    """Everything that determines a load's batch sequence."""

    source: str
    split: str
    inputs: list[LoadInput]
    options: dict[str, Any] = field(default_factory=dict)
    limits: SceneLimits = field(default_factory=SceneLimits)
    """What a stored scene graph may hold; a record over a limit is a problem, not a write."""
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES


@dataclass
class LoadSummary:
    """What a load read, wrote and skipped."""

    source: str
    split: str
    files: list[str] = field(default_factory=list)
    images: int = 0
    objects: int = 0
    attributes: int = 0
    relations: int = 0
    relmods: int = 0
    images_written: int = 0
    batches_written: int = 0
    batches_resumed: int = 0
    nodes_created: int = 0
    relationships_created: int = 0
    skipped: int = 0
    problems: list[Problem] = field(default_factory=list)
    skipped_by_reason: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    finish_seconds: float = 0.0
    """Part of ``seconds`` spent after the last batch (statistics refresh, snapshot)."""
    snapshot_seconds: float = 0.0
    stats_incremental: bool = False
    """Whether the name statistics were updated by adding this load's counts (else recounted)."""
    peak_rss_mb: float = 0.0
    """Peak resident memory of the loader: this process or its reader process, whichever is
    larger (the reader process holds the parser; this one the batches being sent)."""
    dry_run: bool = False
    completed: bool = False
    checkpoint: str = ""

    @property
    def images_per_s(self) -> float:
        return self.images / self.seconds if self.seconds > 0 else 0.0

    @property
    def elements_per_s(self) -> float:
        elements = self.nodes_created + self.relationships_created
        return elements / self.seconds if self.seconds > 0 else 0.0

    def add_problem(self, problem: Problem) -> None:
        self.skipped += 1
        if len(self.problems) < MAX_KEPT_PROBLEMS:
            self.problems.append(problem)

    def count(self, graph: SceneGraph) -> None:
        self.images += 1
        counts = graph.counts()
        self.objects += counts["objects"]
        self.attributes += counts["attributes"]
        self.relations += counts["relations"]
        self.relmods += counts["relmods"]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready view (``covr load --json``, benchmarks)."""
        out = {k: v for k, v in self.__dict__.items() if k != "problems"}
        out["problems"] = [p.as_dict() for p in self.problems]
        out["images_per_s"] = round(self.images_per_s, 1)
        out["elements_per_s"] = round(self.elements_per_s, 1)
        return out


class _Reader:
    """Runs the inputs of a job in order: dedups image ids, applies the limit, counts problems."""

    def __init__(self, job: LoadJob, summary: LoadSummary, limit: int | None) -> None:
        self.job = job
        self.summary = summary
        self.limit = limit
        self.counter = ByteCounter(job.max_record_bytes)

    def records(self) -> Iterator[SceneGraph]:
        seen: dict[str, int] = {}
        for number, item in enumerate(self.job.inputs):
            for record in item.records(self.counter):
                if isinstance(record, Problem):
                    self.summary.add_problem(record)
                    continue
                over = self.job.limits.violation(record)
                if over is not None:
                    self.summary.add_problem(Problem(item.label, record.original_id[:80], *over))
                    continue
                first = seen.get(record.image_id)
                if first is not None:
                    self.summary.add_problem(
                        Problem(
                            item.label,
                            record.original_id,
                            "image id",
                            f"duplicate image id: {record.image_id} was already read from "
                            f"{self.job.inputs[first].label}; this copy is skipped",
                        )
                    )
                    continue
                seen[record.image_id] = number
                self.summary.count(record)
                yield record
                if self.limit is not None and self.summary.images >= self.limit:
                    return


FIRST_BATCH = 500
"""Images in the first batch; later batches grow with the images already sent, up to the
configured size (``COVR_LOAD_BATCH_IMAGES``)."""


def batch_sizes(size: int) -> Iterator[int]:
    """The batch sizes of a load: 500, 500, 1,000, 2,000, ... doubling up to ``size``.

    Why growing: FalkorDB's per-statement commit cost grows with the graph (docs/loaders.md),
    so batches that grow with the graph keep that cost per image about constant, while small
    first batches let the writer start while the reader still converts (a load of a few
    thousand images would otherwise wait for one whole large batch). Deterministic, so a
    resumed load cuts the same batches.
    """
    sent = 0
    while True:
        current = min(size, max(FIRST_BATCH, sent))
        yield current
        sent += current


def _batches(records: Iterator[SceneGraph], size: int) -> Iterator[list[SceneGraph]]:
    sizes = batch_sizes(size)
    target = next(sizes)
    batch: list[SceneGraph] = []
    for record in records:
        batch.append(record)
        if len(batch) >= target:
            yield batch
            batch = []
            target = next(sizes)
    if batch:
        yield batch


def _finish(summary: LoadSummary, started: float) -> LoadSummary:
    summary.seconds = time.perf_counter() - started
    summary.skipped_by_reason = reasons(summary.problems)
    return summary


def validate_only(job: LoadJob, *, limit: int | None = None) -> LoadSummary:
    """Read and convert everything, write nothing (``--dry-run`` and the first pass of strict)."""
    started = time.perf_counter()
    summary = LoadSummary(job.source, job.split, files=[i.label for i in job.inputs], dry_run=True)
    for _ in _Reader(job, summary, limit).records():
        pass
    summary.completed = True
    return _finish(summary, started)


@dataclass
class Batch:
    """One write unit: its image ids and the parameters of ``load/create_images``.

    ``images`` (Image property maps), ``objects`` and ``relations`` (compact lists, see
    :func:`covr.scene.records.to_store_row`) are either values or, when the batch was made in
    the reader process, what the store's :meth:`~covr.graph.GraphStore.value_preparer` made of
    them (FalkorDB: their parameter text, so one string crosses the process boundary instead
    of thousands of small lists, and the parent only sends it).
    """

    index: int
    ids: list[str]
    images: Any
    objects: Any
    relations: Any
    bytes_read: int = 0
    images_read: int = 0
    names: name_stats.NameCounts = field(default_factory=dict)
    """What the batch's images add to the name statistics (:func:`name_counts`)."""

    @classmethod
    def of(
        cls, index: int, graphs: list[SceneGraph], *, prepare: ValuePreparer | None = None
    ) -> Batch:
        ids: list[str] = []
        images: list[dict[str, Any]] = []
        objects: list[list[Any]] = []
        relations: list[list[Any]] = []
        for graph in graphs:
            row = to_store_row(graph)
            ids.append(row["id"])
            images.append(row["image"])
            objects.append(row["objects"])
            relations.append(row["relations"])
        names = name_counts(images, objects, relations)
        if prepare is not None:
            return cls(
                index,
                ids,
                prepare(images, "images"),
                prepare(objects, "objects"),
                prepare(relations, "relations"),
                names=names,
            )
        return cls(index, ids, images, objects, relations, names=names)

    def create_params(self) -> dict[str, Any]:
        """Parameters of ``load/create_images``."""
        return {
            "sep": KEY_SEP,
            "relation_sep": RELATION_SEP,
            "ids": self.ids,
            "images": self.images,
            "objects": self.objects,
            "relations": self.relations,
        }


def name_counts(
    images: list[dict[str, Any]], objects: list[list[Any]], relations: list[list[Any]]
) -> name_stats.NameCounts:
    """What these store rows add to the name statistics, counted the way ``cypher/stats/*`` counts.

    Counted from the rows ``load/create_images`` writes (not from the scene graphs), so the
    names are exactly the stored ones: per (type, split, name) the images holding it and its
    occurrences (objects; attribute entries of objects; relations; rel-mods), so that a load
    that only adds images can add these instead of recounting the graph (``name_stats``).
    """
    counts: name_stats.NameCounts = {}
    for image, objs, rels in zip(images, objects, relations, strict=True):
        split = image.get("split")
        local: dict[name_stats.NameKey, int] = {}
        for obj in objs:
            key = ("object", split, obj[1])
            local[key] = local.get(key, 0) + 1
            for attribute in obj[2] or ():
                key = ("attribute", split, attribute)
                local[key] = local.get(key, 0) + 1
        for rel in rels:
            key = ("relation", split, rel[3])
            local[key] = local.get(key, 0) + 1
            for mod in rel[5] or ():
                key = ("relmod", split, mod[2])
                local[key] = local.get(key, 0) + 1
        for key, nodes in local.items():
            total = counts.get(key)
            if total is None:
                counts[key] = [1, nodes]
            else:
                total[0] += 1
                total[1] += nodes
    return counts


merge_counts = name_stats.merge_counts
"""Adds one batch's name counts to the load's (the graph room's one merge)."""


def write_batch(store: GraphStore, batch: Batch) -> tuple[int, int]:
    """Replace the batch's images in the store; returns (nodes, relationships) created.

    The delete runs only when one indexed read finds some of the images already stored (a
    re-load, a resume); a first load of new images skips it. A read takes no write lock and
    was measured cheaper than a delete that finds nothing (2 ms against 2-12 ms per 500 ids
    at 20,000 images).
    """
    nodes, rels, _ = write_batch_replacing(store, batch)
    return nodes, rels


def write_batch_replacing(store: GraphStore, batch: Batch) -> tuple[int, int, int]:
    """:func:`write_batch`, also returning how many stored images the batch replaced.

    Images already stored are replaced atomically (:meth:`GraphStore.replace_images`): a batch
    that fails, or a writer or server killed mid-batch, leaves each of them as it was stored or
    as the batch has it, never absent (issue 40).
    """
    present = store.read(catalog.get("load/existing_images"), {"ids": batch.ids})
    if present:
        ids = [r["id"] for r in present]
        result = store.replace_images(ids, batch.create_params())
    else:
        result = store.write(catalog.get("load/create_images"), batch.create_params())
    return result.nodes_created, result.relationships_created, len(present)


def batch_present(store: GraphStore, batch: Batch) -> bool:
    """Whether every image of a checkpointed batch is really in the store."""
    ids = batch.ids
    rows = store.read(catalog.get("load/existing_images"), {"ids": ids})
    return len({r["id"] for r in rows}) == len(set(ids))


GC_THRESHOLD = 50_000
"""Allocations between young-generation collections during a load (Python's default: 700).

Records and rows are acyclic and freed by reference counting; with the default threshold the
cycle collector ran so often that it cost as much as converting (measured with the 5,000-image
synthetic file: reading took half the time with the collector off). Memory stays bounded."""

PARALLEL_MIN_BYTES = 4 * 1024 * 1024
"""Inputs smaller than this are read in-process: forking costs more than it saves."""


def peak_rss_mb() -> float:
    """Peak resident memory of the calling process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# The read side: where a load's batches come from, read and converted in this thread or in a
# forked child (reading overlaps writing because the child has a core of its own).


class ReadSide(Protocol):
    """Where batches come from; :meth:`summary` is complete once iteration has ended."""

    def __iter__(self) -> Iterator[Batch]: ...

    def summary(self) -> LoadSummary: ...

    def close(self) -> None: ...


class InlineRead:
    """Reads and converts in the calling thread (small inputs, tests)."""

    def __init__(
        self, job: LoadJob, limit: int | None, size: int, *, prepare: ValuePreparer | None = None
    ) -> None:
        self._summary = LoadSummary(job.source, job.split)
        self._reader = _Reader(job, self._summary, limit)
        self._size = size
        self._prepare = prepare

    def __iter__(self) -> Iterator[Batch]:
        for index, graphs in enumerate(_batches(self._reader.records(), self._size)):
            batch = Batch.of(index, graphs, prepare=self._prepare)
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
    job: LoadJob,
    limit: int | None,
    size: int,
    prepare: ValuePreparer | None,
    queue: Any,
    parent: int,
) -> None:
    _die_with_parent(parent)
    gc.freeze()  # what the fork inherited is never garbage: keep the collector off it
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    try:
        side = InlineRead(job, limit, size, prepare=prepare)
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
        self, job: LoadJob, limit: int | None, size: int, *, prepare: ValuePreparer | None = None
    ) -> None:
        context = multiprocessing.get_context("fork")
        self._queue = context.Queue(maxsize=2)
        self._process = context.Process(
            target=_child_main,
            args=(job, limit, size, prepare, self._queue, os.getpid()),
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


@dataclass
class _Written:
    """What one batch did to the store (computed on a writer thread, accounted in order)."""

    batch: Batch
    resumed: bool = False
    nodes: int = 0
    rels: int = 0
    replaced: int = 0


@dataclass
class _WriteLoop:
    """The state of one load's write loop: summary, checkpoint and name-statistics bookkeeping.

    Name statistics: the counts of this load's images are added to the old ones when the load
    only added images to a store whose statistics were current (``name_stats.begin_load``);
    anything else (a resumed batch, a replaced image) makes the finish recount everything.
    ``begin_load`` marks the statistics pending right before the first write.
    """

    store: GraphStore
    summary: LoadSummary
    checkpoint: Checkpoint
    previous: Checkpoint | None
    reporter: Reporter
    stats_base: name_stats.LoadBase | None = None
    stats_begun: bool = False
    stats_addable: bool = True
    names: name_stats.NameCounts = field(default_factory=dict)

    def resumable(self, batch: Batch) -> bool:
        return self.previous is not None and batch.index < self.previous.batches_done

    def before_write(self) -> None:
        """Mark the statistics pending before anything can be written (on this thread, before
        the first batch is handed to a writer; a resumed batch may turn out to need writing)."""
        if not self.stats_begun:
            self.stats_base = name_stats.begin_load(self.store)
            self.stats_begun = True

    def write(self, batch: Batch) -> _Written:
        """Runs on a writer thread: only store calls, no shared state."""
        if self.resumable(batch) and batch_present(self.store, batch):
            return _Written(batch, resumed=True)
        nodes, rels, replaced = write_batch_replacing(self.store, batch)
        return _Written(batch, nodes=nodes, rels=rels, replaced=replaced)

    def account(self, done: _Written) -> None:
        """Runs in batch order, so the checkpoint never counts a batch before an unwritten one."""
        summary, batch = self.summary, done.batch
        if done.resumed:
            summary.batches_resumed += 1
            self.stats_addable = False
        else:
            if done.replaced:
                self.stats_addable = False
            elif self.stats_addable and self.stats_base is not None:
                merge_counts(self.names, batch.names)
            summary.nodes_created += done.nodes
            summary.relationships_created += done.rels
            summary.images_written += len(batch.ids)
            summary.batches_written += 1
        self.checkpoint.batches_done = batch.index + 1
        self.checkpoint.images_done += len(batch.ids)
        self.checkpoint.save()
        self.reporter.update(batch.bytes_read, batch.images_read)

    def run(self, side: ReadSide, writers: int) -> None:
        """Write every batch, up to ``writers`` statements in flight (in order of completion
        accounting). Neo4j runs each transaction on one core, so two writers use both cores of
        a small machine; FalkorDB serialises writes, so it gets one."""
        if writers <= 1:
            for batch in side:
                self.before_write()
                self.account(self.write(batch))
            return
        with ThreadPoolExecutor(writers, thread_name_prefix="covr-load-writer") as pool:
            flight: deque[Future[_Written]] = deque()
            try:
                for batch in side:
                    self.before_write()
                    flight.append(pool.submit(self.write, batch))
                    if len(flight) >= writers:
                        self.account(flight.popleft().result())
                while flight:
                    self.account(flight.popleft().result())
            finally:
                for pending in flight:
                    pending.cancel()

    def finish(self, side: ReadSide, total_bytes: int) -> None:
        """Copy the read side's counts into the summary once every batch is written."""
        read = side.summary()
        for name in ("images", "objects", "attributes", "relations", "relmods", "skipped"):
            setattr(self.summary, name, getattr(read, name))
        self.summary.peak_rss_mb = max(read.peak_rss_mb, peak_rss_mb())
        self.summary.problems = read.problems
        self.reporter.update(total_bytes, self.summary.images)


def _read_side(
    store: GraphStore, job: LoadJob, limit: int | None, batch_images: int, parallel: bool
) -> tuple[ReadSide, int]:
    """The reader for ``job`` (a child process for large inputs) and the input's size in bytes."""
    total_bytes = sum(p.stat().st_size for i in job.inputs for p in i.paths)
    if parallel and total_bytes >= PARALLEL_MIN_BYTES:
        prepare = store.value_preparer()
        return ProcessRead(job, limit, batch_images, prepare=prepare), total_bytes
    return InlineRead(job, limit, batch_images), total_bytes


def run_load(
    store: GraphStore,
    job: LoadJob,
    *,
    data_dir: Path,
    batch_images: int,
    limit: int | None = None,
    resume: bool = False,
    strict: bool = False,
    reporter: Reporter | None = None,
    parallel: bool = True,
    writers: int = 1,
) -> LoadSummary:
    """Load ``job`` into ``store``; see the module docstring for the guarantees.

    ``parallel`` reads in a child process (see :class:`ProcessRead`) when the input is large
    enough for that to pay off; ``writers`` statements may be in flight at once.
    """
    reporter = reporter or NullReporter()
    if strict:
        check = validate_only(job, limit=limit)
        if check.skipped:
            raise LoadFailed(check.problems)
    started = time.perf_counter()
    parts = {
        "source": job.source,
        "split": job.split,
        "limit": limit,
        "batch": batch_images,
        "options": job.options,
    }
    print_ = fingerprint(parts, [p for i in job.inputs for p in i.paths])
    path = Checkpoint.location(data_dir, job.source, job.split, print_)
    loop = _WriteLoop(
        store,
        LoadSummary(
            job.source, job.split, files=[i.label for i in job.inputs], checkpoint=str(path)
        ),
        Checkpoint(path=path, fingerprint=print_),
        Checkpoint.open(path, print_) if resume else None,
        reporter,
    )
    side, total_bytes = _read_side(store, job, limit, batch_images, parallel)
    reporter.start(f"{job.source} {job.split}", total_bytes)
    thresholds = gc.get_threshold()
    gc.set_threshold(GC_THRESHOLD, *thresholds[1:])
    try:
        loop.run(side, writers)
        loop.finish(side, total_bytes)
    finally:
        gc.set_threshold(*thresholds)
        side.close()
        reporter.finish()
    return _finish(_after_load(loop), started)


def _after_load(loop: _WriteLoop) -> LoadSummary:
    """Statistics and snapshot after a completed load. Keep this the one place for work that
    must follow every completed load (the related-images room refreshes its statistics here)."""
    summary, store = loop.summary, loop.store
    finishing = time.perf_counter()
    # Related-image lookups anchor on these (docs/related.md §2).
    stats = name_stats.add_counts(
        store, loop.stats_base if loop.stats_addable else None, loop.names, summary.images_written
    )
    summary.stats_incremental = stats.incremental
    snapshotting = time.perf_counter()
    store.snapshot()
    summary.snapshot_seconds = time.perf_counter() - snapshotting
    summary.finish_seconds = time.perf_counter() - finishing
    loop.checkpoint.completed = True
    loop.checkpoint.save()
    summary.completed = True
    return summary


def problem_lines(summary: LoadSummary, limit: int = 20) -> list[str]:
    """Human-readable lines for the skipped records of a summary."""
    lines = [str(p) for p in summary.problems[:limit]]
    if summary.skipped > limit:
        lines.append(f"... and {summary.skipped - limit} more")
    return lines
