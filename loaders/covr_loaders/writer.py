"""The load pipeline: stream records, keep the valid ones, write them in batches, resumably.

Why it is built this way (DESIGN.md §2, cypher-portable.md):

- **One batch = one statement per step.** ``load/delete_images`` removes the batch's images if
  they exist, ``load/create_images`` creates them whole (image, objects, relations, rel-mods) in
  one statement. FalkorDB applies a failing statement not at all, so an image is either fully in
  the store or absent, never half-written. Delete-then-create makes a re-load idempotent and
  lets a changed file replace what an earlier load wrote.
- **Relations are created with their end nodes.** Rows refer to objects by position, so no edge
  needs an index lookup (the measured bottleneck).
- **Resumable.** After each batch a checkpoint records how many batches are done. ``--resume``
  re-reads the input (parsing is cheap, batches are deterministic), checks with one indexed query
  per batch that the checkpointed images really are in the store (a server that died before its
  snapshot loses them) and writes only the batches that are not.
- **Bad records never stop a load** unless ``strict``: they are reported with file, record and
  field. ``strict`` validates the whole input first and writes nothing if anything is wrong.
- A snapshot is taken after a completed load, so it survives a restart of the embedded server.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from covr.graph import catalog
from covr.graph.store import GraphStore
from covr.scene.model import SceneGraph
from covr.scene.records import to_store_row
from covr_loaders.checkpoint import Checkpoint, fingerprint
from covr_loaders.errors import LoadFailed, Problem, reasons
from covr_loaders.jsonio import ByteCounter
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
        self.counter = ByteCounter()

    def records(self) -> Iterator[SceneGraph]:
        seen: dict[str, int] = {}
        for number, item in enumerate(self.job.inputs):
            for record in item.records(self.counter):
                if isinstance(record, Problem):
                    self.summary.add_problem(record)
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


def _batches(records: Iterator[SceneGraph], size: int) -> Iterator[list[SceneGraph]]:
    batch: list[SceneGraph] = []
    for record in records:
        batch.append(record)
        if len(batch) >= size:
            yield batch
            batch = []
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


def write_batch(store: GraphStore, batch: list[SceneGraph]) -> tuple[int, int]:
    """Replace the batch's images in the store; returns (nodes, relationships) created."""
    ids = [g.image_id for g in batch]
    store.write(catalog.get("load/delete_images"), {"ids": ids})
    result = store.write(
        catalog.get("load/create_images"), {"rows": [to_store_row(g) for g in batch]}
    )
    return result.nodes_created, result.relationships_created


def batch_present(store: GraphStore, batch: list[SceneGraph]) -> bool:
    """Whether every image of a checkpointed batch is really in the store."""
    ids = [g.image_id for g in batch]
    rows = store.read(catalog.get("load/existing_images"), {"ids": ids})
    return len({r["id"] for r in rows}) == len(set(ids))


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
) -> LoadSummary:
    """Load ``job`` into ``store``; see the module docstring for the guarantees."""
    reporter = reporter or NullReporter()
    if strict:
        check = validate_only(job, limit=limit)
        if check.skipped:
            raise LoadFailed(check.problems)
    started = time.perf_counter()
    files = [p for i in job.inputs for p in i.paths]
    parts = {
        "source": job.source,
        "split": job.split,
        "limit": limit,
        "batch": batch_images,
        "options": job.options,
    }
    print_ = fingerprint(parts, files)
    path = Checkpoint.location(data_dir, job.source, job.split, print_)
    previous = Checkpoint.open(path, print_) if resume else None
    checkpoint = Checkpoint(path=path, fingerprint=print_)
    summary = LoadSummary(
        job.source, job.split, files=[i.label for i in job.inputs], checkpoint=str(path)
    )
    reader = _Reader(job, summary, limit)
    total_bytes = sum(p.stat().st_size for p in files)
    reporter.start(f"{job.source} {job.split}", total_bytes)
    try:
        for index, batch in enumerate(_batches(reader.records(), batch_images)):
            if previous is not None and index < previous.batches_done and batch_present(
                store, batch
            ):
                summary.batches_resumed += 1
            else:
                nodes, rels = write_batch(store, batch)
                summary.nodes_created += nodes
                summary.relationships_created += rels
                summary.images_written += len(batch)
                summary.batches_written += 1
            checkpoint.batches_done = index + 1
            checkpoint.images_done += len(batch)
            checkpoint.save()
            reporter.update(reader.counter.bytes, summary.images)
        reporter.update(total_bytes, summary.images)
    finally:
        reporter.finish()
    store.snapshot()
    checkpoint.completed = True
    checkpoint.save()
    summary.completed = True
    return _finish(summary, started)


def problem_lines(summary: LoadSummary, limit: int = 20) -> list[str]:
    """Human-readable lines for the skipped records of a summary."""
    lines = [str(p) for p in summary.problems[:limit]]
    if summary.skipped > limit:
        lines.append(f"... and {summary.skipped - limit} more")
    return lines


def reason_counts(problems: list[Problem]) -> Counter[str]:
    """Problem counts per reason (for tests and reports)."""
    return Counter(p.reason for p in problems)
